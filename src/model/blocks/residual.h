// The placement wrapper: a sub-layer f (attention, feed-forward) with its norm and its residual
// connection, in one of three placements:
//   pre       x = x + f(norm(x))
//   post      x = norm(x + f(x))
//   deepnorm  x = norm(alpha * x + f(x))      (LayerNorm; DeepNet, Wang et al. 2022)
// f returns a Branch: its last Linear's bias is added with the sum, in one pass (ops residual).
// train.precision: the sum and the norm's output stored in the run's format (ops/cast.cpp).
#pragma once
#include <string>
#include <vector>

#include "model/layers.h"
#include "model/norm_site.h"

namespace nt {

enum class Wiring { pre, post, deepnorm };

// model.norm's placement, or deepnorm for the deepnorm norm type (whose placement is its own)
Wiring wiring_of(const NormConfig& norm);

class Residual {
 public:
  // Declares the norm's parameters "<name>.weight", ".bias" of `layer` (model/norm_site.h).
  // alpha: DeepNorm's (RunConfig::deepnorm_alpha), unused by pre and post.
  Residual(ParamStore<float>& params, const NormConfig& norm, float alpha, Precision precision, int layer,
           const std::string& name, const char* place, int C, int positions)
      : wiring_(wiring_of(norm)), alpha_(alpha), precision_(precision),
        norm_(params, norm, layer, name, place, C, positions) {}

  NormSite& norm() { return norm_; }

  // x (N, C) -> x (N, C); mask and sites as NormSite's.
  template <class F>
  Tensor<float> operator()(Graph<float>& g, Tensor<float> x, const float* mask, std::vector<SiteCapture>& sites,
                           F&& f) {
    auto norm = [&](Tensor<float> h) { return cast(g, norm_(g, h, mask, sites), precision_); };
    auto sum = [&](float alpha, Tensor<float> h, const Branch& fh) {  // without a bias (model.bias false): alpha h + f
      return cast(g, fh.bias.data ? residual(g, alpha, h, fh.product, fh.bias) : axpby(g, alpha, h, fh.product),
                  precision_);
    };
    switch (wiring_) {
      case Wiring::pre: return sum(1.0f, x, f(norm(x)));
      case Wiring::post: return norm(sum(1.0f, x, f(x)));
      case Wiring::deepnorm: return norm(sum(alpha_, x, f(x)));
    }
    return x;
  }

 private:
  Wiring wiring_;
  float alpha_;
  Precision precision_;
  NormSite norm_;
};

}  // namespace nt
