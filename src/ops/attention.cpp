// Scaled-dot-product attention, per head: causal or not, self or cross, with a key mask.
//
// For each head (b, h), with q, o as (Tq, hs) blocks, k, v as (Tk, hs) blocks, s = 1/sqrt(hs):
//   forward   S = s q k^T;  with a soft cap c > 0, S = c tanh(S / c) (Gemma 2's attention logit
//             soft-capping; t = tanh(S / c) kept);  S_ij = -inf where key j is masked (key_mask[b, j]
//             == 0) or, causal, j > i;  P = softmax_rows(S) (a row with every key masked: P = 0, o = 0);
//             o = P v
//   backward  dv += P^T do
//             dP  = do v^T
//             dS  = P * (dP - rowsum(dP * P))            (softmax backward; 0 where P is 0)
//             dS *= 1 - t^2                               (with a soft cap)
//             dq += s dS k,   dk += s dS^T q
// Forward keeps P (B*NH, Tq, Tk) for backward, plus a (B*NH, Tq, Tk) scratch for dP/dS (the one-pass
// path: a head's dS in a buffer of the thread, which stays in its caches). A masked
// key has P = 0 in every row, so the backward needs no mask of its own.
//
// Each += of backward is = where the node writes that gradient first (core/graph.h); every
// element of dq, dk, dv is written by one product, so either is exact.
//
// Causal work only (Tq = Tk = T): the rows are cut into blocks of kBlock; row block [r0, r1)
// attends to columns [0, r1), so each product of the forward, dP and dq skips the columns to the
// right of the block, and dv and dk, by column blocks [c0, c1), read rows [c0, T) only. At T = 64
// that is 3/4 of the full products, at T = 128 5/8. Entries above the diagonal of P and dS are 0.
// Non-causal: every row block reads all Tk columns, every column block all Tq rows.
//
// Small heads (hs at most four vectors, Tk at most four: the claims' models) skip those products:
// attention_one_pass.cpp computes the same sums a head at a time, with the softmax in vectors.
//
// Layouts (Layout says where head (b, h)'s block starts and the stride between its rows; q, k
// and v each have their own base, k and v share a layout):
//   causal_attention       q, k, v (B*NH*T, hs), heads contiguous (after split_heads)
//   self_attention         qkv (B*T, 3 NH hs) as one product writes q, k and v side by side;
//                          the heads are read and written in place, no split/merge copies
//   cross_attention        q (B*Tq, NH hs) and kv (B*Tk, 2 NH hs), k and v side by side, in place
//   multi_head_attention   q (B*Tq, NH hs), k and v (B*Tk, NH hs) each its own tensor, in place (model.qk_norm)
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/check.h"
#include "core/eigen.h"
#include "core/gemm.h"
#include "ops/attention_heads.h"
#include "ops/ops.h"

namespace nt {

namespace {

using heads::Layout;
using heads::Operands;
using heads::Shape;
using heads::transposed;

constexpr int kBlock = 32;  // rows per causal block

// Row i of S (n entries, the rest of its Tk already 0 or ignored) -> P: softmax over the keys the
// mask keeps; a row with no key left is 0.
template <class T>
void softmax_row(T* row, int n, const float* mask) {
  if (mask)
    for (int j = 0; j < n; ++j)
      if (mask[j] == 0.0f) row[j] = -std::numeric_limits<T>::infinity();
  auto r = RowVecMap<T>(row, n).array();
  const T max = r.maxCoeff();
  if (max == -std::numeric_limits<T>::infinity()) {
    r.setZero();
    return;
  }
  r = (r - max).exp();
  r /= r.sum();
}

// Row i of S (n entries) -> c tanh(S / c), t = tanh(S / c) kept in `t` for backward.
template <class T>
void soft_cap_row(T* row, T* t, int n, T c) {
  auto r = RowVecMap<T>(row, n).array();
  auto th = RowVecMap<T>(t, n).array();
  th = (r / c).tanh();
  r = c * th;
}

// th: (B*NH, Tq, Tk) for tanh(S / c) with a soft cap, else nullptr.
template <class T>
void attention_forward(T* o, T* P, T* th, Operands<const T> in, const Shape& S) {
  const Layout &Lq = S.q, &Lk = S.kv, &Lo = S.o;
  const T s = T(1) / std::sqrt(T(Lq.hs));
  const int Tq = S.Tq(), Tk = S.Tk(), hs = Lq.hs;
  const int64_t square = int64_t(Tq) * S.ldp;
  const bool one_pass = heads::one_pass_fits<T>(S);
#pragma omp parallel for schedule(static)
  for (int bh = 0; bh < Lq.B * Lq.NH; ++bh) {
    const T *q = in.q + Lq.at(bh), *k = in.k + Lk.at(bh), *v = in.v + Lk.at(bh);
    const float* mask = S.key_mask ? S.key_mask + int64_t(bh / Lq.NH) * Tk : nullptr;
    T* out = o + Lo.at(bh);
    T* Pb = P + bh * square;
    if (one_pass) {
      heads::one_pass_forward(out, Pb, q, k, v, bh / Lq.NH, S);
      continue;
    }
    const T* kt = transposed(k, Tk, hs, Lk.ld, Tk);
    for (int r0 = 0; r0 < Tq; r0 += kBlock) {
      const int r1 = std::min(Tq, r0 + kBlock), rows = r1 - r0, cols = S.cols(r1);
      gemm(false, false, rows, cols, hs, s, q + int64_t(r0) * Lq.ld, Lq.ld, kt, Tk, T(0), Pb + int64_t(r0) * Tk, Tk);
      for (int i = r0; i < r1; ++i) {  // softmax over the row's first row_len(i) entries; the rest 0
        const int n = S.row_len(i);
        if (th) soft_cap_row(Pb + int64_t(i) * Tk, th + bh * square + int64_t(i) * Tk, n, T(S.cap));
        softmax_row(Pb + int64_t(i) * Tk, n, mask);
        std::fill(Pb + int64_t(i) * Tk + n, Pb + int64_t(i + 1) * Tk, T(0));
      }
      gemm(false, false, rows, hs, cols, T(1), Pb + int64_t(r0) * Tk, Tk, v, Lk.ld, T(0), out + int64_t(r0) * Lo.ld,
           Lo.ld);
    }
    const float* real = S.query_mask ? S.query_mask + int64_t(bh / Lq.NH) * Tq : nullptr;
    for (int i = 0; real && i < Tq; ++i)  // a padding query reads nothing: its o and P rows 0
      if (real[i] == 0.0f) std::fill_n(out + int64_t(i) * Lo.ld, hs, T(0)), std::fill_n(Pb + int64_t(i) * Tk, Tk, T(0));
  }
}

template <class T>
void attention_backward(Operands<T> d, const bool assign[3], T* scratch, const T* dout, const T* P, const T* th,
                        Operands<const T> in, const Shape& S) {
  const Layout &Lq = S.q, &Lk = S.kv, &Lo = S.o;
  const T s = T(1) / std::sqrt(T(Lq.hs));
  const int Tq = S.Tq(), Tk = S.Tk(), hs = Lq.hs;
  const int64_t square = int64_t(Tq) * S.ldp;
  const bool one_pass = heads::one_pass_fits<T>(S);
  auto beta = [&](int i) { return assign[i] ? T(0) : T(1); };
#pragma omp parallel for schedule(static)
  for (int bh = 0; bh < Lq.B * Lq.NH; ++bh) {
    const T *q = in.q + Lq.at(bh), *k = in.k + Lk.at(bh), *v = in.v + Lk.at(bh), *dO = dout + Lo.at(bh);
    const T* Pb = P + bh * square;
    if (one_pass) {
      const Operands<T> dh{d.q ? d.q + Lq.at(bh) : nullptr, d.k ? d.k + Lk.at(bh) : nullptr,
                           d.v ? d.v + Lk.at(bh) : nullptr};
      heads::one_pass_backward(dh, assign, dO, Pb, q, k, v, bh / Lq.NH, S);
      continue;
    }
    T* dS = scratch + bh * square;
    const T* vt = transposed(v, Tk, hs, Lk.ld, Tk);
    for (int r0 = 0; r0 < Tq; r0 += kBlock) {  // dP = do v^T, then dS, by row blocks
      const int r1 = std::min(Tq, r0 + kBlock), rows = r1 - r0, cols = S.cols(r1);
      gemm(false, false, rows, cols, hs, T(1), dO + int64_t(r0) * Lo.ld, Lo.ld, vt, Tk, T(0), dS + int64_t(r0) * Tk,
           Tk);
      for (int i = r0; i < r1; ++i) {
        const int n = S.row_len(i);
        auto di = RowVecMap<T>(dS + int64_t(i) * Tk, n).array();
        const auto p = CRowVecMap<T>(Pb + int64_t(i) * Tk, n).array();
        const T dot = (di * p).sum();
        di = s * p * (di - dot);
        if (th) di *= T(1) - CRowVecMap<T>(th + bh * square + int64_t(i) * Tk, n).array().square();
        std::fill(dS + int64_t(i) * Tk + n, dS + int64_t(i) * Tk + cols, T(0));
      }
      if (d.q)
        gemm(false, false, rows, hs, cols, T(1), dS + int64_t(r0) * Tk, Tk, k, Lk.ld, beta(0),
             d.q + Lq.at(bh) + int64_t(r0) * Lq.ld, Lq.ld);
    }
    for (int c0 = 0; c0 < Tk; c0 += kBlock) {  // dv, dk by column blocks: rows [first_row(c0), Tq) reach [c0, c1)
      const int cols = std::min(Tk, c0 + kBlock) - c0, r0 = S.first_row(c0), rows = Tq - r0;
      if (d.v)
        gemm(true, false, cols, hs, rows, T(1), Pb + int64_t(r0) * Tk + c0, Tk, dO + int64_t(r0) * Lo.ld, Lo.ld,
             beta(2), d.v + Lk.at(bh) + int64_t(c0) * Lk.ld, Lk.ld);
      if (d.k)
        gemm(true, false, cols, hs, rows, T(1), dS + int64_t(r0) * Tk + c0, Tk, q + int64_t(r0) * Lq.ld, Lq.ld, beta(1),
             d.k + Lk.at(bh) + int64_t(c0) * Lk.ld, Lk.ld);
    }
  }
}

template <class T>
struct AttentionContext {
  Operands<const T> in;
  Operands<T> d;
  int slot[3];  // index of q's, k's and v's gradient among the ones the node lists
  Tensor<T> o;
  const T* P;
  const T* th;  // tanh(S / c) with a soft cap, else nullptr
  T* scratch;
  Shape shape;
};

template <class T>
void attention_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const AttentionContext<T>*>(p);
  const bool assign[3] = {writes_first(first, c.slot[0]), writes_first(first, c.slot[1]),
                          writes_first(first, c.slot[2])};
  attention_backward(c.d, assign, c.scratch, c.o.grad, c.P, c.th, c.in, c.shape);
}

// grads: the distinct gradient buffers, in the order slot indexes them
template <class T>
Tensor<T> attention(Graph<T>& g, Operands<const T> in, Operands<T> d, const int (&slot)[3],
                    std::initializer_list<T*> grads, bool grad, Shape S, int rows, int cols) {
  Tensor<T> o = g.tensor(rows, cols, grad);
  S.ldp = heads::one_pass_fits<T>(S) ? heads::one_pass_ldp<T>(S.Tk()) : S.Tk();
  const std::size_t squares = std::size_t(S.q.B) * S.q.NH * S.Tq() * S.ldp;
  T* P = g.buffer(squares);
  T* th = S.cap > 0 ? g.buffer(squares) : nullptr;
  attention_forward(o.data, P, th, in, S);
  if (o.grad)
    g.record(attention_backward_node<T>,
             AttentionContext<T>{in, d, {slot[0], slot[1], slot[2]}, o, P, th,
                                 heads::one_pass_fits<T>(S) ? nullptr : g.buffer(squares), S},
             grads);
  return o;
}

}  // namespace

template <class T>
Tensor<T> causal_attention(Graph<T>& g, Tensor<T> q, Tensor<T> k, Tensor<T> v, int BH, int T_) {
  NT_CHECK(q.rows == BH * T_, "causal_attention: rows != BH*T");
  NT_CHECK(k.rows == q.rows && v.rows == q.rows && k.cols == q.cols && v.cols == q.cols,
           "causal_attention: q, k, v shapes differ");
  const int hs = q.cols;
  const Layout L{BH, 1, T_, hs, int64_t(T_) * hs, 0, hs};
  return attention(g, Operands<const T>{q.data, k.data, v.data}, Operands<T>{q.grad, k.grad, v.grad}, {0, 1, 2},
                   {q.grad, k.grad, v.grad}, q.requires_grad() || k.requires_grad() || v.requires_grad(),
                   Shape{L, L, L, true, nullptr}, q.rows, hs);
}

template <class T>
Tensor<T> self_attention(Graph<T>& g, Tensor<T> qkv, int B, int T_, int NH, bool causal, const float* key_mask,
                         double cap, const float* query_mask) {
  NT_CHECK(qkv.rows == B * T_ && qkv.cols % (3 * NH) == 0, "self_attention: qkv must be (B*T, 3*NH*hs)");
  const int C = qkv.cols / 3, hs = C / NH;
  const Layout L{B, NH, T_, hs, int64_t(T_) * qkv.cols, hs, qkv.cols}, Lo{B, NH, T_, hs, int64_t(T_) * C, hs, C};
  T* dqkv = qkv.grad;
  return attention(g, Operands<const T>{qkv.data, qkv.data + C, qkv.data + 2 * C},
                   Operands<T>{dqkv, dqkv ? dqkv + C : nullptr, dqkv ? dqkv + 2 * C : nullptr}, {0, 0, 0}, {dqkv},
                   qkv.requires_grad(), Shape{L, L, Lo, causal, key_mask, cap, 0, query_mask}, qkv.rows, C);
}

template <class T>
Tensor<T> causal_self_attention(Graph<T>& g, Tensor<T> qkv, int B, int T_, int NH) {
  return self_attention(g, qkv, B, T_, NH, true, nullptr);
}

template <class T>
Tensor<T> cross_attention(Graph<T>& g, Tensor<T> q, Tensor<T> kv, int B, int Tq, int Tk, int NH, const float* key_mask,
                          double cap, const float* query_mask) {
  NT_CHECK(q.rows == B * Tq && q.cols % NH == 0, "cross_attention: q must be (B*Tq, NH*hs)");
  NT_CHECK(kv.rows == B * Tk && kv.cols == 2 * q.cols, "cross_attention: kv must be (B*Tk, 2*NH*hs)");
  const int C = q.cols, hs = C / NH;
  const Layout Lq{B, NH, Tq, hs, int64_t(Tq) * C, hs, C}, Lk{B, NH, Tk, hs, int64_t(Tk) * kv.cols, hs, kv.cols};
  T* dkv = kv.grad;
  return attention(g, Operands<const T>{q.data, kv.data, kv.data + C},
                   Operands<T>{q.grad, dkv, dkv ? dkv + C : nullptr}, {0, 1, 1}, {q.grad, dkv},
                   q.requires_grad() || kv.requires_grad(), Shape{Lq, Lk, Lq, false, key_mask, cap, 0, query_mask},
                   q.rows, C);
}

template <class T>
Tensor<T> multi_head_attention(Graph<T>& g, Tensor<T> q, Tensor<T> k, Tensor<T> v, int B, int Tq, int Tk, int NH,
                               bool causal, const float* key_mask, double cap, const float* query_mask) {
  NT_CHECK(q.rows == B * Tq && q.cols % NH == 0, "multi_head_attention: q must be (B*Tq, NH*hs)");
  NT_CHECK(k.rows == B * Tk && v.rows == k.rows && k.cols == q.cols && v.cols == q.cols,
           "multi_head_attention: k and v must be (B*Tk, NH*hs)");
  NT_CHECK(!causal || Tq == Tk, "multi_head_attention: causal needs Tq == Tk");
  const int C = q.cols, hs = C / NH;
  const Layout Lq{B, NH, Tq, hs, int64_t(Tq) * C, hs, C}, Lk{B, NH, Tk, hs, int64_t(Tk) * C, hs, C};
  return attention(g, Operands<const T>{q.data, k.data, v.data}, Operands<T>{q.grad, k.grad, v.grad}, {0, 1, 2},
                   {q.grad, k.grad, v.grad}, q.requires_grad() || k.requires_grad() || v.requires_grad(),
                   Shape{Lq, Lk, Lq, causal, key_mask, cap, 0, query_mask}, q.rows, C);
}

template <class T>
bool attention_in_one_pass(int hs, int Tk, double cap) {
  return heads::one_pass_fits<T>(hs, Tk, cap);
}

#define NT_INSTANTIATE(T)                                                                                        \
  template bool attention_in_one_pass<T>(int, int, double);                                                      \
  template Tensor<T> causal_attention(Graph<T>&, Tensor<T>, Tensor<T>, Tensor<T>, int, int);                     \
  template Tensor<T> self_attention(Graph<T>&, Tensor<T>, int, int, int, bool, const float*, double,            \
                                    const float*);                                                               \
  template Tensor<T> causal_self_attention(Graph<T>&, Tensor<T>, int, int, int);                                 \
  template Tensor<T> cross_attention(Graph<T>&, Tensor<T>, Tensor<T>, int, int, int, int, const float*, double,  \
                                     const float*);                                                              \
  template Tensor<T> multi_head_attention(Graph<T>&, Tensor<T>, Tensor<T>, Tensor<T>, int, int, int, int, bool,  \
                                          const float*, double, const float*);
NT_INSTANTIATE(float)
NT_INSTANTIATE(double)

}  // namespace nt
