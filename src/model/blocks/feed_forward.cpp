#include "model/blocks/feed_forward.h"

#include <algorithm>

namespace nt {

FeedForward::FeedForward(ParamStore<float>& params, const std::string& name, int layer, int C, int F,
                         Activation activation, Precision precision, bool bias, bool glu)
    : activation_(activation), precision_(precision) {
  fc1_.declare(params, name + ".fc1", layer, C, F, bias);
  fc2_.declare(params, name + ".fc2", layer, F, C, bias);
  if (glu) fc3_.declare(params, name + ".fc3", layer, C, F, bias);
}

void FeedForward::init(ParamStore<float>& params, const SublayerInit& init, Rng& rng) {
  for (Linear* l : {&fc1_, &fc2_}) {
    l->bind(params);
    l->zero_bias();
  }
  init.value(fc1_.W, rng);
  init.output(fc2_.W, rng);
  if (fc3_.w >= 0) {
    fc3_.bind(params);
    fc3_.zero_bias();
    init.value(fc3_.W, rng);
  }
}

Branch FeedForward::operator()(Graph<float>& g, Tensor<float> x, RealRows real) const {
  const Tensor<float> h = cast(g, fc1_.product(g, x, real), precision_);
  Tensor<float> a = cast(
      g, fc1_.bias.data ? bias_activation(g, h, fc1_.bias, activation_) : activation(g, h, activation_), precision_);
  if (fc3_.w >= 0) a = cast(g, mul(g, a, cast(g, fc3_(g, x, real), precision_)), precision_);  // the gate times fc3 x
  return {cast(g, fc2_.product(g, a, real), precision_), fc2_.bias};
}

}  // namespace nt
