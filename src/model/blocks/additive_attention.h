// The attention of Nematus's conditional GRU decoder (layers.py, nematus_compat false), with a norm
// site on each of its two terms (identities for norm none):
//
//   keys_j = norm(W_a annotation_j + b_a)    (B*S, D)   once per source, before the decoder runs
//   query  = norm(U_a s1)                    (B, D)     per step, from GRU1's state s1
//   c = sum_j softmax_j(v . tanh(keys_j + query)) annotation_j     (ops/additive_attention.cpp)
//
// over the real source positions; D = the annotation width 2H, as Nematus's attention hidden size.
// AttentionCell<T> computes on Tensor views, for float (the model) and double (the gradient checks);
// AdditiveAttention declares and initialises the parameters and hands out the float cell.
#pragma once
#include <string>

#include "model/init.h"
#include "model/norm_site.h"

namespace nt {

template <class T>
struct AttentionCell {
  Tensor<T> W_a, b_a, U_a, v;  // (D, C), (1, D) or absent, (D, H), (1, D)
  RowNorm<T> norm_keys, norm_query;

  // real: the annotations' real rows, when the products may skip the padding's (ops linear)
  Tensor<T> keys(Graph<T>& g, Tensor<T> annotations, RealRows real) const;
  // The context (N, C) of annotations (B*S, C) for the states s1 (N, H), keys from keys(); s1's
  // row i is batch row batch_rows[i] (i when null).
  Tensor<T> context(Graph<T>& g, Tensor<T> keys, Tensor<T> annotations, Tensor<T> s1, const float* src_mask, int S,
                    const int* batch_rows = nullptr) const;
};

class AdditiveAttention {
 public:
  // Declares "<name>.W_a" (weight, and bias with `bias`), ".U_a", ".v" (weights) and the norms
  // "<name>.norm_keys", ".norm_query" of layer 0: keys over annotations of width C, queries from
  // states of width H, both D wide.
  AdditiveAttention(ParamStore<float>& params, const NormConfig& norm, const std::string& name, int C, int H, int D,
                    bool bias);

  // Binds the views (after ParamStore::finalize): b_a 0, gains 1, the weights as model.init says.
  void init(ParamStore<float>& params, const ModelConfig& m, Rng& rng);

  const AttentionCell<float>& cell() const { return cell_; }

 private:
  int W_a_, b_a_ = -1, U_a_, v_;
  NormSite norm_keys_, norm_query_;
  AttentionCell<float> cell_;
};

}  // namespace nt
