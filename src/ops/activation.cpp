// Pointwise activations.
//
//   relu  y = max(x, 0)                dx += dy * [x > 0]
//   gelu  y = x Phi(x), exact (erf)    dx += dy * (Phi(x) + x phi(x)),  phi = N(0,1) density
//         Phi(x) = (1 + erf(x / sqrt 2)) / 2, kept by forward for backward; vectorized by Eigen
//         (its float erf is a rational approximation accurate to a couple of ulp).
//   tanh  y = tanh(x)                  dx += dy * (1 - y^2)
#include <unsupported/Eigen/SpecialFunctions>

#include <cmath>
#include <numbers>

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
void relu_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const UnaryContext<T>*>(p);
  const bool assign = writes_first(first, 0);
  for (int64_t i = 0; i < c.x.size(); ++i)
    c.x.grad[i] = (assign ? T(0) : c.x.grad[i]) + (c.x.data[i] > T(0) ? c.y.grad[i] : T(0));
}

template <class T>
using ArrayMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

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
    const auto x = ArrayMap<T>(c.x.data + i, n);
    put(writes_first(first, 0), ArrayMap<T>(c.x.grad + i, n),
        ArrayMap<T>(c.y.grad + i, n) *
            (ArrayMap<T>(const_cast<T*>(c.cdf) + i, n) + x * inv_sqrt_2pi * (T(-0.5) * x.square()).exp()));
  });
}

template <class T>
void tanh_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const UnaryContext<T>*>(p);
  const bool assign = writes_first(first, 0);
  for (int64_t i = 0; i < c.x.size(); ++i)
    c.x.grad[i] = (assign ? T(0) : c.x.grad[i]) + c.y.grad[i] * (T(1) - c.y.data[i] * c.y.data[i]);
}

template <class T, class F>
Tensor<T> pointwise(Graph<T>& g, Tensor<T> x, F f, typename Graph<T>::BackwardFn backward) {
  Tensor<T> y = g.output(x.rows, x.cols, x);
  for (int64_t i = 0; i < x.size(); ++i) y.data[i] = f(x.data[i]);
  if (y.grad) g.record(backward, UnaryContext<T>{y, x}, {x.grad});
  return y;
}
}  // namespace

template <class T>
Tensor<T> relu(Graph<T>& g, Tensor<T> x) {
  return pointwise(g, x, [](T v) { return v > T(0) ? v : T(0); }, relu_backward_node<T>);
}

template <class T>
Tensor<T> gelu(Graph<T>& g, Tensor<T> x) {
  Tensor<T> y = g.output(x.rows, x.cols, x);
  T* cdf = g.buffer(x.size());
  parallel_chunks(x.size(), [&](int64_t i, int64_t n) {
    const auto xa = ArrayMap<T>(x.data + i, n);
    auto phi = ArrayMap<T>(cdf + i, n);
    phi = T(0.5) * (T(1) + (xa * T(std::numbers::sqrt2 / 2)).erf());
    ArrayMap<T>(y.data + i, n) = xa * phi;
  });
  if (y.grad) g.record(gelu_backward_node<T>, GeluContext<T>{y, x, cdf}, {x.grad});
  return y;
}

template <class T>
Tensor<T> tanh(Graph<T>& g, Tensor<T> x) {
  return pointwise(g, x, [](T v) { return std::tanh(v); }, tanh_backward_node<T>);
}

#define NT_INSTANTIATE(T)                             \
  template Tensor<T> relu(Graph<T>&, Tensor<T>);      \
  template Tensor<T> gelu(Graph<T>&, Tensor<T>);      \
  template Tensor<T> tanh(Graph<T>&, Tensor<T>);
NT_INSTANTIATE(float)
NT_INSTANTIATE(double)

}  // namespace nt
