// Convergence and statistics claims on the 4-layer Pre-LN transformer and the MLP: C1 (normalization
// speeds convergence), C2 (RMSNorm matches LayerNorm), C6 (per-position statistics). C1, C2 and C6
// share one set of transformer runs.
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <numeric>
#include <tuple>

#include "claims/claim.h"
#include "claims/evidence.h"
#include "io/paths.h"

namespace nt {

namespace {

// The first step at which `curve` is at or below `target`, or -1.
int first_step_below(const Curve& curve, double target) {
  for (const auto& [x, y] : curve.points)
    if (y <= target) return int(x);
  return -1;
}

double value_at_last(const Curve& c) { return c.points.empty() ? NAN : c.points.back().second; }

struct SpeedUp {
  double target = NAN;      // the normalized model's mean validation loss at step N
  int none_steps = -1;      // steps none needs to reach it (-1: not within its 2N)
  double ratio = NAN;       // none_steps / N, or > 2 when never
  std::string text;
};

// When none reaches LN's step-N loss (none ran 2N steps).
SpeedUp speed_up(const Curve& ln, const Curve& rms, const Curve& none, int N) {
  SpeedUp s;
  s.target = value_at_last(ln);
  s.none_steps = first_step_below(none, s.target);
  s.ratio = s.none_steps < 0 ? INFINITY : double(s.none_steps) / N;
  const int rms_steps = first_step_below(rms, s.target);
  s.text = fmt::format("LN's step-{} val loss {:.3f}: none reaches it at {}, RMS at {}", N, s.target,
                       s.none_steps < 0 ? fmt::format("never within {}", 2 * N) : fmt::format("step {}", s.none_steps),
                       rms_steps < 0 ? std::string("never") : fmt::format("step {}", rms_steps));
  return s;
}

// One part of C1: norms {none, layernorm, rmsnorm} on `config`, none given twice the steps.
SpeedUp convergence_part(const ClaimContext& ctx, const std::string& name, const std::string& config,
                         std::vector<std::string> fixed, int N, int eval_every, std::vector<Curve>& curves) {
  fixed.push_back(fmt::format("train.eval_every={}", eval_every));
  auto normed = fixed, none = fixed;
  normed.push_back(fmt::format("train.steps={}", N));
  none.push_back(fmt::format("train.steps={}", 2 * N));
  const auto runs = sweep_runs(ctx, name, config, normed, {"model.norm.type=layernorm,rmsnorm", ctx.seeds_axis()});
  const auto none_runs = sweep_runs(ctx, name + "-none", config, none, {"model.norm.type=none", ctx.seeds_axis()});
  const Curve ln = mean_curve("layernorm", select(runs, {{"model.norm.type", "layernorm"}}), &RunRecord::val_loss);
  const Curve rms = mean_curve("rmsnorm", select(runs, {{"model.norm.type", "rmsnorm"}}), &RunRecord::val_loss);
  const Curve no = mean_curve("none", select(none_runs, {}), &RunRecord::val_loss);
  curves = {no, ln, rms};
  return speed_up(ln, rms, no, N);
}

// The 4-layer Pre-LN transformer on fortunes of C1, C2 and C6 (one set of runs).
struct FortunesRuns {
  int N;
  std::vector<RunRecord> normed, none;
};

FortunesRuns fortunes_runs(const ClaimContext& ctx) {
  const int N = ctx.quick ? 150 : 600;
  const std::vector<std::string> fixed{"model.n_layers=4", fmt::format("train.eval_every={}", ctx.quick ? 25 : 50),
                                       "train.eval_batches=10", fmt::format("train.stats_every={}", ctx.quick ? 50 : 100)};
  auto normed = fixed, none = fixed;
  normed.push_back(fmt::format("train.steps={}", N));
  none.push_back(fmt::format("train.steps={}", 2 * N));
  // shared by C1, C2 and C6: a sibling directory of the claim's, so each claim reuses it
  ClaimContext shared = ctx;
  shared.out = (std::filesystem::path(ctx.out).parent_path() / "fortunes-transformer-runs").string();
  return {N,
          sweep_runs(shared, "normed", config_path("lm-tiny.json"), normed,
                     {"model.norm.type=layernorm,rmsnorm", ctx.seeds_axis()}),
          sweep_runs(shared, "none", config_path("lm-tiny.json"), none, {"model.norm.type=none", ctx.seeds_axis()})};
}

}  // namespace

ClaimResult claim_c1(const ClaimContext& ctx) {
  ClaimResult r;
  const FortunesRuns f = fortunes_runs(ctx);
  const Curve ln = mean_curve("layernorm", select(f.normed, {{"model.norm.type", "layernorm"}}), &RunRecord::val_loss);
  const Curve rms = mean_curve("rmsnorm", select(f.normed, {{"model.norm.type", "rmsnorm"}}), &RunRecord::val_loss);
  const Curve none = mean_curve("none", select(f.none, {}), &RunRecord::val_loss);
  const SpeedUp lm = speed_up(ln, rms, none, f.N);
  plot_into(ctx, "transformer-val-loss",
            {.title = "C1: 4-layer Pre-LN transformer on fortunes (mean, band = seeds)", .ylabel = "validation loss"},
            {none, ln, rms}, r);
  std::vector<Curve> mlp_curves;
  const int Nm = ctx.quick ? 150 : 400;
  const SpeedUp mlp = convergence_part(ctx, "mlp", config_path("mlp-fmnist.json"),
                                       {"model.n_layers=6", "train.eval_batches=20", "train.stats_every=0"}, Nm,
                                       25, mlp_curves);
  plot_into(ctx, "mlp-val-loss",
            {.title = "C1: 6-layer MLP on fashion-mnist (mean, band = seeds)", .ylabel = "validation loss"}, mlp_curves,
            r);
  auto ratio_text = [](const SpeedUp& u) {
    return std::isinf(u.ratio) ? std::string("ratio > 2") : fmt::format("ratio {:.2f}", u.ratio);
  };
  r.measured = fmt::format("transformer: none needs {} (LN's step-{} loss {:.3f}); MLP: {}",
                           lm.none_steps < 0 ? fmt::format("> {} steps, {}", 2 * f.N, ratio_text(lm))
                                             : fmt::format("{} steps, {}", lm.none_steps, ratio_text(lm)),
                           f.N, lm.target, ratio_text(mlp));
  r.details += fmt::format("Transformer: validation loss every {} steps, mean of {} seeds; none ran {} steps, LN and "
                           "RMS {}: {}.\nMLP: {}\n", ctx.quick ? 25 : 50, ctx.quick ? 2 : 3, 2 * f.N, f.N, lm.text, mlp.text);
  r.verdict = verdict_of(lm.ratio >= 1.5 && mlp.ratio >= 1.5);
  return r;
}

ClaimResult claim_c2(const ClaimContext& ctx) {
  ClaimResult r;
  const FortunesRuns f = fortunes_runs(ctx);
  const double ln = mean_of(select(f.normed, {{"model.norm.type", "layernorm"}}), "final_val_loss");
  const double rms = mean_of(select(f.normed, {{"model.norm.type", "rmsnorm"}}), "final_val_loss");
  r.measured = fmt::format("final val loss LN {:.4f}, RMS {:.4f}: RMS/LN = {:.4f}", ln, rms, rms / ln);
  r.details = "| run | norm | seed | final val loss |\n|---|---|---|---|\n";
  for (const auto& run : f.normed)
    r.details += fmt::format("| {} | {} | {} | {:.4f} |\n", run.dir, run.overrides.at("model.norm.type"),
                             run.overrides.at("seed"), run.summary.value("final_val_loss", NAN));
  r.verdict = verdict_of(std::abs(rms / ln - 1) <= 0.02);
  return r;
}

ClaimResult claim_c6(const ClaimContext& ctx) {
  ClaimResult r;
  const FortunesRuns f = fortunes_runs(ctx);
  // CV over positions of the std leaving each site, averaged over sites, then over seeds;
  // and the per-position mean and std, averaged over sites and seeds, for the plots.
  auto cv_of = [](const RunRecord& run, std::vector<double>& mean_profile, std::vector<double>& std_profile) {
    double sum = 0;
    int n = 0;
    for (const auto& [key, stats] : last_stats(run.dir)) {
      if (key.second.size() < 4 || key.second.substr(key.second.size() - 4) != ".out") continue;
      const auto& stds = stats.std;
      const double mean = std::accumulate(stds.begin(), stds.end(), 0.0) / stds.size();
      double var = 0;
      for (double s : stds) var += (s - mean) * (s - mean) / stds.size();
      sum += std::sqrt(var) / mean, ++n;
      mean_profile.resize(stds.size(), 0.0);
      std_profile.resize(stds.size(), 0.0);
      for (std::size_t t = 0; t < stds.size(); ++t) mean_profile[t] += stats.mean[t], std_profile[t] += stds[t];
    }
    for (std::size_t t = 0; t < std_profile.size(); ++t) mean_profile[t] /= n, std_profile[t] /= n;
    return sum / n;
  };
  std::vector<Curve> std_curves, mean_curves;
  double cv[3] = {0, 0, 0};
  const char* names[] = {"none", "layernorm", "rmsnorm"};
  for (int k = 0; k < 3; ++k) {
    const auto runs = k == 0 ? select(f.none, {}) : select(f.normed, {{"model.norm.type", names[k]}});
    Curve sc{names[k], {}, {}}, mc{names[k], {}, {}};
    for (const RunRecord* run : runs) {
      std::vector<double> mean_profile, std_profile;
      cv[k] += cv_of(*run, mean_profile, std_profile) / runs.size();
      sc.points.resize(std_profile.size(), {0.0, 0.0});
      mc.points.resize(mean_profile.size(), {0.0, 0.0});
      for (std::size_t t = 0; t < std_profile.size(); ++t) {
        sc.points[t] = {double(t), sc.points[t].second + std_profile[t] / runs.size()};
        mc.points[t] = {double(t), mc.points[t].second + mean_profile[t] / runs.size()};
      }
    }
    std_curves.push_back(sc);
    mean_curves.push_back(mc);
  }
  for (const auto& [stem, what, curves] :
       {std::tuple{"position-std", "std", std_curves}, std::tuple{"position-mean", "mean", mean_curves}}) {
    plot_into(ctx, stem,
                                       {.title = fmt::format("C6: {} over the hidden dimension of the vector leaving each "
                                                             "norm site, by position", what),
                                        .xlabel = "position", .ylabel = fmt::format("{} (average over sites and seeds)", what),
                                        .logy = std::string(what) == "std"},
                                       curves, r);
  }
  r.measured = fmt::format("CV over positions of the post-norm std: none {:.1f}%, LN {:.1f}%, RMS {:.1f}%", 100 * cv[0],
                           100 * cv[1], 100 * cv[2]);
  r.details += "From stats.csv at the last statistics step of each run (the 4-layer transformer of C1), sites "
               "attn, ffn and final, `.out` rows; for none the site's output is its input, the residual stream.\n";
  r.verdict = verdict_of(cv[1] <= 0.05 && cv[2] <= 0.05 && cv[0] >= 0.15);
  return r;
}

}  // namespace nt
