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
// The gates are recomputed in backward from xg and hg (cheap beside the products). Rows are Eigen
// arrays, so sigmoid and tanh are Eigen's vectorized float approximations. Each gradient is
// written (=) where the node writes it first (core/graph.h), else added to: a node that does not
// touch a gate writes its zero there when first.
#include <utility>
#include <vector>

#include "core/check.h"
#include "core/eigen.h"
#include "ops/ops.h"

namespace nt {

namespace {
template <class T>
struct LstmContext {
  Tensor<T> y, xg, hg, c;  // lstm_output: c is cn
};

// sigmoid or tanh of gate q's pre-activation xg + hg, row n
template <class T>
auto gate(const Tensor<T>& xg, const Tensor<T>& hg, int64_t n, int q) {
  const int H = xg.cols / 4;
  const int64_t at = n * 4 * H + int64_t(q) * H;
  return CVecMap<T>(xg.data + at, H) + CVecMap<T>(hg.data + at, H);
}

// da of gate q, row n, into xg's and hg's gradients; a gate the node does not touch gets its
// zero where the node writes first
template <class T, class Src>
void put_gate(const LstmContext<T>& c, unsigned first, int64_t n, int q, const Src& da) {
  const int H = c.y.cols;
  const int64_t at = n * 4 * H + int64_t(q) * H;
  for (auto [grad, arg] : {std::pair{c.xg.grad, 0}, std::pair{c.hg.grad, 1}})
    if (grad) put(writes_first(first, arg), VecMap<T>(grad + at, H), da);
}

template <class T>
void zero_gate(const LstmContext<T>& c, unsigned first, int64_t n, int q) {
  const int H = c.y.cols;
  const int64_t at = n * 4 * H + int64_t(q) * H;
  for (auto [grad, arg] : {std::pair{c.xg.grad, 0}, std::pair{c.hg.grad, 1}})
    if (grad && writes_first(first, arg)) VecMap<T>(grad + at, H).setZero();
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
  std::vector<T> scratch(3 * std::size_t(H));
  VecMap<T> sf(scratch.data(), H), si(scratch.data() + H, H), tg(scratch.data() + 2 * H, H);
  for (int64_t n = 0; n < N; ++n) {
    sf = gate(c.xg, c.hg, n, 0).logistic();
    si = gate(c.xg, c.hg, n, 1).logistic();
    tg = gate(c.xg, c.hg, n, 3).tanh();
    const CVecMap<T> dy(c.y.grad + n * H, H), cj(c.c.data + n * H, H);
    put_gate(c, first, n, 0, dy * cj * sf * (T(1) - sf));
    put_gate(c, first, n, 1, dy * tg * si * (T(1) - si));
    zero_gate(c, first, n, 2);
    put_gate(c, first, n, 3, dy * si * (T(1) - tg.square()));
    if (c.c.grad) put(writes_first(first, 2), VecMap<T>(c.c.grad + n * H, H), dy * sf);
  }
}

template <class T>
void lstm_output_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const LstmContext<T>*>(p);
  const int N = c.y.rows, H = c.y.cols;
  std::vector<T> scratch(2 * std::size_t(H));
  VecMap<T> so(scratch.data(), H), tc(scratch.data() + H, H);
  for (int64_t n = 0; n < N; ++n) {
    so = gate(c.xg, c.hg, n, 2).logistic();
    tc = CVecMap<T>(c.c.data + n * H, H).tanh();
    const CVecMap<T> dy(c.y.grad + n * H, H);
    for (int q : {0, 1, 3}) zero_gate(c, first, n, q);
    put_gate(c, first, n, 2, dy * tc * so * (T(1) - so));
    if (c.c.grad) put(writes_first(first, 2), VecMap<T>(c.c.grad + n * H, H), dy * so * (T(1) - tc.square()));
  }
}
}  // namespace

template <class T>
Tensor<T> lstm_cell(Graph<T>& g, Tensor<T> xg, Tensor<T> hg, Tensor<T> c) {
  check_shapes(xg, hg, c, "lstm_cell");
  const int N = xg.rows, H = xg.cols / 4;
  Tensor<T> y = g.output(N, H, xg, hg, c);
  for (int64_t n = 0; n < N; ++n)
    VecMap<T>(y.data + n * H, H) = gate(xg, hg, n, 0).logistic() * CVecMap<T>(c.data + n * H, H) +
                                   gate(xg, hg, n, 1).logistic() * gate(xg, hg, n, 3).tanh();
  if (y.grad) g.record(lstm_cell_backward_node<T>, LstmContext<T>{y, xg, hg, c}, {xg.grad, hg.grad, c.grad});
  return y;
}

template <class T>
Tensor<T> lstm_output(Graph<T>& g, Tensor<T> xg, Tensor<T> hg, Tensor<T> cn) {
  check_shapes(xg, hg, cn, "lstm_output");
  const int N = xg.rows, H = xg.cols / 4;
  Tensor<T> y = g.output(N, H, xg, hg, cn);
  for (int64_t n = 0; n < N; ++n)
    VecMap<T>(y.data + n * H, H) = gate(xg, hg, n, 2).logistic() * CVecMap<T>(cn.data + n * H, H).tanh();
  if (y.grad) g.record(lstm_output_backward_node<T>, LstmContext<T>{y, xg, hg, cn}, {xg.grad, hg.grad, cn.grad});
  return y;
}

#define NT_INSTANTIATE(T)                                                            \
  template Tensor<T> lstm_cell(Graph<T>&, Tensor<T>, Tensor<T>, Tensor<T>);          \
  template Tensor<T> lstm_output(Graph<T>&, Tensor<T>, Tensor<T>, Tensor<T>);
NT_INSTANTIATE(float)
NT_INSTANTIATE(double)

}  // namespace nt
