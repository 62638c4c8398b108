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
// dgamma and dbeta are summed by blocks of rows, then over the blocks in order (core/parallel.h:
// the same bits at any thread count). Each += is = where the node writes that gradient first
// (core/graph.h).
#include <cmath>

#include "core/check.h"
#include "core/eigen.h"
#include "core/parallel.h"
#include "norms/norms.h"

namespace nt {

template <class T>
void layernorm_forward(T* y, T* mean, T* rstd, const T* x, const T* gamma, const T* beta, int N, int C, T eps) {
#pragma omp parallel for schedule(static) num_threads(threads_for(int64_t(N) * C))
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

// partial: (row_blocks(N, C), 3C) scratch: per block the sums of dgamma and dbeta, and a row of dnorm.
template <class T>
void layernorm_backward(T* dx, T* dgamma, T* dbeta, T* partial, const T* dy, const T* x, const T* mean,
                        const T* rstd, const T* gamma, int N, int C, unsigned first) {
  const int blocks = row_blocks(N, C);
  for_row_blocks(N, blocks, [&](int block, int begin, int end) {
    T* mine = partial + int64_t(block) * 3 * C;
    auto dgamma_part = RowVecMap<T>(mine, C).array();
    auto dbeta_part = RowVecMap<T>(mine + C, C).array();
    auto dnorm = RowVecMap<T>(mine + 2 * C, C).array();
    RowVecMap<T>(mine, 2 * C).setZero();
    for (int n = begin; n < end; ++n) {
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
  });
  add_blocks(partial, blocks, 3 * C, 2 * C);  // the blocks' sums into block 0's, then written or added
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
    T* partial = g.buffer(std::size_t(row_blocks(x.rows, x.cols)) * 3 * x.cols);
    g.record(layernorm_backward_node<T>, LayerNormContext<T>{y, x, gamma, beta, mean, rstd, partial},
             {x.grad, gamma.grad, beta.grad});
  }
  return y;
}

template Tensor<float> layernorm(Graph<float>&, Tensor<float>, Tensor<float>, Tensor<float>, float);
template Tensor<double> layernorm(Graph<double>&, Tensor<double>, Tensor<double>, Tensor<double>, double);

// ---- the description ----

namespace {
template <class T>
Tensor<T> fused(Graph<T>& g, Tensor<T> x, const NormArgs<T>& a) {
  return layernorm(g, x, a.gamma, a.beta, a.eps);
}
template <class T>
Tensor<T> composite(Graph<T>& g, Tensor<T> x, const NormArgs<T>& a) {
  return layernorm_composite(g, x, a.gamma, a.beta, a.eps);
}
// Ba et al. 2016 Table 1.
constexpr Invariances kInvariances = {
    .weight_rescale = {true, "LN's per-case mean and std over units both scale with delta, and the ratio does not"},
    .weight_recenter = {true, "LN subtracts the per-case mean across units, "
                              "removing the shift g.x common to all units"},
    .weight_vector_rescale = {false, "scaling one unit changes the per-case mean and std over units unevenly"},
    .data_rescale = {true, "each case's summed inputs scale by delta; LN's per-case statistics absorb it"},
    .data_recenter = {false, "x + c adds W c, a different shift to each unit; "
                             "the per-case mean removes only its average"},
    .case_rescale = {true, "LN normalizes each case by its own statistics, so a per-case scale cancels"},
};

constexpr NormDesc kLayerNorm = {
    .name = "layernorm",
    .gain = ParamShape::per_feature,
    .bias = ParamShape::per_feature,
    .gain_init = gain_one,
    .reduction = Reduction::row,
    .f32 = {fused<float>, composite<float>},
    .f64 = {fused<double>, composite<double>},
    .invariances = kInvariances,
    .centers = true,
    .later_options = true,
    .color = "#0072B2",
};

// DeepNet's x = LN(alpha x + f(x)) (model/transformer.cpp): the norm itself is LayerNorm, so a
// layer's invariances are LayerNorm's and it has no row of its own in the table; the later papers'
// options are defined with LayerNorm in its own placements, not in DeepNet's wiring.
constexpr NormDesc deepnorm_of(NormDesc layernorm) {
  layernorm.applies = layernorm.name;
  layernorm.name = "deepnorm";
  layernorm.later_options = false;
  layernorm.scaled_residual = true;
  layernorm.color = "#009E73";
  return layernorm;
}
}  // namespace

extern const NormDesc kLayerNormDesc = kLayerNorm;
extern const NormDesc kDeepNormDesc = deepnorm_of(kLayerNorm);

}  // namespace nt
