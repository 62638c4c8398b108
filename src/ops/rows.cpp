// The rows of one time step of a (B*T, C) sequence, batch-major (row b*T + t): what a recurrence
// reads at step t, and where it writes its state.
//
//   take_rows  y (count, C) = x rows first + i * stride, i < count      dx[rows] += dy
//   put_rows   y rows first + i * stride = x (count, C), into a graph tensor y the caller made
//              with a gradient; y's consumers write its gradient          dx += dy[rows]
// take_rows writes x's whole gradient when it is first (zeros outside its rows, core/graph.h):
// the steps' other take_rows add theirs.
#include <algorithm>
#include <cstring>

#include "core/check.h"
#include "ops/ops.h"

namespace nt {

namespace {
template <class T>
struct RowsContext {
  Tensor<T> seq, step;  // the (B*T, C) sequence and the (count, C) rows of one step
  int first, stride;
};

template <class T>
void take_rows_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const RowsContext<T>*>(p);
  const int C = c.step.cols;
  if (writes_first(first, 0)) std::fill(c.seq.grad, c.seq.grad + c.seq.size(), T(0));
  for (int i = 0; i < c.step.rows; ++i) {
    T* dx = c.seq.grad + (int64_t(c.first) + int64_t(i) * c.stride) * C;
    const T* dy = c.step.grad + int64_t(i) * C;
    for (int j = 0; j < C; ++j) dx[j] += dy[j];
  }
}

template <class T>
void put_rows_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const RowsContext<T>*>(p);
  const int C = c.step.cols;
  const bool write = writes_first(first, 0);
  for (int i = 0; i < c.step.rows; ++i) {
    const T* dy = c.seq.grad + (int64_t(c.first) + int64_t(i) * c.stride) * C;
    T* dx = c.step.grad + int64_t(i) * C;
    for (int j = 0; j < C; ++j) dx[j] = write ? dy[j] : dx[j] + dy[j];
  }
}

template <class T>
void check_rows(Tensor<T> seq, int count, int cols, int first, int stride, const char* op) {
  NT_CHECK(seq.cols == cols && first >= 0 && stride >= 1 && count >= 1 &&
               int64_t(first) + int64_t(count - 1) * stride < seq.rows,
           std::string(op) + ": the rows lie outside the sequence");
}
}  // namespace

template <class T>
Tensor<T> take_rows(Graph<T>& g, Tensor<T> x, int first, int count, int stride) {
  check_rows(x, count, x.cols, first, stride, "take_rows");
  Tensor<T> y = g.output(count, x.cols, x);
  for (int i = 0; i < count; ++i)
    std::memcpy(y.data + int64_t(i) * x.cols, x.data + (int64_t(first) + int64_t(i) * stride) * x.cols,
                sizeof(T) * x.cols);
  if (y.grad) g.record(take_rows_backward_node<T>, RowsContext<T>{x, y, first, stride}, {x.grad});
  return y;
}

template <class T>
void put_rows(Graph<T>& g, Tensor<T> y, Tensor<T> x, int first, int stride) {
  check_rows(y, x.rows, x.cols, first, stride, "put_rows");
  for (int i = 0; i < x.rows; ++i)
    std::memcpy(y.data + (int64_t(first) + int64_t(i) * stride) * x.cols, x.data + int64_t(i) * x.cols,
                sizeof(T) * x.cols);
  if (x.grad) {
    NT_CHECK(y.grad != nullptr, "put_rows: the sequence needs a gradient when the rows have one");
    g.record(put_rows_backward_node<T>, RowsContext<T>{y, x, first, stride}, {x.grad});
  }
}

#define NT_INSTANTIATE(T)                                                  \
  template Tensor<T> take_rows(Graph<T>&, Tensor<T>, int, int, int);       \
  template void put_rows(Graph<T>&, Tensor<T>, Tensor<T>, int, int);
NT_INSTANTIATE(float)
NT_INSTANTIATE(double)

}  // namespace nt
