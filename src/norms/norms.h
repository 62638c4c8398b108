// The normalizations, each as a fused op with a hand-derived backward (layernorm.cpp,
// rmsnorm.cpp, batchnorm.cpp, weightnorm.cpp) and the same norm composed from primitive
// ops (composite.cpp) whose backward autograd derives; tests hold one against the other.
//
// Reduction axes, which is what tells the norms apart:
//   layernorm, rmsnorm   per row (one case, one position) over its C features
//   batchnorm            per feature over the batch (and the positions, bn_axes batch_time)
//   weightnorm           per output unit over its incoming weights (data-independent)
#pragma once
#include "core/graph.h"

namespace nt {

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

// weightnorm.cpp: w_i = g_i v_i / ||v_i|| for each row i of v (out, in); g (out, 1) or
// absent (unit-norm rows). Normalizes weights, not activations: use its output in linear().
template <class T>
Tensor<T> weightnorm(Graph<T>& g, Tensor<T> v, Tensor<T> gain);

// composite.cpp: the same four norms built from add/mul/mean/rsqrt/reshape (no running
// statistics; batchnorm composite supports the mask only when S == 1).
template <class T>
Tensor<T> layernorm_composite(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, Tensor<T> beta, T eps);
template <class T>
Tensor<T> rmsnorm_composite(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, T eps);
template <class T>
Tensor<T> batchnorm_composite(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, Tensor<T> beta, int S, T eps,
                              Tensor<T> mask);
template <class T>
Tensor<T> weightnorm_composite(Graph<T>& g, Tensor<T> v, Tensor<T> gain);

}  // namespace nt
