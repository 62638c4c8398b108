// ScaleNorm (Nguyen & Salazar 2019, "Transformers without Tears"), per row over its C features,
// with one scalar gain g shared by every feature:
//
//   rnorm = 1 / sqrt(sum_j x_j^2 + eps)      (eps inside the root, as in our RMSNorm: smooth
//                                              everywhere. The paper's code clamps ||x|| at eps
//                                              instead; the two differ by eps / (2 ||x||^2),
//                                              relative, wherever ||x||^2 >> eps)
//   xhat = x * rnorm,                          y = g * xhat
//
// g starts at sqrt(C) (the paper's init), so that at init y = x / sqrt(mean(x^2) + eps / C):
// RMSNorm with gain 1. Without a gain (affine off) g = 1, y = x / ||x||.
// Backward, with dnorm = dy * g:
//   dg += sum over the rows and features of dy * xhat
//   dx += rnorm * (dnorm - xhat * sum_j(dnorm_j xhat_j))
//         term 1   term 2
// Buffers: x, y (N, C); rnorm (N).
#include <cmath>

#include "core/check.h"
#include "core/eigen.h"
#include "core/parallel.h"
#include "norms/norms.h"

namespace nt {

template <class T>
void scalenorm_forward(T* y, T* rnorm, const T* x, const T* gamma, int N, int C, T eps) {
  const T g = gamma ? gamma[0] : T(1);
#pragma omp parallel for schedule(static) num_threads(threads_for(int64_t(N) * C))
  for (int n = 0; n < N; ++n) {
    const auto xr = CRowVecMap<T>(x + int64_t(n) * C, C).array();
    const T r = T(1) / std::sqrt(xr.square().sum() + eps);
    RowVecMap<T>(y + int64_t(n) * C, C).array() = xr * (r * g);
    rnorm[n] = r;
  }
}

// partial: (row_blocks(N, C), 1 + C) scratch: per block of rows the sum of dg, and a row of
// dnorm; the blocks' sums added in block order (core/parallel.h).
template <class T>
void scalenorm_backward(T* dx, T* dgamma, T* partial, const T* dy, const T* x, const T* rnorm, const T* gamma, int N,
                        int C, unsigned first) {
  const int blocks = row_blocks(N, C);
  const T g = gamma ? gamma[0] : T(1);
  for_row_blocks(N, blocks, [&](int block, int begin, int end) {
    T* mine = partial + int64_t(block) * (1 + C);
    auto dnorm = RowVecMap<T>(mine + 1, C).array();
    mine[0] = T(0);
    for (int n = begin; n < end; ++n) {
      const auto dyr = CRowVecMap<T>(dy + int64_t(n) * C, C).array();
      const auto xhat = CRowVecMap<T>(x + int64_t(n) * C, C).array() * rnorm[n];
      mine[0] += (dyr * xhat).sum();
      if (!dx) continue;
      dnorm = dyr * g;
      const T dnorm_xhat = (dnorm * xhat).sum();
      put(writes_first(first, 0), RowVecMap<T>(dx + int64_t(n) * C, C).array(),
          rnorm[n] * (dnorm - xhat * dnorm_xhat));  // term 1 - term 2
    }
  });
  add_blocks(partial, blocks, 1 + C, 1);  // the blocks' sums in block order, then written or added
  const T dg = partial[0];
  if (dgamma) dgamma[0] = (writes_first(first, 1) ? T(0) : dgamma[0]) + dg;
}

namespace {
template <class T>
struct ScaleNormContext {
  Tensor<T> y, x, gamma;
  const T* rnorm;
  T* partial;
};
template <class T>
void scalenorm_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const ScaleNormContext<T>*>(p);
  scalenorm_backward(c.x.grad, c.gamma.grad, c.partial, c.y.grad, c.x.data, c.rnorm, c.gamma.data, c.x.rows,
                     c.x.cols, first);
}
}  // namespace

template <class T>
Tensor<T> scalenorm(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, T eps) {
  NT_CHECK(!gamma.data || gamma.size() == 1, "scalenorm: the gain is one scalar");
  Tensor<T> y = g.output(x.rows, x.cols, x, gamma);
  T* rnorm = g.buffer(x.rows);
  scalenorm_forward(y.data, rnorm, x.data, gamma.data, x.rows, x.cols, eps);
  if (y.grad) {
    T* partial = g.buffer(std::size_t(row_blocks(x.rows, x.cols)) * (1 + x.cols));
    g.record(scalenorm_backward_node<T>, ScaleNormContext<T>{y, x, gamma, rnorm, partial}, {x.grad, gamma.grad});
  }
  return y;
}

template Tensor<float> scalenorm(Graph<float>&, Tensor<float>, Tensor<float>, float);
template Tensor<double> scalenorm(Graph<double>&, Tensor<double>, Tensor<double>, double);

// ---- the description ----

namespace {
template <class T>
Tensor<T> fused(Graph<T>& g, Tensor<T> x, const NormArgs<T>& a) {
  return scalenorm(g, x, a.gamma, a.eps);
}
template <class T>
Tensor<T> composite(Graph<T>& g, Tensor<T> x, const NormArgs<T>& a) {
  return scalenorm_composite(g, x, a.gamma, a.eps);
}
}  // namespace

extern const NormDesc kScaleNormDesc = {
    .name = "scalenorm",
    .gain = ParamShape::scalar,
    .bias = ParamShape::absent,
    .gain_init = [](int C) { return std::sqrt(double(C)); },
    .reduction = Reduction::row,
    .f32 = {fused<float>, composite<float>},
    .f64 = {fused<double>, composite<double>},
    // Not in the papers' tables: ||a|| = sqrt(H) RMS(a), so ScaleNorm is RMSNorm up to a constant and
    // its invariances are RMSNorm's (Zhang & Sennrich 2019 Table 1).
    .invariances = {
        .weight_rescale = {true, "||delta a|| = delta ||a||, so a/||a|| is unchanged"},
        .weight_recenter = {false, "ScaleNorm subtracts no mean: the common shift g.x changes a/||a||"},
        .weight_vector_rescale = {false, "scaling one unit changes the per-case norm over units unevenly"},
        .data_rescale = {true, "each case's summed inputs scale by delta and so does their norm"},
        .data_recenter = {false, "x + c adds W c to the summed inputs; ScaleNorm has no mean to absorb it"},
        .case_rescale = {true, "ScaleNorm normalizes each case by its own norm, so a per-case scale cancels"},
    },
    .color = "#56B4E9",
};

}  // namespace nt
