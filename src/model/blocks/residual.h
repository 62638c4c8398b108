// The placement wrapper: a sub-layer f (attention, feed-forward) with its norm and its residual
// connection, in one of five placements:
//   pre       x = x + f(norm(x))
//   post      x = norm(x + f(x))
//   deepnorm  x = norm(alpha * x + f(x))      (LayerNorm; DeepNet, Wang et al. 2022)
//   peri      x = x + norm_out(f(norm(x)))    (Peri-LN, Kim et al. 2025; Gemma 2's sandwich), norm_out
//                                             a second norm with its own gain, site "<place>_out"
//   reordered x = x + norm(f(x))              (OLMo 2's reordered norm), the one norm at site "<place>"
// model.norm.depth_scaling (LayerNorm Scaling, Sun et al. 2025; pre and peri): the input norm of
// block l = 1..N times 1 / sqrt(l), its site's output recorded after the factor; norm_out unscaled.
// f returns a Branch: its last Linear's bias is added with the sum, in one pass (ops residual);
// peri and reordered add it before their output norm. train.precision: the sum and the norm's
// output stored in the run's format (ops/cast.cpp).
#pragma once
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "model/layers.h"
#include "model/norm_site.h"

namespace nt {

enum class Wiring { pre, post, deepnorm, peri, reordered };

// model.norm's placement, or deepnorm for the deepnorm norm type (whose placement is its own)
Wiring wiring_of(const NormConfig& norm);

// A stack ends in a final norm: pre, peri and reordered, with model.final_norm.
bool has_final_norm(const ModelConfig& m);

// The factor of block `layer`'s input norms (from 0): 1 / sqrt(layer + 1) with depth_scaling, else 1.
inline float depth_factor(const NormConfig& norm, int layer) {
  return norm.depth_scaling ? float(1.0 / std::sqrt(double(layer) + 1.0)) : 1.0f;
}

class Residual {
 public:
  // Declares the norm's parameters "<name>.weight", ".bias" of `layer` (model/norm_site.h), and in
  // peri the output norm's "<out_name>.weight", ".bias" at site `out_place`.
  // alpha: DeepNorm's (RunConfig::deepnorm_alpha), unused by the others.
  Residual(ParamStore<float>& params, const NormConfig& norm, float alpha, Precision precision, int layer,
           const std::string& name, const char* place, int C, int positions, const std::string& out_name = "",
           const char* out_place = nullptr);

  NormSite& norm() { return norm_; }
  void init(ParamStore<float>& params);  // the norms' gains and biases (after ParamStore::finalize)
  void add_buffers(std::vector<std::vector<float>*>& out);

  // x (N, C) -> x (N, C); mask and sites as NormSite's.
  template <class F>
  Tensor<float> operator()(Graph<float>& g, Tensor<float> x, const float* mask, std::vector<SiteCapture>& sites,
                           F&& f) {
    auto norm = [&](Tensor<float> h) { return cast(g, norm_(g, h, mask, sites), precision_); };
    auto sum = [&](float alpha, Tensor<float> h, const Branch& fh) {  // without a bias (model.bias false): alpha h + f
      return cast(g, fh.bias.data ? residual(g, alpha, h, fh.product, fh.bias) : axpby(g, alpha, h, fh.product),
                  precision_);
    };
    auto normed = [&](NormSite& n, const Branch& fh) {  // peri's norm_out(f), reordered's norm(f): f's bias first
      const Tensor<float> h = fh.bias.data ? cast(g, add(g, fh.product, fh.bias), precision_) : fh.product;
      return Branch{cast(g, n(g, h, mask, sites), precision_), Tensor<float>{}};
    };
    switch (wiring_) {
      case Wiring::pre: return sum(1.0f, x, f(norm(x)));
      case Wiring::post: return norm(sum(1.0f, x, f(x)));
      case Wiring::deepnorm: return norm(sum(alpha_, x, f(x)));
      case Wiring::peri: return sum(1.0f, x, normed(*out_norm_, f(norm(x))));
      case Wiring::reordered: return sum(1.0f, x, normed(norm_, f(x)));
    }
    return x;
  }

 private:
  Wiring wiring_;
  float alpha_;
  Precision precision_;
  NormSite norm_;
  std::optional<NormSite> out_norm_;  // peri's
};

}  // namespace nt
