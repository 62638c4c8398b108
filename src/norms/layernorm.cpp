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
// Buffers: x, y (N, C); mean, rstd (N), kept by forward for backward. Rows run in parallel;
// dgamma and dbeta are summed per thread, then over threads (fixed order: deterministic). Each +=
// is = where the node writes that gradient first (core/graph.h).
#include <cmath>

#include <omp.h>

#include <algorithm>

#include "core/check.h"
#include "core/eigen.h"
#include "norms/norms.h"

namespace nt {

template <class T>
void layernorm_forward(T* y, T* mean, T* rstd, const T* x, const T* gamma, const T* beta, int N, int C, T eps) {
#pragma omp parallel for schedule(static)
  for (int n = 0; n < N; ++n) {
    const auto xr = CRowVecMap<T>(x + int64_t(n) * C, C).array();
    const T m = xr.mean();
    const T v = (xr - m).square().mean();  // biased, two-pass
    const T r = T(1) / std::sqrt(v + eps);
    auto yr = RowVecMap<T>(y + int64_t(n) * C, C).array();
    yr = (xr - m) * r;
    if (gamma) yr *= CRowVecMap<T>(gamma, C).array();
    if (beta) yr += CRowVecMap<T>(beta, C).array();
    mean[n] = m;
    rstd[n] = r;
  }
}

// partial: (threads, 3C) scratch: per thread the sums of dgamma and dbeta, and a row of dnorm.
template <class T>
void layernorm_backward(T* dx, T* dgamma, T* dbeta, T* partial, const T* dy, const T* x, const T* mean,
                        const T* rstd, const T* gamma, int N, int C, unsigned first) {
  const int threads = omp_get_max_threads();
  std::fill(partial, partial + int64_t(threads) * 3 * C, T(0));
#pragma omp parallel num_threads(threads)
  {
    T* mine = partial + int64_t(omp_get_thread_num()) * 3 * C;
    auto dgamma_part = RowVecMap<T>(mine, C).array();
    auto dbeta_part = RowVecMap<T>(mine + C, C).array();
    auto dnorm = RowVecMap<T>(mine + 2 * C, C).array();
#pragma omp for schedule(static)
    for (int n = 0; n < N; ++n) {
      const auto dyr = CRowVecMap<T>(dy + int64_t(n) * C, C).array();
      const auto xhat = (CRowVecMap<T>(x + int64_t(n) * C, C).array() - mean[n]) * rstd[n];
      dgamma_part += dyr * xhat;
      dbeta_part += dyr;
      if (!dx) continue;
      if (gamma) dnorm = dyr * CRowVecMap<T>(gamma, C).array();
      else dnorm = dyr;
      // first: two reductions
      const T dnorm_mean = dnorm.mean();
      const T dnorm_xhat_mean = (dnorm * xhat).mean();
      // then: dx += rstd * (term 1 - term 2 - term 3)
      put(writes_first(first, 0), RowVecMap<T>(dx + int64_t(n) * C, C).array(),
          rstd[n] * (dnorm - dnorm_mean - xhat * dnorm_xhat_mean));
    }
  }
  for (int t = 1; t < threads; ++t)  // the threads' sums into thread 0's, then written or added
    RowVecMap<T>(partial, 2 * C) += CRowVecMap<T>(partial + int64_t(t) * 3 * C, 2 * C);
  if (dgamma) put(writes_first(first, 1), RowVecMap<T>(dgamma, C), CRowVecMap<T>(partial, C));
  if (dbeta) put(writes_first(first, 2), RowVecMap<T>(dbeta, C), CRowVecMap<T>(partial + C, C));
}

namespace {
template <class T>
struct LayerNormContext {
  Tensor<T> y, x, gamma, beta;
  const T* mean;
  const T* rstd;
  T* partial;
};
template <class T>
void layernorm_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const LayerNormContext<T>*>(p);
  layernorm_backward(c.x.grad, c.gamma.grad, c.beta.grad, c.partial, c.y.grad, c.x.data, c.mean, c.rstd,
                     c.gamma.data, c.x.rows, c.x.cols, first);
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
  if (y.grad) {
    T* partial = g.buffer(std::size_t(omp_get_max_threads()) * 3 * x.cols);
    g.record(layernorm_backward_node<T>, LayerNormContext<T>{y, x, gamma, beta, mean, rstd, partial},
             {x.grad, gamma.grad, beta.grad});
  }
  return y;
}

template Tensor<float> layernorm(Graph<float>&, Tensor<float>, Tensor<float>, Tensor<float>, float);
template Tensor<double> layernorm(Graph<double>&, Tensor<double>, Tensor<double>, Tensor<double>, double);

}  // namespace nt
