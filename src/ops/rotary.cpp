// Rotary position embedding (RoPE, Su et al. 2021), GPT-NeoX's half-split convention (GPT-NeoX,
// GLM-130B, Gemma, OLMo 2; Meta's Llama code pairs adjacent features instead, the same map up to a
// fixed permutation of each head's q and k rows). Within each head of hs features, feature i < hs/2
// pairs with j = i + hs/2 and the pair turns by the angle t * base^(-2i / hs), t = row % T_:
//
//   y_i = x_i cos - x_j sin        dx_i += dy_i cos + dy_j sin
//   y_j = x_j cos + x_i sin        dx_j += dy_j cos - dy_i sin
//
// x (B*T_, cols): columns [0, rotated) turned head by head (hs each), the rest copied (dx += dy):
// q and k of a (B*T, 3C) qkv product turned, v copied. cos and sin (T_, hs/2) are computed in double
// by forward into the graph's arena and kept for backward. Each += is = where the node writes first.
#include <cmath>

#include "core/check.h"
#include "core/parallel.h"
#include "ops/ops.h"

namespace nt {

namespace {

template <class T>
struct RotaryContext {
  Tensor<T> y, x;
  int T_, hs, rotated;
  const T *cos, *sin;  // (T_, hs/2)
};

// One row: out = R(+-angle) in over the rotated heads, in copied beyond them; add: out += instead.
template <class T>
void turn_row(T* out, const T* in, int cols, int hs, int rotated, const T* cos, const T* sin, T sign, bool add) {
  const int half = hs / 2;
  for (int h = 0; h < rotated; h += hs)
    for (int i = 0; i < half; ++i) {
      const T a = in[h + i], b = in[h + half + i], c = cos[i], s = sign * sin[i];
      const T ya = a * c - b * s, yb = b * c + a * s;
      out[h + i] = add ? out[h + i] + ya : ya;
      out[h + half + i] = add ? out[h + half + i] + yb : yb;
    }
  for (int k = rotated; k < cols; ++k) out[k] = add ? out[k] + in[k] : in[k];
}

template <class T>
void rotary_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const RotaryContext<T>*>(p);
  const bool add = !writes_first(first, 0);
  const int half = c.hs / 2, cols = c.x.cols;
  for_row_blocks(c.x.rows, row_blocks(c.x.rows, cols), [&](int, int r0, int r1) {
    for (int r = r0; r < r1; ++r) {
      const int64_t t = r % c.T_;
      turn_row(c.x.grad + int64_t(r) * cols, c.y.grad + int64_t(r) * cols, cols, c.hs, c.rotated, c.cos + t * half,
               c.sin + t * half, T(-1), add);
    }
  });
}

}  // namespace

template <class T>
Tensor<T> rotary(Graph<T>& g, Tensor<T> x, int T_, int hs, int rotated, double base) {
  NT_CHECK(hs >= 2 && hs % 2 == 0 && rotated % hs == 0 && rotated <= x.cols && x.rows % T_ == 0,
           "rotary: an even head size, whole heads turned, rows a multiple of T");
  const int half = hs / 2, cols = x.cols;
  T* cos = g.buffer(std::size_t(T_) * half);
  T* sin = g.buffer(std::size_t(T_) * half);
  for (int t = 0; t < T_; ++t)
    for (int i = 0; i < half; ++i) {
      const double angle = t * std::pow(base, -2.0 * i / hs);
      cos[t * half + i] = T(std::cos(angle));
      sin[t * half + i] = T(std::sin(angle));
    }
  Tensor<T> y = g.output(x.rows, cols, x);
  for_row_blocks(x.rows, row_blocks(x.rows, cols), [&](int, int r0, int r1) {
    for (int r = r0; r < r1; ++r) {
      const int64_t t = r % T_;
      turn_row(y.data + int64_t(r) * cols, x.data + int64_t(r) * cols, cols, hs, rotated, cos + t * half,
               sin + t * half, T(1), false);
    }
  });
  if (y.grad) g.record(rotary_backward_node<T>, RotaryContext<T>{y, x, T_, hs, rotated, cos, sin}, {x.grad});
  return y;
}

template Tensor<float> rotary(Graph<float>&, Tensor<float>, int, int, int, double);
template Tensor<double> rotary(Graph<double>&, Tensor<double>, int, int, int, double);

}  // namespace nt
