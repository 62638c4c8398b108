// BatchNorm (Ioffe & Szegedy 2015; PyTorch nn.BatchNorm1d), per feature over the batch.
//
// x is (R*S, C) seen as (R, S, C); statistics per (s, c) over the R rows whose mask is 1,
// M_s of them:
//   training  mean = (1/M) sum_r x_r,  var = (1/M) sum_r (x_r - mean)^2   (biased, two-pass)
//             running_mean = (1 - momentum) running_mean + momentum * mean
//             running_var  = (1 - momentum) running_var  + momentum * var * M / (M - 1)
//   eval      mean = running_mean, var = running_var
//   both      rstd = 1 / sqrt(var + eps),  xhat = (x - mean) rstd,  y = gamma xhat + beta
// A position with M_s = 0 is passed through (mean 0, var 1) and its running statistics kept;
// with M_s = 1 the running variance is kept (no unbiased estimate exists).
//
// Backward, dnorm = dy * gamma, m_r the mask, sums over all R rows of one (s, c):
//   dbeta += dy,  dgamma += dy * xhat
//   training  dx_r += rstd * (dnorm_r - (m_r/M) sum dnorm - (m_r/M) xhat_r sum dnorm * xhat)
//   eval      dx_r += rstd * dnorm_r            (the statistics are constants)
// (each += is = where the node writes that gradient first: core/graph.h)
// Buffers: mean, rstd (S*C) and the counts M (S), kept by forward for backward; sums (2 S*C + C):
// backward's two reductions and a row of dnorm.
#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/eigen.h"
#include "norms/norms.h"

namespace nt {

template <class T>
void batchnorm_forward(T* y, T* mean, T* rstd, T* count, const T* x, const T* gamma, const T* beta, int R, int S, int C,
                       T eps, bool training, const BatchNormState<T>& st) {
  const int64_t SC = int64_t(S) * C;
  auto m_of = [&](int r, int s) { return st.mask ? st.mask[int64_t(r) * S + s] : T(1); };
  if (training) {
    std::fill(mean, mean + SC, T(0));
    std::fill(rstd, rstd + SC, T(0));  // holds the variance until the last step
    for (int s = 0; s < S; ++s) {
      T M = 0;
      for (int r = 0; r < R; ++r) M += m_of(r, s);
      count[s] = M;
      T* mu = mean + int64_t(s) * C;
      T* var = rstd + int64_t(s) * C;
      if (M == T(0)) {
        for (int c = 0; c < C; ++c) var[c] = T(1);
        continue;
      }
      auto mu_c = RowVecMap<T>(mu, C).array();
      auto var_c = RowVecMap<T>(var, C).array();
      for (int r = 0; r < R; ++r)
        if (const T m = m_of(r, s); m != T(0)) mu_c += m * CRowVecMap<T>(x + (int64_t(r) * S + s) * C, C).array();
      mu_c /= M;
      for (int r = 0; r < R; ++r)
        if (const T m = m_of(r, s); m != T(0))
          var_c += m * (CRowVecMap<T>(x + (int64_t(r) * S + s) * C, C).array() - mu_c).square();
      var_c /= M;
      if (st.running_mean && M > T(1)) {
        const T k = st.momentum;
        for (int c = 0; c < C; ++c) {
          st.running_mean[s * C + c] = (T(1) - k) * st.running_mean[s * C + c] + k * mu[c];
          st.running_var[s * C + c] = (T(1) - k) * st.running_var[s * C + c] + k * var[c] * M / (M - T(1));
        }
      }
    }
    for (int64_t i = 0; i < SC; ++i) rstd[i] = T(1) / std::sqrt(rstd[i] + eps);
  } else {
    NT_CHECK(st.running_mean && st.running_var, "batchnorm: eval mode needs running statistics");
    for (int64_t i = 0; i < SC; ++i) {
      mean[i] = st.running_mean[i];
      rstd[i] = T(1) / std::sqrt(st.running_var[i] + eps);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int s = 0; s < S; ++s) {
      const int64_t row = int64_t(r) * S + s;
      auto yr = RowVecMap<T>(y + row * C, C).array();
      yr = (CRowVecMap<T>(x + row * C, C).array() - CRowVecMap<T>(mean + int64_t(s) * C, C).array()) *
           CRowVecMap<T>(rstd + int64_t(s) * C, C).array();
      if (gamma) yr *= CRowVecMap<T>(gamma, C).array();
      if (beta) yr += CRowVecMap<T>(beta, C).array();
    }
}

template <class T>
void batchnorm_backward(T* dx, T* dgamma, T* dbeta, T* sums, const T* dy, const T* x, const T* mean,
                        const T* rstd, const T* M, const T* gamma, const T* mask, int R, int S, int C, bool training,
                        unsigned first) {
  const int64_t SC = int64_t(S) * C;
  const bool first_x = writes_first(first, 0);
  // dgamma and dbeta gather every position's sums: zeroed when written first, then added to
  if (dgamma && writes_first(first, 1)) std::fill(dgamma, dgamma + C, T(0));
  if (dbeta && writes_first(first, 2)) std::fill(dbeta, dbeta + C, T(0));
  // first: the two reductions per (s, c), sum dnorm and sum dnorm * xhat, and the parameter gradients
  auto sum_dnorm = RowVecMap<T>(sums, SC).array();
  auto sum_dnorm_xhat = RowVecMap<T>(sums + SC, SC).array();
  sum_dnorm.setZero();
  sum_dnorm_xhat.setZero();
  const auto mu = CRowVecMap<T>(mean, SC).array();
  const auto rs = CRowVecMap<T>(rstd, SC).array();
  for (int r = 0; r < R; ++r) {
    const auto xr = CRowVecMap<T>(x + r * SC, SC).array();
    const auto dyr = CRowVecMap<T>(dy + r * SC, SC).array();
    sum_dnorm += dyr;                           // times gamma below, once per (s, c)
    sum_dnorm_xhat += dyr * (xr - mu) * rs;
  }
  for (int s = 0; s < S; ++s) {  // dbeta = sum dy, dgamma = sum dy xhat, over rows and positions
    if (dbeta) RowVecMap<T>(dbeta, C) += sum_dnorm.segment(int64_t(s) * C, C).matrix();
    if (dgamma) RowVecMap<T>(dgamma, C) += sum_dnorm_xhat.segment(int64_t(s) * C, C).matrix();
    if (gamma) {
      sum_dnorm.segment(int64_t(s) * C, C) *= CRowVecMap<T>(gamma, C).array();
      sum_dnorm_xhat.segment(int64_t(s) * C, C) *= CRowVecMap<T>(gamma, C).array();
    }
  }
  if (!dx) return;
  // then: dx, with a row of dnorm = dy * gamma in the scratch after the sums
  auto dnorm = RowVecMap<T>(sums + 2 * SC, C).array();
  for (int r = 0; r < R; ++r)
    for (int s = 0; s < S; ++s) {
      const int64_t row = int64_t(r) * S + s, at = int64_t(s) * C;
      const auto dyr = CRowVecMap<T>(dy + row * C, C).array();
      if (gamma) dnorm = dyr * CRowVecMap<T>(gamma, C).array();
      else dnorm = dyr;
      const auto r_sc = rs.segment(at, C);
      auto dxr = RowVecMap<T>(dx + row * C, C).array();
      const T w = training && M[s] > T(0) ? (mask ? mask[row] : T(1)) / M[s] : T(0);
      if (w == T(0)) {
        put(first_x, dxr, r_sc * dnorm);  // term 1 only (eval mode, or a row outside the statistics)
        continue;
      }
      const auto xhat = (CRowVecMap<T>(x + row * C, C).array() - mu.segment(at, C)) * r_sc;
      put(first_x, dxr, r_sc * (dnorm - w * sum_dnorm.segment(at, C) - w * xhat * sum_dnorm_xhat.segment(at, C)));
    }
}

namespace {
template <class T>
struct BatchNormContext {
  Tensor<T> y, x, gamma, beta;
  const T* mean;
  const T* rstd;
  const T* count;
  T* sums;
  const T* mask;
  int R, S;
  bool training;
};
template <class T>
void batchnorm_backward_node(const void* p, unsigned first) {
  const auto& c = *static_cast<const BatchNormContext<T>*>(p);
  batchnorm_backward(c.x.grad, c.gamma.grad, c.beta.grad, c.sums, c.y.grad, c.x.data, c.mean, c.rstd, c.count,
                     c.gamma.data, c.mask, c.R, c.S, c.x.cols, c.training, first);
}
}  // namespace

template <class T>
Tensor<T> batchnorm(Graph<T>& g, Tensor<T> x, Tensor<T> gamma, Tensor<T> beta, int S, T eps,
                    const BatchNormState<T>& state) {
  NT_CHECK(S > 0 && x.rows % S == 0, "batchnorm: rows must be R*S");
  NT_CHECK(!gamma.data || gamma.size() == x.cols, "batchnorm: gamma must have C entries");
  NT_CHECK(!beta.data || beta.size() == x.cols, "batchnorm: beta must have C entries");
  NT_CHECK(!state.running_mean == !state.running_var, "batchnorm: running mean and var go together");
  const int R = x.rows / S, C = x.cols;
  Tensor<T> y = g.output(x.rows, C, x, gamma, beta);
  T* mean = g.buffer(std::size_t(S) * C);
  T* rstd = g.buffer(std::size_t(S) * C);
  T* count = g.buffer(S);
  batchnorm_forward(y.data, mean, rstd, count, x.data, gamma.data, beta.data, R, S, C, eps, g.training(), state);
  if (y.grad) {
    T* sums = g.buffer(2 * std::size_t(S) * C + C);
    g.record(batchnorm_backward_node<T>,
             BatchNormContext<T>{y, x, gamma, beta, mean, rstd, count, sums, state.mask, R, S, g.training()},
             {x.grad, gamma.grad, beta.grad});
  }
  return y;
}

template Tensor<float> batchnorm(Graph<float>&, Tensor<float>, Tensor<float>, Tensor<float>, int, float,
                                 const BatchNormState<float>&);
template Tensor<double> batchnorm(Graph<double>&, Tensor<double>, Tensor<double>, Tensor<double>, int, double,
                                  const BatchNormState<double>&);

// ---- the description ----

namespace {
template <class T>
Tensor<T> fused(Graph<T>& g, Tensor<T> x, const NormArgs<T>& a) {
  return batchnorm(g, x, a.gamma, a.beta, a.positions, a.eps, a.state);
}
template <class T>
Tensor<T> composite(Graph<T>& g, Tensor<T> x, const NormArgs<T>& a) {
  const Tensor<T> mask = a.state.mask ? Tensor<T>{const_cast<T*>(a.state.mask), nullptr, x.rows, 1} : Tensor<T>{};
  return batchnorm_composite(g, x, a.gamma, a.beta, a.positions, a.eps, mask);
}
}  // namespace

extern const NormDesc kBatchNormDesc = {
    .name = "batchnorm",
    .gain = ParamShape::per_feature,
    .bias = ParamShape::per_feature,
    .gain_init = gain_one,
    .reduction = Reduction::batch,
    .f32 = {fused<float>, composite<float>},
    .f64 = {fused<double>, composite<double>},
    .invariances = {  // Ba et al. 2016 Table 1
        .weight_rescale = {true, "BN divides each unit by its std over the batch, which scales with delta"},
        .weight_recenter = {false, "W + 1g^T adds g.x to every unit, a shift that varies from case to case: "
                                   "BN's per-unit batch mean cannot remove it"},
        .weight_vector_rescale = {true, "BN normalizes each unit separately, "
                                        "so one unit's scale cancels in its own mean and std"},
        .data_rescale = {true, "every unit's summed inputs scale by delta over the whole batch; "
                               "BN's per-unit mean and std absorb it"},
        .data_recenter = {true, "x + c adds the constant w_i.c to unit i in every case; "
                                "BN subtracts the per-unit batch mean, removing it"},
        .case_rescale = {false, "scaling one case changes the batch mean and std every unit is normalized with"},
    },
    .centers = true,
    .color = "#E69F00",
};

}  // namespace nt
