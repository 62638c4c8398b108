// causal_attention: scaled-dot-product attention with a causal mask, per head.
//
// For each of the BH = B*NH heads, with q, k, v, o as (T, hs) blocks and s = 1/sqrt(hs):
//   forward   S = s q k^T;  S_ij = -inf for j > i;  P = softmax_rows(S);  o = P v
//   backward  dv += P^T do
//             dP  = do v^T
//             dS  = P * (dP - rowsum(dP * P))            (softmax backward; 0 above the diagonal)
//             dq += s dS k,   dk += s dS^T q
// Forward keeps P (BH, T, T) for backward, plus a (BH, T, T) scratch for dP/dS.
#include <cmath>
#include <limits>

#include "core/check.h"
#include "core/eigen.h"
#include "ops/ops.h"

namespace nt {

template <class T>
void attention_forward(T* o, T* P, const T* q, const T* k, const T* v, int BH, int T_, int hs) {
  const T s = T(1) / std::sqrt(T(hs));
  const int64_t block = int64_t(T_) * hs, square = int64_t(T_) * T_;
#pragma omp parallel for schedule(static)
  for (int bh = 0; bh < BH; ++bh) {
    MatMap<T> Pb(P + bh * square, T_, T_);
    Pb.noalias() = s * CMatMap<T>(q + bh * block, T_, hs) * CMatMap<T>(k + bh * block, T_, hs).transpose();
    for (int i = 0; i < T_; ++i) {  // softmax over the row's first i + 1 entries; the rest masked to 0
      auto row = RowVecMap<T>(&Pb(i, 0), i + 1).array();
      row = (row - row.maxCoeff()).exp();
      row /= row.sum();
      std::fill(&Pb(i, 0) + i + 1, &Pb(i, 0) + T_, T(0));
    }
    MatMap<T>(o + bh * block, T_, hs).noalias() = Pb * CMatMap<T>(v + bh * block, T_, hs);
  }
}

template <class T>
void attention_backward(T* dq, T* dk, T* dv, T* scratch, const T* dout, const T* P, const T* q, const T* k,
                        const T* v, int BH, int T_, int hs) {
  const T s = T(1) / std::sqrt(T(hs));
  const int64_t block = int64_t(T_) * hs, square = int64_t(T_) * T_;
#pragma omp parallel for schedule(static)
  for (int bh = 0; bh < BH; ++bh) {
    CMatMap<T> Pb(P + bh * square, T_, T_);
    CMatMap<T> dO(dout + bh * block, T_, hs);
    if (dv) MatMap<T>(dv + bh * block, T_, hs).noalias() += Pb.transpose() * dO;
    MatMap<T> dS(scratch + bh * square, T_, T_);
    dS.noalias() = dO * CMatMap<T>(v + bh * block, T_, hs).transpose();  // dP
    for (int i = 0; i < T_; ++i) {
      auto d = RowVecMap<T>(&dS(i, 0), i + 1).array();
      const auto p = CRowVecMap<T>(P + bh * square + int64_t(i) * T_, i + 1).array();
      const T dot = (d * p).sum();
      d = s * p * (d - dot);
      std::fill(&dS(i, 0) + i + 1, &dS(i, 0) + T_, T(0));
    }
    if (dq) MatMap<T>(dq + bh * block, T_, hs).noalias() += dS * CMatMap<T>(k + bh * block, T_, hs);
    if (dk) MatMap<T>(dk + bh * block, T_, hs).noalias() += dS.transpose() * CMatMap<T>(q + bh * block, T_, hs);
  }
}

namespace {
template <class T>
struct AttentionContext {
  Tensor<T> o, q, k, v;
  const T* P;
  T* scratch;
  int BH, T_;
};
template <class T>
void attention_backward_node(const void* p) {
  const auto& c = *static_cast<const AttentionContext<T>*>(p);
  attention_backward(c.q.grad, c.k.grad, c.v.grad, c.scratch, c.o.grad, c.P, c.q.data, c.k.data, c.v.data,
                     c.BH, c.T_, c.q.cols);
}
}  // namespace

template <class T>
Tensor<T> causal_attention(Graph<T>& g, Tensor<T> q, Tensor<T> k, Tensor<T> v, int BH, int T_) {
  NT_CHECK(q.rows == BH * T_ && k.rows == q.rows && v.rows == q.rows, "causal_attention: rows != BH*T");
  NT_CHECK(k.cols == q.cols && v.cols == q.cols, "causal_attention: q, k, v widths differ");
  Tensor<T> o = g.output(q.rows, q.cols, q, k, v);
  T* P = g.buffer(std::size_t(BH) * T_ * T_);
  attention_forward(o.data, P, q.data, k.data, v.data, BH, T_, q.cols);
  if (o.grad) {
    T* scratch = g.buffer(std::size_t(BH) * T_ * T_);
    g.record(attention_backward_node<T>, AttentionContext<T>{o, q, k, v, P, scratch, BH, T_});
  }
  return o;
}

template Tensor<float> causal_attention(Graph<float>&, Tensor<float>, Tensor<float>, Tensor<float>, int, int);
template Tensor<double> causal_attention(Graph<double>&, Tensor<double>, Tensor<double>, Tensor<double>, int, int);

}  // namespace nt
