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
#include "norms/norms.h"

namespace nt {

template <class T>
void rmsnorm_forward(T* y, T* rstd, const T* x, const T* gamma, int N, int C, T eps) {
#pragma omp parallel for schedule(static)
  for (int n = 0; n < N; ++n) {
    const T* xr = x + int64_t(n) * C;
    T ms = 0;
    for (int j = 0; j < C; ++j) ms += xr[j] * xr[j];
    const T r = T(1) / std::sqrt(ms / C + eps);
    T* yr = y + int64_t(n) * C;
    for (int j = 0; j < C; ++j) yr[j] = (gamma ? gamma[j] : T(1)) * xr[j] * r;
    rstd[n] = r;
  }
}

template <class T>
void rmsnorm_backward(T* dx, T* dgamma, const T* dy, const T* x, const T* rstd, const T* gamma, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const T* xr = x + int64_t(n) * C;
    const T* dyr = dy + int64_t(n) * C;
    const T r = rstd[n];
    T dnorm_xhat_mean = 0;
    for (int j = 0; j < C; ++j) dnorm_xhat_mean += dyr[j] * (gamma ? gamma[j] : T(1)) * xr[j] * r;
    dnorm_xhat_mean /= C;
    T* dxr = dx ? dx + int64_t(n) * C : nullptr;
    for (int j = 0; j < C; ++j) {
      const T xhat = xr[j] * r;
      if (dgamma) dgamma[j] += dyr[j] * xhat;
      if (dxr) dxr[j] += r * (dyr[j] * (gamma ? gamma[j] : T(1)) - xhat * dnorm_xhat_mean);
    }
  }
}

namespace {
template <class T>
struct RMSNormContext {
  Tensor<T> y, x, gamma;
  const T* rstd;
};
template <class T>
void rmsnorm_backward_node(const void* p) {
  const auto& c = *static_cast<const RMSNormContext<T>*>(p);
  rmsnorm_backward(c.x.grad, c.gamma.grad, c.y.grad, c.x.data, c.rstd, c.gamma.data, c.x.rows, c.x.cols);
}
}  // namespace

template <class T>
Tensor<T> rmsnorm(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, T eps) {
  NT_CHECK(!gamma.data || gamma.size() == x.cols, "rmsnorm: gamma must have C entries");
  Tensor<T> y = g.output(x.rows, x.cols, x, gamma);
  T* rstd = g.buffer(x.rows);
  rmsnorm_forward(y.data, rstd, x.data, gamma.data, x.rows, x.cols, eps);
  if (y.grad) g.record(rmsnorm_backward_node<T>, RMSNormContext<T>{y, x, gamma, rstd});
  return y;
}

template Tensor<float> rmsnorm(Graph<float>&, Tensor<float>, Tensor<float>, float);
template Tensor<double> rmsnorm(Graph<double>&, Tensor<double>, Tensor<double>, double);

}  // namespace nt
