// Reductions: sum and mean over rows (axis 0 -> (1, C)), over columns (axis 1 -> (N, 1))
// or over everything (axis -1 -> (1, 1)).
//   backward  dx_rc += k * dy[broadcast(r, c)],  k = 1 (sum) or 1/count (mean)
#include "core/check.h"
#include "core/eigen.h"
#include "ops/ops.h"

namespace nt {

namespace {
template <class T>
struct ReduceContext {
  Tensor<T> y, x;
  T k;
};

template <class T>
void reduce_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const ReduceContext<T>*>(p);
  const bool assign = writes_first(first, 0);
  for (int r = 0; r < c.x.rows; ++r)
    for (int col = 0; col < c.x.cols; ++col) {
      T& dx = c.x.grad[int64_t(r) * c.x.cols + col];
      dx = (assign ? T(0) : dx) + c.k * c.y.grad[int64_t(c.y.rows == 1 ? 0 : r) * c.y.cols + (c.y.cols == 1 ? 0 : col)];
    }
}

template <class T>
Tensor<T> reduce(Graph<T>& g, Tensor<T> x, int axis, bool average) {
  NT_CHECK(axis >= -1 && axis <= 1, "reduce: axis must be -1, 0 or 1");
  auto X = data_of(x);
  Tensor<T> y;
  T count;
  if (axis == 0) {
    y = g.output(1, x.cols, x);
    data_of(y) = X.colwise().sum();
    count = T(x.rows);
  } else if (axis == 1) {
    y = g.output(x.rows, 1, x);
    data_of(y) = X.rowwise().sum();
    count = T(x.cols);
  } else {
    y = g.output(1, 1, x);
    y.data[0] = X.sum();
    count = T(x.size());
  }
  const T k = average ? T(1) / count : T(1);
  if (average) data_of(y) *= k;
  if (y.grad) g.record(reduce_backward_node<T>, ReduceContext<T>{y, x, k}, {x.grad});
  return y;
}
}  // namespace

template <class T>
Tensor<T> sum(Graph<T>& g, Tensor<T> x, int axis) { return reduce(g, x, axis, false); }
template <class T>
Tensor<T> mean(Graph<T>& g, Tensor<T> x, int axis) { return reduce(g, x, axis, true); }

#define NT_INSTANTIATE(T)                                  \
  template Tensor<T> sum(Graph<T>&, Tensor<T>, int);       \
  template Tensor<T> mean(Graph<T>&, Tensor<T>, int);
NT_INSTANTIATE(float)
NT_INSTANTIATE(double)

}  // namespace nt
