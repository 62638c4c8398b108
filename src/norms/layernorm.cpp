// LayerNorm (Ba et al. 2016; PyTorch nn.LayerNorm), per row over the C features:
//
//   mean = (1/C) sum_j x_j,   var = (1/C) sum_j (x_j - mean)^2   (biased, two-pass)
//   rstd = 1 / sqrt(var + eps)         (eps inside the sqrt)
//   xhat = (x - mean) * rstd,          y = gamma * xhat + beta
//
// Backward, with dnorm = dy * gamma:
//   dbeta  += dy,   dgamma += dy * xhat
//   dx     += rstd * (dnorm - mean(dnorm) - xhat * mean(dnorm * xhat))
//             term 1   term 2              term 3
// Buffers: x, y (N, C); mean, rstd (N), kept by forward for backward.
#include <cmath>

#include "core/check.h"
#include "norms/norms.h"

namespace nt {

template <class T>
void layernorm_forward(T* y, T* mean, T* rstd, const T* x, const T* gamma, const T* beta, int N, int C, T eps) {
#pragma omp parallel for schedule(static)
  for (int n = 0; n < N; ++n) {
    const T* xr = x + int64_t(n) * C;
    T m = 0;
    for (int j = 0; j < C; ++j) m += xr[j];
    m /= C;
    T v = 0;
    for (int j = 0; j < C; ++j) v += (xr[j] - m) * (xr[j] - m);
    v /= C;
    const T r = T(1) / std::sqrt(v + eps);
    T* yr = y + int64_t(n) * C;
    for (int j = 0; j < C; ++j) {
      const T xhat = (xr[j] - m) * r;
      yr[j] = (gamma ? gamma[j] : T(1)) * xhat + (beta ? beta[j] : T(0));
    }
    mean[n] = m;
    rstd[n] = r;
  }
}

template <class T>
void layernorm_backward(T* dx, T* dgamma, T* dbeta, const T* dy, const T* x, const T* mean, const T* rstd,
                        const T* gamma, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const T* xr = x + int64_t(n) * C;
    const T* dyr = dy + int64_t(n) * C;
    const T m = mean[n], r = rstd[n];
    // first: two reductions
    T dnorm_mean = 0, dnorm_xhat_mean = 0;
    for (int j = 0; j < C; ++j) {
      const T dnorm = dyr[j] * (gamma ? gamma[j] : T(1));
      dnorm_mean += dnorm;
      dnorm_xhat_mean += dnorm * (xr[j] - m) * r;
    }
    dnorm_mean /= C;
    dnorm_xhat_mean /= C;
    // then: accumulate the gradients
    T* dxr = dx ? dx + int64_t(n) * C : nullptr;
    for (int j = 0; j < C; ++j) {
      const T xhat = (xr[j] - m) * r;
      if (dbeta) dbeta[j] += dyr[j];
      if (dgamma) dgamma[j] += dyr[j] * xhat;
      if (dxr) {
        const T dnorm = dyr[j] * (gamma ? gamma[j] : T(1));
        T dval = dnorm;                  // term 1
        dval -= dnorm_mean;              // term 2
        dval -= xhat * dnorm_xhat_mean;  // term 3
        dxr[j] += r * dval;              // final scale
      }
    }
  }
}

namespace {
template <class T>
struct LayerNormContext {
  Tensor<T> y, x, gamma, beta;
  const T* mean;
  const T* rstd;
};
template <class T>
void layernorm_backward_node(const void* p) {
  const auto& c = *static_cast<const LayerNormContext<T>*>(p);
  layernorm_backward(c.x.grad, c.gamma.grad, c.beta.grad, c.y.grad, c.x.data, c.mean, c.rstd, c.gamma.data,
                     c.x.rows, c.x.cols);
}
}  // namespace

template <class T>
Tensor<T> layernorm(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, Tensor<T> beta, T eps) {
  NT_CHECK(!gamma.data || gamma.size() == x.cols, "layernorm: gamma must have C entries");
  NT_CHECK(!beta.data || beta.size() == x.cols, "layernorm: beta must have C entries");
  Tensor<T> y = g.output(x.rows, x.cols, x, gamma, beta);
  T* mean = g.buffer(x.rows);
  T* rstd = g.buffer(x.rows);
  layernorm_forward(y.data, mean, rstd, x.data, gamma.data, beta.data, x.rows, x.cols, eps);
  if (y.grad) g.record(layernorm_backward_node<T>, LayerNormContext<T>{y, x, gamma, beta, mean, rstd});
  return y;
}

template Tensor<float> layernorm(Graph<float>&, Tensor<float>, Tensor<float>, Tensor<float>, float);
template Tensor<double> layernorm(Graph<double>&, Tensor<double>, Tensor<double>, Tensor<double>, double);

}  // namespace nt
