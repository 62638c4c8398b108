// The rows of one time step of a (B*T, C) sequence, batch-major (row b*T + t): what a recurrence
// reads at step t, and where it writes its state.
//
//   take_rows  y (count, C) = x rows rows[i], i < count (a zero row for an index -1: a recurrence's
//              state where its sequence starts)                         dx[rows] += dy
//   put_rows   y rows rows[i] = x (count, C), into a graph tensor y the caller made with a
//              gradient; y's consumers write its gradient                 dx += dy[rows]
//   masked_mean_rows  y (B, C) row b = the mean of x's rows b*S + j over the j with mask[b*S + j]
//              non-zero (a row with none: 0)                      dx row b*S + j = dy row b / count
//   real_rows  the rows a padding mask marks real, for the ops that skip a padded batch's padding
// take_rows writes x's whole gradient when it is first (zeros outside its rows, core/graph.h):
// the steps' other take_rows add theirs.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/check.h"
#include "core/eigen.h"
#include "ops/ops.h"

namespace nt {

namespace {
template <class T>
struct RowsContext {
  Tensor<T> seq, step;  // the (B*T, C) sequence and the (count, C) rows of one step
  Rows rows;
};

template <class T>
void take_rows_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const RowsContext<T>*>(p);
  const int C = c.step.cols;
  if (writes_first(first, 0)) std::fill(c.seq.grad, c.seq.grad + c.seq.size(), T(0));
  for (int i = 0; i < c.step.rows; ++i) {
    if (c.rows[i] < 0) continue;
    T* dx = c.seq.grad + c.rows[i] * C;
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
    const T* dy = c.seq.grad + c.rows[i] * C;
    T* dx = c.step.grad + int64_t(i) * C;
    for (int j = 0; j < C; ++j) dx[j] = write ? dy[j] : dx[j] + dy[j];
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
void check_rows(Tensor<T> seq, int count, int cols, Rows rows, bool zero_rows, bool increasing, const char* op) {
  NT_CHECK(seq.cols == cols && count >= 1 && rows.inside(count, seq.rows, zero_rows) &&
               (!increasing || rows.increasing(count)),
           std::string(op) + (increasing ? ": the rows lie outside the sequence or do not increase"
                                         : ": the rows lie outside the sequence"));
}
}  // namespace

template <class T>
Tensor<T> take_rows(Graph<T>& g, Tensor<T> x, Rows rows, int count) {
  check_rows(x, count, x.cols, rows, true, false, "take_rows");
  Tensor<T> y = g.output(count, x.cols, x);
  for (int i = 0; i < count; ++i) {
    T* to = y.data + int64_t(i) * x.cols;
    if (rows[i] < 0)
      std::fill_n(to, x.cols, T(0));
    else
      std::memcpy(to, x.data + rows[i] * x.cols, sizeof(T) * x.cols);
  }
  if (rows.index) rows.index = g.keep(rows.index, count);
  if (y.grad) g.record(take_rows_backward_node<T>, RowsContext<T>{x, y, rows}, {x.grad});
  return y;
}

template <class T>
void put_rows(Graph<T>& g, Tensor<T> y, Tensor<T> x, Rows rows) {
  check_rows(y, x.rows, x.cols, rows, false, true, "put_rows");
  for (int i = 0; i < x.rows; ++i)
    std::memcpy(y.data + rows[i] * x.cols, x.data + int64_t(i) * x.cols, sizeof(T) * x.cols);
  if (x.grad) {
    NT_CHECK(y.grad != nullptr, "put_rows: the sequence needs a gradient when the rows have one");
    if (rows.index) rows.index = g.keep(rows.index, x.rows);
    g.record(put_rows_backward_node<T>, RowsContext<T>{y, x, rows}, {x.grad});
  }
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

template <class T>
RealRows real_rows(Graph<T>& g, const float* mask, int N) {
  if (!mask) return {};
  thread_local std::vector<int> index;
  index.clear();
  for (int i = 0; i < N; ++i)
    if (mask[i] != 0.0f) index.push_back(i);
  const int n = int(index.size());
  return n == N ? RealRows{} : RealRows{g.keep(index.data(), index.size()), n};
}

#define NT_INSTANTIATE(T)                                        \
  template Tensor<T> take_rows(Graph<T>&, Tensor<T>, Rows, int); \
  template void put_rows(Graph<T>&, Tensor<T>, Tensor<T>, Rows); \
  template Tensor<T> masked_mean_rows(Graph<T>&, Tensor<T>, const float*, int, int); \
  template RealRows real_rows(Graph<T>&, const float*, int);
NT_INSTANTIATE(float)
NT_INSTANTIATE(double)

}  // namespace nt
