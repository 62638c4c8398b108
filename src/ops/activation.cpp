// Pointwise activations.
//
//   relu  y = max(x, 0)                dx += dy * [x > 0]
//   gelu  y = x Phi(x), exact (erf)    dx += dy * (Phi(x) + x phi(x)),  phi = N(0,1) density
//   tanh  y = tanh(x)                  dx += dy * (1 - y^2)
#include <cmath>
#include <numbers>

#include "ops/ops.h"

namespace nt {

namespace {
template <class T>
struct UnaryContext {
  Tensor<T> y, x;
};

template <class T>
void relu_backward_node(const void* p) {
  const auto& c = *static_cast<const UnaryContext<T>*>(p);
  for (int64_t i = 0; i < c.x.size(); ++i)
    if (c.x.data[i] > T(0)) c.x.grad[i] += c.y.grad[i];
}

template <class T>
T gelu_cdf(T x) { return T(0.5) * (T(1) + std::erf(x * T(std::numbers::sqrt2 / 2))); }

template <class T>
void gelu_backward_node(const void* p) {
  const auto& c = *static_cast<const UnaryContext<T>*>(p);
  const T inv_sqrt_2pi = T(0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2);
  for (int64_t i = 0; i < c.x.size(); ++i) {
    const T x = c.x.data[i];
    c.x.grad[i] += c.y.grad[i] * (gelu_cdf(x) + x * inv_sqrt_2pi * std::exp(T(-0.5) * x * x));
  }
}

template <class T>
void tanh_backward_node(const void* p) {
  const auto& c = *static_cast<const UnaryContext<T>*>(p);
  for (int64_t i = 0; i < c.x.size(); ++i) c.x.grad[i] += c.y.grad[i] * (T(1) - c.y.data[i] * c.y.data[i]);
}

template <class T, class F>
Tensor<T> pointwise(Graph<T>& g, Tensor<T> x, F f, typename Graph<T>::BackwardFn backward) {
  Tensor<T> y = g.output(x.rows, x.cols, x);
  for (int64_t i = 0; i < x.size(); ++i) y.data[i] = f(x.data[i]);
  if (y.grad) g.record(backward, UnaryContext<T>{y, x});
  return y;
}
}  // namespace

template <class T>
Tensor<T> relu(Graph<T>& g, Tensor<T> x) {
  return pointwise(g, x, [](T v) { return v > T(0) ? v : T(0); }, relu_backward_node<T>);
}

template <class T>
Tensor<T> gelu(Graph<T>& g, Tensor<T> x) {
  return pointwise(g, x, [](T v) { return v * gelu_cdf(v); }, gelu_backward_node<T>);
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
