// Layout ops: the reshapes and transposes multi-head attention needs.
//
//   reshape      the same memory seen as (rows, cols); data and gradient are shared, so it
//                needs no backward of its own.
//   split_heads  x (B*T, NH*hs) -> y (B*NH*T, hs):  y[b,h,t,:] = x[b,t,h*hs:(h+1)*hs]
//   merge_heads  the inverse. Each one's backward is the other's forward, accumulated.
//   concat_cols  a (N, Ca), b (N, Cb) -> y (N, Ca + Cb) = [a, b]      da = dy[:, :Ca], db = dy[:, Ca:]
#include <algorithm>
#include <tuple>

#include "core/check.h"
#include "ops/ops.h"

namespace nt {

template <class T>
Tensor<T> reshape(Tensor<T> x, int rows, int cols) {
  NT_CHECK(int64_t(rows) * cols == x.size(), "reshape: element count changes");
  return Tensor<T>{x.data, x.grad, rows, cols};
}

namespace {
// Moves (accumulating when add) between the (B, T, NH, hs) and (B, NH, T, hs) layouts.
template <class T, bool to_heads>
void permute_heads(T* heads, T* seq, int B, int T_, int NH, int hs, bool add) {
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h)
      for (int t = 0; t < T_; ++t) {
        T* hp = heads + ((int64_t(b) * NH + h) * T_ + t) * hs;
        T* sp = seq + (int64_t(b) * T_ + t) * NH * hs + int64_t(h) * hs;
        for (int i = 0; i < hs; ++i) {
          if constexpr (to_heads) hp[i] = (add ? hp[i] : T(0)) + sp[i];
          else sp[i] = (add ? sp[i] : T(0)) + hp[i];
        }
      }
}

template <class T>
struct HeadsContext {
  Tensor<T> y, x;
  int B, T_, NH;
};

template <class T>
void split_heads_backward_node(const void* p, unsigned first) {  // y is the heads layout
  const auto& c = *static_cast<const HeadsContext<T>*>(p);
  permute_heads<T, false>(c.y.grad, c.x.grad, c.B, c.T_, c.NH, c.x.cols / c.NH, !writes_first(first, 0));
}

template <class T>
void merge_heads_backward_node(const void* p, unsigned first) {  // x is the heads layout
  const auto& c = *static_cast<const HeadsContext<T>*>(p);
  permute_heads<T, true>(c.x.grad, c.y.grad, c.B, c.T_, c.NH, c.y.cols / c.NH, !writes_first(first, 0));
}
template <class T>
struct ConcatContext {
  Tensor<T> y, a, b;
};

template <class T>
void concat_cols_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const ConcatContext<T>*>(p);
  const int Ca = c.a.cols, Cb = c.b.cols;
  // in the order listed: a's gradient, then b's (the same buffer twice: b's part adds)
  for (const auto& [x, offset, slot] : {std::tuple{c.a, 0, 0}, std::tuple{c.b, Ca, 1}}) {
    if (!x.grad) continue;
    const bool write = writes_first(first, slot);
    for (int n = 0; n < c.y.rows; ++n) {
      const T* dy = c.y.grad + int64_t(n) * (Ca + Cb) + offset;
      T* dx = x.grad + int64_t(n) * x.cols;
      for (int j = 0; j < x.cols; ++j) dx[j] = write ? dy[j] : dx[j] + dy[j];
    }
  }
}
}  // namespace

template <class T>
Tensor<T> concat_cols(Graph<T>& g, Tensor<T> a, Tensor<T> b) {
  NT_CHECK(a.rows == b.rows, "concat_cols: a and b need the same rows");
  const int Ca = a.cols, Cb = b.cols;
  Tensor<T> y = g.output(a.rows, Ca + Cb, a, b);
  for (int n = 0; n < a.rows; ++n) {
    std::copy_n(a.data + int64_t(n) * Ca, Ca, y.data + int64_t(n) * (Ca + Cb));
    std::copy_n(b.data + int64_t(n) * Cb, Cb, y.data + int64_t(n) * (Ca + Cb) + Ca);
  }
  if (y.grad) g.record(concat_cols_backward_node<T>, ConcatContext<T>{y, a, b}, {a.grad, b.grad});
  return y;
}

template <class T>
Tensor<T> split_heads(Graph<T>& g, Tensor<T> x, int B, int T_, int NH) {
  NT_CHECK(x.rows == B * T_ && x.cols % NH == 0, "split_heads: x must be (B*T, NH*hs)");
  const int hs = x.cols / NH;
  Tensor<T> y = g.output(B * NH * T_, hs, x);
  permute_heads<T, true>(y.data, x.data, B, T_, NH, hs, false);
  if (y.grad) g.record(split_heads_backward_node<T>, HeadsContext<T>{y, x, B, T_, NH}, {x.grad});
  return y;
}

template <class T>
Tensor<T> merge_heads(Graph<T>& g, Tensor<T> x, int B, int T_, int NH) {
  NT_CHECK(x.rows == B * NH * T_, "merge_heads: x must be (B*NH*T, hs)");
  const int hs = x.cols;
  Tensor<T> y = g.output(B * T_, NH * hs, x);
  permute_heads<T, false>(x.data, y.data, B, T_, NH, hs, false);
  if (y.grad) g.record(merge_heads_backward_node<T>, HeadsContext<T>{y, x, B, T_, NH}, {x.grad});
  return y;
}

#define NT_INSTANTIATE(T)                                                 \
  template Tensor<T> reshape(Tensor<T>, int, int);                        \
  template Tensor<T> split_heads(Graph<T>&, Tensor<T>, int, int, int);    \
  template Tensor<T> merge_heads(Graph<T>&, Tensor<T>, int, int, int);   \
  template Tensor<T> concat_cols(Graph<T>&, Tensor<T>, Tensor<T>);
NT_INSTANTIATE(float)
NT_INSTANTIATE(double)

}  // namespace nt
