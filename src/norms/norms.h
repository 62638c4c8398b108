// The normalizations, each as one unit: a file per norm (layernorm.cpp, rmsnorm.cpp, prmsnorm.cpp,
// scalenorm.cpp, dyt.cpp, batchnorm.cpp, weightnorm.cpp) holding its fused op with a hand-derived backward
// and its description (NormDesc below), and the same norm composed from primitive ops
// (composite.cpp) whose backward autograd derives; tests hold one against the other.
//
// A NormDesc is what everything else reads about a norm: NormSite its parameters' shapes and
// initial values, the memory estimate their count, the invariance table its expected
// invariances, apply_norm() its two functions, the config and the models what it reduces over
// and whether it brings its own residual wiring (DeepNorm). norms.cpp lists the descriptions in
// the order of NormType. Adding a norm: its file (kernel + description), its composite twin in
// composite.cpp, the declarations below, and one line in NT_NORM_TYPES (norm_kind.h).
//
// Reduction axes, which is what tells the norms apart:
//   layernorm, rmsnorm,  per row (one case, one position) over its C features
//   scalenorm
//   prmsnorm             per row, the RMS over the first p C of its features
//   batchnorm            per feature over the batch (and the positions, bn_axes batch_time)
//   dyt                  nothing: elementwise tanh(alpha x), no statistic
//   weightnorm           per output unit over its incoming weights (data-independent)
//
// Included by the norms, the model's NormSite and the analyses; the config and the models name a
// kind through norm_kind.h alone.
#pragma once
#include <algorithm>
#include <cmath>
#include <span>
#include <string_view>
#include <type_traits>

#include "core/graph.h"
#include "norms/norm_kind.h"

namespace nt {

// layernorm.cpp: y = (x - mean) / sqrt(var + eps) * gamma + beta, biased var, per row.
// x (N, C); gamma, beta (1, C) or absent (affine off).
template <class T>
Tensor<T> layernorm(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, Tensor<T> beta, T eps);

// rmsnorm.cpp: y = x / sqrt(mean(x^2) + eps) * gamma, per row; no mean, no bias.
template <class T>
Tensor<T> rmsnorm(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, T eps);

// scalenorm.cpp: ScaleNorm (Nguyen & Salazar 2019), y = g x / sqrt(sum(x^2) + eps), per row,
// with one scalar gain g (1, 1) or absent (g = 1).
template <class T>
Tensor<T> scalenorm(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, T eps);

// dyt.cpp: Dynamic Tanh (Zhu et al. 2025), y = gamma * tanh(alpha x) + beta, elementwise; alpha
// (1, 1) or absent (1); gamma, beta (1, C) or absent.
template <class T>
Tensor<T> dyt(Graph<T>& g, Tensor<T> x, Tensor<T> alpha, Tensor<T> gamma, Tensor<T> beta);

// batchnorm.cpp: x is (R*S, C) seen as (R, S, C); statistics per (s, c) over the R rows.
//   MLP: R = B, S = 1.  bn_axes batch_time: R = B*T, S = 1.  bn_axes batch: R = B, S = T.
// gamma, beta (1, C) or absent. running_mean, running_var (S*C): read in eval mode, updated
// in training mode (when non-null) with PyTorch's rule r = (1 - momentum) r + momentum * stat,
// the variance stored unbiased (M / (M - 1)). mask (R*S) of 0/1 or nullptr: rows with 0
// (padding) are left out of the statistics; they are still normalized.
template <class T>
struct BatchNormState {
  T* running_mean = nullptr;  // (S*C)
  T* running_var = nullptr;   // (S*C)
  T momentum = T(0.1);
  const T* mask = nullptr;    // (R*S) or nullptr
};
template <class T>
Tensor<T> batchnorm(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, Tensor<T> beta, int S, T eps,
                    const BatchNormState<T>& state);

// prmsnorm.cpp: partial RMSNorm (Zhang & Sennrich 2019 §4): the RMS of the first k = max(1,
// floor(p C)) features only, y = x / sqrt((1/k) sum_{j<k} x_j^2 + eps) * gamma, per row.
template <class T>
Tensor<T> prmsnorm(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, T eps, double p);
inline int prmsnorm_features(double p, int C) { return std::max(1, int(std::floor(p * C))); }

// weightnorm.cpp: w_i = g_i v_i / ||v_i|| for each row i of v (out, in); g (out, 1) or
// absent (unit-norm rows). Normalizes weights, not activations: use its output in linear().
template <class T>
Tensor<T> weightnorm(Graph<T>& g, Tensor<T> v, Tensor<T> gain);

// composite.cpp: the same norms built from add/mul/sum/mean/rsqrt/reshape (no running
// statistics; batchnorm composite supports the mask only when S == 1).
template <class T>
Tensor<T> layernorm_composite(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, Tensor<T> beta, T eps);
template <class T>
Tensor<T> rmsnorm_composite(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, T eps);
template <class T>
Tensor<T> prmsnorm_composite(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, T eps, double p);
template <class T>
Tensor<T> scalenorm_composite(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, T eps);
template <class T>
Tensor<T> dyt_composite(Graph<T>& g, Tensor<T> x, Tensor<T> alpha, Tensor<T> gamma, Tensor<T> beta);
template <class T>
Tensor<T> batchnorm_composite(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, Tensor<T> beta, int S, T eps,
                              Tensor<T> mask);
template <class T>
Tensor<T> weightnorm_composite(Graph<T>& g, Tensor<T> v, Tensor<T> gain);

// The arguments every kind draws from; each reads what it needs.
template <class T>
struct NormArgs {
  Tensor<T> gamma{}, beta{};  // gain and bias in the shapes of the kind's description, or absent
  T eps = T(1e-5);
  double p = 0.0625;          // prmsnorm: the share of the features its RMS reads
  int positions = 1;          // batchnorm: the S of its (R, S, C) view
  BatchNormState<T> state{};  // batchnorm: running statistics, momentum and padding mask
  Tensor<T> alpha{};          // dyt: the scalar inside the tanh (1, 1), or absent
};

// ---- the description of a norm ----

// The shape of a gain or bias: absent, one scalar (1, 1), one per feature (1, C), or one per
// output unit of the weights it normalizes (out, 1).
enum class ParamShape { absent, scalar, per_feature, per_unit };
inline int param_count(ParamShape s, int C) {
  return s == ParamShape::absent ? 0 : s == ParamShape::scalar ? 1 : C;
}

// What the statistic reduces over.
enum class Reduction {
  nothing,       // none, dyt: no statistic
  row,           // each row (one case, one position) over its C features
  row_prefix,    // each row over its first max(1, floor(p C)) features (prmsnorm)
  batch,         // each feature over the batch (and the positions, bn_axes batch_time)
  weight_row,    // each output unit over its incoming weights, independent of the data (weightnorm)
};

// The invariance tables of the LayerNorm (Ba et al. 2016, Table 1) and RMSNorm (Zhang &
// Sennrich 2019, Table 1) papers, one norm's row: per transform of a layer y = norm(x W^T)
// (analysis/invariance.h defines them), whether the output stays the same, and why.
struct Expectation {
  bool invariant;
  const char* why;
};
struct Invariances {
  Expectation weight_rescale;         // W' = delta W
  Expectation weight_recenter;        // W' = W + 1 gamma^T
  Expectation weight_vector_rescale;  // w_0' = delta w_0
  Expectation data_rescale;           // x' = delta x
  Expectation data_recenter;          // x' = x + c
  Expectation case_rescale;           // x_0' = delta x_0
  // float32 with eps: an invariant cell changes by about eps / (2 ms) (1 - 1/delta^2) per case,
  // ms the mean square the statistic averages; below this it counts as invariant (E1: 1e-5).
  double float32_invariant_below = 1e-5;
};

// y = norm(x) with the description's parameters (NormArgs).
template <class T>
using NormFn = Tensor<T> (*)(Graph<T>& g, Tensor<T> x, const NormArgs<T>& a);
template <class T>
struct NormFns {
  NormFn<T> fused;      // the hand-derived op
  NormFn<T> composite;  // composed from primitive ops (composite.cpp)
};

struct NormDesc {
  const char* name;                // as the config spells it (model.norm.type)
  ParamShape gain, bias;           // with model.norm.affine; bias starts at 0
  double (*gain_init)(int C);      // the gain's initial value for C features
  Reduction reduction;
  NormFns<float> f32;              // nullptr for weightnorm, which is not applied to activations
  NormFns<double> f64;
  Invariances invariances;
  // The kind whose norm it applies, where that is another kind's (deepnorm: LayerNorm, in a wiring of
  // its own); such a kind has no row of its own in the invariance table. nullptr: its own norm.
  const char* applies = nullptr;
  // It subtracts the mean of what it reduces over before it scales (LayerNorm, BatchNorm): its
  // statistic is a standard deviation, not an RMS.
  bool centers = false;
  // The later papers' options are defined with it (LayerNorm, RMSNorm): query and key norms, the
  // peri and reordered placements, LayerNorm Scaling (model.qk_norm, placement, depth_scaling).
  bool later_options = false;
  // Its own residual wiring, whatever model.norm.placement says: Post-LN with the residual scaled
  // by alpha, x_{l+1} = LN(alpha x_l + f(x_l)) (DeepNorm), in a Transformer stack only.
  bool scaled_residual = false;
  // A learnable scalar "<site>.alpha" inside the norm, at model.norm.dyt_alpha0, with or without
  // affine (DyT's alpha).
  bool alpha = false;
  // Defined for Transformer stacks only (the families with blocks): DyT replaces a Transformer's norms.
  bool transformer_only = false;
  // Its colour in every picture (io/palette.h), from the palette, its own: a norm looks the same in
  // every plot. nullptr: the next free colour of the palette.
  const char* color = nullptr;

  template <class T>
  const NormFns<T>& fns() const {
    if constexpr (std::is_same_v<T, float>) return f32;
    else return f64;
  }
};
inline double gain_one(int) { return 1.0; }

const NormDesc& norm_desc(NormType k);        // norms.cpp: the list, in NormType's order
std::span<const NormType> all_norm_types();   // in NormType's order
NormType norm_type_named(std::string_view name);  // as model.norm.type spells it; std::invalid_argument else
extern const NormDesc kWeightNormDesc;        // weightnorm.cpp: normalizes weights, not a NormType

// y = norm(x) of the given kind: the fused op, or with `composite` the same norm composed from
// primitive ops (the regime of a framework without fused kernels; claim C3).
template <class T>
Tensor<T> apply_norm(Graph<T>& g, NormType kind, Tensor<T> x, const NormArgs<T>& a, bool composite = false) {
  const NormFns<T>& f = norm_desc(kind).template fns<T>();
  return (composite ? f.composite : f.fused)(g, x, a);
}

}  // namespace nt
