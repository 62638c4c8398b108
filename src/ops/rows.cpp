// The rows of one time step of a (B*T, C) sequence, batch-major (row b*T + t): what a recurrence
// reads at step t, and where it writes its state.
//
//   take_rows  y (count, C) = x rows first + i * stride, i < count      dx[rows] += dy
//   put_rows   y rows first + i * stride = x (count, C), into a graph tensor y the caller made
//              with a gradient; y's consumers write its gradient          dx += dy[rows]
//   keep_rows  y row i = next row i where mask[i * stride] is non-zero, else prev row i: a
//              recurrence's state left unchanged on padding     dnext, dprev: dy where each was kept
//   masked_mean_rows  y (B, C) row b = the mean of x's rows b*S + j over the j with mask[b*S + j]
//              non-zero (a row with none: 0)                      dx row b*S + j = dy row b / count
// take_rows writes x's whole gradient when it is first (zeros outside its rows, core/graph.h):
// the steps' other take_rows add theirs.
#include <algorithm>
#include <cstring>
#include <tuple>

#include "core/check.h"
#include "core/eigen.h"
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
struct KeepContext {
  Tensor<T> y, next, prev;
  const float* mask;
  int stride;
};

template <class T>
void keep_rows_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const KeepContext<T>*>(p);
  const int C = c.y.cols;
  for (const auto& [x, slot, kept] : {std::tuple{c.next, 0, true}, std::tuple{c.prev, 1, false}}) {
    if (!x.grad) continue;
    const bool write = writes_first(first, slot);
    for (int i = 0; i < c.y.rows; ++i) {
      const bool from_x = (c.mask[int64_t(i) * c.stride] != 0.0f) == kept;
      VecMap<T> dx(x.grad + int64_t(i) * C, C);
      if (from_x) put(write, dx, CVecMap<T>(c.y.grad + int64_t(i) * C, C));
      else if (write) dx.setZero();
    }
  }
}

template <class T>
struct MeanContext {
  Tensor<T> y, x;
  const float* mask;
  int S;
};

template <class T>
void masked_mean_rows_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const MeanContext<T>*>(p);
  const int C = c.x.cols;
  const bool write = writes_first(first, 0);
  for (int b = 0; b < c.y.rows; ++b) {
    int count = 0;
    for (int j = 0; j < c.S; ++j) count += c.mask[int64_t(b) * c.S + j] != 0.0f;
    const CVecMap<T> dy(c.y.grad + int64_t(b) * C, C);
    for (int j = 0; j < c.S; ++j) {
      VecMap<T> dx(c.x.grad + (int64_t(b) * c.S + j) * C, C);
      if (c.mask[int64_t(b) * c.S + j] != 0.0f) put(write, dx, dy / T(count));
      else if (write) dx.setZero();
    }
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

template <class T>
Tensor<T> keep_rows(Graph<T>& g, Tensor<T> next, Tensor<T> prev, const float* mask, int stride) {
  NT_CHECK(next.rows == prev.rows && next.cols == prev.cols && mask && stride >= 1,
           "keep_rows: next and prev must have the same shape, and a mask is needed");
  const int C = next.cols;
  Tensor<T> y = g.output(next.rows, C, next, prev);
  for (int i = 0; i < next.rows; ++i) {
    const T* src = (mask[int64_t(i) * stride] != 0.0f ? next.data : prev.data) + int64_t(i) * C;
    std::memcpy(y.data + int64_t(i) * C, src, sizeof(T) * C);
  }
  if (y.grad) g.record(keep_rows_backward_node<T>, KeepContext<T>{y, next, prev, mask, stride}, {next.grad, prev.grad});
  return y;
}

template <class T>
Tensor<T> masked_mean_rows(Graph<T>& g, Tensor<T> x, const float* mask, int B, int S) {
  NT_CHECK(x.rows == B * S && mask, "masked_mean_rows: x must be (B*S, C), with a mask");
  const int C = x.cols;
  Tensor<T> y = g.output(B, C, x);
  for (int b = 0; b < B; ++b) {
    T* yb = y.data + int64_t(b) * C;
    std::fill_n(yb, C, T(0));
    int count = 0;
    for (int j = 0; j < S; ++j) {
      if (mask[int64_t(b) * S + j] == 0.0f) continue;
      ++count;
      const T* xr = x.data + (int64_t(b) * S + j) * C;
      for (int k = 0; k < C; ++k) yb[k] += xr[k];
    }
    if (count)
      for (int k = 0; k < C; ++k) yb[k] /= T(count);
  }
  if (y.grad) g.record(masked_mean_rows_backward_node<T>, MeanContext<T>{y, x, mask, S}, {x.grad});
  return y;
}

#define NT_INSTANTIATE(T)                                                                \
  template Tensor<T> take_rows(Graph<T>&, Tensor<T>, int, int, int);                     \
  template void put_rows(Graph<T>&, Tensor<T>, Tensor<T>, int, int);                     \
  template Tensor<T> keep_rows(Graph<T>&, Tensor<T>, Tensor<T>, const float*, int);      \
  template Tensor<T> masked_mean_rows(Graph<T>&, Tensor<T>, const float*, int, int);
NT_INSTANTIATE(float)
NT_INSTANTIATE(double)

}  // namespace nt
