// The feed-forward sub-layer: feed_forward(x) = fc2(act(fc1(x))), fc1 (C -> F), fc2 (F -> C);
// model.ffn glu: fc2(act(fc1(x)) * fc3(x)), fc3 (C -> F) (SwiGLU with silu, GeGLU with gelu).
// fc1's bias is added inside the activation, fc2's is left to the residual connection (Branch).
// train.precision: each product and the activation stored in the run's format (ops/cast.cpp).
#pragma once
#include <string>

#include "model/init.h"
#include "model/layers.h"

namespace nt {

class FeedForward {
 public:
  // Declares "<name>.fc1", "<name>.fc2" and with `glu` "<name>.fc3" (weight, and bias with `bias`) of `layer`.
  FeedForward(ParamStore<float>& params, const std::string& name, int layer, int C, int F, Activation activation,
              Precision precision, bool bias = true, bool glu = false);

  // Binds the views (after ParamStore::finalize), biases 0, weights as `init` says: fc1, fc2 (, fc3).
  void init(ParamStore<float>& params, const SublayerInit& init, Rng& rng);

  // (N, C), before fc2's bias; real: x's real rows, the padding's products skipped
  Branch operator()(Graph<float>& g, Tensor<float> x, RealRows real = {}) const;

 private:
  Activation activation_;
  Precision precision_;
  Linear fc1_, fc2_, fc3_;  // fc3: glu's linear half (w = -1 without)
};

}  // namespace nt
