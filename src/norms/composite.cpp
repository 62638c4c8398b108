// The norms composed from primitive ops, so that autograd derives their backward. They are
// the test oracle for the fused ops in this folder (tests/test_norms.cpp), written to read
// like the formulas, not to be fast.
#include "core/check.h"
#include "norms/norms.h"
#include "ops/ops.h"

namespace nt {

template <class T>
Tensor<T> layernorm_composite(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, Tensor<T> beta, T eps) {
  Tensor<T> xc = add(g, x, scale(g, mean(g, x, 1), T(-1)));   // x - mean          (N, C)
  Tensor<T> var = mean(g, mul(g, xc, xc), 1);                   // biased variance   (N, 1)
  Tensor<T> y = mul(g, xc, rsqrt(g, var, eps));                 // xhat
  if (gamma.data) y = mul(g, y, reshape(gamma, 1, x.cols));
  if (beta.data) y = add(g, y, reshape(beta, 1, x.cols));
  return y;
}

template <class T>
Tensor<T> rmsnorm_composite(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, T eps) {
  Tensor<T> y = mul(g, x, rsqrt(g, mean(g, mul(g, x, x), 1), eps));  // x / sqrt(mean(x^2) + eps)
  if (gamma.data) y = mul(g, y, reshape(gamma, 1, x.cols));
  return y;
}

template <class T>
Tensor<T> prmsnorm_composite(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, T eps, double p) {
  const int k = prmsnorm_features(p, x.cols);
  Tensor<T> first_k = g.tensor(1, x.cols, false);  // 1 on the features the statistic reads, 0 beyond
  for (int j = 0; j < x.cols; ++j) first_k.data[j] = j < k ? T(1) : T(0);
  Tensor<T> ms = scale(g, sum(g, mul(g, mul(g, x, x), first_k), 1), T(1) / T(k));  // (1/k) sum_{j<k} x_j^2
  Tensor<T> y = mul(g, x, rsqrt(g, ms, eps));
  if (gamma.data) y = mul(g, y, reshape(gamma, 1, x.cols));
  return y;
}

template <class T>
Tensor<T> scalenorm_composite(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, T eps) {
  Tensor<T> y = mul(g, x, rsqrt(g, sum(g, mul(g, x, x), 1), eps));  // x / sqrt(sum(x^2) + eps)
  if (gamma.data) y = mul(g, y, reshape(gamma, 1, 1));              // one scalar gain
  return y;
}

template <class T>
Tensor<T> dyt_composite(Graph<T>& g, Tensor<T> x, Tensor<T> alpha, Tensor<T> gamma, Tensor<T> beta) {
  Tensor<T> y = tanh(g, alpha.data ? mul(g, x, reshape(alpha, 1, 1)) : x);  // tanh(alpha x)
  if (gamma.data) y = mul(g, y, reshape(gamma, 1, x.cols));
  if (beta.data) y = add(g, y, reshape(beta, 1, x.cols));
  return y;
}

template <class T>
Tensor<T> batchnorm_composite(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, Tensor<T> beta, int S, T eps,
                              Tensor<T> mask) {
  const int R = x.rows / S, C = x.cols;
  Tensor<T> xs = reshape(x, R, S * C);  // one column per (s, c): statistics over the R rows
  Tensor<T> y;
  if (!mask.data) {
    Tensor<T> xc = add(g, xs, scale(g, mean(g, xs, 0), T(-1)));
    y = mul(g, xc, rsqrt(g, mean(g, mul(g, xc, xc), 0), eps));
  } else {
    NT_CHECK(S == 1 && mask.rows == R && mask.cols == 1, "batchnorm_composite: mask needs S == 1, (R, 1)");
    const T inv_count = T(1) / sum(g, mask).data[0];
    Tensor<T> mu = scale(g, sum(g, mul(g, xs, mask), 0), inv_count);
    Tensor<T> xc = add(g, xs, scale(g, mu, T(-1)));
    Tensor<T> var = scale(g, sum(g, mul(g, mul(g, xc, xc), mask), 0), inv_count);
    y = mul(g, xc, rsqrt(g, var, eps));
  }
  y = reshape(y, R * S, C);
  if (gamma.data) y = mul(g, y, reshape(gamma, 1, C));
  if (beta.data) y = add(g, y, reshape(beta, 1, C));
  return y;
}

template <class T>
Tensor<T> weightnorm_composite(Graph<T>& g, Tensor<T> v, Tensor<T> gain) {
  Tensor<T> w = mul(g, v, rsqrt(g, sum(g, mul(g, v, v), 1), T(0)));  // v / ||v|| per row
  if (gain.data) w = mul(g, w, reshape(gain, v.rows, 1));
  return w;
}

#define NT_INSTANTIATE(T)                                                                          \
  template Tensor<T> layernorm_composite(Graph<T>&, Tensor<T>, Tensor<T>, Tensor<T>, T);           \
  template Tensor<T> rmsnorm_composite(Graph<T>&, Tensor<T>, Tensor<T>, T);                        \
  template Tensor<T> prmsnorm_composite(Graph<T>&, Tensor<T>, Tensor<T>, T, double);               \
  template Tensor<T> scalenorm_composite(Graph<T>&, Tensor<T>, Tensor<T>, T);                      \
  template Tensor<T> dyt_composite(Graph<T>&, Tensor<T>, Tensor<T>, Tensor<T>, Tensor<T>);              \
  template Tensor<T> batchnorm_composite(Graph<T>&, Tensor<T>, Tensor<T>, Tensor<T>, int, T, Tensor<T>); \
  template Tensor<T> weightnorm_composite(Graph<T>&, Tensor<T>, Tensor<T>);
NT_INSTANTIATE(float)
NT_INSTANTIATE(double)

}  // namespace nt
