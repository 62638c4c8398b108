// The invariance tables of the LayerNorm (Ba et al. 2016, Table 1) and RMSNorm (Zhang &
// Sennrich 2019, Table 1) papers, measured (claims E1-E4).
//
// A layer y = norm(a), a = x W^T, W (H units x D inputs) ~ N(0, 1/D), x (N cases x D) ~ N(0, 1),
// no pre-norm bias and no gain/bias after the norm (the papers' setting). Each transform,
// with delta > 0 and gamma, c ~ N(0, I):
//   weight-rescale         W' = delta W
//   weight-recenter        W' = W + 1 gamma^T   (the same gamma added to every unit's weights)
//   weight-vector-rescale  w_0' = delta w_0     (one unit)
//   data-rescale           x' = delta x         (every case)
//   data-recenter          x' = x + c           (every case, the same c)
//   case-rescale           x_0' = delta x_0     (one case)
// is applied and the normalized output compared: rel = ||y' - y||_F / ||y||_F. The same ops
// the trainer uses compute it, in float64 with eps = 0 (exact) and in float32 with eps = 1e-5.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "norms/norms.h"

namespace nt {

// The transforms of the papers' tables, in their order.
enum class Transform { weight_rescale, weight_recenter, weight_vector_rescale, data_rescale, data_recenter,
                       case_rescale };

// The rows of the table, by name: every norm kind with a row of its own (in NormType's order;
// deepnorm is LayerNorm's row), then weightnorm (which normalizes W, not the summed inputs).
// Each row's expectations and reasons are its norm's description (norms/norms.h).
const std::vector<std::string>& table_norms();
const std::vector<Transform>& all_transforms();
const char* to_string(Transform t);
const char* short_name(Transform t);  // table header: "W rescale", ...
// Names, groups ("rescale", "recenter", "all") -> transforms; throws std::invalid_argument.
std::vector<Transform> parse_transforms(const std::string& name);
std::vector<std::string> parse_table_norms(const std::string& name);

const Expectation& expectation(const Invariances& row, Transform t);  // the papers' cell and its reason
bool paper_expects_invariant(const std::string& norm, Transform t);
double float32_invariant_below(const std::string& norm);
const char* invariance_reason(const std::string& norm, Transform t);  // one line: why the cell holds or not

// Verdict thresholds (claims.md, E1): invariant when rel < 1e-10 (float64, eps 0) or
// < 1e-5 (float32, eps 1e-5; 1e-3 for pRMSNorm, whose statistic reads few units: see its row);
// changed when rel > 1e-2; in between, inconclusive.
enum class Verdict { invariant, changed, inconclusive };
const char* to_string(Verdict v);

struct LayerSetup {
  int units = 48, inputs = 64, cases = 32;
  double delta = 3.0;
  uint64_t seed = 1;
  double eps32 = 1e-5;
};

struct Measurement {
  double max_abs_diff = 0, rel_diff = 0;
  Verdict verdict = Verdict::inconclusive;
};

struct Cell {
  std::string norm;  // a row of table_norms()
  Transform transform;
  Measurement exact;      // float64, eps 0
  Measurement practical;  // float32, eps = eps32
  bool expected;          // the papers' table
  bool agrees;            // both measurements give the papers' verdict
};

std::vector<Cell> layer_invariance(const LayerSetup& setup, const std::vector<std::string>& norms,
                                   const std::vector<Transform>& transforms);

// Gradient geometry (claims E2, E3), float64 with eps = 0.
struct ScalingRow {
  NormType norm;
  double delta;
  double grad_ratio;           // ||dL/dW at delta W|| * delta / ||dL/dW at W||  (theory: 1)
  double grad_w_cosine;        // <dL/dW, W> / (||dL/dW|| ||W||)                 (theory: 0)
  double column_sum;           // max |1^T dL/dW| / ||dL/dW|| where the norm is    (theory: 0)
                               // invariant to W + 1 g^T (layernorm), else NaN
};
struct JacobianRow {
  NormType norm;
  double scale;                // the input's scale
  double spectral_norm;        // ||J||_2, from the full Jacobian
  double statistic;            // sigma(x) for a norm that centers (layernorm), else RMS(x) (rmsnorm)
  double product;              // spectral_norm * statistic (theory: 1)
};
std::vector<ScalingRow> gradient_scaling(const LayerSetup& setup);
std::vector<JacobianRow> jacobian_norms(uint64_t seed);

}  // namespace nt
