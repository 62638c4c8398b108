// The embedding of a token sequence: x = s tok_emb[tokens] + pos_emb[t] (model.position learned; none
// and rotary: x = s tok_emb[tokens], no position table; s = sqrt(C) with model.embed_scale, else 1), then
// optionally x = norm(x) (an embedding norm, place "embed"). train.precision: x stored in the run's format.
#pragma once
#include <memory>
#include <vector>

#include "model/init.h"
#include "model/norm_site.h"

namespace nt {

class Embedding {
 public:
  // Declares "<prefix>tok_emb.weight" (vocab, C) and, with `learned` positions, "<prefix>pos_emb.weight"
  // (T, C) of `layer`, and with `norm` an embedding norm "<prefix>emb_norm" at site `place` (positions as
  // NormSite's).
  Embedding(ParamStore<float>& params, int layer, int vocab, int T, int C, bool learned, Precision precision,
            const NormConfig* norm = nullptr, int positions = 1, const std::string& prefix = "",
            const char* place = "embed");

  // Binds the tables (after ParamStore::finalize) and draws them as model.init says: tokens, positions;
  // reads model.embed_scale.
  void init(ParamStore<float>& params, const ModelConfig& m, Rng& rng);
  void add_buffers(std::vector<std::vector<float>*>& out);  // the embedding norm's (model/norm_site.h)
  int token_table() const { return tok_; }                  // the parameter id of tok_emb

  // tokens (B*T) -> x (B*T, C); mask and sites as NormSite's (used by the embedding norm only).
  Tensor<float> operator()(Graph<float>& g, const int32_t* tokens, int B, int T, const float* mask,
                           std::vector<SiteCapture>& sites);

 private:
  int tok_ = -1, pos_ = -1;  // parameter ids; pos_ -1: no position table
  Tensor<float> tok_table_, pos_table_;
  float tok_scale_ = 1.0f;
  Precision precision_;
  std::unique_ptr<NormSite> norm_;
  std::vector<int32_t> positions_;  // t of each row, for B*T rows
  int positions_T_ = 0;
};

}  // namespace nt
