// Partial RMSNorm (Zhang & Sennrich 2019 §4): RMSNorm whose statistic reads only the first
// k = max(1, floor(p C)) of the C features (the paper: p = 6.25%), per row:
//
//   rstd = 1 / sqrt((1/k) sum_{j<k} x_j^2 + eps)   (eps inside the sqrt, as our RMSNorm; the
//                                                    paper's code adds it to the RMS instead)
//   xhat = x * rstd,                                y = gamma * xhat
//
// Backward, with dnorm = dy * gamma (d rstd / d x_j = -rstd^3 x_j / k for j < k, 0 beyond):
//   dgamma += dy * xhat
//   dx_j   += rstd * (dnorm_j - [j < k] xhat_j * (1/k) sum_i dnorm_i xhat_i)
//             term 1   term 2: only the features the statistic read
// Buffers: x, y (N, C); rstd (N).
#include <cmath>

#include "core/check.h"
#include "core/eigen.h"
#include "core/parallel.h"
#include "norms/norms.h"
#include "norms/rms_rows.h"

namespace nt {

// RMSNorm's row loops (norms/rms_rows.h), the statistic reading the first k features.
template <class T>
void prmsnorm_forward(T* y, T* rstd, const T* x, const T* gamma, int N, int C, int k, T eps) {
  rms_rows_forward(y, rstd, x, gamma, N, C, eps, [k](const auto& xr) { return xr.head(k).square().mean(); });
}

// partial: (row_blocks(N, C), 2C) scratch (norms/rms_rows.h).
template <class T>
void prmsnorm_backward(T* dx, T* dgamma, T* partial, const T* dy, const T* x, const T* rstd, const T* gamma, int N,
                       int C, int k, unsigned first) {
  rms_rows_backward(dx, dgamma, partial, dy, x, rstd, gamma, N, C, first,
                    [k](bool write, auto dxr, const auto& dnorm, const auto& xhat, T r) {
                      const T coefficient = (dnorm * xhat).sum() / T(k);
                      put(write, dxr, r * dnorm);                     // term 1
                      dxr.head(k) -= r * xhat.head(k) * coefficient;  // term 2
                    });
}

namespace {
template <class T>
struct PRMSNormContext {
  Tensor<T> y, x, gamma;
  const T* rstd;
  T* partial;
  int k;
};
template <class T>
void prmsnorm_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const PRMSNormContext<T>*>(p);
  prmsnorm_backward(c.x.grad, c.gamma.grad, c.partial, c.y.grad, c.x.data, c.rstd, c.gamma.data, c.x.rows, c.x.cols,
                    c.k, first);
}
}  // namespace

template <class T>
Tensor<T> prmsnorm(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, T eps, double p) {
  NT_CHECK(!gamma.data || gamma.size() == x.cols, "prmsnorm: gamma must have C entries");
  NT_CHECK(p > 0 && p <= 1, "prmsnorm: p must be in (0, 1]");
  const int k = prmsnorm_features(p, x.cols);
  Tensor<T> y = g.output(x.rows, x.cols, x, gamma);
  T* rstd = g.buffer(x.rows);
  prmsnorm_forward(y.data, rstd, x.data, gamma.data, x.rows, x.cols, k, eps);
  if (y.grad) {
    T* partial = g.buffer(std::size_t(row_blocks(x.rows, x.cols)) * 2 * x.cols);
    g.record(prmsnorm_backward_node<T>, PRMSNormContext<T>{y, x, gamma, rstd, partial, k}, {x.grad, gamma.grad});
  }
  return y;
}

template Tensor<float> prmsnorm(Graph<float>&, Tensor<float>, Tensor<float>, float, double);
template Tensor<double> prmsnorm(Graph<double>&, Tensor<double>, Tensor<double>, double, double);

// ---- the description ----

namespace {
template <class T>
Tensor<T> fused(Graph<T>& g, Tensor<T> x, const NormArgs<T>& a) {
  return prmsnorm(g, x, a.gamma, a.eps, a.p);
}
template <class T>
Tensor<T> composite(Graph<T>& g, Tensor<T> x, const NormArgs<T>& a) {
  return prmsnorm_composite(g, x, a.gamma, a.eps, a.p);
}
}  // namespace

extern const NormDesc kPRMSNormDesc = {
    .name = "prmsnorm",
    .gain = ParamShape::per_feature,
    .bias = ParamShape::absent,
    .gain_init = gain_one,
    .reduction = Reduction::row_prefix,
    .f32 = {fused<float>, composite<float>},
    .f64 = {fused<double>, composite<double>},
    .invariances = {  // RMSNorm's (Zhang & Sennrich 2019 §4)
        .weight_rescale = {true, "the RMS of the first p H units scales with delta like every unit, "
                                 "so a/RMS_p(a) is unchanged"},
        .weight_recenter = {false, "pRMSNorm subtracts no mean: the common shift g.x changes a/RMS_p(a)"},
        .weight_vector_rescale = {false, "unit 0 is among the first p H units the statistic reads: "
                                         "scaling it changes the RMS_p unevenly"},
        .data_rescale = {true, "each case's summed inputs scale by delta and so does the RMS of their first p H"},
        .data_recenter = {false, "x + c adds W c to the summed inputs; pRMSNorm has no mean to absorb it"},
        .case_rescale = {true, "pRMSNorm normalizes each case by its own partial RMS, so a per-case scale cancels"},
        // Not in the papers' table. Its statistic averages k = max(1, floor(p H)) = 3 of the 48 units, whose mean
        // square is chi^2_3 / 3 per case: heavy-tailed near 0 (E[1/ms^2] diverges for k <= 4), so a case with a
        // small partial mean square shows eps's effect 10x above the full RMS's. Still far below "changed" (1e-2).
        .float32_invariant_below = 1e-3,
    },
    .color = "#CC79A7",
};

}  // namespace nt
