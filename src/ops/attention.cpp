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
// Two layouts of the same kernels (HeadLayout says where head (b, h)'s block starts and the
// stride between its rows):
//   causal_attention       q, k, v (B*NH*T, hs), heads contiguous (after split_heads)
//   causal_self_attention  q, k, v (B*T, NH*hs) as the projections write them; the heads are
//                          read and written in place, no split/merge copies
#include <cmath>
#include <limits>

#include "core/check.h"
#include "core/eigen.h"
#include "ops/ops.h"

namespace nt {

namespace {

struct HeadLayout {
  int B, NH, T, hs;
  int64_t b_stride, h_stride;  // offset of head (b, h)'s first row: b b_stride + h h_stride
  int ld;                      // stride between rows of a head
  int64_t at(int b, int h) const { return b * b_stride + h * h_stride; }
};

template <class T>
using HeadMap = Eigen::Map<Mat<T>, 0, Eigen::OuterStride<>>;
template <class T>
using CHeadMap = Eigen::Map<const Mat<T>, 0, Eigen::OuterStride<>>;

template <class T>
void attention_forward(T* o, T* P, const T* q, const T* k, const T* v, const HeadLayout& L) {
  const T s = T(1) / std::sqrt(T(L.hs));
  const int64_t square = int64_t(L.T) * L.T;
  const Eigen::OuterStride<> ld(L.ld);
#pragma omp parallel for schedule(static)
  for (int bh = 0; bh < L.B * L.NH; ++bh) {
    const int64_t at = L.at(bh / L.NH, bh % L.NH);
    MatMap<T> Pb(P + bh * square, L.T, L.T);
    Pb.noalias() = s * CHeadMap<T>(q + at, L.T, L.hs, ld) * CHeadMap<T>(k + at, L.T, L.hs, ld).transpose();
    for (int i = 0; i < L.T; ++i) {  // softmax over the row's first i + 1 entries; the rest masked to 0
      auto row = RowVecMap<T>(&Pb(i, 0), i + 1).array();
      row = (row - row.maxCoeff()).exp();
      row /= row.sum();
      std::fill(&Pb(i, 0) + i + 1, &Pb(i, 0) + L.T, T(0));
    }
    HeadMap<T>(o + at, L.T, L.hs, ld).noalias() = Pb * CHeadMap<T>(v + at, L.T, L.hs, ld);
  }
}

template <class T>
void attention_backward(T* dq, T* dk, T* dv, T* scratch, const T* dout, const T* P, const T* q, const T* k,
                        const T* v, const HeadLayout& L) {
  const T s = T(1) / std::sqrt(T(L.hs));
  const int64_t square = int64_t(L.T) * L.T;
  const Eigen::OuterStride<> ld(L.ld);
#pragma omp parallel for schedule(static)
  for (int bh = 0; bh < L.B * L.NH; ++bh) {
    const int64_t at = L.at(bh / L.NH, bh % L.NH);
    CMatMap<T> Pb(P + bh * square, L.T, L.T);
    CHeadMap<T> dO(dout + at, L.T, L.hs, ld);
    if (dv) HeadMap<T>(dv + at, L.T, L.hs, ld).noalias() += Pb.transpose() * dO;
    MatMap<T> dS(scratch + bh * square, L.T, L.T);
    dS.noalias() = dO * CHeadMap<T>(v + at, L.T, L.hs, ld).transpose();  // dP
    for (int i = 0; i < L.T; ++i) {
      auto d = RowVecMap<T>(&dS(i, 0), i + 1).array();
      const auto p = CRowVecMap<T>(P + bh * square + int64_t(i) * L.T, i + 1).array();
      const T dot = (d * p).sum();
      d = s * p * (d - dot);
      std::fill(&dS(i, 0) + i + 1, &dS(i, 0) + L.T, T(0));
    }
    if (dq) HeadMap<T>(dq + at, L.T, L.hs, ld).noalias() += dS * CHeadMap<T>(k + at, L.T, L.hs, ld);
    if (dk) HeadMap<T>(dk + at, L.T, L.hs, ld).noalias() += dS.transpose() * CHeadMap<T>(q + at, L.T, L.hs, ld);
  }
}

template <class T>
struct AttentionContext {
  Tensor<T> o, q, k, v;
  const T* P;
  T* scratch;
  HeadLayout layout;
};

template <class T>
void attention_backward_node(const void* p) {
  const auto& c = *static_cast<const AttentionContext<T>*>(p);
  attention_backward(c.q.grad, c.k.grad, c.v.grad, c.scratch, c.o.grad, c.P, c.q.data, c.k.data, c.v.data, c.layout);
}

template <class T>
Tensor<T> attention(Graph<T>& g, Tensor<T> q, Tensor<T> k, Tensor<T> v, const HeadLayout& L) {
  NT_CHECK(k.rows == q.rows && v.rows == q.rows && k.cols == q.cols && v.cols == q.cols,
           "attention: q, k, v shapes differ");
  Tensor<T> o = g.output(q.rows, q.cols, q, k, v);
  const std::size_t squares = std::size_t(L.B) * L.NH * L.T * L.T;
  T* P = g.buffer(squares);
  attention_forward(o.data, P, q.data, k.data, v.data, L);
  if (o.grad) g.record(attention_backward_node<T>, AttentionContext<T>{o, q, k, v, P, g.buffer(squares), L});
  return o;
}

}  // namespace

template <class T>
Tensor<T> causal_attention(Graph<T>& g, Tensor<T> q, Tensor<T> k, Tensor<T> v, int BH, int T_) {
  NT_CHECK(q.rows == BH * T_, "causal_attention: rows != BH*T");
  const int hs = q.cols;
  return attention(g, q, k, v, HeadLayout{BH, 1, T_, hs, int64_t(T_) * hs, 0, hs});
}

template <class T>
Tensor<T> causal_self_attention(Graph<T>& g, Tensor<T> q, Tensor<T> k, Tensor<T> v, int B, int T_, int NH) {
  NT_CHECK(q.rows == B * T_ && q.cols % NH == 0, "causal_self_attention: q must be (B*T, NH*hs)");
  const int C = q.cols, hs = C / NH;
  return attention(g, q, k, v, HeadLayout{B, NH, T_, hs, int64_t(T_) * C, hs, C});
}

#define NT_INSTANTIATE(T)                                                                                  \
  template Tensor<T> causal_attention(Graph<T>&, Tensor<T>, Tensor<T>, Tensor<T>, int, int);               \
  template Tensor<T> causal_self_attention(Graph<T>&, Tensor<T>, Tensor<T>, Tensor<T>, int, int, int);
NT_INSTANTIATE(float)
NT_INSTANTIATE(double)

}  // namespace nt
