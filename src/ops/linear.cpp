// linear: y = x W^T + b, the PyTorch nn.Linear convention (W is (out, in)).
//
//   forward   y  (N, out) = x (N, in) · W^T (in, out) + b
//   backward  dx (N, in)  += dy · W
//             dW (out, in) += dy^T · x
//             db (1, out) += sum over rows of dy
// With batch_rows, x's rows are some rows of a larger batch (a recurrence's live sequences), and db
// is summed over the whole batch's rows, the absent ones 0: the same bits as over every row.
// With real rows, x is a padded batch and the products run over its real rows alone, gathered
// into buffers of their own (a padding row of y is b, or 0); db is summed over every row of dy.
// step_linear is linear by a weight every step of a recurrence multiplies by: op(W) for the product
// and for dx is prepared once a graph (core/gemm.h), by the first step that needs it, not packed at
// every step.
// (each = instead of += where the node writes that gradient first: core/graph.h)
#include <algorithm>
#include <vector>

#include "core/check.h"
#include "core/eigen.h"
#include "core/gemm.h"
#include "ops/ops.h"

namespace nt {

// w_t: W^T's prepared panels for the product (null: packed by gemm)
template <class T>
void linear_forward(T* y, const T* x, const T* w, const T* b, int N, int in, int out, const T* w_t = nullptr) {
  gemm(false, true, N, out, in, T(1), x, in, w, in, T(0), y, out, b, w_t);
}

// db (1, out) = the column sums of dy (N, out), columns split over the threads (each summed in
// row order: the same result for any thread count).
template <class T>
void bias_gradient(T* db, const T* dy, int N, int out, bool first) {
  constexpr int kCols = 16;
#pragma omp parallel for schedule(static) if (int64_t(N) * out >= 16384)
  for (int j = 0; j < out; j += kCols) {
    const int w = std::min(kCols, out - j);
    put(first, RowVecMap<T>(db + j, w), CMatMap<T>(dy, N, out).middleCols(j, w).colwise().sum());
  }
}

// w_p: W's prepared panels for dx (null: packed by gemm)
template <class T>
void linear_backward(T* dx, T* dw, T* db, const T* dy, const T* x, const T* w, int N, int in, int out, unsigned first,
                     const T* w_p = nullptr) {
  if (dx)
    gemm<T>(false, false, N, in, out, T(1), dy, out, w, in, writes_first(first, 0) ? T(0) : T(1), dx, in, nullptr, w_p);
  if (dw) gemm(true, false, out, in, N, T(1), dy, out, x, in, writes_first(first, 1) ? T(0) : T(1), dw, in);
  if (db) bias_gradient(db, dy, N, out, writes_first(first, 2));
}

namespace {
template <class T>
struct LinearContext {
  Tensor<T> y, x, w, b;
  const int* batch_rows = nullptr;  // with b's gradient: x's rows in a batch of `batch`, dy's rows into batch_dy
  int batch = 0;
  T* batch_dy = nullptr;
  const T* w_p = nullptr;  // step_linear: W's panels for dx
};

template <class T>
void linear_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const LinearContext<T>*>(p);
  const int out = c.w.rows;
  linear_backward(c.x.grad, c.w.grad, c.batch_rows ? nullptr : c.b.grad, c.y.grad, c.x.data, c.w.data, c.x.rows,
                  c.x.cols, out, first, c.w_p);
  if (!c.batch_rows) return;
  std::fill_n(c.batch_dy, int64_t(c.batch) * out, T(0));
  for (int i = 0; i < c.x.rows; ++i)
    std::copy_n(c.y.grad + int64_t(i) * out, out, c.batch_dy + int64_t(c.batch_rows[i]) * out);
  bias_gradient(c.b.grad, c.batch_dy, c.batch, out, writes_first(first, 2));
}

// op(B) of a product by W, prepared once for the graph (null where gemm has nothing to prepare)
template <class T>
const T* prepared_once(Graph<T>& g, const Tensor<T>& w, bool transposed) {
  const int K = transposed ? w.cols : w.rows, N = transposed ? w.rows : w.cols;
  const std::size_t n = prepared_size<T>(transposed, K, N);
  if (n == 0) return nullptr;
  bool fresh = false;
  T* p = g.memo(w.data, uint64_t(K) << 32 | uint64_t(N) << 1 | uint64_t(transposed), n, fresh);
  if (fresh) prepare_b(transposed, K, N, w.data, w.cols, p);
  return p;
}

template <class T>
Tensor<T> linear_rows(Graph<T>& g, Tensor<T> x, Tensor<T> w, Tensor<T> b, const int* batch_rows, int batch,
                      bool prepared) {
  NT_CHECK(x.cols == w.cols, "linear: x and W disagree on the input width");
  NT_CHECK(!b.data || b.size() == w.rows, "linear: bias size != output width");
  const Rows rows{.index = batch_rows};
  NT_CHECK(!batch_rows || (rows.inside(x.rows, batch) && rows.increasing(x.rows)),
           "linear: x's rows lie outside the batch or do not increase");
  Tensor<T> y = g.output(x.rows, w.rows, x, w, b);
  linear_forward(y.data, x.data, w.data, b.data, x.rows, x.cols, w.rows,
                 prepared ? prepared_once(g, w, true) : nullptr);
  if (!y.grad) return y;
  LinearContext<T> c{y, x, w, b};
  if (prepared && x.grad) c.w_p = prepared_once(g, w, false);
  if (batch_rows && b.grad)
    c.batch_rows = g.keep(batch_rows, x.rows), c.batch = batch, c.batch_dy = g.buffer(std::size_t(batch) * w.rows);
  g.record(linear_backward_node<T>, c, {x.grad, w.grad, b.grad});
  return y;
}
}  // namespace

template <class T>
Tensor<T> linear(Graph<T>& g, Tensor<T> x, Tensor<T> w, Tensor<T> b, const int* batch_rows, int batch) {
  return linear_rows(g, x, w, b, batch_rows, batch, false);
}

template <class T>
Tensor<T> step_linear(Graph<T>& g, Tensor<T> x, Tensor<T> w, Tensor<T> b, const int* batch_rows, int batch) {
  return linear_rows(g, x, w, b, batch_rows, batch, true);
}

namespace {
// dst's rows 0..n = src's rows index[0..n), C wide
template <class T>
void gather_rows(T* dst, const T* src, const int* index, int n, int C) {
  for (int r = 0; r < n; ++r) std::copy_n(src + int64_t(index[r]) * C, C, dst + int64_t(r) * C);
}

// A buffer of the thread's for n entries, for the products' real rows while one op runs
template <class T>
T* scratch(int slot, std::size_t n) {
  thread_local std::vector<T, Eigen::aligned_allocator<T>> buffers[2];
  if (buffers[slot].size() < n) buffers[slot].resize(n);
  return buffers[slot].data();
}

template <class T>
struct RealRowsContext {
  Tensor<T> y, x, w, b;
  RealRows real;
  const T* x_real;  // x's real rows, gathered by the forward
};

template <class T>
void real_rows_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const RealRowsContext<T>*>(p);
  const int N = c.x.rows, in = c.x.cols, out = c.w.rows, n = c.real.count;
  T *dy_real = scratch<T>(0, std::size_t(n) * out), *dx_real = scratch<T>(1, std::size_t(n) * in);
  gather_rows(dy_real, c.y.grad, c.real.index, n, out);
  // written in the order of record()'s list: W's gradient, b's, x's (dx_real is written, never added to)
  linear_backward<T>(c.x.grad ? dx_real : nullptr, c.w.grad, nullptr, dy_real, c.x_real, c.w.data, n, in, out,
                     1u | (writes_first(first, 0) ? 2u : 0u));
  if (c.b.grad) bias_gradient(c.b.grad, c.y.grad, N, out, writes_first(first, 1));
  if (!c.x.grad) return;
  const bool put_first = writes_first(first, 2);
  for (int i = 0, r = 0; i < N; ++i) {
    T* dx = c.x.grad + int64_t(i) * in;
    if (r < n && c.real.index[r] == i) {
      const T* d = dx_real + int64_t(r++) * in;
      for (int k = 0; k < in; ++k) dx[k] = put_first ? d[k] : dx[k] + d[k];
    } else if (put_first) {
      std::fill_n(dx, in, T(0));
    }
  }
}
}  // namespace

template <class T>
Tensor<T> linear(Graph<T>& g, Tensor<T> x, Tensor<T> w, Tensor<T> b, RealRows real) {
  if (!real.index) return linear(g, x, w, b);
  NT_CHECK(x.cols == w.cols, "linear: x and W disagree on the input width");
  NT_CHECK(!b.data || b.size() == w.rows, "linear: bias size != output width");
  const Rows rows{.index = real.index};
  NT_CHECK(real.count >= 0 && rows.inside(real.count, x.rows) && rows.increasing(real.count),
           "linear: the real rows lie outside x or do not increase");
  const int N = x.rows, in = x.cols, out = w.rows, n = real.count;
  Tensor<T> y = g.output(N, out, x, w, b);
  T* x_real = y.grad ? g.buffer(std::size_t(n) * in) : scratch<T>(1, std::size_t(n) * in);  // kept for W's gradient
  T* y_real = scratch<T>(0, std::size_t(n) * out);
  gather_rows(x_real, x.data, real.index, n, in);
  linear_forward(y_real, x_real, w.data, b.data, n, in, out);
  for (int i = 0, r = 0; i < N; ++i) {
    T* row = y.data + int64_t(i) * out;
    if (r < n && real.index[r] == i)
      std::copy_n(y_real + int64_t(r++) * out, out, row);
    else if (b.data)
      std::copy_n(b.data, out, row);
    else
      std::fill_n(row, out, T(0));
  }
  if (!y.grad) return y;
  const RealRowsContext<T> c{y, x, w, b, {g.keep(real.index, n), n}, x_real};
  g.record(real_rows_backward_node<T>, c, {w.grad, b.grad, x.grad});
  return y;
}

template <class T>
Tensor<T> linear(Graph<T>& g, Tensor<T> x, Tensor<T> w, Tensor<T> b) {
  return linear(g, x, w, b, nullptr, x.rows);
}

template Tensor<float> linear(Graph<float>&, Tensor<float>, Tensor<float>, Tensor<float>);
template Tensor<double> linear(Graph<double>&, Tensor<double>, Tensor<double>, Tensor<double>);
template Tensor<float> linear(Graph<float>&, Tensor<float>, Tensor<float>, Tensor<float>, const int*, int);
template Tensor<double> linear(Graph<double>&, Tensor<double>, Tensor<double>, Tensor<double>, const int*, int);
template Tensor<float> linear(Graph<float>&, Tensor<float>, Tensor<float>, Tensor<float>, RealRows);
template Tensor<double> linear(Graph<double>&, Tensor<double>, Tensor<double>, Tensor<double>, RealRows);
template Tensor<float> step_linear(Graph<float>&, Tensor<float>, Tensor<float>, Tensor<float>, const int*, int);
template Tensor<double> step_linear(Graph<double>&, Tensor<double>, Tensor<double>, Tensor<double>, const int*, int);

}  // namespace nt
