#include "analysis/invariance.h"

#include <Eigen/Dense>

#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

#include "core/aligned.h"
#include "core/errors.h"
#include "core/graph.h"
#include "core/rng.h"
#include "norms/norms.h"
#include "ops/ops.h"

namespace nt {

namespace {

constexpr const char* kTransformNames[] = {"weight-rescale", "weight-recenter", "weight-vector-rescale",
                                           "data-rescale",   "data-recenter",   "case-rescale"};
constexpr const char* kShortNames[] = {"W rescale",    "W recenter",    "w_i rescale",
                                       "data rescale", "data recenter", "case rescale"};

// The row's description: a norm kind's, or weightnorm's.
const NormDesc& desc_of(const std::string& name) {
  if (name == kWeightNormDesc.name) return kWeightNormDesc;
  for (NormType k : all_norm_types())
    if (name == to_string(k) && !norm_desc(k).applies) return norm_desc(k);
  throw std::invalid_argument(fmt::format("invariance: no row \"{}\"", name));
}

struct Draw {
  std::vector<double> W, x;  // (H, D), (N, D)
};

Draw draw_layer(const LayerSetup& s, uint64_t stream) {
  Rng rng(s.seed, stream);
  Draw d;
  d.W.resize(std::size_t(s.units) * s.inputs);
  d.x.resize(std::size_t(s.cases) * s.inputs);
  for (auto& w : d.W) w = rng.normal() / std::sqrt(double(s.inputs));
  for (auto& v : d.x) v = rng.normal();
  return d;
}

// Every row of m (rows, D) plus one vector c ~ N(0, 1)^D.
void shift_every_row(std::vector<double>& m, int D, Rng& rng) {
  std::vector<double> c(D);
  for (auto& v : c) v = rng.normal();
  for (std::size_t row = 0; row < m.size() / D; ++row)
    for (int j = 0; j < D; ++j) m[row * D + j] += c[j];
}

// The table's transforms come in pairs, one on W (H, D) and its twin on x (N, D), a row being a
// unit's weights or a case: all of it times delta (weight-, data-rescale); every row plus one random
// vector (W + 1 gamma^T, x + c); row 0 times delta (unit 0's weights, case 0).
Draw transformed(const Draw& d, Transform t, const LayerSetup& s) {
  Draw o = d;
  Rng rng(s.seed, 50 + int(t));
  const bool on_weights =
      t == Transform::weight_rescale || t == Transform::weight_recenter || t == Transform::weight_vector_rescale;
  std::vector<double>& m = on_weights ? o.W : o.x;
  if (t == Transform::weight_rescale || t == Transform::data_rescale) {
    for (auto& v : m) v *= s.delta;
  } else if (t == Transform::weight_recenter || t == Transform::data_recenter) {
    shift_every_row(m, s.inputs, rng);
  } else {
    for (int j = 0; j < s.inputs; ++j) m[j] *= s.delta;
  }
  return o;
}

// y = norm(x W^T) computed in T with the library's ops; returned in double.
template <class T>
std::vector<double> normalized(const std::string& n, const Draw& d, const LayerSetup& s, T eps) {
  AlignedVector<T> W(d.W.begin(), d.W.end()), x(d.x.begin(), d.x.end());
  Graph<T> g(/*training=*/true, /*grad=*/false);
  Tensor<T> w{W.data(), nullptr, s.units, s.inputs};
  const NormDesc& desc = desc_of(n);
  const bool weight_norm = &desc == &kWeightNormDesc;
  if (weight_norm) w = weightnorm(g, w, Tensor<T>{});
  Tensor<T> a = linear(g, Tensor<T>{x.data(), nullptr, s.cases, s.inputs}, w, Tensor<T>{});
  Tensor<T> y = weight_norm ? a : desc.fns<T>().fused(g, a, NormArgs<T>{.eps = eps});
  return std::vector<double>(y.data, y.data + y.size());
}

Measurement compare(const std::vector<double>& y, const std::vector<double>& y2, double invariant_below) {
  Measurement m;
  double diff2 = 0, norm2 = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    m.max_abs_diff = std::max(m.max_abs_diff, std::abs(y2[i] - y[i]));
    diff2 += (y2[i] - y[i]) * (y2[i] - y[i]);
    norm2 += y[i] * y[i];
  }
  m.rel_diff = std::sqrt(diff2 / norm2);
  m.verdict = m.rel_diff < invariant_below ? Verdict::invariant
              : m.rel_diff > 1e-2          ? Verdict::changed
                                           : Verdict::inconclusive;
  return m;
}

}  // namespace

const std::vector<std::string>& table_norms() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> names;
    for (NormType k : all_norm_types())
      if (!norm_desc(k).applies) names.push_back(to_string(k));
    names.push_back(kWeightNormDesc.name);
    return names;
  }();
  return v;
}
const std::vector<Transform>& all_transforms() {
  static const std::vector<Transform> v{Transform::weight_rescale, Transform::weight_recenter,
                                        Transform::weight_vector_rescale, Transform::data_rescale,
                                        Transform::data_recenter, Transform::case_rescale};
  return v;
}
const char* to_string(Transform t) { return kTransformNames[int(t)]; }
const char* short_name(Transform t) { return kShortNames[int(t)]; }
const char* to_string(Verdict v) {
  return v == Verdict::invariant ? "invariant" : v == Verdict::changed ? "changed" : "inconclusive";
}
const Expectation& expectation(const Invariances& row, Transform t) {
  switch (t) {
    case Transform::weight_rescale: return row.weight_rescale;
    case Transform::weight_recenter: return row.weight_recenter;
    case Transform::weight_vector_rescale: return row.weight_vector_rescale;
    case Transform::data_rescale: return row.data_rescale;
    case Transform::data_recenter: return row.data_recenter;
    case Transform::case_rescale: return row.case_rescale;
  }
  throw std::invalid_argument("invariance: no such transform");
}
bool paper_expects_invariant(const std::string& n, Transform t) {
  return expectation(desc_of(n).invariances, t).invariant;
}
double float32_invariant_below(const std::string& n) { return desc_of(n).invariances.float32_invariant_below; }
const char* invariance_reason(const std::string& n, Transform t) { return expectation(desc_of(n).invariances, t).why; }

std::vector<Transform> parse_transforms(const std::string& name) {
  using T = Transform;
  if (name == "all") return all_transforms();
  if (name == "rescale") return {T::weight_rescale, T::weight_vector_rescale, T::data_rescale, T::case_rescale};
  if (name == "recenter") return {T::weight_recenter, T::data_recenter};
  for (Transform t : all_transforms())
    if (name == to_string(t)) return {t};
  throw UsageError(fmt::format("--transform: expected one of all|rescale|recenter|weight-rescale|"
                                          "weight-recenter|weight-vector-rescale|data-rescale|data-recenter|"
                                          "case-rescale, got \"{}\"", name));
}

std::vector<std::string> parse_table_norms(const std::string& name) {
  if (name == "all") return table_norms();
  std::string known = "all";
  for (const std::string& n : table_norms()) {
    if (name == n) return {n};
    known += "|" + n;
  }
  throw UsageError(fmt::format("--norm: expected one of {}, got \"{}\"", known, name));
}

std::vector<Cell> layer_invariance(const LayerSetup& s, const std::vector<std::string>& norms,
                                   const std::vector<Transform>& transforms) {
  if (!(s.delta > 0)) throw UsageError(fmt::format("--delta: must be > 0, got {}", s.delta));
  const Draw base = draw_layer(s, 40);
  std::vector<Cell> cells;
  for (const std::string& n : norms) {
    const auto y64 = normalized<double>(n, base, s, 0.0);
    const auto y32 = normalized<float>(n, base, s, float(s.eps32));
    for (Transform t : transforms) {
      const Draw d = transformed(base, t, s);
      Cell c{n, t, compare(y64, normalized<double>(n, d, s, 0.0), 1e-10),
             compare(y32, normalized<float>(n, d, s, float(s.eps32)), float32_invariant_below(n)),
             paper_expects_invariant(n, t), false};
      const Verdict want = c.expected ? Verdict::invariant : Verdict::changed;
      c.agrees = c.exact.verdict == want && c.practical.verdict == want;
      cells.push_back(c);
    }
  }
  return cells;
}

// ---- gradient geometry ----

namespace {

// L = sum(norm(x W^T) * R) and dL/dW, float64, eps 0.
double loss_and_grad(NormType n, const std::vector<double>& Wv, const Draw& d, const std::vector<double>& R,
                     const LayerSetup& s, std::vector<double>& dW) {
  std::vector<double> W = Wv, x = d.x;
  dW.assign(W.size(), 0.0);
  Graph<double> g(true, true);
  Tensor<double> w{W.data(), dW.data(), s.units, s.inputs};
  Tensor<double> a = linear(g, Tensor<double>{x.data(), nullptr, s.cases, s.inputs}, w, Tensor<double>{});
  Tensor<double> y = apply_norm(g, n, a, NormArgs<double>{.eps = 0.0});
  double L = 0;
  double* dy = g.seed(y);
  for (int64_t i = 0; i < y.size(); ++i) L += y.data[i] * R[i], dy[i] = R[i];
  g.backward(Tensor<double>{});
  return L;
}

double norm_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

}  // namespace

// The norms the papers' gradient analyses set side by side (Ba et al. 2016 §5: LayerNorm against
// BatchNorm; Zhang & Sennrich 2019 §3: RMSNorm against LayerNorm): the experiments' setting, in the
// order of their tables, not a property of the norms.
constexpr NormType kScalingNorms[] = {NormType::layernorm, NormType::rmsnorm, NormType::batchnorm};
constexpr NormType kJacobianNorms[] = {NormType::layernorm, NormType::rmsnorm};

std::vector<ScalingRow> gradient_scaling(const LayerSetup& s) {
  const Draw d = draw_layer(s, 40);
  Rng rng(s.seed, 60);
  std::vector<double> R(std::size_t(s.cases) * s.units);
  for (auto& r : R) r = rng.normal();
  std::vector<ScalingRow> rows;
  for (NormType n : kScalingNorms) {
    std::vector<double> g0, g1;
    loss_and_grad(n, d.W, d, R, s, g0);
    double dot = 0;
    for (std::size_t i = 0; i < g0.size(); ++i) dot += g0[i] * d.W[i];
    double column = 0;  // max over inputs j of |sum over units i of dL/dW_ij|
    for (int j = 0; j < s.inputs; ++j) {
      double sum = 0;
      for (int i = 0; i < s.units; ++i) sum += g0[std::size_t(i) * s.inputs + j];
      column = std::max(column, std::abs(sum));
    }
    for (double delta : {0.5, 2.0, 10.0}) {
      std::vector<double> W = d.W;
      for (auto& w : W) w *= delta;
      loss_and_grad(n, W, d, R, s, g1);
      rows.push_back({n, delta, norm_of(g1) * delta / norm_of(g0), dot / (norm_of(g0) * norm_of(d.W)),
                      norm_desc(n).invariances.weight_recenter.invariant ? column / norm_of(g0) : NAN});
    }
  }
  return rows;
}

std::vector<JacobianRow> jacobian_norms(uint64_t seed) {
  constexpr int C = 64;
  std::vector<JacobianRow> rows;
  Rng rng(seed, 70);
  for (NormType n : kJacobianNorms)
    for (double scale : {0.1, 1.0, 10.0}) {
      // aligned: the norm's vector sums start at the same lane whatever the heap gave before, so
      // the last digit of the product does not depend on what ran earlier in the process
      AlignedVector<double> x(C), dx(C);
      for (auto& v : x) v = scale * (rng.normal() + 0.5);
      Eigen::MatrixXd J(C, C);
      for (int i = 0; i < C; ++i) {  // row i of J = d y_i / d x, one backward pass each
        std::fill(dx.begin(), dx.end(), 0.0);
        Graph<double> g(true, true);
        Tensor<double> xt{x.data(), dx.data(), 1, C};
        Tensor<double> y = apply_norm(g, n, xt, NormArgs<double>{.eps = 0.0});
        g.seed(y)[i] = 1.0;
        g.backward(Tensor<double>{});
        for (int j = 0; j < C; ++j) J(i, j) = dx[j];
      }
      const double spectral = Eigen::JacobiSVD<Eigen::MatrixXd>(J).singularValues()(0);
      double mean = 0, ms = 0, var = 0;
      for (double v : x) mean += v / C, ms += v * v / C;
      for (double v : x) var += (v - mean) * (v - mean) / C;
      const double stat = norm_desc(n).centers ? std::sqrt(var) : std::sqrt(ms);
      rows.push_back({n, scale, spectral, stat, spectral * stat});
    }
  return rows;
}

}  // namespace nt
