#include "model/blocks/additive_attention.h"

#include <algorithm>

#include "ops/ops.h"

namespace nt {

template <class T>
Tensor<T> AttentionCell<T>::keys(Graph<T>& g, Tensor<T> annotations, RealRows real) const {
  return norm_keys(g, linear(g, annotations, W_a, b_a, real));
}

template <class T>
Tensor<T> AttentionCell<T>::context(Graph<T>& g, Tensor<T> keys, Tensor<T> annotations, Tensor<T> s1,
                                    const float* src_mask, int S, const int* batch_rows) const {
  const Tensor<T> query = norm_query(g, step_linear(g, s1, U_a, Tensor<T>{}));
  return additive_attention(g, keys, query, v, annotations, src_mask, S, batch_rows);
}

template struct AttentionCell<float>;
template struct AttentionCell<double>;

AdditiveAttention::AdditiveAttention(ParamStore<float>& params, const NormConfig& norm, const std::string& name, int C,
                                     int H, int D, bool bias)
    : W_a_(params.add(name + ".W_a.weight", 0, D, C)),
      b_a_(bias ? params.add(name + ".W_a.bias", 0, 1, D) : -1),
      U_a_(params.add(name + ".U_a.weight", 0, D, H)),
      v_(params.add(name + ".v.weight", 0, 1, D)),
      norm_keys_(params, norm, 0, name + ".norm_keys", "attention.keys", D, 1),
      norm_query_(params, norm, 0, name + ".norm_query", "attention.query", D, 1) {}

void AdditiveAttention::init(ParamStore<float>& params, const ModelConfig& m, Rng& rng) {
  cell_.W_a = params.tensor(W_a_), cell_.U_a = params.tensor(U_a_), cell_.v = params.tensor(v_);
  if (b_a_ >= 0) cell_.b_a = params.tensor(b_a_), std::fill_n(cell_.b_a.data, cell_.b_a.size(), 0.0f);
  init_linear_weight(cell_.W_a, m, rng);
  init_linear_weight(cell_.U_a, m, rng);
  init_linear_weight(cell_.v, m, rng);
  norm_keys_.init(params), norm_query_.init(params);
  cell_.norm_keys = norm_keys_.row_norm(), cell_.norm_query = norm_query_.row_norm();
}

}  // namespace nt
