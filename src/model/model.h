// A model: parameters in one ParamStore, a forward pass from a Batch to logits on a Graph,
// and the norm sites it passed through (for the statistics of stats.csv).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/graph.h"
#include "core/params.h"
#include "data/dataset.h"

namespace nt {

// One norm site seen by the last forward: the vector entering the norm and the one leaving
// it (the same tensor when the norm is none), both (rows, C).
struct SiteCapture {
  int layer;
  const char* place;  // "attn", "ffn", "final", "embed" (transformer, encoder); "hidden" (mlp);
                      // "enc.attn", "dec.cross", ... (encoder-decoder: the stack, then the sub-layer);
                      // "rnn.state_gates", "rnn.state_cand", "rnn.state", "rnn.cell" (rnn)
  Tensor<float> in, out;
  int T = 0;                     // positions per row; 0: the batch's T
  const float* mask = nullptr;   // with T set: the real positions of those rows (nullptr: all)
};

// One attention's scores q.k as the last forward computed them, kept by reference for
// layers.jsonl's attn_logit_max: head h of row r of q at q + r ldq + h hs (B*Tq rows), of k likewise
// (B*Tk rows). Valid until the graph is reset.
struct AttentionLogits {
  int param = -1;  // the query projection's weight (ParamStore id): the layers.jsonl line that carries it
  const float *q = nullptr, *k = nullptr;
  int ldq = 0, ldk = 0, B = 0, NH = 0, Tq = 0, Tk = 0, hs = 0;
  bool causal = false;
  const float* key_mask = nullptr;    // (B*Tk): the keys the softmax sees; nullptr: all
  const float* query_mask = nullptr;  // (B*Tq): the positions the statistics count; nullptr: all
};
// model/attention_logits.cpp: the largest |q.k| / sqrt(hs) over the rows, the heads, the queries
// query_mask keeps and the keys each of them sees (causal, key_mask); 0 when there is none.
double attention_logit_max(const AttentionLogits& a);

class Model {
 public:
  virtual ~Model() = default;
  // logits (B*T, V) for a language model, (B, classes) for a classifier.
  virtual Tensor<float> logits(Graph<float>& g, const Batch& batch) = 0;

  ParamStore<float>& params() { return params_; }
  // State that is not a parameter but changes in training (BatchNorm's running statistics), in
  // a fixed order: what a checkpoint saves beside the parameters.
  virtual std::vector<std::vector<float>*> buffers() = 0;
  // The norm sites of the last forward (a recurrent model gathers its steps' here).
  virtual const std::vector<SiteCapture>& sites() const { return sites_; }
  // Appends every attention's scores of the last forward (none without attention).
  virtual void attention_logits(std::vector<AttentionLogits>&) const {}

 protected:
  ParamStore<float> params_;
  mutable std::vector<SiteCapture> sites_;
};

// inputs: the vocabulary (transformer) or the number of features (mlp); classes: the outputs.
std::unique_ptr<Model> make_model(const RunConfig& config, int inputs, int classes);
inline std::unique_ptr<Model> make_model(const RunConfig& config, const Dataset& data) {
  return make_model(config, data.input_dim(), data.classes());
}

}  // namespace nt
