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
