#include "model/norm_site.h"

#include <algorithm>

#include "core/check.h"
#include "norms/norms.h"
#include "ops/ops.h"

namespace nt {

NormSite::NormSite(ParamStore<float>& params, const NormConfig& c, int layer, const std::string& name,
                   const char* place, int C, int positions, float out_scale)
    : type_(c.type), eps_(float(c.eps)), momentum_(float(c.momentum)), out_scale_(out_scale), p_(c.p),
      composite_(c.impl == NormImpl::composite), unit_offset_(c.unit_offset), C_(C), layer_(layer),
      positions_(positions), place_(place),
      alpha0_(c.dyt_alpha0) {
  const NormDesc& d = norm_desc(type_);  // none: no parameter, no statistic
  if (d.alpha) alpha_ = params.add(name + ".alpha", layer, 1, 1);  // first, as DynamicTanh declares it
  if (c.affine && d.gain != ParamShape::absent) gain_ = params.add(name + ".weight", layer, 1, param_count(d.gain, C));
  if (c.affine && c.bias && d.bias != ParamShape::absent)
    bias_ = params.add(name + ".bias", layer, 1, param_count(d.bias, C));
  if (d.reduction == Reduction::batch) {  // running statistics for eval mode
    running_mean_.assign(std::size_t(positions) * C, 0.0f);
    running_var_.assign(std::size_t(positions) * C, 1.0f);
  }
}

void NormSite::init(ParamStore<float>& params) {
  if (gain_ >= 0) {
    gain_t_ = params.tensor(gain_);
    std::fill_n(gain_t_.data, gain_t_.size(), float(norm_desc(type_).gain_init(C_) - (unit_offset_ ? 1.0 : 0.0)));
  }
  if (bias_ >= 0) {
    bias_t_ = params.tensor(bias_);
    std::fill_n(bias_t_.data, bias_t_.size(), 0.0f);
  }
  if (alpha_ >= 0) {
    alpha_t_ = params.tensor(alpha_);
    alpha_t_.data[0] = float(alpha0_);
  }
}

RowNorm<float> NormSite::row_norm() const {
  NT_CHECK(norm_desc(type_).reduction != Reduction::batch,
           "a recurrent cell's norm reduces over each row, not the batch");
  return {type_, NormArgs<float>{gain_t_, bias_t_, eps_, p_, positions_, {}, alpha_t_}, composite_,
          unit_offset_ && gain_t_.data};
}

Tensor<float> NormSite::operator()(Graph<float>& g, Tensor<float> x, const float* mask,
                                   std::vector<SiteCapture>& sites) {
  const Tensor<float> gain = unit_offset_ && gain_t_.data ? shift(g, gain_t_, 1.0f) : gain_t_;
  Tensor<float> y = apply_norm(
      g, type_, x,
      NormArgs<float>{gain, bias_t_, eps_, p_, positions_,
                      BatchNormState<float>{running_mean_.data(), running_var_.data(), momentum_, mask}, alpha_t_},
      composite_);
  if (out_scale_ != 1.0f) y = scale(g, y, out_scale_);
  sites.push_back({layer_, place_, x, y});
  return y;
}

}  // namespace nt
