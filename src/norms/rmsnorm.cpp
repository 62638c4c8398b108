// RMSNorm (Zhang & Sennrich 2019), per row over the C features; no mean subtraction, no bias:
//
//   rstd = 1 / sqrt((1/C) sum_j x_j^2 + eps)      (eps inside the sqrt)
//   xhat = x * rstd,                               y = gamma * xhat
//
// One pass over the row for the statistic, against LayerNorm's two (claim C3).
// Backward, with dnorm = dy * gamma:
//   dgamma += dy * xhat
//   dx     += rstd * (dnorm - xhat * mean(dnorm * xhat))
//             term 1  term 2
// Buffers: x, y (N, C); rstd (N).
#include <cmath>

#include "core/check.h"
#include "core/eigen.h"
#include "core/parallel.h"
#include "norms/norms.h"
#include "norms/rms_rows.h"

namespace nt {

// The row loops are partial RMSNorm's too (norms/rms_rows.h); here the statistic reads every feature.
template <class T>
void rmsnorm_forward(T* y, T* rstd, const T* x, const T* gamma, int N, int C, T eps) {
  rms_rows_forward(y, rstd, x, gamma, N, C, eps, [](const auto& xr) { return xr.square().mean(); });
}

// partial: (row_blocks(N, C), 2C) scratch (norms/rms_rows.h).
template <class T>
void rmsnorm_backward(T* dx, T* dgamma, T* partial, const T* dy, const T* x, const T* rstd, const T* gamma, int N,
                      int C, unsigned first) {
  rms_rows_backward(dx, dgamma, partial, dy, x, rstd, gamma, N, C, first,
                    [](bool write, auto dxr, const auto& dnorm, const auto& xhat, T r) {
                      const T dnorm_xhat_mean = (dnorm * xhat).mean();
                      put(write, dxr, r * (dnorm - xhat * dnorm_xhat_mean));  // term 1 - term 2
                    });
}

namespace {
template <class T>
struct RMSNormContext {
  Tensor<T> y, x, gamma;
  const T* rstd;
  T* partial;
};
template <class T>
void rmsnorm_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const RMSNormContext<T>*>(p);
  rmsnorm_backward(c.x.grad, c.gamma.grad, c.partial, c.y.grad, c.x.data, c.rstd, c.gamma.data, c.x.rows, c.x.cols,
                   first);
}
}  // namespace

template <class T>
Tensor<T> rmsnorm(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, T eps) {
  NT_CHECK(!gamma.data || gamma.size() == x.cols, "rmsnorm: gamma must have C entries");
  Tensor<T> y = g.output(x.rows, x.cols, x, gamma);
  T* rstd = g.buffer(x.rows);
  rmsnorm_forward(y.data, rstd, x.data, gamma.data, x.rows, x.cols, eps);
  if (y.grad) {
    T* partial = g.buffer(std::size_t(row_blocks(x.rows, x.cols)) * 2 * x.cols);
    g.record(rmsnorm_backward_node<T>, RMSNormContext<T>{y, x, gamma, rstd, partial}, {x.grad, gamma.grad});
  }
  return y;
}

template Tensor<float> rmsnorm(Graph<float>&, Tensor<float>, Tensor<float>, float);
template Tensor<double> rmsnorm(Graph<double>&, Tensor<double>, Tensor<double>, double);

// ---- the description ----

namespace {
template <class T>
Tensor<T> fused(Graph<T>& g, Tensor<T> x, const NormArgs<T>& a) {
  return rmsnorm(g, x, a.gamma, a.eps);
}
template <class T>
Tensor<T> composite(Graph<T>& g, Tensor<T> x, const NormArgs<T>& a) {
  return rmsnorm_composite(g, x, a.gamma, a.eps);
}
}  // namespace

extern const NormDesc kRMSNormDesc = {
    .name = "rmsnorm",
    .gain = ParamShape::per_feature,
    .bias = ParamShape::absent,
    .gain_init = gain_one,
    .reduction = Reduction::row,
    .f32 = {fused<float>, composite<float>},
    .f64 = {fused<double>, composite<double>},
    .invariances = {  // Zhang & Sennrich 2019 Table 1
        .weight_rescale = {true, "RMS(delta a) = delta RMS(a), so a/RMS(a) is unchanged"},
        .weight_recenter = {false, "RMSNorm subtracts no mean: the common shift g.x changes a/RMS(a)"},
        .weight_vector_rescale = {false, "scaling one unit changes the per-case RMS over units unevenly"},
        .data_rescale = {true, "each case's summed inputs scale by delta and so does their RMS"},
        .data_recenter = {false, "x + c adds W c to the summed inputs; RMSNorm has no mean to absorb it"},
        .case_rescale = {true, "RMSNorm normalizes each case by its own RMS, so a per-case scale cancels"},
    },
    .later_options = true,
    .color = "#D55E00",
};

}  // namespace nt
