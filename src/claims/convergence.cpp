// Convergence and statistics claims on the 4-layer Pre-LN transformer and the MLP: C1
// (normalization speeds convergence), C2 (RMSNorm matches LayerNorm), C6 (per-position
// statistics). C1, C2 and C6 share one set of transformer runs. Every quantity is measured per
// seed, and the verdict comes from its 95% interval over the seeds.
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

// The steps `none` needs to reach the normalized run's last validation loss (at step N),
// over N; 2 when it never does within its 2N steps (a lower bound: the value is censored).
double speedup(const RunRecord& normed, const RunRecord& none, int N) {
  const double target = normed.val_loss.back().second;
  for (const auto& [step, loss] : none.val_loss)
    if (loss <= target) return double(step) / N;
  return 2.0;
}

std::vector<double> speedups(const std::vector<const RunRecord*>& normed, const std::vector<const RunRecord*>& none,
                             int N) {
  std::vector<double> v;
  for (std::size_t i = 0; i < normed.size() && i < none.size(); ++i) v.push_back(speedup(*normed[i], *none[i], N));
  return v;
}

struct Runs {
  int N;
  std::vector<RunRecord> normed, none;  // normed: layernorm and rmsnorm for N steps; none for 2N
};

// Norms {layernorm, rmsnorm} for N steps and none for 2N on `config` with `fixed` overrides,
// into <dir>/normed and <dir>/none.
Runs convergence_runs(ClaimContext ctx, const std::string& dir, const std::string& config,
                      std::vector<std::string> fixed, int N) {
  ctx.out = dir;
  auto normed = fixed, none = fixed;
  normed.push_back(fmt::format("train.steps={}", N));
  none.push_back(fmt::format("train.steps={}", 2 * N));
  auto runs = sweep_runs(ctx, {{"normed", config, normed, {"model.norm.type=layernorm,rmsnorm", ctx.seeds_axis()}},
                               {"none", config, none, {"model.norm.type=none", ctx.seeds_axis()}}});
  return {N, std::move(runs[0]), std::move(runs[1])};
}

// The 4-layer Pre-LN transformer on fortunes of C1, C2 and C6: a sibling of the claims'
// directories, so that each claim reuses the runs.
Runs fortunes_runs(const ClaimContext& ctx) {
  const std::vector<std::string> fixed{"model.n_layers=4", fmt::format("train.eval_every={}", ctx.quick ? 25 : 50),
                                       fmt::format("train.eval_batches={}", ctx.eval_batches(10)),
                                       fmt::format("train.stats_every={}", ctx.quick ? 50 : 100)};
  return convergence_runs(ctx, (std::filesystem::path(ctx.out).parent_path() / "fortunes-transformer-runs").string(),
                          config_path("lm-tiny.json"), fixed, ctx.quick ? 100 : 600);
}

std::vector<const RunRecord*> of_norm(const std::vector<RunRecord>& runs, const char* norm) {
  return select(runs, {{"model.norm.type", norm}});
}

}  // namespace

ClaimResult claim_c1(const ClaimContext& ctx) {
  ClaimResult r;
  r.seeds = ctx.seeds;
  const Runs lm = fortunes_runs(ctx);
  const int Nm = ctx.quick ? 100 : 400;
  const Runs mlp = convergence_runs(ctx, ctx.out + "/mlp", config_path("mlp-fmnist.json"),
                                    {"model.n_layers=6", fmt::format("train.eval_batches={}", ctx.eval_batches(20)), "train.stats_every=0",
                                     "train.eval_every=25"},
                                    Nm);
  for (const auto& [runs, stem, title] : {std::tuple{&lm, "transformer-val-loss", "4-layer Pre-LN transformer on fortunes"},
                                          std::tuple{&mlp, "mlp-val-loss", "6-layer MLP on fashion-mnist"}})
    plot_into(ctx, stem, {.title = fmt::format("C1: {} (mean, band = seeds)", title), .ylabel = "validation loss"},
              {mean_curve("none", select(runs->none, {}), &RunRecord::val_loss),
               mean_curve("layernorm", of_norm(runs->normed, "layernorm"), &RunRecord::val_loss),
               mean_curve("rmsnorm", of_norm(runs->normed, "rmsnorm"), &RunRecord::val_loss)},
              r);
  r.measures = {
      measure_at_least(fmt::format("transformer: steps none needs to reach LN's step-{} loss, / {} (2 = never in {})",
                                   lm.N, lm.N, 2 * lm.N),
                       speedups(of_norm(lm.normed, "layernorm"), select(lm.none, {}), lm.N), 1.5),
      measure_at_least(fmt::format("MLP: steps none needs to reach LN's step-{} loss, / {} (2 = never in {})", Nm, Nm,
                                   2 * Nm),
                       speedups(of_norm(mlp.normed, "layernorm"), select(mlp.none, {}), Nm), 1.5),
      in_group(measure_at_least(fmt::format("transformer: the same for RMSNorm's step-{} loss", lm.N),
                                speedups(of_norm(lm.normed, "rmsnorm"), select(lm.none, {}), lm.N), 1.5),
               "RMSNorm as the normalized model"),
      in_group(measure_at_least(fmt::format("MLP: the same for RMSNorm's step-{} loss", Nm),
                                speedups(of_norm(mlp.normed, "rmsnorm"), select(mlp.none, {}), Nm), 1.5),
               "RMSNorm as the normalized model"),
  };
  r.measured = fmt::format("steps none needs to reach LN's loss, in units of LN's steps: transformer {}, MLP {} "
                           "(2 = never)", show(r.measures[0].interval, 2), show(r.measures[1].interval, 2));
  if (ctx.quick) r.setting = fmt::format("quick: transformer N = {}, MLP N = {}", lm.N, Nm);
  r.verdict = verdict_of(r.measures);
  return r;
}

ClaimResult claim_c2(const ClaimContext& ctx) {
  ClaimResult r;
  r.seeds = ctx.seeds;
  const Runs f = fortunes_runs(ctx);
  const auto ln = values_of(of_norm(f.normed, "layernorm"), "final_val_loss");
  const auto rms = values_of(of_norm(f.normed, "rmsnorm"), "final_val_loss");
  std::vector<double> ratio;
  for (std::size_t i = 0; i < ln.size() && i < rms.size(); ++i) ratio.push_back(rms[i] / ln[i]);
  r.measures = {measure_within("final validation loss, RMS / LN (same seed)", ratio, 0.98, 1.02),
                measure_reported("final validation loss, LN", ln, "the losses"),
                measure_reported("final validation loss, RMS", rms, "the losses")};
  r.measured = fmt::format("RMS / LN final validation loss {} (LN {}, RMS {})", show(r.measures[0].interval, 4),
                           show(r.measures[1].interval, 3), show(r.measures[2].interval, 3));
  if (ctx.quick) r.setting = fmt::format("quick: N = {}", f.N);
  r.verdict = verdict_of(r.measures);
  return r;
}

ClaimResult claim_c6(const ClaimContext& ctx) {
  ClaimResult r;
  r.seeds = ctx.seeds;
  const Runs f = fortunes_runs(ctx);
  // The CV over positions of the std leaving each site, averaged over sites; and the per-position
  // mean and std, averaged over sites, for the plots.
  auto cv_of = [](const RunRecord& run, std::vector<double>& mean_profile, std::vector<double>& std_profile) {
    double sum = 0;
    int n = 0;
    for (const auto& [key, stats] : last_stats(run.dir)) {
      if (!key.second.ends_with(".out")) continue;
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
  std::vector<std::vector<double>> cv(3);
  const char* names[] = {"none", "layernorm", "rmsnorm"};
  for (int k = 0; k < 3; ++k) {
    const auto runs = k == 0 ? select(f.none, {}) : of_norm(f.normed, names[k]);
    Curve sc{names[k], {}, {}}, mc{names[k], {}, {}};
    for (const RunRecord* run : runs) {
      std::vector<double> mean_profile, std_profile;
      cv[k].push_back(100 * cv_of(*run, mean_profile, std_profile));
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
       {std::tuple{"position-std", "std", std_curves}, std::tuple{"position-mean", "mean", mean_curves}})
    plot_into(ctx, stem,
              {.title = fmt::format("C6: {} over the hidden dimension of the vector leaving each norm site, by position",
                                    what),
               .xlabel = "position", .ylabel = fmt::format("{} (average over sites and seeds)", what),
               .logy = std::string(what) == "std"},
              curves, r);
  r.measures = {measure_at_most("LN: CV over positions of the post-norm std (%)", cv[1], 5),
                measure_at_most("RMS: CV over positions of the post-norm std (%)", cv[2], 5),
                measure_at_least("none: CV over positions of the residual stream's std (%)", cv[0], 15)};
  r.measured = fmt::format("CV over positions of the post-norm std: none {}%, LN {}%, RMS {}%",
                           show(r.measures[2].interval, 1), show(r.measures[0].interval, 2),
                           show(r.measures[1].interval, 2));
  r.details += "From stats.csv at the last statistics step of each run (the 4-layer transformer of C1), sites attn, "
               "ffn and final, `.out` rows; for none the site's output is its input, the residual stream.\n";
  if (ctx.quick) r.setting = fmt::format("quick: N = {}", f.N);
  r.verdict = verdict_of(r.measures);
  return r;
}

}  // namespace nt
