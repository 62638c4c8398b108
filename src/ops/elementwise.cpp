// Elementwise arithmetic with broadcasting of the second operand.
//
//   add    y = a + b        da += dy             db += reduce(dy)
//   mul    y = a * b        da += dy * b         db += reduce(dy * a)
//   scale  y = s * a        da += s * dy
//   shift  y = a + t        da += dy
//   axpby  y = alpha*a + b  da += alpha * dy     db += dy
//   rsqrt  y = (a + eps)^(-1/2)                  da += dy * (-1/2) y^3
//   residual  y = alpha x + f + b, b (1, C) on every row (the bias of f's last Linear folded in)
//             dx += alpha dy,  df += dy,  db += sum over rows of dy (by blocks of rows, then in
//             block order: core/parallel.h)
//
// b is (N, C) like a, or (N, 1), (1, C), (1, 1); reduce() sums dy over the broadcast axes.
// Each += is = where the node writes that gradient first (core/graph.h); a broadcast gradient,
// summed over many elements, is zeroed first instead.
#include <algorithm>

#include "core/check.h"
#include "core/eigen.h"
#include "core/parallel.h"
#include "ops/ops.h"

#include <cmath>

namespace nt {

namespace {

// Index of b's element that pairs with a's element (r, c).
template <class T>
struct Broadcast {
  int rows_b, cols_b;
  int64_t operator()(int r, int c) const { return int64_t(rows_b == 1 ? 0 : r) * cols_b + (cols_b == 1 ? 0 : c); }
};

template <class T>
Broadcast<T> broadcast_of(const Tensor<T>& a, const Tensor<T>& b, const char* op) {
  NT_CHECK((b.rows == a.rows || b.rows == 1) && (b.cols == a.cols || b.cols == 1),
           std::string(op) + ": second operand does not broadcast to the first");
  return {b.rows, b.cols};
}

template <class T>
struct BinaryContext {
  Tensor<T> y, a, b;
};

template <class T>
bool same_shape(const Tensor<T>& a, const Tensor<T>& b) { return a.rows == b.rows && a.cols == b.cols; }

// A broadcast operand's gradient gathers many terms: zeroed when written first, then added to.
template <class T>
void zero_if_first(const Tensor<T>& b, bool first) {
  if (first) std::fill(b.grad, b.grad + b.size(), T(0));
}

template <class T>
VecMap<T> chunk(T* p, int64_t begin, int64_t n) { return VecMap<T>(p + begin, n); }

template <class T>
void add_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const BinaryContext<T>*>(p);
  const bool same = c.b.grad && same_shape(c.a, c.b);  // the residual connections
  parallel_chunks(c.y.size(), [&](int64_t i, int64_t n) {
    if (c.a.grad) put(writes_first(first, 0), chunk(c.a.grad, i, n), chunk(c.y.grad, i, n));
    if (same) put(writes_first(first, 1), chunk(c.b.grad, i, n), chunk(c.y.grad, i, n));
  });
  if (!c.b.grad || same) return;
  zero_if_first(c.b, writes_first(first, 1));
  const Broadcast<T> at{c.b.rows, c.b.cols};
  for (int r = 0; r < c.a.rows; ++r)
    for (int col = 0; col < c.a.cols; ++col) c.b.grad[at(r, col)] += c.y.grad[int64_t(r) * c.a.cols + col];
}

template <class T>
void mul_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const BinaryContext<T>*>(p);
  const Broadcast<T> at{c.b.rows, c.b.cols};
  const bool first_a = writes_first(first, 0), first_b = writes_first(first, 1), broadcast = !same_shape(c.a, c.b);
  if (c.b.grad && broadcast) zero_if_first(c.b, first_b);
  for (int r = 0; r < c.a.rows; ++r)
    for (int col = 0; col < c.a.cols; ++col) {
      const int64_t i = int64_t(r) * c.a.cols + col;
      const T dy = c.y.grad[i];
      // a before b: when both are one buffer (mul(x, x)), a's write comes first
      if (c.a.grad) c.a.grad[i] = (first_a ? T(0) : c.a.grad[i]) + dy * c.b.data[at(r, col)];
      if (c.b.grad) c.b.grad[at(r, col)] = (first_b && !broadcast ? T(0) : c.b.grad[at(r, col)]) + dy * c.a.data[i];
    }
}

template <class T>
struct ScaleContext {
  Tensor<T> y, a, b;
  T s;
};

template <class T>
void scale_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const ScaleContext<T>*>(p);
  parallel_chunks(c.y.size(), [&](int64_t i, int64_t n) {
    if (c.a.grad) put(writes_first(first, 0), chunk(c.a.grad, i, n), c.s * chunk(c.y.grad, i, n));
    if (c.b.grad) put(writes_first(first, 1), chunk(c.b.grad, i, n), chunk(c.y.grad, i, n));
  });
}

template <class T>
void rsqrt_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const ScaleContext<T>*>(p);
  const bool assign = writes_first(first, 0);
  for (int64_t i = 0; i < c.a.size(); ++i) {
    const T y = c.y.data[i];
    c.a.grad[i] = (assign ? T(0) : c.a.grad[i]) + c.y.grad[i] * T(-0.5) * y * y * y;
  }
}

}  // namespace

template <class T>
Tensor<T> add(Graph<T>& g, Tensor<T> a, Tensor<T> b) {
  const auto at = broadcast_of(a, b, "add");
  Tensor<T> y = g.output(a.rows, a.cols, a, b);
  if (same_shape(a, b))
    parallel_chunks(y.size(),
                    [&](int64_t i, int64_t n) { chunk(y.data, i, n) = chunk(a.data, i, n) + chunk(b.data, i, n); });
  else
    for (int r = 0; r < a.rows; ++r)
      for (int c = 0; c < a.cols; ++c) y(r, c) = a(r, c) + b.data[at(r, c)];
  if (y.grad) g.record(add_backward_node<T>, BinaryContext<T>{y, a, b}, {a.grad, b.grad});
  return y;
}

template <class T>
Tensor<T> mul(Graph<T>& g, Tensor<T> a, Tensor<T> b) {
  const auto at = broadcast_of(a, b, "mul");
  Tensor<T> y = g.output(a.rows, a.cols, a, b);
  for (int r = 0; r < a.rows; ++r)
    for (int c = 0; c < a.cols; ++c) y(r, c) = a(r, c) * b.data[at(r, c)];
  if (y.grad) g.record(mul_backward_node<T>, BinaryContext<T>{y, a, b}, {a.grad, b.grad});
  return y;
}

template <class T>
Tensor<T> scale(Graph<T>& g, Tensor<T> a, T s) {
  Tensor<T> y = g.output(a.rows, a.cols, a);
  parallel_chunks(y.size(), [&](int64_t i, int64_t n) { chunk(y.data, i, n) = s * chunk(a.data, i, n); });
  if (y.grad) g.record(scale_backward_node<T>, ScaleContext<T>{y, a, Tensor<T>{}, s}, {a.grad});
  return y;
}

template <class T>
Tensor<T> shift(Graph<T>& g, Tensor<T> a, T t) {
  Tensor<T> y = g.output(a.rows, a.cols, a);
  parallel_chunks(y.size(),
                  [&](int64_t i, int64_t n) { chunk(y.data, i, n).array() = chunk(a.data, i, n).array() + t; });
  if (y.grad) g.record(scale_backward_node<T>, ScaleContext<T>{y, a, Tensor<T>{}, T(1)}, {a.grad});
  return y;
}

template <class T>
Tensor<T> axpby(Graph<T>& g, T alpha, Tensor<T> a, Tensor<T> b) {
  NT_CHECK(a.rows == b.rows && a.cols == b.cols, "axpby: shapes differ");
  Tensor<T> y = g.output(a.rows, a.cols, a, b);
  parallel_chunks(
      y.size(), [&](int64_t i, int64_t n) { chunk(y.data, i, n) = alpha * chunk(a.data, i, n) + chunk(b.data, i, n); });
  if (y.grad) g.record(scale_backward_node<T>, ScaleContext<T>{y, a, b, alpha}, {a.grad, b.grad});
  return y;
}

template <class T>
Tensor<T> rsqrt(Graph<T>& g, Tensor<T> a, T eps) {
  Tensor<T> y = g.output(a.rows, a.cols, a);
  for (int64_t i = 0; i < a.size(); ++i) y.data[i] = T(1) / std::sqrt(a.data[i] + eps);
  if (y.grad) g.record(rsqrt_backward_node<T>, ScaleContext<T>{y, a, Tensor<T>{}, eps}, {a.grad});
  return y;
}

namespace {
template <class T>
struct ResidualContext {
  Tensor<T> y, x, f, b;
  T alpha;
  T* partial;  // (row_blocks, C): each block's sum of dy
};

template <class T>
void residual_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const ResidualContext<T>*>(p);
  const int N = c.y.rows, C = c.y.cols, blocks = row_blocks(N, C);
  for_row_blocks(N, blocks, [&](int block, int begin, int end) {
    auto db_part = RowVecMap<T>(c.partial + int64_t(block) * C, C).array();
    db_part.setZero();
    for (int n = begin; n < end; ++n) {
      const int64_t at = int64_t(n) * C;
      const auto dy = CRowVecMap<T>(c.y.grad + at, C).array();
      if (c.x.grad) put(writes_first(first, 0), RowVecMap<T>(c.x.grad + at, C).array(), c.alpha * dy);
      if (c.f.grad) put(writes_first(first, 1), RowVecMap<T>(c.f.grad + at, C).array(), dy);
      db_part += dy;
    }
  });
  if (!c.b.grad) return;
  add_blocks(c.partial, blocks, C, C);
  put(writes_first(first, 2), RowVecMap<T>(c.b.grad, C), CRowVecMap<T>(c.partial, C));
}
}  // namespace

template <class T>
Tensor<T> residual(Graph<T>& g, T alpha, Tensor<T> x, Tensor<T> f, Tensor<T> b) {
  NT_CHECK(same_shape(x, f) && b.rows == 1 && b.cols == x.cols, "residual: x, f (N, C) and b (1, C)");
  const int N = x.rows, C = x.cols;
  Tensor<T> y = g.output(N, C, x, f, b);
#pragma omp parallel for schedule(static) if (y.size() >= 16384)
  for (int n = 0; n < N; ++n) {
    const int64_t at = int64_t(n) * C;
    RowVecMap<T>(y.data + at, C) = alpha * CRowVecMap<T>(x.data + at, C) + CRowVecMap<T>(f.data + at, C) +
                                   CRowVecMap<T>(b.data, C);
  }
  if (y.grad) {
    T* partial = g.buffer(std::size_t(row_blocks(N, C)) * C);
    g.record(residual_backward_node<T>, ResidualContext<T>{y, x, f, b, alpha, partial}, {x.grad, f.grad, b.grad});
  }
  return y;
}

#define NT_INSTANTIATE(T)                                          \
  template Tensor<T> add(Graph<T>&, Tensor<T>, Tensor<T>);         \
  template Tensor<T> mul(Graph<T>&, Tensor<T>, Tensor<T>);         \
  template Tensor<T> scale(Graph<T>&, Tensor<T>, T);               \
  template Tensor<T> shift(Graph<T>&, Tensor<T>, T);               \
  template Tensor<T> axpby(Graph<T>&, T, Tensor<T>, Tensor<T>);    \
  template Tensor<T> rsqrt(Graph<T>&, Tensor<T>, T);                   \
  template Tensor<T> residual(Graph<T>&, T, Tensor<T>, Tensor<T>, Tensor<T>);
NT_INSTANTIATE(float)
NT_INSTANTIATE(double)

}  // namespace nt
