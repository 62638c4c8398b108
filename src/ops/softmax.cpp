// softmax over each row: y_j = exp(x_j - max) / sum_k exp(x_k - max)
//   backward  dx_j += y_j (dy_j - sum_k dy_k y_k)        (= when written first: core/graph.h)
#include <algorithm>
#include <cmath>

#include "ops/ops.h"

namespace nt {

template <class T>
void softmax_forward(T* y, const T* x, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const T* xr = x + int64_t(n) * C;
    T* yr = y + int64_t(n) * C;
    const T m = *std::max_element(xr, xr + C);
    T s = 0;
    for (int j = 0; j < C; ++j) s += (yr[j] = std::exp(xr[j] - m));
    const T inv = T(1) / s;
    for (int j = 0; j < C; ++j) yr[j] *= inv;
  }
}

template <class T>
void softmax_backward(T* dx, const T* dy, const T* y, int N, int C, bool assign) {
  for (int n = 0; n < N; ++n) {
    const T* yr = y + int64_t(n) * C;
    const T* dyr = dy + int64_t(n) * C;
    T dot = 0;
    for (int j = 0; j < C; ++j) dot += dyr[j] * yr[j];
    T* dxr = dx + int64_t(n) * C;
    for (int j = 0; j < C; ++j) dxr[j] = (assign ? T(0) : dxr[j]) + yr[j] * (dyr[j] - dot);
  }
}

namespace {
template <class T>
struct SoftmaxContext {
  Tensor<T> y, x;
};
template <class T>
void softmax_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const SoftmaxContext<T>*>(p);
  softmax_backward(c.x.grad, c.y.grad, c.y.data, c.x.rows, c.x.cols, writes_first(first, 0));
}
}  // namespace

template <class T>
Tensor<T> softmax(Graph<T>& g, Tensor<T> x) {
  Tensor<T> y = g.output(x.rows, x.cols, x);
  softmax_forward(y.data, x.data, x.rows, x.cols);
  if (y.grad) g.record(softmax_backward_node<T>, SoftmaxContext<T>{y, x}, {x.grad});
  return y;
}

template void softmax_forward(float*, const float*, int, int);
template void softmax_forward(double*, const double*, int, int);
template void softmax_backward(float*, const float*, const float*, int, int, bool);
template void softmax_backward(double*, const double*, const double*, int, int, bool);
template Tensor<float> softmax(Graph<float>&, Tensor<float>);
template Tensor<double> softmax(Graph<double>&, Tensor<double>);

}  // namespace nt
