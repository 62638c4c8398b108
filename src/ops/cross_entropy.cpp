// cross_entropy: fused log-softmax and negative log-likelihood, averaged over counted rows.
//
//   loss = (1/M) sum_n w_n (lse_n - x_{n, t_n}),   lse_n = log sum_j exp(x_nj),  M = sum_n w_n
//   backward  dx_nj += dloss * (w_n / M) (softmax(x_n)_j - [j == t_n])
//
// w_n is 0 for masked rows (padding) and 1 otherwise; forward keeps lse (N) for backward.
#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/eigen.h"
#include "ops/ops.h"

namespace nt {

namespace {
template <class T>
struct CrossEntropyContext {
  Tensor<T> loss, logits, weight;
  const int32_t* targets;
  const T* lse;  // (N)
  T count;       // M
};

template <class T>
void cross_entropy_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const CrossEntropyContext<T>*>(p);
  const int N = c.logits.rows, V = c.logits.cols;
  const T dloss = c.loss.grad[0];
  const bool assign = writes_first(first, 0);
#pragma omp parallel for schedule(static)
  for (int n = 0; n < N; ++n) {
    const T w = c.weight.data ? c.weight.data[n] : T(1);
    auto dx = RowVecMap<T>(c.logits.grad + int64_t(n) * V, V).array();
    if (w == T(0)) {  // a masked row: no gradient
      if (assign) dx.setZero();
      continue;
    }
    const T k = dloss * w / c.count;
    const auto x = CRowVecMap<T>(c.logits.data + int64_t(n) * V, V).array();
    put(assign, dx, k * (x - c.lse[n]).exp());  // k softmax(x)
    dx(c.targets[n]) -= k;
  }
}
}  // namespace

template <class T>
Tensor<T> cross_entropy(Graph<T>& g, Tensor<T> logits, const int32_t* targets, Tensor<T> weight) {
  const int N = logits.rows, V = logits.cols;
  NT_CHECK(!weight.data || weight.size() == N, "cross_entropy: weight must have one entry per row");
  T* lse = g.buffer(N);
#pragma omp parallel for schedule(static)
  for (int n = 0; n < N; ++n) {  // log-sum-exp of each row
    const auto row = CRowVecMap<T>(logits.data + int64_t(n) * V, V).array();
    const T m = row.maxCoeff();
    lse[n] = m + std::log((row - m).exp().sum());
  }
  T total = 0, count = 0;  // in row order: the same sum for any thread count
  for (int n = 0; n < N; ++n) {
    const T w = weight.data ? weight.data[n] : T(1);
    if (w == T(0)) continue;
    NT_CHECK(targets[n] >= 0 && targets[n] < V, "cross_entropy: target id out of range");
    total += w * (lse[n] - logits.data[int64_t(n) * V + targets[n]]);
    count += w;
  }
  Tensor<T> loss = g.output(1, 1, logits);
  loss.data[0] = count > 0 ? total / count : T(0);
  if (loss.grad && count > 0)
    g.record(cross_entropy_backward_node<T>, CrossEntropyContext<T>{loss, logits, weight, targets, lse, count},
             {logits.grad});
  return loss;
}

template Tensor<float> cross_entropy(Graph<float>&, Tensor<float>, const int32_t*, Tensor<float>);
template Tensor<double> cross_entropy(Graph<double>&, Tensor<double>, const int32_t*, Tensor<double>);

}  // namespace nt
