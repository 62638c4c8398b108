#include "analysis/model_invariance.h"

#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/arch.h"
#include "core/errors.h"
#include "core/rng.h"
#include "data/dataset.h"
#include "model/model.h"
#include "norms/norms.h"

namespace nt {

namespace {

// eps in every norm: not 0, so that a row of zeros (units a transform's shift drove below a ReLU)
// gives 0, not 0/0, at a later norm; below float32's resolution beside any other row's mean square
constexpr double kModelEps = 1e-30;

Tensor<float> find_param(ParamStore<float>& ps, int layer, const std::string& name) {
  for (int i = 0; i < ps.count(); ++i)
    if (ps.info(i).layer == layer && ps.info(i).name == name) return ps.tensor(i);
  throw std::logic_error("model invariance: no parameter " + name);
}

// Applies transform t to the model's input layer (weights) or to the batch (data).
void apply(Transform t, Model& model, Batch& batch, bool lm, double delta, Rng& rng) {
  ParamStore<float>& ps = model.params();
  const float d = float(delta);
  if (lm) {
    for (const char* name : {"tok_emb.weight", "pos_emb.weight"}) {
      Tensor<float> e = find_param(ps, 0, name);  // (rows, C): row = a token or a position
      for (int r = 0; r < e.rows; ++r) {
        const float shift = float(rng.normal());
        for (int c = 0; c < e.cols; ++c) {
          if (t == Transform::weight_rescale) e(r, c) *= d;
          if (t == Transform::weight_recenter) e(r, c) += shift;
          if (t == Transform::weight_vector_rescale && c == 0) e(r, c) *= d;
        }
      }
    }
    return;
  }
  Tensor<float> W = find_param(ps, 0, "linear.weight"), b = find_param(ps, 0, "linear.bias");
  const int D = W.cols, B = batch.B;
  std::vector<float> v(D);
  for (auto& x : v) x = float(rng.normal());
  const float beta = float(rng.normal());
  switch (t) {
    case Transform::weight_rescale:
      for (int64_t i = 0; i < W.size(); ++i) W.data[i] *= d;
      for (int64_t i = 0; i < b.size(); ++i) b.data[i] *= d;
      break;
    case Transform::weight_recenter:  // W + 1 gamma^T, b + 1 beta: every unit shifts by gamma.x + beta
      for (int i = 0; i < W.rows; ++i) {
        for (int j = 0; j < D; ++j) W(i, j) += v[j] / std::sqrt(float(D));
        b.data[i] += beta;
      }
      break;
    case Transform::weight_vector_rescale:
      for (int j = 0; j < D; ++j) W(0, j) *= d;
      b.data[0] *= d;
      break;
    case Transform::data_rescale:
      for (auto& x : batch.x) x *= d;
      break;
    case Transform::data_recenter:
      for (int r = 0; r < B; ++r)
        for (int j = 0; j < D; ++j) batch.x[std::size_t(r) * D + j] += v[j];
      break;
    case Transform::case_rescale:
      for (int j = 0; j < D; ++j) batch.x[j] *= d;
      break;
  }
}

// Over the rows `real` marks (nullptr: every row): a padded batch's padding rows are no output
Measurement change(const Tensor<float>& y, const Tensor<float>& y2, const float* real) {
  Measurement m;
  double diff2 = 0, norm2 = 0;
  for (int64_t i = 0; i < y.size(); ++i) {
    if (real && real[i / y.cols] == 0.0f) continue;
    const double e = double(y2.data[i]) - y.data[i];
    m.max_abs_diff = std::max(m.max_abs_diff, std::abs(e));
    diff2 += e * e;
    norm2 += double(y.data[i]) * y.data[i];
  }
  m.rel_diff = std::sqrt(diff2 / norm2);
  m.verdict = m.rel_diff < 1e-4 ? Verdict::invariant : Verdict::changed;
  return m;
}

}  // namespace

const char* to_string(Prediction p) {
  return p == Prediction::invariant ? "invariant" : p == Prediction::changed ? "changed" : "approximately invariant";
}

namespace {

// What the theory predicts of a transform at layer 0's norm site and at the logits, and why: a
// classifier's layer 0 feeds its norm directly; in a transformer, pre placement carries the
// transformed embeddings past the norm on the residual stream, and post placement sees x + attn(x).
void predict(ModelCell& cell, bool lm, bool pre, bool final_norm) {
  const Expectation& cell_of_table = expectation(norm_desc(cell.norm).invariances, cell.transform);  // deepnorm: LN's
  const bool table = cell_of_table.invariant;
  const Prediction from_table = table ? Prediction::invariant : Prediction::changed;
  const std::string not_invariant = fmt::format("the norm is not: {}", cell_of_table.why);
  if (!lm) {
    cell.predict_site = cell.predict_logits = from_table;
    cell.why =
        table ? "layer 0 feeds its norm directly and the norm is invariant: all after it is unchanged" : not_invariant;
  } else if (pre) {
    cell.predict_site = from_table;
    const bool mean_removed_everywhere = table && cell.transform == Transform::weight_recenter && final_norm;
    cell.predict_logits = mean_removed_everywhere ? Prediction::invariant : Prediction::changed;
    cell.why = !table ? not_invariant
               : mean_removed_everywhere
                   ? "every read of the residual stream goes through a LayerNorm (the final one too), which "
                     "removes the per-token shift the recentering adds"
                   : "the embeddings feed layer 0's norm directly, but the residual stream x + f(norm(x)) "
                     "carries the transformed embeddings to the output";
  } else {
    cell.predict_site = cell.predict_logits = table ? Prediction::approximate : Prediction::changed;
    cell.why = table ? "the norm sees x + attn(x): invariant only as far as attention's softmax weights stay the "
                       "same (approximately, while the scores are near zero at a small init)"
                     : not_invariant;
  }
}

// Measures the transform: the first norm site's output and the logits of a fresh model of `c` on
// the first validation batch, before and after; then whether the predictions hold.
void measure(ModelCell& cell, const RunConfig& c, const Dataset& data, bool lm, double delta) {
  const auto model = make_model(c, data);
  Batch batch;
  data.val_batch(0, c.train.batch_size, batch);
  Graph<float> g0(/*training=*/true, /*grad=*/false), g1(true, false);
  const Tensor<float> logits0 = model->logits(g0, batch);
  const Tensor<float> site0 = model->sites().front().out;
  cell.site = fmt::format("layer {} {}", model->sites().front().layer, model->sites().front().place);
  Rng rng(uint64_t(c.seed), 80 + int(cell.transform));
  apply(cell.transform, *model, batch, lm, delta, rng);
  const Tensor<float> logits1 = model->logits(g1, batch);
  cell.site_change = change(site0, model->sites().front().out, batch.real_tokens());
  cell.logits_change = change(logits0, logits1, batch.real_tokens());
  auto holds = [](Prediction p, const Measurement& m) {
    return p == Prediction::approximate || (p == Prediction::invariant) == (m.verdict == Verdict::invariant);
  };
  cell.agrees = holds(cell.predict_site, cell.site_change) && holds(cell.predict_logits, cell.logits_change);
  if (!std::isfinite(cell.site_change.rel_diff) || !std::isfinite(cell.logits_change.rel_diff)) {
    cell.agrees = false;  // a measurement that failed confirms no prediction
    cell.why += "; the measurement is not finite";
  }
}

// Why the config with norm `n` in every site (deepnorm: post) is no valid config, or ""
std::string refusal(const RunConfig& base, NormType n) {
  nlohmann::json j = config_to_json(base);
  j["model"]["norm"]["type"] = to_string(n);
  if (norm_desc(n).scaled_residual) j["model"]["norm"]["placement"] = "post";
  try {
    load_config(j.dump(), base.name, {});
  } catch (const ConfigError& e) {
    return fmt::format("{}", fmt::join(e.problems(), "; "));
  }
  return "";
}

}  // namespace

std::vector<ModelCell> model_invariance(const RunConfig& base, const std::vector<Transform>& transforms, double delta,
                                        const std::string& norm) {
  // the transforms act on a classifier's input layer ("linear") or on a single stack's embeddings ("tok_emb")
  const ArchDesc& a = arch_desc(base.model.arch);
  if (a.task != Task::classify && a.stacks != Stacks::decoder && a.stacks != Stacks::encoder)
    throw UsageError(
        fmt::format("model.arch = {}: the model-level invariance table is measured on the mlp, "
                    "transformer and encoder families (their input layer or embeddings take the "
                    "transforms); choose one of those",
                    to_string(base.model.arch)));
  const bool lm = base.is_lm();
  const auto data = make_dataset(base);
  std::vector<NormType> norms;  // every kind the family takes, or the one named (the mlp: neither deepnorm nor dyt)
  std::string known = "all";
  for (NormType k : all_norm_types())
    if (lm || !(norm_desc(k).scaled_residual || norm_desc(k).transformer_only)) {
      if (norm == "all" || norm == to_string(k)) norms.push_back(k);
      known += fmt::format("|{}", to_string(k));
    }
  if (norms.empty())
    throw UsageError(fmt::format("--norm: at model level ({}) expected one of {}, got \"{}\"",
                                 to_string(base.model.arch), known, norm));
  std::vector<ModelCell> cells;
  for (NormType n : norms) {
    const std::string refused = refusal(base, n);  // e.g. batchnorm beside model.qk_norm
    RunConfig c = base;
    c.model.norm.type = n;
    c.model.norm.eps = kModelEps;
    if (norm_desc(n).scaled_residual) c.model.norm.placement = Placement::post;
    const bool pre = lm && c.model.norm.placement == Placement::pre && !norm_desc(n).scaled_residual;
    for (Transform t : transforms) {
      ModelCell cell{n, t};
      const bool data_transform =
          t == Transform::data_rescale || t == Transform::data_recenter || t == Transform::case_rescale;
      if (!refused.empty()) {
        cell.applicable = false;
        cell.why = "the config refuses this norm: " + refused;
      } else if (lm && data_transform) {
        cell.applicable = false;
        cell.why = "the transformer's inputs are one-hot tokens: there is no data to rescale or recenter";
      } else {
        predict(cell, lm, pre, c.model.final_norm);
        measure(cell, c, *data, lm, delta);
      }
      cells.push_back(cell);
    }
  }
  return cells;
}

std::string invariance_example() {
  std::string out;
  const double eps = 1e-5;
  std::vector<double> x{2, 3, 5, 1, 4};
  Graph<double> g(true, false);
  Tensor<double> y = layernorm(g, Tensor<double>{x.data(), nullptr, 1, 5}, {}, {}, eps);
  double mean = 0, var = 0;
  for (int j = 0; j < 5; ++j) mean += y.data[j] / 5;
  for (int j = 0; j < 5; ++j) var += (y.data[j] - mean) * (y.data[j] - mean) / 5;
  out += "LayerNorm standardizes each sample over its features (eps 1e-5 inside the sqrt, biased variance):\n";
  out += fmt::format("  x              = [{}]\n", fmt::join(x, ", "));
  out += fmt::format("  LN(x)          = [{:.6f}]\n", fmt::join(y.data, y.data + 5, ", "));
  out += fmt::format("  (x - 3) / sqrt(2 + 1e-5): mean {:.1e}, variance {:.6f} = 2 / (2 + 1e-5)\n\n", mean, var);

  std::vector<double> batch{2, 3, 5, 1, 4,   //
                            1, 1, 1, 1, 10,  //
                            0, 2, 4, 6, 8};
  Tensor<double> xb{batch.data(), nullptr, 3, 5};
  auto rows = [](Tensor<double> t) {
    std::string s;
    for (int r = 0; r < t.rows; ++r)
      s += fmt::format("    [{:7.3f}]\n", fmt::join(t.data + r * t.cols, t.data + (r + 1) * t.cols, ", "));
    return s;
  };
  out += "A batch of 3 samples:\n" + rows(xb);
  out += "LayerNorm: each row to mean 0, variance 1 (the other rows do not matter):\n" +
         rows(layernorm(g, xb, {}, {}, eps));
  out +=
      "BatchNorm (training mode): each column to mean 0, variance 1 over the batch; a row's output depends on "
      "the other rows:\n" +
      rows(batchnorm(g, xb, {}, {}, 1, eps, BatchNormState<double>{}));
  out += "RMSNorm: each row divided by its root mean square, no centering (row 3 keeps its positive mean):\n" +
         rows(rmsnorm(g, xb, {}, eps));
  return out;
}

}  // namespace nt
