// additive_attention: Bahdanau's attention as Nematus computes it (layers.py, the conditional
// GRU's attention), one fused op over each query row i's keys j, those of its batch row
// b = batch_rows[i] (i without a map) with key_mask[b*S + j] non-zero:
//
//   a_j = tanh(keys_j + query_i)          keys (B*S, D), query (N, D)
//   e_j = v . a_j                         v (1, D)
//   alpha = softmax_j(e)                  masked keys: alpha_j = 0
//   y_i = sum_j alpha_j values_j          values (B*S, C) -> y (N, C)
//
// Forward keeps alpha (N*S) for backward, and backward computes each a_j again, the same
// expression into a row of the same alignment, so the same bits (a (B*S, D) kept from forward was
// a fifth of RNNSearch's activations, written and read back from memory):
//   dalpha_j = dy_i . values_j;  de_j = alpha_j (dalpha_j - sum_k alpha_k dalpha_k)
//   dvalues_j = alpha_j dy_i;    dz_j = de_j v (1 - a_j^2)
//   dkeys_j = dz_j;  dquery_i = sum_j dz_j;  dv = sum_{i,j} de_j a_j
// A masked key's gradients are 0, as are those of a batch row no query reads (a decoder's
// sequence that has ended). Each gradient is written (=) where the node writes it first
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
  const int* batch_rows;
  int S;
  T *a, *alpha;  // a: one row of D scratch (a_row), alpha (N*S)
};

// a_j = tanh(keys_j + query_i) into key row r's scratch. The scratch starts 64-byte aligned and the
// row at r*D values past it, as row r of a (B*S, D) buffer would: Eigen peels the same head (scalar
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
  const int S = c.S, D = c.keys.cols, C = c.values.cols, N = c.query.rows;
  const bool fk = writes_first(first, 0), fq = writes_first(first, 1), fv = writes_first(first, 2),
             fval = writes_first(first, 3);
  // written first: the rows of the batch rows no query reads are 0 (the map is increasing: each
  // other row is written once below)
  for (int64_t b = 0, i = 0; c.batch_rows && b < c.keys.rows / S; ++b) {
    if (i < N && c.batch_rows[i] == b) {
      ++i;
      continue;
    }
    if (c.keys.grad && fk) std::fill_n(c.keys.grad + b * S * D, int64_t(S) * D, T(0));
    if (c.values.grad && fval) std::fill_n(c.values.grad + b * S * C, int64_t(S) * C, T(0));
  }
  std::vector<T> dv(std::size_t(D), T(0)), dalpha(S, T(0)), dq(D, T(0));
  for (int i = 0; i < N; ++i) {
    const int64_t b = c.batch_rows ? c.batch_rows[i] : i;
    const CVecMap<T> dy(c.y.grad + int64_t(i) * C, C);
    const T* alpha = c.alpha + int64_t(i) * S;
    T weighted = 0;
    for (int j = 0; j < S; ++j) {
      const int64_t r = b * S + j;
      dalpha[j] = c.mask[r] != 0.0f ? (CVecMap<T>(c.values.data + r * C, C) * dy).sum() : T(0);
      weighted += alpha[j] * dalpha[j];
    }
    std::fill(dq.begin(), dq.end(), T(0));
    for (int j = 0; j < S; ++j) {
      const int64_t r = b * S + j;
      const bool real = c.mask[r] != 0.0f;
      if (c.values.grad) {
        VecMap<T> dval(c.values.grad + r * C, C);
        if (real && fval)
          dval = alpha[j] * dy;
        else if (real)
          dval += alpha[j] * dy;
        else if (fval)
          dval.setZero();
      }
      T* dk = c.keys.grad ? c.keys.grad + r * D : nullptr;
      if (!real) {  // dz = 0
        if (dk && fk) std::fill_n(dk, D, T(0));
        continue;
      }
      // one pass over the D features: dz = de v (1 - a^2) into dkeys and dquery, de a into dv
      const T de = alpha[j] * (dalpha[j] - weighted);
      const T* a = a_row(c.a, c.keys.data, c.query.data + int64_t(i) * D, r, D);
      T *q = dq.data(), *v = dv.data();
      for (int d = 0; d < D; ++d) {
        const T dz = de * c.v.data[d] * (T(1) - a[d] * a[d]);
        if (dk) dk[d] = fk ? dz : dk[d] + dz;
        q[d] += dz, v[d] += de * a[d];
      }
    }
    if (c.query.grad) put(fq, VecMap<T>(c.query.grad + int64_t(i) * D, D), CVecMap<T>(dq.data(), D));
  }
  if (c.v.grad) put(fv, VecMap<T>(c.v.grad, D), CVecMap<T>(dv.data(), D));
}
}  // namespace

template <class T>
Tensor<T> additive_attention(Graph<T>& g, Tensor<T> keys, Tensor<T> query, Tensor<T> v, Tensor<T> values,
                             const float* key_mask, int S, const int* batch_rows) {
  const int D = keys.cols, C = values.cols, N = query.rows;
  const int64_t B = S > 0 ? keys.rows / S : 0;
  const Rows rows{.index = batch_rows};
  NT_CHECK(S > 0 && keys.rows == B * S && values.rows == keys.rows &&
               (batch_rows ? rows.inside(N, B) && rows.increasing(N) : N == B) &&
               query.cols == D && v.rows == 1 && v.cols == D && key_mask,
           "additive_attention: expected keys (B*S, D), query (B, D) or increasing rows of the batch's, v (1, D), "
           "values (B*S, C) and a key mask");
  Tensor<T> y = g.output(N, C, keys, query, v, values);
  const bool grad = y.grad != nullptr;
  T* a = g.buffer(std::size_t(D) + 64 / sizeof(T));  // a_row's scratch
  T* alpha = g.buffer(std::size_t(N) * S);
  const CVecMap<T> vv(v.data, D);
  for (int i = 0; i < N; ++i) {
    const int64_t b = batch_rows ? batch_rows[i] : i;
    T* al = alpha + int64_t(i) * S;
    T top = -INFINITY;
    for (int j = 0; j < S; ++j) {
      const int64_t r = b * S + j;
      if (key_mask[r] == 0.0f) {
        al[j] = T(0);
        continue;
      }
      const CVecMap<T> ar(a_row(a, keys.data, query.data + int64_t(i) * D, r, D), D);
      al[j] = (ar * vv).sum();
      top = std::max(top, al[j]);
    }
    T total = 0;
    for (int j = 0; j < S; ++j) {
      if (key_mask[b * S + j] == 0.0f) continue;
      al[j] = std::exp(al[j] - top);
      total += al[j];
    }
    VecMap<T> yi(y.data + int64_t(i) * C, C);
    yi.setZero();
    for (int j = 0; j < S; ++j) {
      const int64_t r = b * S + j;
      if (key_mask[r] == 0.0f) continue;
      al[j] /= total;
      yi += al[j] * CVecMap<T>(values.data + r * C, C);
    }
  }
  if (grad && batch_rows) batch_rows = g.keep(batch_rows, N);
  if (grad)
    g.record(additive_attention_backward_node<T>,
             AdditiveContext<T>{y, keys, query, v, values, key_mask, batch_rows, S, a, alpha},
             {keys.grad, query.grad, v.grad, values.grad});
  return y;
}

template Tensor<float> additive_attention(Graph<float>&, Tensor<float>, Tensor<float>, Tensor<float>, Tensor<float>,
                                          const float*, int, const int*);
template Tensor<double> additive_attention(Graph<double>&, Tensor<double>, Tensor<double>, Tensor<double>,
                                           Tensor<double>, const float*, int, const int*);

}  // namespace nt
