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
// Rows are Eigen arrays, so sigmoid and tanh are Eigen's vectorized float approximations (libm's
// scalar tanhf was a fifth of a GRU language model's step). Each gradient is written (=) where
// the node writes it first (core/graph.h), else added to.
//
// gru_transition_rows reads gx and cx as take_rows would give them (ops/rows.cpp): row n of each
// is row rows[n] of the sequence's input terms, and backward adds dgx and dcx into the
// sequence's gradient rows as take_rows's backward does (the whole gradient zeroed when the node is
// first): the same float operations as take_rows then gru_transition, without the rows' copies.
#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include "core/check.h"
#include "core/eigen.h"
#include "ops/ops.h"

namespace nt {

namespace {
template <class T>
struct GruContext {
  Tensor<T> y, gx, gh, cx, ch, h;  // gx, cx: (N, 2H), (N, H), or the sequences rows are taken from
  T* rup;                          // (N, 3H): r, u, p of each row
  Rows rows;                       // row n of gx and cx: rows[n]
  bool taken;                      // gx, cx are sequences: their gradients added as take_rows's
};

template <class T>
void gru_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const GruContext<T>*>(p);
  const int N = c.y.rows, H = c.y.cols;
  const bool fgx = writes_first(first, 0), fgh = writes_first(first, 1), fcx = writes_first(first, 2),
             fch = writes_first(first, 3), fh = writes_first(first, 4);
  std::vector<T> scratch(3 * std::size_t(H));
  VecMap<T> dz(scratch.data(), H), dar(scratch.data() + H, H), dau(scratch.data() + 2 * H, H);
  if (c.taken)  // take_rows's backward: the first zeroes the sequence's gradient, each adds its rows
    for (auto [seq, seq_first] : {std::pair{c.gx, fgx}, std::pair{c.cx, fcx}})
      if (seq.grad && seq_first) std::fill_n(seq.grad, seq.size(), T(0));
  const bool wgx = fgx && !c.taken, wcx = fcx && !c.taken;
  for (int n = 0; n < N; ++n) {
    const int64_t g = int64_t(n) * 2 * H, k = int64_t(n) * H, row = c.rows[n];
    const int64_t gs = row * 2 * H, ks = row * H;  // row n of gx, cx
    const CVecMap<T> r(c.rup + 3 * k, H), u(c.rup + 3 * k + H, H), pp(c.rup + 3 * k + 2 * H, H);
    const CVecMap<T> dy(c.y.grad + k, H), h(c.h.data + k, H), ch(c.ch.data + k, H);
    dz = dy * (T(1) - u) * (T(1) - pp.square());
    dar = dz * ch * r * (T(1) - r);
    dau = dy * (h - pp) * u * (T(1) - u);
    for (auto [grad, at, gates_first] : {std::tuple{c.gx.grad, gs, wgx}, std::tuple{c.gh.grad, g, fgh}}) {
      if (!grad) continue;
      put(gates_first, VecMap<T>(grad + at, H), dar);
      put(gates_first, VecMap<T>(grad + at + H, H), dau);
    }
    if (c.cx.grad) put(wcx, VecMap<T>(c.cx.grad + ks, H), dz);
    if (c.ch.grad) put(fch, VecMap<T>(c.ch.grad + k, H), dz * r);
    if (c.h.grad) put(fh, VecMap<T>(c.h.grad + k, H), dy * u);
  }
}

// gx, cx: the rows rows[n] (n < N) of each; taken: backward adds their gradients as
// take_rows's does, else writes or adds them as any op.
template <class T>
Tensor<T> gru_transition_impl(Graph<T>& g, Tensor<T> gx, Tensor<T> gh, Tensor<T> cx, Tensor<T> ch, Tensor<T> h,
                              Rows rows, bool taken) {
  const int N = h.rows, H = h.cols;
  NT_CHECK(gh.rows == N && ch.rows == N && gx.cols == 2 * H && gh.cols == 2 * H && cx.cols == H && ch.cols == H &&
               gx.rows == cx.rows && rows.inside(N, gx.rows),
           "gru_transition: expected gx, gh (N, 2H), cx, ch, h (N, H) (gx, cx: rows of sequences)");
  Tensor<T> y = g.output(N, H, gx, gh, cx, ch, h);
  T* rup = y.grad ? g.buffer(std::size_t(N) * 3 * H) : nullptr;
  std::vector<T> scratch(rup ? 0 : 3 * std::size_t(H));  // r, u, p of one row when backward needs none
  for (int n = 0; n < N; ++n) {
    const int64_t g2 = int64_t(n) * 2 * H, k = int64_t(n) * H, at = rows[n];
    T* row = rup ? rup + 3 * k : scratch.data();
    VecMap<T> r(row, H), u(row + H, H), p(row + 2 * H, H);
    r = (CVecMap<T>(gx.data + at * 2 * H, H) + CVecMap<T>(gh.data + g2, H)).logistic();
    u = (CVecMap<T>(gx.data + at * 2 * H + H, H) + CVecMap<T>(gh.data + g2 + H, H)).logistic();
    p = (CVecMap<T>(cx.data + at * H, H) + r * CVecMap<T>(ch.data + k, H)).tanh();
    VecMap<T>(y.data + k, H) = u * CVecMap<T>(h.data + k, H) + (T(1) - u) * p;
  }
  if (y.grad && rows.index) rows.index = g.keep(rows.index, N);
  if (y.grad)
    g.record(gru_backward_node<T>, GruContext<T>{y, gx, gh, cx, ch, h, rup, rows, taken},
             {gx.grad, gh.grad, cx.grad, ch.grad, h.grad});
  return y;
}
}  // namespace

template <class T>
Tensor<T> gru_transition(Graph<T>& g, Tensor<T> gx, Tensor<T> gh, Tensor<T> cx, Tensor<T> ch, Tensor<T> h) {
  NT_CHECK(gx.rows == h.rows && cx.rows == h.rows, "gru_transition: expected gx, gh (N, 2H), cx, ch, h (N, H)");
  return gru_transition_impl(g, gx, gh, cx, ch, h, Rows{}, false);
}

template <class T>
Tensor<T> gru_transition_rows(Graph<T>& g, Tensor<T> gx_seq, Tensor<T> cx_seq, Rows rows, Tensor<T> gh, Tensor<T> ch,
                              Tensor<T> h) {
  return gru_transition_impl(g, gx_seq, gh, cx_seq, ch, h, rows, true);
}

template Tensor<float> gru_transition(Graph<float>&, Tensor<float>, Tensor<float>, Tensor<float>, Tensor<float>,
                                      Tensor<float>);
template Tensor<double> gru_transition(Graph<double>&, Tensor<double>, Tensor<double>, Tensor<double>, Tensor<double>,
                                       Tensor<double>);
template Tensor<float> gru_transition_rows(Graph<float>&, Tensor<float>, Tensor<float>, Rows, Tensor<float>,
                                           Tensor<float>, Tensor<float>);
template Tensor<double> gru_transition_rows(Graph<double>&, Tensor<double>, Tensor<double>, Rows, Tensor<double>,
                                            Tensor<double>, Tensor<double>);

}  // namespace nt
