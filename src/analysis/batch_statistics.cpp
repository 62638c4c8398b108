#include "analysis/batch_statistics.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/graph.h"
#include "core/rng.h"
#include "norms/norms.h"

namespace nt {

namespace {

std::vector<double> normals(std::size_t n, Rng& rng, double scale = 1.0, double shift = 0.0) {
  std::vector<double> v(n);
  for (auto& x : v) x = shift + scale * rng.normal();
  return v;
}

}  // namespace

RunningStatistics running_statistics() {
  const int m = 8, C = 4;
  Rng rng(5, 1);
  std::vector<double> x = normals(m * C, rng, 2.0, 1.5), rmean(C, 0.0), rvar(C, 1.0);
  BatchNormState<double> st{rmean.data(), rvar.data(), 0.1, nullptr};
  Graph<double> train(true, false), eval(false, false);
  const Tensor<double> xt{x.data(), nullptr, m, C};
  batchnorm(train, xt, {}, {}, 1, 1e-5, st);
  RunningStatistics r;
  const Tensor<double> ye = batchnorm(eval, xt, {}, {}, 1, 1e-5, st);
  for (int c = 0; c < C; ++c) {
    double mu = 0, var = 0;
    for (int i = 0; i < m; ++i) mu += x[i * C + c] / m;
    for (int i = 0; i < m; ++i) var += (x[i * C + c] - mu) * (x[i * C + c] - mu) / m;
    r.stats_error =
        std::max({r.stats_error, std::abs(rmean[c] - 0.1 * mu), std::abs(rvar[c] - (0.9 + 0.1 * m / (m - 1.0) * var))});
    for (int i = 0; i < m; ++i)
      r.eval_error = std::max(r.eval_error, std::abs(ye(i, c) - (x[i * C + c] - rmean[c]) / std::sqrt(rvar[c] + 1e-5)));
  }
  for (bool rms : {false, true}) {
    const Tensor<double> a = rms ? rmsnorm(train, xt, {}, 1e-5) : layernorm(train, xt, {}, {}, 1e-5);
    const Tensor<double> b = rms ? rmsnorm(eval, xt, {}, 1e-5) : layernorm(eval, xt, {}, {}, 1e-5);
    for (int64_t i = 0; i < a.size(); ++i) r.train_vs_eval = std::max(r.train_vs_eval, std::abs(a.data[i] - b.data[i]));
  }
  return r;
}

BatchDependence batch_dependence() {
  const int T = 6, C = 8;
  Rng rng(6, 1);
  const auto a = normals(T * C, rng), b1 = normals(T * C, rng), b2 = normals(T * C, rng, 3.0, 1.0);
  auto batch_of = [&](const std::vector<double>& other, int padded_rows) {
    std::vector<double> x(a);
    x.insert(x.end(), other.begin(), other.end());
    for (int i = 0; i < padded_rows * C; ++i) x[T * C + (T - padded_rows) * C + i] = 0.0;  // the tail of b as padding
    return x;
  };
  const std::vector<std::vector<double>> batches{batch_of(b1, 0), batch_of(b2, 0), batch_of(b1, 3)};
  double change[3] = {0, 0, 0};  // batchnorm, layernorm, rmsnorm
  for (int kind = 0; kind < 3; ++kind) {
    std::vector<std::vector<double>> outs;
    for (auto x : batches) {
      Graph<double> g(true, false);
      const Tensor<double> xt{x.data(), nullptr, 2 * T, C};
      const Tensor<double> y = kind == 0   ? batchnorm(g, xt, {}, {}, 1, 1e-5, BatchNormState<double>{})
                               : kind == 1 ? layernorm(g, xt, {}, {}, 1e-5)
                                           : rmsnorm(g, xt, {}, 1e-5);
      outs.emplace_back(y.data, y.data + T * C);  // sequence a's rows only
    }
    double ref = 0;
    for (double v : outs[0]) ref += v * v;
    for (int k = 1; k < 3; ++k) {
      double d = 0;
      for (int i = 0; i < T * C; ++i) d += (outs[k][i] - outs[0][i]) * (outs[k][i] - outs[0][i]);
      change[kind] = std::max(change[kind], std::sqrt(d / ref));
    }
  }
  return {change[0], change[1], change[2]};
}

}  // namespace nt
