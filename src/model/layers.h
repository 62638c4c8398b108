// Building blocks shared by the models: a Linear layer's parameters and the activations.
#pragma once
#include <string>

#include "config/config.h"
#include "core/params.h"
#include "ops/ops.h"

namespace nt {

inline Tensor<float> activate(Graph<float>& g, Tensor<float> x, Activation a) {
  switch (a) {
    case Activation::relu: return relu(g, x);
    case Activation::gelu: return gelu(g, x);
    case Activation::tanh: return nt::tanh(g, x);
  }
  return x;
}

// One nn.Linear: y = x W^T + b, W (out, in). Parameter ids, then views after finalize.
struct Linear {
  int w = -1, b = -1;
  Tensor<float> W, bias;
  void declare(ParamStore<float>& p, const std::string& name, int layer, int in, int out) {
    w = p.add(name + ".weight", layer, out, in);
    b = p.add(name + ".bias", layer, 1, out);
  }
  void bind(ParamStore<float>& p) { W = p.tensor(w), bias = p.tensor(b); }
  Tensor<float> operator()(Graph<float>& g, Tensor<float> x) const { return linear(g, x, W, bias); }
};

}  // namespace nt
