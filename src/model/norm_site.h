// NormSite: one place in a network where the configured normalization sits (or nothing,
// for norm type none), with its parameters and, for batchnorm, its running statistics.
#pragma once
#include <string>
#include <vector>

#include "config/config.h"
#include "model/model.h"
#include "norms/norms.h"
#include "ops/ops.h"

namespace nt {

// Whether a model's products may skip a padded batch's padding rows (ops linear over RealRows): a
// padding row is then its bias, and the norm after it must give a constant row a finite value,
// which it does where eps > 0 (with eps 0, 0 / 0 would reach the norms' summed gradients).
inline bool may_skip_padding(const NormConfig& norm) { return norm.eps > 0; }

// A norm as a recurrent cell applies it at every step (model/blocks/gru.h, lstm.h): the kind, its
// arguments (gain, bias, eps, p), fused or composite; no statistics recorded. none is the identity.
template <class T>
struct RowNorm {
  NormType type{};
  NormArgs<T> args{};
  bool composite = false;
  bool unit_offset = false;  // args.gamma holds w, the gain is 1 + w (model.norm.unit_offset)
  Tensor<T> operator()(Graph<T>& g, Tensor<T> x) const {
    if (!unit_offset) return apply_norm(g, type, x, args, composite);
    NormArgs<T> a = args;
    a.gamma = shift(g, args.gamma, T(1));
    return apply_norm(g, type, x, a, composite);
  }
};

class NormSite {
 public:
  // Declares the parameters "<name>.alpha" (DyT), "<name>.weight", "<name>.bias" of `layer`, in the shapes
  // of the kind's description (norms/norms.h); no bias with model.norm.bias false. `positions`
  // is the S of batchnorm's (R, S, C) view: T for bn_axes batch in a transformer, else 1.
  // out_scale: the output times this factor, recorded after it (model.norm.depth_scaling's 1 / sqrt(l)).
  NormSite(ParamStore<float>& params, const NormConfig& config, int layer, const std::string& name,
           const char* place, int C, int positions, float out_scale = 1.0f);

  // Gains to the description's initial value (with model.norm.unit_offset the parameter w to 0, the
  // gain 1 + w applied), biases to 0, alpha to dyt_alpha0 (after ParamStore::finalize).
  void init(ParamStore<float>& params);

  // The running mean and variance (batchnorm), else nothing.
  void add_buffers(std::vector<std::vector<float>*>& out) {
    if (!running_mean_.empty()) out.insert(out.end(), {&running_mean_, &running_var_});
  }

  // This site as a RowNorm (after init): for a norm applied per row, batchnorm excluded.
  RowNorm<float> row_norm() const;

  // y = norm(x) (times out_scale), recording {in, out} in `sites`. mask (rows) marks real tokens or is nullptr.
  Tensor<float> operator()(Graph<float>& g, Tensor<float> x, const float* mask, std::vector<SiteCapture>& sites);

 private:
  NormType type_;
  float eps_, momentum_, out_scale_;
  double p_;
  bool composite_, unit_offset_;
  int C_, layer_, positions_;
  const char* place_;
  double alpha0_;
  int gain_ = -1, bias_ = -1, alpha_ = -1;  // parameter ids, -1 when absent
  Tensor<float> gain_t_, bias_t_, alpha_t_;
  std::vector<float> running_mean_, running_var_;  // batchnorm (positions * C)
};

}  // namespace nt
