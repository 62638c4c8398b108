// A Linear layer's parameters, shared by the models, and the Branch a sub-layer hands to its
// residual connection.
#pragma once
#include <algorithm>
#include <string>

#include "config/config.h"
#include "core/params.h"
#include "ops/ops.h"

namespace nt {

// One nn.Linear: y = x W^T + b, W (out, in), b absent (b = -1, an empty view) without a bias
// (model.bias false). Parameter ids, then views after finalize.
struct Linear {
  int w = -1, b = -1;
  Tensor<float> W, bias;
  void declare(ParamStore<float>& p, const std::string& name, int layer, int in, int out, bool has_bias = true) {
    w = p.add(name + ".weight", layer, out, in);
    if (has_bias) b = p.add(name + ".bias", layer, 1, out);
  }
  void bind(ParamStore<float>& p) {
    W = p.tensor(w);
    if (b >= 0) bias = p.tensor(b);
  }
  void zero_bias() const {
    if (bias.data) std::fill_n(bias.data, bias.size(), 0.0f);
  }
  // real: a padded batch's real rows, the others' products skipped (ops.h: linear over RealRows)
  Tensor<float> operator()(Graph<float>& g, Tensor<float> x, RealRows real = {}) const {
    return linear(g, x, W, bias, real);
  }
  // x W^T alone: the op after it adds the bias (bias_activation, residual), saving a pass
  Tensor<float> product(Graph<float>& g, Tensor<float> x, RealRows real = {}) const {
    return linear(g, x, W, Tensor<float>{}, real);
  }
};

// A sub-layer's output f(x) = product + bias, the bias not yet added: the residual connection
// adds it in the same pass as the sum (ops residual); bias empty when the Linear has none.
struct Branch {
  Tensor<float> product, bias;
};

}  // namespace nt
