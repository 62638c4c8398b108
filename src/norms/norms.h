// The normalizations, each as a fused op with a hand-derived backward (layernorm.cpp,
// rmsnorm.cpp, prmsnorm.cpp, batchnorm.cpp, weightnorm.cpp) and the same norm composed from
// primitive ops (composite.cpp) whose backward autograd derives; tests hold one against the
// other. apply_norm() below is the one dispatch by kind: the model, the invariance tables and
// the claims call it.
//
// Reduction axes, which is what tells the norms apart:
//   layernorm, rmsnorm   per row (one case, one position) over its C features
//   prmsnorm             per row, the RMS over the first p C of its features
//   batchnorm            per feature over the batch (and the positions, bn_axes batch_time)
//   weightnorm           per output unit over its incoming weights (data-independent)
#pragma once
#include <algorithm>
#include <cmath>

#include "core/graph.h"

namespace nt {

// The kinds a norm site can apply, as the config's model.norm.type spells them.
enum class NormType { none, batchnorm, layernorm, rmsnorm, deepnorm, prmsnorm };
struct NormTraits {
  const char* name;
  bool bias;     // a learnable bias beside the gain (affine)
  bool per_row;  // normalizes each row by its own statistic (the RMSNorm paper's comparison, claim C3)
};
inline constexpr NormTraits kNormTraits[] = {  // in the enum's order
    {"none", false, false},
    {"batchnorm", true, false},
    {"layernorm", true, true},
    {"rmsnorm", false, true},
    {"deepnorm", true, false},  // LayerNorm in DeepNet's residual x = LN(alpha x + f(x)): model/transformer.cpp
    {"prmsnorm", false, true},
};
inline const NormTraits& traits(NormType k) { return kNormTraits[int(k)]; }
inline const char* to_string(NormType k) { return traits(k).name; }

// layernorm.cpp: y = (x - mean) / sqrt(var + eps) * gamma + beta, biased var, per row.
// x (N, C); gamma, beta (1, C) or absent (affine off).
template <class T>
Tensor<T> layernorm(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, Tensor<T> beta, T eps);

// rmsnorm.cpp: y = x / sqrt(mean(x^2) + eps) * gamma, per row; no mean, no bias.
template <class T>
Tensor<T> rmsnorm(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, T eps);

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
Tensor<T> batchnorm_composite(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, Tensor<T> beta, int S, T eps,
                              Tensor<T> mask);
template <class T>
Tensor<T> weightnorm_composite(Graph<T>& g, Tensor<T> v, Tensor<T> gain);

// The arguments every kind draws from; each reads what it needs.
template <class T>
struct NormArgs {
  Tensor<T> gamma, beta;      // gain and bias (1, C), or absent (affine off; no bias unless traits().bias)
  T eps = T(1e-5);
  double p = 0.0625;          // prmsnorm: the share of the features its RMS reads
  int positions = 1;          // batchnorm: the S of its (R, S, C) view
  BatchNormState<T> state{};  // batchnorm: running statistics, momentum and padding mask
};

// y = norm(x) of the given kind: the fused op, or with `composite` the same norm composed from
// primitive ops (the regime of a framework without fused kernels; claim C3).
template <class T>
Tensor<T> apply_norm(Graph<T>& g, NormType kind, Tensor<T> x, const NormArgs<T>& a, bool composite = false) {
  switch (kind) {
    case NormType::none:
      return x;
    case NormType::layernorm:
    case NormType::deepnorm:
      return composite ? layernorm_composite(g, x, a.gamma, a.beta, a.eps) : layernorm(g, x, a.gamma, a.beta, a.eps);
    case NormType::rmsnorm:
      return composite ? rmsnorm_composite(g, x, a.gamma, a.eps) : rmsnorm(g, x, a.gamma, a.eps);
    case NormType::prmsnorm:
      return composite ? prmsnorm_composite(g, x, a.gamma, a.eps, a.p) : prmsnorm(g, x, a.gamma, a.eps, a.p);
    case NormType::batchnorm:
      if (!composite) return batchnorm(g, x, a.gamma, a.beta, a.positions, a.eps, a.state);
      return batchnorm_composite(g, x, a.gamma, a.beta, a.positions, a.eps,
                                 a.state.mask ? Tensor<T>{const_cast<T*>(a.state.mask), nullptr, x.rows, 1} : Tensor<T>{});
  }
  return x;
}

}  // namespace nt
