// Causal scaled-dot-product attention, per head.
//
// For each head (b, h), with q, k, v, o as (T, hs) blocks and s = 1/sqrt(hs):
//   forward   S = s q k^T;  S_ij = -inf for j > i;  P = softmax_rows(S);  o = P v
//   backward  dv += P^T do
//             dP  = do v^T
//             dS  = P * (dP - rowsum(dP * P))            (softmax backward; 0 above the diagonal)
//             dq += s dS k,   dk += s dS^T q
// Forward keeps P (B*NH, T, T) for backward, plus a (B*NH, T, T) scratch for dP/dS.
//
// Each += of backward is = where the node writes that gradient first (core/graph.h); every
// element of dq, dk, dv is written by one product, so either is exact.
//
// Causal work only: the rows are cut into blocks of kBlock; row block [r0, r1) attends to
// columns [0, r1), so each product of the forward, dP and dq skips the columns to the right of
// the block, and dv and dk, by column blocks [c0, c1), read rows [c0, T) only. At T = 64 that is
// 3/4 of the full products, at T = 128 5/8. Entries above the diagonal of P and dS are 0.
//
// Two layouts of the same kernels (Layout says where head (b, h)'s block starts and the stride
// between its rows):
//   causal_attention       q, k, v (B*NH*T, hs), heads contiguous (after split_heads)
//   causal_self_attention  qkv (B*T, 3 NH hs) as one product writes q, k and v side by side;
//                          the heads are read and written in place, no split/merge copies
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/check.h"
#include "core/eigen.h"
#include "core/gemm.h"
#include "ops/ops.h"

namespace nt {

namespace {

constexpr int kBlock = 32;  // rows per causal block

// A head's (T, hs) block x (rows ld apart) as its (hs, T) transpose, in a buffer of the calling
// thread: the products q k^T and do v^T then read their right operand in place, row by row.
template <class T>
const T* transposed(const T* x, int T_, int hs, int ld) {
  thread_local std::vector<T> buffer;
  if (buffer.size() < std::size_t(T_) * hs) buffer.resize(std::size_t(T_) * hs);
  transpose(x, T_, hs, ld, buffer.data(), T_);
  return buffer.data();
}

struct Layout {
  int B, NH, T, hs;
  int64_t b_stride, h_stride;  // offset of head (b, h)'s first row: b b_stride + h h_stride
  int ld;                      // stride between rows of a head
  int64_t at(int bh) const { return (bh / NH) * b_stride + (bh % NH) * h_stride; }
};

// Where the operands live: q, k, v share one layout (their own base pointers), o has its own.
template <class T>
struct Operands {
  T *q, *k, *v;  // data, or gradients (nullptr: no gradient wanted)
};

template <class T>
void attention_forward(T* o, T* P, Operands<const T> in, const Layout& L, const Layout& Lo) {
  const T s = T(1) / std::sqrt(T(L.hs));
  const int64_t square = int64_t(L.T) * L.T;
  const int T_ = L.T, hs = L.hs, ld = L.ld;
#pragma omp parallel for schedule(static)
  for (int bh = 0; bh < L.B * L.NH; ++bh) {
    const T *q = in.q + L.at(bh), *k = in.k + L.at(bh), *v = in.v + L.at(bh);
    T* out = o + Lo.at(bh);
    T* Pb = P + bh * square;
    const T* kt = transposed(k, T_, hs, ld);
    for (int r0 = 0; r0 < T_; r0 += kBlock) {
      const int r1 = std::min(T_, r0 + kBlock), rows = r1 - r0;
      gemm(false, false, rows, r1, hs, s, q + int64_t(r0) * ld, ld, kt, T_, T(0), Pb + int64_t(r0) * T_, T_);  // S
      for (int i = r0; i < r1; ++i) {  // softmax over the row's first i + 1 entries; the rest 0
        auto row = RowVecMap<T>(Pb + int64_t(i) * T_, i + 1).array();
        row = (row - row.maxCoeff()).exp();
        row /= row.sum();
        std::fill(Pb + int64_t(i) * T_ + i + 1, Pb + int64_t(i + 1) * T_, T(0));
      }
      gemm(false, false, rows, hs, r1, T(1), Pb + int64_t(r0) * T_, T_, v, ld, T(0), out + int64_t(r0) * Lo.ld, Lo.ld);
    }
  }
}

template <class T>
void attention_backward(Operands<T> d, const bool assign[3], T* scratch, const T* dout, const T* P,
                        Operands<const T> in, const Layout& L, const Layout& Lo) {
  const T s = T(1) / std::sqrt(T(L.hs));
  const int64_t square = int64_t(L.T) * L.T;
  const int T_ = L.T, hs = L.hs, ld = L.ld;
  auto beta = [&](int i) { return assign[i] ? T(0) : T(1); };
#pragma omp parallel for schedule(static)
  for (int bh = 0; bh < L.B * L.NH; ++bh) {
    const T *q = in.q + L.at(bh), *k = in.k + L.at(bh), *v = in.v + L.at(bh), *dO = dout + Lo.at(bh);
    const T* Pb = P + bh * square;
    T* dS = scratch + bh * square;
    const T* vt = transposed(v, T_, hs, ld);
    for (int r0 = 0; r0 < T_; r0 += kBlock) {  // dP = do v^T, then dS, by row blocks
      const int r1 = std::min(T_, r0 + kBlock), rows = r1 - r0;
      gemm(false, false, rows, r1, hs, T(1), dO + int64_t(r0) * Lo.ld, Lo.ld, vt, T_, T(0), dS + int64_t(r0) * T_, T_);
      for (int i = r0; i < r1; ++i) {
        auto di = RowVecMap<T>(dS + int64_t(i) * T_, i + 1).array();
        const auto p = CRowVecMap<T>(Pb + int64_t(i) * T_, i + 1).array();
        const T dot = (di * p).sum();
        di = s * p * (di - dot);
        std::fill(dS + int64_t(i) * T_ + i + 1, dS + int64_t(i) * T_ + r1, T(0));
      }
      if (d.q)
        gemm(false, false, rows, hs, r1, T(1), dS + int64_t(r0) * T_, T_, k, ld, beta(0),
             d.q + L.at(bh) + int64_t(r0) * ld, ld);
    }
    for (int c0 = 0; c0 < T_; c0 += kBlock) {  // dv, dk by column blocks: rows [c0, T) reach columns [c0, c1)
      const int cols = std::min(T_, c0 + kBlock) - c0, rows = T_ - c0;
      if (d.v)
        gemm(true, false, cols, hs, rows, T(1), Pb + int64_t(c0) * T_ + c0, T_, dO + int64_t(c0) * Lo.ld, Lo.ld, beta(2),
             d.v + L.at(bh) + int64_t(c0) * ld, ld);
      if (d.k)
        gemm(true, false, cols, hs, rows, T(1), dS + int64_t(c0) * T_ + c0, T_, q + int64_t(c0) * ld, ld, beta(1),
             d.k + L.at(bh) + int64_t(c0) * ld, ld);
    }
  }
}

template <class T>
struct AttentionContext {
  Operands<const T> in;
  Operands<T> d;
  bool joined;  // q, k, v one buffer: one listed gradient
  Tensor<T> o;
  const T* P;
  T* scratch;
  Layout layout, out_layout;
};

template <class T>
void attention_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const AttentionContext<T>*>(p);
  const bool assign[3] = {writes_first(first, 0), writes_first(first, c.joined ? 0 : 1),
                          writes_first(first, c.joined ? 0 : 2)};
  attention_backward(c.d, assign, c.scratch, c.o.grad, c.P, c.in, c.layout, c.out_layout);
}

template <class T>
Tensor<T> attention(Graph<T>& g, Operands<const T> in, Operands<T> d, bool joined, bool grad, const Layout& L,
                    const Layout& Lo, int rows, int cols) {
  Tensor<T> o = g.tensor(rows, cols, grad);
  const std::size_t squares = std::size_t(L.B) * L.NH * L.T * L.T;
  T* P = g.buffer(squares);
  attention_forward(o.data, P, in, L, Lo);
  if (o.grad)
    g.record(attention_backward_node<T>, AttentionContext<T>{in, d, joined, o, P, g.buffer(squares), L, Lo},
             joined ? std::initializer_list<T*>{d.q} : std::initializer_list<T*>{d.q, d.k, d.v});
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
  return attention(g, Operands<const T>{q.data, k.data, v.data}, Operands<T>{q.grad, k.grad, v.grad}, false,
                   q.requires_grad() || k.requires_grad() || v.requires_grad(), L, L, q.rows, hs);
}

template <class T>
Tensor<T> causal_self_attention(Graph<T>& g, Tensor<T> qkv, int B, int T_, int NH) {
  NT_CHECK(qkv.rows == B * T_ && qkv.cols % (3 * NH) == 0, "causal_self_attention: qkv must be (B*T, 3*NH*hs)");
  const int C = qkv.cols / 3, hs = C / NH;
  const Layout L{B, NH, T_, hs, int64_t(T_) * qkv.cols, hs, qkv.cols}, Lo{B, NH, T_, hs, int64_t(T_) * C, hs, C};
  T* dqkv = qkv.grad;
  return attention(g, Operands<const T>{qkv.data, qkv.data + C, qkv.data + 2 * C},
                   Operands<T>{dqkv, dqkv ? dqkv + C : nullptr, dqkv ? dqkv + 2 * C : nullptr}, true,
                   qkv.requires_grad(), L, Lo, qkv.rows, C);
}

#define NT_INSTANTIATE(T)                                                                    \
  template Tensor<T> causal_attention(Graph<T>&, Tensor<T>, Tensor<T>, Tensor<T>, int, int); \
  template Tensor<T> causal_self_attention(Graph<T>&, Tensor<T>, int, int, int);
NT_INSTANTIATE(float)
NT_INSTANTIATE(double)

}  // namespace nt
