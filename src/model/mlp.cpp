#include <fmt/format.h>

#include <algorithm>

#include "model/init.h"
#include "model/layers.h"
#include "model/norm_site.h"
#include "model/shape.h"

namespace nt {

namespace {

// Multi-layer perceptron: per hidden layer  h = act(norm(W h + b)),  then logits = out(h).
// Normalizing the summed inputs, as the BatchNorm and LayerNorm papers do. train.precision
// bf16/fp16: the inputs and every value between these ops rounded to the format (ops/cast.cpp).
class Mlp final : public Model {
 public:
  Mlp(const RunConfig& c, int inputs, int classes) : c_(c.model), precision_(c.train.precision) {
    int in = inputs;
    for (int l = 0; l < c_.n_layers; ++l) {
      layers_.push_back({{}, NormSite(params_, c_.norm, l, "norm", "hidden", c_.hidden, 1)});
      layers_.back().linear.declare(params_, "linear", l, in, c_.hidden, c_.bias);
      in = c_.hidden;
    }
    out_.declare(params_, "out", c_.n_layers, in, classes, c_.bias);
    params_.finalize();
    Rng rng(uint64_t(c.seed), 1);
    for (Layer& l : layers_) {
      l.linear.bind(params_);
      init_linear_weight(l.linear.W, c_, rng);
      l.linear.zero_bias();
      l.norm.init(params_);
    }
    out_.bind(params_);
    init_linear_weight(out_.W, c_, rng);
    out_.zero_bias();
    sites_.reserve(c_.n_layers);
  }

  Tensor<float> logits(Graph<float>& g, const Batch& batch) override {
    sites_.clear();
    const int D = int(batch.x.size()) / batch.B;
    Tensor<float> h{const_cast<float*>(batch.x.data()), nullptr, batch.B, D};
    if (precision_ != Precision::fp32) {  // the inputs in the run's format too: a copy, the batch is the caller's
      Tensor<float> copy = g.tensor(h.rows, h.cols, false);
      std::copy_n(h.data, h.size(), copy.data);
      h = cast(g, copy, precision_);
    }
    auto to_run_format = [&](Tensor<float> y) { return cast(g, y, precision_); };
    for (Layer& l : layers_) {
      const Tensor<float> z = to_run_format(l.linear(g, h));
      h = to_run_format(activation(g, to_run_format(l.norm(g, z, nullptr, sites_)), c_.activation));
    }
    return to_run_format(out_(g, h));
  }

  std::vector<std::vector<float>*> buffers() override {
    std::vector<std::vector<float>*> out;
    for (Layer& l : layers_) l.norm.add_buffers(out);
    return out;
  }

 private:
  struct Layer {
    Linear linear;
    NormSite norm;
  };
  ModelConfig c_;
  Precision precision_;
  std::vector<Layer> layers_;
  Linear out_;
};

}  // namespace

// The shape of the MLP above: D inputs, H hidden width, L hidden layers, K classes, B rows a batch.
ModelShape mlp_shape(const RunConfig& c, int inputs, int classes) {
  const ModelConfig& m = c.model;
  const int64_t D = inputs, H = m.hidden, L = m.n_layers, K = classes, B = c.train.batch_size;
  ModelShape s;
  const int64_t bias = m.bias ? 1 : 0;
  s.params = D * H + (L - 1) * (H * H) + L * (bias * H + norm_site_params(m.norm, H)) + H * K + bias * K;
  // per row and layer: Linear, norm and activation outputs with their gradients; logits; the inputs
  s.activations = B * (L * 2 * 3 * H + 3 * K + D);
  s.forward_flops = 2.0 * double(D * H + (L - 1) * H * H + K * H);
  s.smaller = fmt::format("model.hidden (= {}) or model.n_layers (= {})", H, L);
  return s;
}

std::unique_ptr<Model> make_mlp(const RunConfig& c, int inputs, int classes) {
  return std::make_unique<Mlp>(c, inputs, classes);
}

}  // namespace nt
