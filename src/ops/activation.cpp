// Pointwise activations.
//
//   relu  y = max(x, 0)                dx += dy * [x > 0]
//   gelu  y = x Phi(x), exact (erf)    dx += dy * (Phi(x) + x phi(x)),  phi = N(0,1) density
//         Phi(x) = (1 + erf(x / sqrt 2)) / 2, kept by forward for backward; vectorized by Eigen
//         (its float erf is a rational approximation accurate to a couple of ulp).
//   tanh  y = tanh(x)                  dx += dy * (1 - y^2)
//   silu  y = x s(x), s the sigmoid    dx += dy * s(x) (1 + x (1 - s(x)))  (swish; SwiGLU's gate)
//   soft_cap  y = c tanh(x / c), composed of scale and tanh (Gemma 2's output logits)
//
// bias_activation: y = act(h), h = x + b with b (1, C) added to every row: the bias of the Linear
// before it folded into the same pass (the product then writes x without reading it back).
//   backward  d = dy * act'(h);  dx += d;  db += sum over rows of d
// h is recomputed in backward from x and b; gelu keeps Phi(h). db is summed by blocks of rows,
// then over the blocks in order (core/parallel.h). Each += is = where the node writes that
// gradient first (graph.h).
#include <unsupported/Eigen/SpecialFunctions>

#include <cmath>
#include <numbers>

#include "core/check.h"
#include "core/eigen.h"
#include "core/parallel.h"
#include "ops/ops.h"

namespace nt {

namespace {
template <class T>
struct UnaryContext {
  Tensor<T> y, x;
};

template <class T>
VecMap<T> chunk(T* p, int64_t begin, int64_t n) { return VecMap<T>(p + begin, n); }

template <class T>
void relu_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const UnaryContext<T>*>(p);
  parallel_chunks(c.x.size(), [&](int64_t i, int64_t n) {
    put(writes_first(first, 0), chunk(c.x.grad, i, n),
        (chunk(c.x.data, i, n) > T(0)).select(chunk(c.y.grad, i, n), T(0)));
  });
}

template <class T>
struct GeluContext {
  Tensor<T> y, x;
  const T* cdf;  // Phi(x)
};

template <class T>
void gelu_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const GeluContext<T>*>(p);
  const T inv_sqrt_2pi = T(0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2);
  parallel_chunks(c.x.size(), [&](int64_t i, int64_t n) {
    const auto x = chunk(c.x.data, i, n);
    put(writes_first(first, 0), chunk(c.x.grad, i, n),
        chunk(c.y.grad, i, n) * (chunk(const_cast<T*>(c.cdf), i, n) + x * inv_sqrt_2pi * (T(-0.5) * x.square()).exp()));
  });
}

template <class T>
void tanh_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const UnaryContext<T>*>(p);
  parallel_chunks(c.x.size(), [&](int64_t i, int64_t n) {
    put(writes_first(first, 0), chunk(c.x.grad, i, n), chunk(c.y.grad, i, n) * (T(1) - chunk(c.y.data, i, n).square()));
  });
}

template <class T>
void silu_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const UnaryContext<T>*>(p);
  parallel_chunks(c.x.size(), [&](int64_t i, int64_t n) {
    const auto x = chunk(c.x.data, i, n);
    // s(x) (1 + x (1 - s(x))) = (1 + x (1 - s(x))) / (1 + e^-x), coefficient by coefficient
    put(writes_first(first, 0), chunk(c.x.grad, i, n),
        chunk(c.y.grad, i, n) * (T(1) + x * (T(1) - T(1) / (T(1) + (-x).exp()))) / (T(1) + (-x).exp()));
  });
}

// y = f(x) elementwise, f an Eigen array expression, on every math thread.
template <class T, class F>
Tensor<T> pointwise(Graph<T>& g, Tensor<T> x, F f, typename Graph<T>::BackwardFn backward) {
  Tensor<T> y = g.output(x.rows, x.cols, x);
  parallel_chunks(x.size(), [&](int64_t i, int64_t n) { chunk(y.data, i, n) = f(chunk(x.data, i, n)); });
  if (y.grad) g.record(backward, UnaryContext<T>{y, x}, {x.grad});
  return y;
}
}  // namespace

template <class T>
Tensor<T> relu(Graph<T>& g, Tensor<T> x) {
  return pointwise(g, x, [](const VecMap<T>& v) { return v.max(T(0)); }, relu_backward_node<T>);
}

template <class T>
Tensor<T> gelu(Graph<T>& g, Tensor<T> x) {
  Tensor<T> y = g.output(x.rows, x.cols, x);
  T* cdf = g.buffer(x.size());
  parallel_chunks(x.size(), [&](int64_t i, int64_t n) {
    const auto xa = VecMap<T>(x.data + i, n);
    auto phi = VecMap<T>(cdf + i, n);
    phi = T(0.5) * (T(1) + (xa * T(std::numbers::sqrt2 / 2)).erf());
    VecMap<T>(y.data + i, n) = xa * phi;
  });
  if (y.grad) g.record(gelu_backward_node<T>, GeluContext<T>{y, x, cdf}, {x.grad});
  return y;
}

template <class T>
Tensor<T> tanh(Graph<T>& g, Tensor<T> x) {
  return pointwise(g, x, [](const VecMap<T>& v) { return v.tanh(); }, tanh_backward_node<T>);
}

template <class T>
Tensor<T> silu(Graph<T>& g, Tensor<T> x) {
  return pointwise(g, x, [](const VecMap<T>& v) { return v / (T(1) + (-v).exp()); }, silu_backward_node<T>);
}

template <class T>
Tensor<T> soft_cap(Graph<T>& g, Tensor<T> x, T cap) {
  if (cap <= 0) return x;
  return scale(g, nt::tanh(g, scale(g, x, T(1) / cap)), cap);
}

template <class T>
Tensor<T> activation(Graph<T>& g, Tensor<T> x, Activation a) {
  switch (a) {
    case Activation::relu: return relu(g, x);
    case Activation::gelu: return gelu(g, x);
    case Activation::tanh: return nt::tanh(g, x);
    case Activation::silu: return silu(g, x);
  }
  return x;
}

namespace {
template <class T>
struct BiasActivationContext {
  Tensor<T> y, x, b;
  Activation a;
  const T* cdf;  // gelu: Phi(x + b)
  T* partial;    // (row_blocks, 2C) a block: its sum of db, then a row of h, then of d
};

template <class T>
void bias_activation_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const BiasActivationContext<T>*>(p);
  const int N = c.x.rows, C = c.x.cols, blocks = row_blocks(N, C);
  const T inv_sqrt_2pi = T(0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2);
  const bool first_x = writes_first(first, 0);
  for_row_blocks(N, blocks, [&](int block, int begin, int end) {
    T* mine = c.partial + int64_t(block) * 2 * C;
    auto db_part = RowVecMap<T>(mine, C).array();
    auto d = RowVecMap<T>(mine + C, C).array();  // h, then d, in place
    db_part.setZero();
    for (int n = begin; n < end; ++n) {
      const int64_t at = int64_t(n) * C;
      const auto dy = CRowVecMap<T>(c.y.grad + at, C).array();
      d = CRowVecMap<T>(c.x.data + at, C).array() + CRowVecMap<T>(c.b.data, C).array();
      switch (c.a) {
        case Activation::relu: d = dy * (d > T(0)).template cast<T>(); break;
        case Activation::gelu:
          d = dy * (CRowVecMap<T>(c.cdf + at, C).array() + d * inv_sqrt_2pi * (T(-0.5) * d.square()).exp());
          break;
        case Activation::tanh: d = dy * (T(1) - CRowVecMap<T>(c.y.data + at, C).array().square()); break;
        case Activation::silu:  // coefficient by coefficient, so d may be read and written
          d = dy * (T(1) + d * (T(1) - T(1) / (T(1) + (-d).exp()))) / (T(1) + (-d).exp());
          break;
      }
      if (c.x.grad) put(first_x, RowVecMap<T>(c.x.grad + at, C).array(), d);
      db_part += d;
    }
  });
  if (!c.b.grad) return;
  add_blocks(c.partial, blocks, 2 * C, C);
  put(writes_first(first, 1), RowVecMap<T>(c.b.grad, C), CRowVecMap<T>(c.partial, C));
}
}  // namespace

template <class T>
Tensor<T> bias_activation(Graph<T>& g, Tensor<T> x, Tensor<T> b, Activation a) {
  NT_CHECK(b.rows == 1 && b.cols == x.cols, "bias_activation: b must be (1, C)");
  const int N = x.rows, C = x.cols;
  Tensor<T> y = g.output(N, C, x, b);
  T* cdf = a == Activation::gelu ? g.buffer(y.size()) : nullptr;
#pragma omp parallel for schedule(static) if (y.size() >= 16384)
  for (int n = 0; n < N; ++n) {
    const int64_t at = int64_t(n) * C;
    auto h = RowVecMap<T>(y.data + at, C).array();  // h, then act(h), in place
    h = CRowVecMap<T>(x.data + at, C).array() + CRowVecMap<T>(b.data, C).array();
    switch (a) {
      case Activation::relu: h = h.max(T(0)); break;
      case Activation::gelu: {
        auto phi = RowVecMap<T>(cdf + at, C).array();
        phi = T(0.5) * (T(1) + (h * T(std::numbers::sqrt2 / 2)).erf());
        h *= phi;
        break;
      }
      case Activation::tanh: h = h.tanh(); break;
      case Activation::silu: h = h / (T(1) + (-h).exp()); break;
    }
  }
  if (y.grad) {
    T* partial = g.buffer(std::size_t(row_blocks(N, C)) * 2 * C);
    g.record(bias_activation_backward_node<T>, BiasActivationContext<T>{y, x, b, a, cdf, partial}, {x.grad, b.grad});
  }
  return y;
}

#define NT_INSTANTIATE(T)                                                            \
  template Tensor<T> relu(Graph<T>&, Tensor<T>);                                     \
  template Tensor<T> gelu(Graph<T>&, Tensor<T>);                                     \
  template Tensor<T> tanh(Graph<T>&, Tensor<T>);                                     \
  template Tensor<T> silu(Graph<T>&, Tensor<T>);                                     \
  template Tensor<T> soft_cap(Graph<T>&, Tensor<T>, T);                              \
  template Tensor<T> activation(Graph<T>&, Tensor<T>, Activation);                   \
  template Tensor<T> bias_activation(Graph<T>&, Tensor<T>, Tensor<T>, Activation);
NT_INSTANTIATE(float)
NT_INSTANTIATE(double)

}  // namespace nt
