// Dynamic Tanh (Zhu et al. 2025, "Transformers without Normalization"; DynamicTanh of
// jiachenzhu/DyT), elementwise, no statistic and so no eps:
//
//   t = tanh(alpha x),   y = gamma * t + beta
//
// alpha one learnable scalar per site (model.norm.dyt_alpha0 at init, with or without affine);
// gamma (1, C) ones and beta (1, C) zeros at init, as layernorm's: gamma with model.norm.affine,
// beta with affine and model.norm.bias. An absent alpha is 1 (the invariance table's y = tanh(x W^T)).
// Backward, with dt = dy * gamma and tanh' = 1 - t^2:
//   dgamma += sum over rows of dy * t
//   dbeta  += sum over rows of dy
//   dalpha += sum over rows and features of dt (1 - t^2) x
//   dx     += dt (1 - t^2) alpha
// Buffers: x, y (N, C); t (N, C).
#include <cmath>

#include "core/check.h"
#include "core/eigen.h"
#include "core/parallel.h"
#include "norms/norms.h"

namespace nt {

template <class T>
void dyt_forward(T* y, T* t, const T* x, T alpha, const T* gamma, const T* beta, int N, int C) {
#pragma omp parallel for schedule(static) num_threads(threads_for(int64_t(N) * C))
  for (int n = 0; n < N; ++n) {
    auto tr = RowVecMap<T>(t + int64_t(n) * C, C).array();
    tr = (CRowVecMap<T>(x + int64_t(n) * C, C).array() * alpha).tanh();
    auto yr = RowVecMap<T>(y + int64_t(n) * C, C).array();
    if (gamma) yr = tr * CRowVecMap<T>(gamma, C).array();
    else yr = tr;
    if (beta) yr += CRowVecMap<T>(beta, C).array();
  }
}

// partial: (row_blocks(N, C), 1 + 2C + C) scratch: per block of rows the sums of dalpha, dgamma
// and dbeta, and a row of dt (1 - t^2); the blocks' sums added in block order (core/parallel.h).
template <class T>
void dyt_backward(T* dx, T* dalpha, T* dgamma, T* dbeta, T* partial, const T* dy, const T* x, const T* t, T alpha,
                  const T* gamma, int N, int C, unsigned first) {
  const int blocks = row_blocks(N, C);
  const int64_t stride = 1 + 3 * int64_t(C);
  for_row_blocks(N, blocks, [&](int block, int begin, int end) {
    T* mine = partial + block * stride;
    auto dgamma_part = RowVecMap<T>(mine + 1, C).array();
    auto dbeta_part = RowVecMap<T>(mine + 1 + C, C).array();
    auto da = RowVecMap<T>(mine + 1 + 2 * C, C).array();  // dt (1 - t^2): d loss / d (alpha x)
    mine[0] = T(0);
    dgamma_part.setZero();
    dbeta_part.setZero();
    for (int n = begin; n < end; ++n) {
      const auto dyr = CRowVecMap<T>(dy + int64_t(n) * C, C).array();
      const auto tr = CRowVecMap<T>(t + int64_t(n) * C, C).array();
      dgamma_part += dyr * tr;
      dbeta_part += dyr;
      if (gamma) da = dyr * CRowVecMap<T>(gamma, C).array() * (T(1) - tr.square());
      else da = dyr * (T(1) - tr.square());
      mine[0] += (da * CRowVecMap<T>(x + int64_t(n) * C, C).array()).sum();
      if (dx) put(writes_first(first, 0), RowVecMap<T>(dx + int64_t(n) * C, C).array(), da * alpha);
    }
  });
  add_blocks(partial, blocks, stride, 1 + 2 * C);  // the blocks' sums into block 0's, then written or added
  if (dalpha) dalpha[0] = (writes_first(first, 1) ? T(0) : dalpha[0]) + partial[0];
  if (dgamma) put(writes_first(first, 2), RowVecMap<T>(dgamma, C), CRowVecMap<T>(partial + 1, C));
  if (dbeta) put(writes_first(first, 3), RowVecMap<T>(dbeta, C), CRowVecMap<T>(partial + 1 + C, C));
}

namespace {
template <class T>
struct DyTContext {
  Tensor<T> y, x, alpha, gamma, beta;
  const T* t;
  T* partial;
};
template <class T>
void dyt_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const DyTContext<T>*>(p);
  dyt_backward(c.x.grad, c.alpha.grad, c.gamma.grad, c.beta.grad, c.partial, c.y.grad, c.x.data, c.t,
               c.alpha.data ? c.alpha.data[0] : T(1), c.gamma.data, c.x.rows, c.x.cols, first);
}
}  // namespace

template <class T>
Tensor<T> dyt(Graph<T>& g, Tensor<T> x, Tensor<T> alpha, Tensor<T> gamma, Tensor<T> beta) {
  NT_CHECK(!alpha.data || alpha.size() == 1, "dyt: alpha is one scalar");
  NT_CHECK(!gamma.data || gamma.size() == x.cols, "dyt: gamma has one value per feature");
  NT_CHECK(!beta.data || beta.size() == x.cols, "dyt: beta has one value per feature");
  Tensor<T> y = g.output(x.rows, x.cols, x, alpha, gamma, beta);
  T* t = g.buffer(std::size_t(x.size()));
  const T a = alpha.data ? alpha.data[0] : T(1);
  dyt_forward(y.data, t, x.data, a, gamma.data, beta.data, x.rows, x.cols);
  if (y.grad) {
    T* partial = g.buffer(std::size_t(row_blocks(x.rows, x.cols)) * (1 + 3 * std::size_t(x.cols)));
    g.record(dyt_backward_node<T>, DyTContext<T>{y, x, alpha, gamma, beta, t, partial},
             {x.grad, alpha.grad, gamma.grad, beta.grad});
  }
  return y;
}

template Tensor<float> dyt(Graph<float>&, Tensor<float>, Tensor<float>, Tensor<float>, Tensor<float>);
template Tensor<double> dyt(Graph<double>&, Tensor<double>, Tensor<double>, Tensor<double>, Tensor<double>);

// ---- the description ----

namespace {
template <class T>
Tensor<T> fused(Graph<T>& g, Tensor<T> x, const NormArgs<T>& a) {
  return dyt(g, x, a.alpha, a.gamma, a.beta);
}
template <class T>
Tensor<T> composite(Graph<T>& g, Tensor<T> x, const NormArgs<T>& a) {
  return dyt_composite(g, x, a.alpha, a.gamma, a.beta);
}
}  // namespace

extern const NormDesc kDyTDesc = {
    .name = "dyt",
    .gain = ParamShape::per_feature,
    .bias = ParamShape::per_feature,
    .gain_init = gain_one,
    .reduction = Reduction::nothing,
    .f32 = {fused<float>, composite<float>},
    .f64 = {fused<double>, composite<double>},
    // Not in the papers' tables: DyT has no statistic, so nothing a transform does to the summed
    // inputs a = W x is divided out; tanh(alpha a) follows every change of a.
    .invariances = {
        .weight_rescale = {false, "tanh(alpha delta a) is not tanh(alpha a): DyT divides by no statistic"},
        .weight_recenter = {false, "DyT subtracts no mean: the common shift g.x moves every output"},
        .weight_vector_rescale = {false, "unit 0's output becomes tanh(alpha delta a_0)"},
        .data_rescale = {false, "each case's summed inputs scale by delta and tanh follows them"},
        .data_recenter = {false, "x + c adds W c to the summed inputs; DyT has no mean to absorb it"},
        .case_rescale = {false, "case 0's outputs become tanh(alpha delta a): no per-case statistic cancels delta"},
    },
    .alpha = true,
    .transformer_only = true,
    .color = "#999999",
};

}  // namespace nt
