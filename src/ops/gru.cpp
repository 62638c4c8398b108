// gru_transition: the GRU's state update from its four normalized terms (Nematus's transition,
// model/blocks/gru.h), one fused op:
//
//   [a_r, a_u] = gx + gh                 gx, gh (N, 2H): the gates' input and recurrent terms
//   r = sigmoid(a_r), u = sigmoid(a_u)
//   p = tanh(cx + r * ch)                cx, ch (N, H): the candidate's input and recurrent terms
//   h' = u * h + (1 - u) * p             h (N, H): the state
//
// Forward keeps r, u and p (N, 3H) for backward:
//   du = dh' (h - p);  dh = dh' u;  dp = dh' (1 - u)
//   dz = dp (1 - p^2)                    z = cx + r ch
//   dcx = dz;  dch = dz r;  dr = dz ch
//   dgx = dgh = [dr r (1 - r), du u (1 - u)]
// Each gradient is written (=) where the node writes it first (core/graph.h), else added to.
#include <cmath>

#include "core/check.h"
#include "ops/ops.h"

namespace nt {

namespace {
template <class T>
struct GruContext {
  Tensor<T> y, gx, gh, cx, ch, h;
  T* rup;  // (N, 3H): r, u, p of each row
};

template <class T>
inline void put(bool first, T& dst, T v) { dst = first ? v : dst + v; }

template <class T>
void gru_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const GruContext<T>*>(p);
  const int N = c.y.rows, H = c.y.cols;
  const bool fgx = writes_first(first, 0), fgh = writes_first(first, 1), fcx = writes_first(first, 2),
             fch = writes_first(first, 3), fh = writes_first(first, 4);
  for (int n = 0; n < N; ++n) {
    const T* r = c.rup + int64_t(n) * 3 * H;
    const T *u = r + H, *pp = r + 2 * H;
    const T* dy = c.y.grad + int64_t(n) * H;
    const T* h = c.h.data + int64_t(n) * H;
    const T* ch = c.ch.data + int64_t(n) * H;
    for (int j = 0; j < H; ++j) {
      const T du = dy[j] * (h[j] - pp[j]);
      const T dz = dy[j] * (T(1) - u[j]) * (T(1) - pp[j] * pp[j]);
      const T dar = dz * ch[j] * r[j] * (T(1) - r[j]);
      const T dau = du * u[j] * (T(1) - u[j]);
      const int64_t g = int64_t(n) * 2 * H, k = int64_t(n) * H + j;
      if (c.gx.grad) put(fgx, c.gx.grad[g + j], dar), put(fgx, c.gx.grad[g + H + j], dau);
      if (c.gh.grad) put(fgh, c.gh.grad[g + j], dar), put(fgh, c.gh.grad[g + H + j], dau);
      if (c.cx.grad) put(fcx, c.cx.grad[k], dz);
      if (c.ch.grad) put(fch, c.ch.grad[k], dz * r[j]);
      if (c.h.grad) put(fh, c.h.grad[k], dy[j] * u[j]);
    }
  }
}
}  // namespace

template <class T>
Tensor<T> gru_transition(Graph<T>& g, Tensor<T> gx, Tensor<T> gh, Tensor<T> cx, Tensor<T> ch, Tensor<T> h) {
  const int N = cx.rows, H = cx.cols;
  NT_CHECK(gx.rows == N && gh.rows == N && ch.rows == N && gx.cols == 2 * H && gh.cols == 2 * H && ch.cols == H &&
               h.rows == N && h.cols == H,
           "gru_transition: expected gx, gh (N, 2H), cx, ch, h (N, H)");
  Tensor<T> y = g.output(N, H, gx, gh, cx, ch, h);
  T* rup = y.grad ? g.buffer(std::size_t(N) * 3 * H) : nullptr;
  for (int n = 0; n < N; ++n) {
    const int64_t g2 = int64_t(n) * 2 * H, k = int64_t(n) * H;
    for (int j = 0; j < H; ++j) {
      const T r = T(1) / (T(1) + std::exp(-(gx.data[g2 + j] + gh.data[g2 + j])));
      const T u = T(1) / (T(1) + std::exp(-(gx.data[g2 + H + j] + gh.data[g2 + H + j])));
      const T p = std::tanh(cx.data[k + j] + r * ch.data[k + j]);
      y.data[k + j] = u * h.data[k + j] + (T(1) - u) * p;
      if (rup) rup[3 * k + j] = r, rup[3 * k + H + j] = u, rup[3 * k + 2 * H + j] = p;
    }
  }
  if (y.grad) g.record(gru_backward_node<T>, GruContext<T>{y, gx, gh, cx, ch, h, rup}, {gx.grad, gh.grad, cx.grad, ch.grad, h.grad});
  return y;
}

template Tensor<float> gru_transition(Graph<float>&, Tensor<float>, Tensor<float>, Tensor<float>, Tensor<float>, Tensor<float>);
template Tensor<double> gru_transition(Graph<double>&, Tensor<double>, Tensor<double>, Tensor<double>, Tensor<double>,
                                       Tensor<double>);

}  // namespace nt
