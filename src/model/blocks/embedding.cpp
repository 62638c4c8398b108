#include "model/blocks/embedding.h"

#include <cmath>

#include "core/check.h"
#include "ops/ops.h"

namespace nt {

Embedding::Embedding(ParamStore<float>& params, int layer, int vocab, int T, int C, bool learned, Precision precision,
                     const NormConfig* norm, int positions, const std::string& prefix, const char* place)
    : precision_(precision) {
  tok_ = params.add(prefix + "tok_emb.weight", layer, vocab, C);
  if (learned) pos_ = params.add(prefix + "pos_emb.weight", layer, T, C);
  if (norm) norm_ = std::make_unique<NormSite>(params, *norm, layer, prefix + "emb_norm", place, C, positions);
}

void Embedding::init(ParamStore<float>& params, const ModelConfig& m, Rng& rng) {
  tok_table_ = params.tensor(tok_);
  init_embedding(tok_table_, m, rng);
  tok_scale_ = m.embed_scale ? float(std::sqrt(double(tok_table_.cols))) : 1.0f;
  if (pos_ >= 0) {
    pos_table_ = params.tensor(pos_);
    init_embedding(pos_table_, m, rng);
  }
  if (norm_) norm_->init(params);
}

void Embedding::add_buffers(std::vector<std::vector<float>*>& out) {
  if (norm_) norm_->add_buffers(out);
}

Tensor<float> Embedding::operator()(Graph<float>& g, const int32_t* tokens, int B, int T, const float* mask,
                                    std::vector<SiteCapture>& sites) {
  const int N = B * T;
  Tensor<float> token = embedding(g, tok_table_, tokens, N);
  if (tok_scale_ != 1.0f) token = scale(g, token, tok_scale_);
  if (pos_ < 0) {
    Tensor<float> x = cast(g, token, precision_);
    return norm_ ? cast(g, (*norm_)(g, x, mask, sites), precision_) : x;
  }
  NT_CHECK(T <= pos_table_.rows, "embedding: sequence longer than the position table");
  if (int(positions_.size()) != N || positions_T_ != T) {
    positions_.resize(N);
    positions_T_ = T;
    for (int i = 0; i < N; ++i) positions_[i] = i % T;
  }
  Tensor<float> x = cast(g, add(g, token, embedding(g, pos_table_, positions_.data(), N)), precision_);
  if (norm_) x = cast(g, (*norm_)(g, x, mask, sites), precision_);
  return x;
}

}  // namespace nt
