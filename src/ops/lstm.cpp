// The LN-LSTM's two pointwise steps (the LayerNorm paper's supplementary, ryankiros/layer-norm
// lnlstm_layer; model/blocks/lstm.h puts the norms between them). The pre-activations are
// a = xg + hg (N, 4H), laid out [f, i, o, g], xg = norm(W_x x) + b and hg = norm(W_h h):
//
//   lstm_cell     c' = sigmoid(f) c + sigmoid(i) tanh(g)       c (N, H)
//     da_f = dc' c sf (1 - sf);  da_i = dc' tanh(g) si (1 - si);  da_g = dc' si (1 - tanh(g)^2)
//     da_o = 0;  dc = dc' sf;  dxg = dhg = da
//   lstm_output   h' = sigmoid(o) tanh(cn)                      cn = norm(c') (N, H)
//     da_o = dh' tanh(cn) so (1 - so);  da_f = da_i = da_g = 0;  dcn = dh' so (1 - tanh(cn)^2)
//     dxg = dhg = da
// The gates are recomputed in backward from xg and hg (cheap beside the products). Each gradient
// is written (=) where the node writes it first (core/graph.h), else added to: a node that does
// not touch a gate writes its zero there when first.
#include <cmath>

#include "core/check.h"
#include "ops/ops.h"

namespace nt {

namespace {
template <class T>
struct LstmContext {
  Tensor<T> y, xg, hg, c;  // lstm_output: c is cn
};

template <class T>
inline T sigmoid(T a) { return T(1) / (T(1) + std::exp(-a)); }

template <class T>
inline void put(bool first, T* dst, T v) { *dst = first ? v : *dst + v; }

// da (4H) of row n into xg's and hg's gradients
template <class T>
void put_gates(const LstmContext<T>& c, unsigned first, int64_t at, T v) {
  if (c.xg.grad) put(writes_first(first, 0), c.xg.grad + at, v);
  if (c.hg.grad) put(writes_first(first, 1), c.hg.grad + at, v);
}

template <class T>
void check_shapes(Tensor<T> xg, Tensor<T> hg, Tensor<T> c, const char* op) {
  const int N = xg.rows, H = xg.cols / 4;
  NT_CHECK(xg.cols == 4 * H && hg.rows == N && hg.cols == 4 * H && c.rows == N && c.cols == H,
           std::string(op) + ": expected xg, hg (N, 4H) and a state (N, H)");
}

template <class T>
void lstm_cell_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const LstmContext<T>*>(p);
  const int N = c.y.rows, H = c.y.cols;
  for (int n = 0; n < N; ++n) {
    const int64_t a = int64_t(n) * 4 * H, k = int64_t(n) * H;
    for (int j = 0; j < H; ++j) {
      const T sf = sigmoid(c.xg.data[a + j] + c.hg.data[a + j]);
      const T si = sigmoid(c.xg.data[a + H + j] + c.hg.data[a + H + j]);
      const T tg = std::tanh(c.xg.data[a + 3 * H + j] + c.hg.data[a + 3 * H + j]);
      const T dy = c.y.grad[k + j], cj = c.c.data[k + j];
      put_gates(c, first, a + j, dy * cj * sf * (T(1) - sf));
      put_gates(c, first, a + H + j, dy * tg * si * (T(1) - si));
      put_gates(c, first, a + 2 * H + j, T(0));
      put_gates(c, first, a + 3 * H + j, dy * si * (T(1) - tg * tg));
      if (c.c.grad) put(writes_first(first, 2), c.c.grad + k + j, dy * sf);
    }
  }
}

template <class T>
void lstm_output_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const LstmContext<T>*>(p);
  const int N = c.y.rows, H = c.y.cols;
  for (int n = 0; n < N; ++n) {
    const int64_t a = int64_t(n) * 4 * H, k = int64_t(n) * H;
    for (int j = 0; j < H; ++j) {
      const T so = sigmoid(c.xg.data[a + 2 * H + j] + c.hg.data[a + 2 * H + j]);
      const T tc = std::tanh(c.c.data[k + j]), dy = c.y.grad[k + j];
      put_gates(c, first, a + j, T(0));
      put_gates(c, first, a + H + j, T(0));
      put_gates(c, first, a + 2 * H + j, dy * tc * so * (T(1) - so));
      put_gates(c, first, a + 3 * H + j, T(0));
      if (c.c.grad) put(writes_first(first, 2), c.c.grad + k + j, dy * so * (T(1) - tc * tc));
    }
  }
}
}  // namespace

template <class T>
Tensor<T> lstm_cell(Graph<T>& g, Tensor<T> xg, Tensor<T> hg, Tensor<T> c) {
  check_shapes(xg, hg, c, "lstm_cell");
  const int N = xg.rows, H = xg.cols / 4;
  Tensor<T> y = g.output(N, H, xg, hg, c);
  for (int n = 0; n < N; ++n) {
    const int64_t a = int64_t(n) * 4 * H, k = int64_t(n) * H;
    for (int j = 0; j < H; ++j) {
      const T sf = sigmoid(xg.data[a + j] + hg.data[a + j]);
      const T si = sigmoid(xg.data[a + H + j] + hg.data[a + H + j]);
      const T tg = std::tanh(xg.data[a + 3 * H + j] + hg.data[a + 3 * H + j]);
      y.data[k + j] = sf * c.data[k + j] + si * tg;
    }
  }
  if (y.grad) g.record(lstm_cell_backward_node<T>, LstmContext<T>{y, xg, hg, c}, {xg.grad, hg.grad, c.grad});
  return y;
}

template <class T>
Tensor<T> lstm_output(Graph<T>& g, Tensor<T> xg, Tensor<T> hg, Tensor<T> cn) {
  check_shapes(xg, hg, cn, "lstm_output");
  const int N = xg.rows, H = xg.cols / 4;
  Tensor<T> y = g.output(N, H, xg, hg, cn);
  for (int n = 0; n < N; ++n) {
    const int64_t a = int64_t(n) * 4 * H, k = int64_t(n) * H;
    for (int j = 0; j < H; ++j)
      y.data[k + j] = sigmoid(xg.data[a + 2 * H + j] + hg.data[a + 2 * H + j]) * std::tanh(cn.data[k + j]);
  }
  if (y.grad) g.record(lstm_output_backward_node<T>, LstmContext<T>{y, xg, hg, cn}, {xg.grad, hg.grad, cn.grad});
  return y;
}

#define NT_INSTANTIATE(T)                                                            \
  template Tensor<T> lstm_cell(Graph<T>&, Tensor<T>, Tensor<T>, Tensor<T>);          \
  template Tensor<T> lstm_output(Graph<T>&, Tensor<T>, Tensor<T>, Tensor<T>);
NT_INSTANTIATE(float)
NT_INSTANTIATE(double)

}  // namespace nt
