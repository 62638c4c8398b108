// additive_attention: Bahdanau's attention as Nematus computes it (layers.py, the conditional
// GRU's attention), one fused op over each row b's keys j with key_mask[b*S + j] non-zero:
//
//   a_j = tanh(keys_j + query_b)          keys (B*S, D), query (B, D)
//   e_j = v . a_j                         v (1, D)
//   alpha = softmax_j(e)                  masked keys: alpha_j = 0
//   y_b = sum_j alpha_j values_j          values (B*S, C) -> y (B, C)
//
// Forward keeps alpha (B*S) for backward, and backward computes each a_j again, the same
// expression into a row of the same alignment, so the same bits (a (B*S, D) kept from forward was
// a fifth of RNNSearch's activations, written and read back from memory):
//   dalpha_j = dy_b . values_j;  de_j = alpha_j (dalpha_j - sum_k alpha_k dalpha_k)
//   dvalues_j = alpha_j dy_b;    dz_j = de_j v (1 - a_j^2)
//   dkeys_j = dz_j;  dquery_b = sum_j dz_j;  dv = sum_{b,j} de_j a_j
// A masked key's gradients are 0. Each gradient is written (=) where the node writes it first
// (core/graph.h), else added to.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/check.h"
#include "core/eigen.h"
#include "ops/ops.h"

namespace nt {

namespace {
template <class T>
struct AdditiveContext {
  Tensor<T> y, keys, query, v, values;
  const float* mask;
  int B, S;
  T *a, *alpha;  // a: one row of D scratch (a_row), alpha (B*S)
};

// a_j = tanh(keys_j + query_b) into row r's scratch. The scratch starts 64-byte aligned and the row
// at r*D values past it, as row r of a (B*S, D) buffer would: Eigen peels the same head (scalar
// before the first aligned packet), so forward and backward compute the same bits.
template <class T>
T* a_row(T* scratch, const T* keys, const T* query, int64_t r, int D) {
  T* a = scratch + (r * D) % (64 / int64_t(sizeof(T)));
  VecMap<T>(a, D) = (CVecMap<T>(keys + r * D, D) + CVecMap<T>(query, D)).tanh();
  return a;
}

template <class T>
void additive_attention_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const AdditiveContext<T>*>(p);
  const int S = c.S, D = c.keys.cols, C = c.values.cols;
  const bool fk = writes_first(first, 0), fq = writes_first(first, 1), fv = writes_first(first, 2),
             fval = writes_first(first, 3);
  std::vector<T> dv(std::size_t(D), T(0)), dalpha(S, T(0)), dq(D, T(0));
  for (int b = 0; b < c.B; ++b) {
    const CVecMap<T> dy(c.y.grad + int64_t(b) * C, C);
    T weighted = 0;
    for (int j = 0; j < S; ++j) {
      const int64_t r = int64_t(b) * S + j;
      dalpha[j] = c.mask[r] != 0.0f ? (CVecMap<T>(c.values.data + r * C, C) * dy).sum() : T(0);
      weighted += c.alpha[r] * dalpha[j];
    }
    std::fill(dq.begin(), dq.end(), T(0));
    for (int j = 0; j < S; ++j) {
      const int64_t r = int64_t(b) * S + j;
      const bool real = c.mask[r] != 0.0f;
      if (c.values.grad) {
        VecMap<T> dval(c.values.grad + r * C, C);
        if (real && fval) dval = c.alpha[r] * dy;
        else if (real) dval += c.alpha[r] * dy;
        else if (fval) dval.setZero();
      }
      T* dk = c.keys.grad ? c.keys.grad + r * D : nullptr;
      if (!real) {  // dz = 0
        if (dk && fk) std::fill_n(dk, D, T(0));
        continue;
      }
      // one pass over the D features: dz = de v (1 - a^2) into dkeys and dquery, de a into dv
      const T de = c.alpha[r] * (dalpha[j] - weighted);
      const T* a = a_row(c.a, c.keys.data, c.query.data + int64_t(b) * D, r, D);
      T *q = dq.data(), *v = dv.data();
      for (int d = 0; d < D; ++d) {
        const T dz = de * c.v.data[d] * (T(1) - a[d] * a[d]);
        if (dk) dk[d] = fk ? dz : dk[d] + dz;
        q[d] += dz, v[d] += de * a[d];
      }
    }
    if (c.query.grad) put(fq, VecMap<T>(c.query.grad + int64_t(b) * D, D), CVecMap<T>(dq.data(), D));
  }
  if (c.v.grad) put(fv, VecMap<T>(c.v.grad, D), CVecMap<T>(dv.data(), D));
}
}  // namespace

template <class T>
Tensor<T> additive_attention(Graph<T>& g, Tensor<T> keys, Tensor<T> query, Tensor<T> v, Tensor<T> values,
                             const float* key_mask, int B, int S) {
  const int D = keys.cols, C = values.cols;
  NT_CHECK(keys.rows == B * S && values.rows == B * S && query.rows == B && query.cols == D && v.rows == 1 &&
               v.cols == D && key_mask,
           "additive_attention: expected keys (B*S, D), query (B, D), v (1, D), values (B*S, C) and a key mask");
  Tensor<T> y = g.output(B, C, keys, query, v, values);
  const bool grad = y.grad != nullptr;
  T* a = g.buffer(std::size_t(D) + 64 / sizeof(T));  // a_row's scratch
  T* alpha = g.buffer(std::size_t(B) * S);
  const CVecMap<T> vv(v.data, D);
  for (int b = 0; b < B; ++b) {
    T top = -INFINITY;
    for (int j = 0; j < S; ++j) {
      const int64_t r = int64_t(b) * S + j;
      if (key_mask[r] == 0.0f) {
        alpha[r] = T(0);
        continue;
      }
      const CVecMap<T> ar(a_row(a, keys.data, query.data + int64_t(b) * D, r, D), D);
      alpha[r] = (ar * vv).sum();
      top = std::max(top, alpha[r]);
    }
    T total = 0;
    for (int j = 0; j < S; ++j) {
      const int64_t r = int64_t(b) * S + j;
      if (key_mask[r] == 0.0f) continue;
      alpha[r] = std::exp(alpha[r] - top);
      total += alpha[r];
    }
    VecMap<T> yb(y.data + int64_t(b) * C, C);
    yb.setZero();
    for (int j = 0; j < S; ++j) {
      const int64_t r = int64_t(b) * S + j;
      if (key_mask[r] == 0.0f) continue;
      alpha[r] /= total;
      yb += alpha[r] * CVecMap<T>(values.data + r * C, C);
    }
  }
  if (grad)
    g.record(additive_attention_backward_node<T>,
             AdditiveContext<T>{y, keys, query, v, values, key_mask, B, S, a, alpha},
             {keys.grad, query.grad, v.grad, values.grad});
  return y;
}

template Tensor<float> additive_attention(Graph<float>&, Tensor<float>, Tensor<float>, Tensor<float>, Tensor<float>,
                                          const float*, int, int);
template Tensor<double> additive_attention(Graph<double>&, Tensor<double>, Tensor<double>, Tensor<double>,
                                           Tensor<double>, const float*, int, int);

}  // namespace nt
