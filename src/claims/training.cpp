// The training claims of ../shared/claims.md, each an experiment over real runs (sweeps into
// the claim's directory, resumable) or an in-process measurement, with the criterion of
// claims.md and the setup of experiments/<id>-<slug>/README.md (seeds fixed there).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <numeric>

#include "claims/claim.h"
#include "claims/evidence.h"
#include "config/config.h"
#include "core/graph.h"
#include "core/threads.h"
#include "data/dataset.h"
#include "model/model.h"
#include "norms/norms.h"
#include "train/optimizer.h"
#include "train/step.h"

namespace nt {

namespace {

std::string seeds_axis(const ClaimContext& ctx) { return ctx.quick ? "seed=1,2" : "seed=1,2,3"; }

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
  const auto runs = sweep_runs(ctx, name, config, normed, {"model.norm.type=layernorm,rmsnorm", seeds_axis(ctx)});
  const auto none_runs = sweep_runs(ctx, name + "-none", config, none, {"model.norm.type=none", seeds_axis(ctx)});
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
                     {"model.norm.type=layernorm,rmsnorm", seeds_axis(ctx)}),
          sweep_runs(shared, "none", config_path("lm-tiny.json"), none, {"model.norm.type=none", seeds_axis(ctx)})};
}

}  // namespace

ClaimResult claim_c1(const ClaimContext& ctx) {
  ClaimResult r{"C1", "Normalization speeds convergence: LN/RMS reach a given loss in far fewer steps than none"};
  r.criterion = "steps for none to reach LN's step-N validation loss >= 1.5 N (or never), in both setups";
  r.source = "Zhang & Sennrich 2019 §6.1; Ba et al. 2016 §6 (curves only)";
  const FortunesRuns f = fortunes_runs(ctx);
  const Curve ln = mean_curve("layernorm", select(f.normed, {{"model.norm.type", "layernorm"}}), &RunRecord::val_loss);
  const Curve rms = mean_curve("rmsnorm", select(f.normed, {{"model.norm.type", "rmsnorm"}}), &RunRecord::val_loss);
  const Curve none = mean_curve("none", select(f.none, {}), &RunRecord::val_loss);
  const SpeedUp lm = speed_up(ln, rms, none, f.N);
  const std::string plot_lm = plot_into(ctx, "transformer-val-loss",
                                        {.title = "C1: 4-layer Pre-LN transformer on fortunes (mean, band = seeds)",
                                         .ylabel = "validation loss"},
                                        {none, ln, rms}, r.details);
  std::vector<Curve> mlp_curves;
  const int Nm = ctx.quick ? 150 : 400;
  const SpeedUp mlp = convergence_part(ctx, "mlp", config_path("mlp-fmnist.json"),
                                       {"model.n_layers=6", "train.eval_batches=20", "train.stats_every=0"}, Nm,
                                       25, mlp_curves);
  const std::string plot_mlp = plot_into(ctx, "mlp-val-loss",
                                         {.title = "C1: 6-layer MLP on fashion-mnist (mean, band = seeds)",
                                          .ylabel = "validation loss"},
                                         mlp_curves, r.details);
  for (const auto& p : {plot_lm, plot_mlp})
    if (!p.empty()) r.plots.push_back(p);
  auto ratio_text = [](const SpeedUp& u) {
    return std::isinf(u.ratio) ? std::string("ratio > 2") : fmt::format("ratio {:.2f}", u.ratio);
  };
  r.measured = fmt::format("transformer: none needs {} (LN's step-{} loss {:.3f}); MLP: {}",
                           lm.none_steps < 0 ? fmt::format("> {} steps, {}", 2 * f.N, ratio_text(lm))
                                             : fmt::format("{} steps, {}", lm.none_steps, ratio_text(lm)),
                           f.N, lm.target, ratio_text(mlp));
  r.details += fmt::format("Transformer: validation loss every {} steps, mean of {} seeds; none ran {} steps, LN and "
                           "RMS {}: {}.\nMLP: {}\n", ctx.quick ? 25 : 50, ctx.quick ? 2 : 3, 2 * f.N, f.N, lm.text, mlp.text);
  r.verdict = lm.ratio >= 1.5 && mlp.ratio >= 1.5 ? ClaimVerdict::pass : ClaimVerdict::fail;
  return r;
}

ClaimResult claim_c2(const ClaimContext& ctx) {
  ClaimResult r{"C2", "RMSNorm matches LayerNorm's quality"};
  r.criterion = "RMS final validation loss within 2% of LN's (mean over seeds)";
  r.source = "Zhang & Sennrich 2019 Tables 2-4 (e.g. WMT14 BLEU: LN 22.6, RMS 22.4)";
  const FortunesRuns f = fortunes_runs(ctx);
  const double ln = mean_of(select(f.normed, {{"model.norm.type", "layernorm"}}), "final_val_loss");
  const double rms = mean_of(select(f.normed, {{"model.norm.type", "rmsnorm"}}), "final_val_loss");
  r.measured = fmt::format("final val loss LN {:.4f}, RMS {:.4f}: RMS/LN = {:.4f}", ln, rms, rms / ln);
  r.details = "| run | norm | seed | final val loss |\n|---|---|---|---|\n";
  for (const auto& run : f.normed)
    r.details += fmt::format("| {} | {} | {} | {:.4f} |\n", run.dir, run.overrides.at("model.norm.type"),
                             run.overrides.at("seed"), run.summary.value("final_val_loss", NAN));
  r.verdict = std::abs(rms / ln - 1) <= 0.02 ? ClaimVerdict::pass : ClaimVerdict::fail;
  return r;
}

ClaimResult claim_c6(const ClaimContext& ctx) {
  ClaimResult r{"C6", "Per-position statistics: the std leaving LN/RMS is nearly constant across positions; without a "
                      "norm the residual stream's varies strongly"};
  r.criterion = "post-norm std: coefficient of variation over positions <= 5% for LN/RMS, >= 15% without norm";
  r.source = "Zhang & Sennrich 2019 Table 5";
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
    const std::string plot = plot_into(ctx, stem,
                                       {.title = fmt::format("C6: {} over the hidden dimension of the vector leaving each "
                                                             "norm site, by position", what),
                                        .xlabel = "position", .ylabel = fmt::format("{} (average over sites and seeds)", what),
                                        .logy = std::string(what) == "std"},
                                       curves, r.details);
    if (!plot.empty()) r.plots.push_back(plot);
  }
  r.measured = fmt::format("CV over positions of the post-norm std: none {:.1f}%, LN {:.1f}%, RMS {:.1f}%", 100 * cv[0],
                           100 * cv[1], 100 * cv[2]);
  r.details += "From stats.csv at the last statistics step of each run (the 4-layer transformer of C1), sites "
               "attn, ffn and final, `.out` rows; for none the site's output is its input, the residual stream.\n";
  r.verdict = cv[1] <= 0.05 && cv[2] <= 0.05 && cv[0] >= 0.15 ? ClaimVerdict::pass : ClaimVerdict::fail;
  return r;
}

namespace {

struct Timing {
  double min = INFINITY, median = NAN, max = 0;
};
Timing timing_of(std::vector<double> v) {
  Timing t;
  std::sort(v.begin(), v.end());
  t.min = v.front(), t.max = v.back(), t.median = v[v.size() / 2];
  return t;
}
double ms_of(auto&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

ClaimResult claim_c3(const ClaimContext& ctx) {
  ClaimResult r{"C3", "RMSNorm is faster than LayerNorm"};
  r.criterion = "op time (forward + backward, 4096x512) RMS <= 0.9x LN; training step RMS < LN; min/median/max";
  r.source = "Zhang & Sennrich 2019 Tables 2-10: RMSNorm 6.9%-40.8% faster per step (64% is pRMSNorm)";
  set_math_threads(1);
  const int N = 4096, C = 512, rounds = ctx.quick ? 10 : 30;
  AlignedVector<float> x(std::size_t(N) * C), dx(x.size()), gamma(C, 1.0f), dgamma(C), beta(C), dbeta(C), dy(x.size());
  Rng rng(3, 1);
  for (auto& v : x) v = float(rng.normal());
  for (auto& v : dy) v = float(1e-3 * rng.normal());
  Graph<float> g;
  auto op = [&](bool rms) {
    g.reset();
    const Tensor<float> xt{x.data(), dx.data(), N, C}, gt{gamma.data(), dgamma.data(), 1, C}, bt{beta.data(), dbeta.data(), 1, C};
    Tensor<float> y = rms ? rmsnorm(g, xt, gt, 1e-5f) : layernorm(g, xt, gt, bt, 1e-5f);
    std::copy(dy.begin(), dy.end(), y.grad);
    g.backward(Tensor<float>{});
  };
  std::vector<double> ln_ms, rms_ms;
  for (int i = 0; i < 3; ++i) op(false), op(true);  // warm-up
  for (int i = 0; i < rounds; ++i) {  // alternating
    ln_ms.push_back(ms_of([&] { op(false); }));
    rms_ms.push_back(ms_of([&] { op(true); }));
  }
  // the whole step of lm-tiny (synthetic data of the same shape), one thread, alternating
  std::vector<double> ln_step, rms_step;
  {
    InProcessRun ln(load_config_file(config_path("lm-tiny.json"), {"data.dataset=synthetic-lm"}));
    InProcessRun rms(load_config_file(config_path("lm-tiny.json"), {"data.dataset=synthetic-lm", "model.norm.type=rmsnorm"}));
    ln.next_batch(), rms.next_batch();  // the same batch: same seed, same data
    auto step = [](InProcessRun& run) { run.forward_backward(), run.update(1e-3); };
    for (int i = 0; i < 3; ++i) step(ln), step(rms);
    for (int i = 0; i < rounds; ++i) {
      ln_step.push_back(ms_of([&] { step(ln); }));
      rms_step.push_back(ms_of([&] { step(rms); }));
    }
  }
  const Timing lo = timing_of(ln_ms), ro = timing_of(rms_ms), ls = timing_of(ln_step), rs = timing_of(rms_step);
  r.measured = fmt::format("op 4096x512 fwd+bwd: RMS/LN = {:.3f} (medians {:.2f} / {:.2f} ms); lm-tiny step: RMS/LN = "
                           "{:.3f} (medians {:.2f} / {:.2f} ms)", ro.median / lo.median, ro.median, lo.median,
                           rs.median / ls.median, rs.median, ls.median);
  r.details = "| measurement | LN min / median / max (ms) | RMS min / median / max (ms) |\n|---|---|---|\n";
  r.details += fmt::format("| norm op 4096x512, forward + backward | {:.3f} / {:.3f} / {:.3f} | {:.3f} / {:.3f} / {:.3f} |\n",
                           lo.min, lo.median, lo.max, ro.min, ro.median, ro.max);
  r.details += fmt::format("| lm-tiny training step | {:.2f} / {:.2f} / {:.2f} | {:.2f} / {:.2f} / {:.2f} |\n", ls.min,
                           ls.median, ls.max, rs.min, rs.median, rs.max);
  r.details += fmt::format("\n{} alternating rounds each, one thread, after 3 warm-up rounds.\n", rounds);
  r.verdict = ro.median <= 0.9 * lo.median && rs.median < ls.median ? ClaimVerdict::pass : ClaimVerdict::fail;
  return r;
}

ClaimResult claim_c7(const ClaimContext& ctx) {
  ClaimResult r{"C7", "At initialization Post-LN gradients grow toward the output layer; Pre-LN's are nearly uniform"};
  r.criterion = "Post-LN: Spearman rho(layer, grad norm) >= 0.8 and last/first >= 2; Pre-LN: max/min <= 2";
  r.source = "Xiong et al. 2020 Fig. 3 (theory: Post-LN last/first ~ (3/2)^(11/2) ~ 9 for 12 layers)";
  const int L = 12, batches = 20;
  std::vector<Curve> curves;
  double rho = NAN, last_first = NAN, pre_ratio = NAN;  // computed below
  r.details = "| layer | Post-LN ||grad W2|| | Pre-LN ||grad W2|| |\n|---|---|---|\n";
  std::vector<std::vector<double>> norms;
  for (const char* placement : {"post", "pre"}) {
    InProcessRun run(load_config_file(config_path("lm-tiny.json"),
                                      {fmt::format("model.n_layers={}", L), std::string("model.norm.placement=") + placement,
                                       "model.init_std=0.125"}));
    ParamStore<float>& ps = run.params();
    std::vector<double> sum(ps.numel(), 0.0);
    for (int b = 0; b < batches; ++b) {
      run.next_batch();
      run.forward_backward();
      for (std::size_t i = 0; i < ps.numel(); ++i) sum[i] += ps.grad()[i] / batches;
    }
    std::vector<double> per_layer(L, 0.0);
    for (int i = 0; i < ps.count(); ++i)
      if (ps.info(i).name == "ffn.fc2.weight") {
        double s2 = 0;
        for (std::size_t k = 0; k < ps.info(i).size(); ++k) s2 += sum[ps.info(i).offset + k] * sum[ps.info(i).offset + k];
        per_layer[ps.info(i).layer] = std::sqrt(s2);
      }
    Curve cv{std::string(placement) + "-LN", {}, {}};
    for (int l = 0; l < L; ++l) cv.points.emplace_back(double(l), per_layer[l]);
    curves.push_back(cv);
    norms.push_back(per_layer);
  }
  // Spearman rank correlation of (layer, norm) for Post-LN
  const auto& post = norms[0];
  std::vector<int> idx(L);
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](int a, int b) { return post[a] < post[b]; });
  std::vector<double> rank(L);
  for (int k = 0; k < L; ++k) rank[idx[k]] = k;
  double d2 = 0;
  for (int l = 0; l < L; ++l) d2 += (rank[l] - l) * (rank[l] - l);
  rho = 1 - 6 * d2 / (L * (double(L) * L - 1));
  last_first = post[L - 1] / post[0];
  const auto [lo, hi] = std::minmax_element(norms[1].begin(), norms[1].end());
  pre_ratio = *hi / *lo;
  for (int l = 0; l < L; ++l) r.details += fmt::format("| {} | {:.4g} | {:.4g} |\n", l, norms[0][l], norms[1][l]);
  r.details += fmt::format("\nThe FFN's second matrix of each block (W^2 in Xiong et al.), Frobenius norm of the gradient "
                           "averaged over {} batches of fortunes (16 x 64), at init: {} layers, d 64, weights N(0, 1/d).\n",
                           batches, L);
  const std::string plot = plot_into(ctx, "grad-norms",
                                     {.title = "C7: gradient norm of each block's W2 at init", .xlabel = "layer",
                                      .ylabel = "||mean gradient of W2||", .logy = true},
                                     curves, r.details);
  if (!plot.empty()) r.plots.push_back(plot);
  r.measured = fmt::format("Post-LN: rho {:.2f}, last/first {:.2f}; Pre-LN max/min {:.2f}", rho, last_first, pre_ratio);
  r.verdict = rho >= 0.8 && last_first >= 2 && pre_ratio <= 2 ? ClaimVerdict::pass : ClaimVerdict::fail;
  return r;
}

}  // namespace nt

namespace nt {

ClaimResult claim_c4(const ClaimContext& ctx) {
  ClaimResult r{"C4", "BatchNorm degrades at small batch sizes; LN does not"};
  r.criterion = "BN err(2) - BN err(32) >= 3 points and >= 3x LN's change";
  r.source = "Wu & He 2018 Table 2 (ResNet-50 ImageNet error vs 32/GPU: +1.2 at 8, +3.7 at 4, +11.1 at 2); LN §6.6";
  const double epochs = ctx.quick ? 0.25 : 1.0;
  std::map<std::string, Curve> curves{{"batchnorm", Curve{"batchnorm", {}, {}}}, {"layernorm", Curve{"layernorm", {}, {}}}};
  std::map<std::pair<std::string, int>, double> err;
  r.details = "| batch | lr | steps | BN val error (%) | LN val error (%) |\n|---|---|---|---|---|\n";
  for (int B : {32, 16, 8, 4, 2}) {
    const int steps = int(epochs * 60000 / B);
    const double lr = 0.1 * B / 128;  // the linear scaling rule from mlp-fmnist's 0.1 at batch 128
    const auto runs = sweep_runs(ctx, fmt::format("batch-{}", B), config_path("mlp-fmnist.json"),
                                 {fmt::format("train.batch_size={}", B), fmt::format("train.lr={}", lr),
                                  fmt::format("train.steps={}", steps), fmt::format("train.eval_every={}", steps / 4),
                                  fmt::format("train.eval_batches={}", 2560 / B),
                                  fmt::format("train.log_every={}", std::max(1, steps / 50)), "train.stats_every=0"},
                                 {"model.norm.type=batchnorm,layernorm", seeds_axis(ctx)});
    for (const char* norm : {"batchnorm", "layernorm"}) {
      const auto sel = select(runs, {{"model.norm.type", norm}});
      double lo = INFINITY, hi = -INFINITY;
      for (const RunRecord* run : sel) {
        const double e = 100 * (1 - run->summary.value("final_val_acc", 0.0));
        lo = std::min(lo, e), hi = std::max(hi, e);
      }
      err[{norm, B}] = 100 * (1 - mean_of(sel, "final_val_acc"));
      curves[norm].points.emplace_back(double(B), err[{norm, B}]);
      curves[norm].band.emplace_back(lo, hi);
    }
    r.details += fmt::format("| {} | {:g} | {} | {:.2f} | {:.2f} |\n", B, lr, steps, err[{"batchnorm", B}],
                             err[{"layernorm", B}]);
  }
  const double bn = err[{"batchnorm", 2}] - err[{"batchnorm", 32}], ln = err[{"layernorm", 2}] - err[{"layernorm", 32}];
  const std::string plot = plot_into(ctx, "error-vs-batch",
                                     {.title = "C4: fashion-mnist MLP, validation error after equal epochs",
                                      .xlabel = "batch size", .ylabel = "validation error (%)", .logx = true},
                                     {curves["batchnorm"], curves["layernorm"]}, r.details);
  if (!plot.empty()) r.plots.push_back(plot);
  r.measured = fmt::format("error change from batch 32 to 2: BN {:+.2f} points, LN {:+.2f}", bn, ln);
  r.details += fmt::format("\n{} epoch(s) at every batch size, SGD with momentum 0.9 and lr 0.1 x batch/128, "
                           "evaluation on 2560 test images with BN's running statistics.\n", epochs);
  r.verdict = bn >= 3 && bn >= 3 * ln ? ClaimVerdict::pass : ClaimVerdict::fail;
  return r;
}

ClaimResult claim_c5(const ClaimContext& ctx) {
  ClaimResult r{"C5", "BatchNorm behaves differently in training and inference; with small batches eval is worse"};
  r.criterion = "(setup README) BN: train-mode minus eval-mode accuracy on the same data >= 1 point; LN: |gap| < 0.1";
  r.source = "Ioffe & Szegedy 2015 §3.1; the seed articles";
  const int B = 4, eval_rows = 2560;
  const int steps = int((ctx.quick ? 0.25 : 1.0) * 60000 / B);
  r.details = "| norm | eval-mode accuracy | train-mode accuracy | gap (points) |\n|---|---|---|---|\n";
  double gap[2] = {0, 0};
  int k = 0;
  for (const char* norm : {"batchnorm", "layernorm"}) {
    const RunConfig c = load_config_file(config_path("mlp-fmnist.json"),
                                         {fmt::format("train.batch_size={}", B), fmt::format("train.lr={}", 0.1 * B / 128),
                                          std::string("model.norm.type=") + norm});
    InProcessRun run(c);
    for (int s = 0; s < steps; ++s) run.step();
    double acc[2] = {0, 0};  // eval mode (running statistics), then train mode (batch statistics)
    for (int mode = 0; mode < 2; ++mode) {
      int64_t correct = 0;
      for (int i = 0; i < eval_rows / B; ++i) {
        run.data->val_batch(i, B, run.batch);
        run.graph.reset();
        run.graph.set_mode(/*training=*/mode == 1, /*grad=*/false);
        correct += forward_loss(run.graph, *run.model, run.batch, true).correct;
      }
      acc[mode] = 100.0 * double(correct) / eval_rows;
    }
    gap[k] = acc[1] - acc[0];
    r.details += fmt::format("| {} | {:.2f} | {:.2f} | {:+.2f} |\n", norm, acc[0], acc[1], gap[k]);
    ++k;
  }
  r.measured = fmt::format("train-mode minus eval-mode accuracy at batch 4: BN {:+.2f} points, LN {:+.2f}", gap[0], gap[1]);
  r.details += fmt::format("\nThe fashion-mnist MLP of C4 at batch 4 for {} steps (seed 1), then the first {} test "
                           "images in batches of 4, with BN's running statistics (eval mode) and with each batch's own "
                           "statistics (train mode).\n", steps, eval_rows);
  r.verdict = gap[0] >= 1 && std::abs(gap[1]) < 0.1 ? ClaimVerdict::pass : ClaimVerdict::fail;
  return r;
}

ClaimResult claim_c8(const ClaimContext& ctx) {
  ClaimResult r{"C8", "Post-LN needs learning-rate warm-up; Pre-LN trains without it"};
  r.criterion = "Post-LN no-warm-up loss >= 1.2x its warm-up loss (or diverges); Pre-LN no-warm-up <= 1.05x Post-LN warm-up";
  r.source = "Xiong et al. 2020 §3.2 (IWSLT14: Post-LN without warm-up BLEU 8.45 vs ~34 with 4000 steps of warm-up)";
  const int N = ctx.quick ? 300 : 1500, W = ctx.quick ? 100 : 500;
  // constant after the warm-up, so that the runs differ only by the warm-up (experiment README: why not inverse_sqrt)
  const std::vector<std::string> fixed{"model.n_layers=6", "model.d_ff=128", "train.beta2=0.98", "train.lr=2e-3",
                                       "train.schedule=constant", fmt::format("train.steps={}", N),
                                       fmt::format("train.eval_every={}", N / 10), "train.eval_batches=10",
                                       "train.stats_every=0"};
  const auto post = sweep_runs(ctx, "post", config_path("lm-tiny.json"), fixed,
                               {"model.norm.placement=post", fmt::format("train.warmup_steps=0,{}", W), seeds_axis(ctx)});
  const auto pre = sweep_runs(ctx, "pre", config_path("lm-tiny.json"), fixed,
                              {"model.norm.placement=pre", "train.warmup_steps=0", seeds_axis(ctx)});
  const auto post0 = select(post, {{"train.warmup_steps", "0"}}), postw = select(post, {{"train.warmup_steps", std::to_string(W)}});
  const auto pre0 = select(pre, {});
  bool post0_diverged = false;
  for (const RunRecord* run : post0) post0_diverged |= run->summary.value("diverged", false);
  const double l_post0 = mean_of(post0, "final_val_loss"), l_postw = mean_of(postw, "final_val_loss"),
               l_pre0 = mean_of(pre0, "final_val_loss");
  const std::string plot = plot_into(ctx, "val-loss",
                                     {.title = fmt::format("C8: 6-layer transformer, Adam lr 2e-3, warm-up 0 vs {}", W),
                                      .ylabel = "validation loss"},
                                     {mean_curve("Post-LN, no warm-up", post0, &RunRecord::val_loss),
                                      mean_curve(fmt::format("Post-LN, warm-up {}", W), postw, &RunRecord::val_loss),
                                      mean_curve("Pre-LN, no warm-up", pre0, &RunRecord::val_loss)},
                                     r.details);
  if (!plot.empty()) r.plots.push_back(plot);
  r.measured = fmt::format("final val loss: Post-LN no warm-up {:.3f}{}, Post-LN warm-up {:.3f} (ratio {:.2f}); Pre-LN no "
                           "warm-up {:.3f} (ratio to Post-LN warm-up {:.2f})", l_post0, post0_diverged ? " (diverged)" : "",
                           l_postw, l_post0 / l_postw, l_pre0, l_pre0 / l_postw);
  r.details += fmt::format("\n{} steps, linear warm-up of {} steps (or none), then the constant lr 2e-3; Adam (0.9, 0.98), "
                           "6 layers, d 64, FFN 128, 4 heads, fortunes.\n", N, W);
  r.verdict = (post0_diverged || l_post0 >= 1.2 * l_postw) && l_pre0 <= 1.05 * l_postw ? ClaimVerdict::pass
                                                                                         : ClaimVerdict::fail;
  return r;
}

ClaimResult claim_c9(const ClaimContext& ctx) {
  ClaimResult r{"C9", "Deep Post-LN diverges or stalls where DeepNorm trains"};
  r.criterion = "a smallest depth where Post-LN ends >= 1.2x DeepNorm's loss exists; DeepNorm's loss non-increasing in "
                "depth (±3%)";
  r.source = "Wang et al. 2022 §3, §5 (Post-LN fails at 18L-18L on IWSLT-14; DeepNet trains 100L-100L)";
  const std::string depths = ctx.quick ? "6,12,18" : "6,18,36";
  const int N = ctx.quick ? 150 : 300;
  const auto runs = sweep_runs(ctx, "depths", config_path("lm-tiny.json"),
                               {"model.d_ff=128", "model.n_heads=2", "model.norm.placement=post", "train.lr=1e-3",
                                fmt::format("train.steps={}", N), fmt::format("train.eval_every={}", N / 6),
                                "train.eval_batches=10", "train.stats_every=0"},
                               {"model.norm.type=layernorm,deepnorm", "model.n_layers=" + depths, seeds_axis(ctx)});
  std::vector<int> ds;
  for (const auto& d : parse_axis("x=" + depths).values) ds.push_back(std::stoi(d));
  int smallest = -1;
  bool monotone = true;
  double prev = INFINITY;
  Curve post_c{"Post-LN", {}, {}}, deep_c{"DeepNorm", {}, {}};
  r.details = "| depth | Post-LN final val loss | DeepNorm final val loss | ratio |\n|---|---|---|---|\n";
  for (int d : ds) {
    const double p = mean_of(select(runs, {{"model.norm.type", "layernorm"}, {"model.n_layers", std::to_string(d)}}),
                             "final_val_loss");
    const double q = mean_of(select(runs, {{"model.norm.type", "deepnorm"}, {"model.n_layers", std::to_string(d)}}),
                             "final_val_loss");
    if (smallest < 0 && (!std::isfinite(p) || p >= 1.2 * q)) smallest = d;
    monotone &= q <= prev * 1.03;
    prev = q;
    post_c.points.emplace_back(d, p);
    deep_c.points.emplace_back(d, q);
    r.details += fmt::format("| {} | {:.3f} | {:.3f} | {:.2f} |\n", d, p, q, p / q);
  }
  const std::string plot = plot_into(ctx, "loss-vs-depth",
                                     {.title = "C9: final validation loss against depth (lr 1e-3, no warm-up)",
                                      .xlabel = "layers", .ylabel = "final validation loss"},
                                     {post_c, deep_c}, r.details);
  if (!plot.empty()) r.plots.push_back(plot);
  r.measured = fmt::format("smallest depth with Post-LN >= 1.2x DeepNorm: {}; DeepNorm non-increasing in depth: {}",
                           smallest < 0 ? std::string("none") : std::to_string(smallest), monotone ? "yes" : "no");
  r.details += fmt::format("\n{} steps, d 64, FFN 128, 2 heads, Adam 1e-3, no warm-up, fortunes; DeepNorm alpha = (2N)^(1/4), "
                           "beta = (8N)^(-1/4).\n", N);
  r.verdict = smallest > 0 && monotone ? ClaimVerdict::pass : ClaimVerdict::fail;
  return r;
}

}  // namespace nt

namespace nt {

ClaimResult claim_c10(const ClaimContext& ctx) {
  ClaimResult r{"C10", "Post-LN's model update explodes early; DeepNorm's stays bounded"};
  r.criterion = "max over t <= 50 of ||F(x, theta_t) - F(x, theta_0)||: Post-LN >= 3x DeepNorm at the larger depth, and "
                "the ratio grows with depth";
  r.source = "Wang et al. 2022 Fig. 4-5 (64-128-2 models, 6L-6L to 100L-100L)";
  const int steps = ctx.quick ? 60 : 200;
  const std::vector<int> depths = ctx.quick ? std::vector<int>{6, 12} : std::vector<int>{6, 18};
  std::map<std::pair<std::string, int>, double> peak;
  std::vector<Curve> curves;
  r.details = "| depth | model | max update, t <= 50 | update at the last step | LN input ||x||/sqrt(d), t = 0 -> last |\n"
              "|---|---|---|---|---|\n";
  for (int depth : depths)
    for (const char* norm : {"layernorm", "deepnorm"}) {
      const RunConfig c = load_config_file(
          config_path("lm-tiny.json"),
          {fmt::format("model.n_layers={}", depth), "model.d_ff=128", "model.n_heads=2", "model.norm.placement=post",
           std::string("model.norm.type=") + norm, "train.lr=1e-3"});
      InProcessRun run(c);
      const auto& model = run.model;
      Graph<float> probe_graph(false, false);
      Batch probe;
      run.data->val_batch(0, c.train.batch_size, probe);  // the fixed probe batch
      // F: the final hidden states (the last block's output, which the output layer reads)
      auto probe_hidden = [&](std::vector<float>& out, double* ln_input) {
        probe_graph.reset();
        model->logits(probe_graph, probe);
        const Tensor<float> y = model->sites().back().out;
        out.assign(y.data, y.data + y.size());
        double s = 0;
        int n = 0;
        for (const SiteCapture& site : model->sites()) {
          for (int row = 0; row < site.in.rows; ++row) {
            double e = 0;
            for (int j = 0; j < site.in.cols; ++j) e += double(site.in(row, j)) * site.in(row, j);
            s += std::sqrt(e / site.in.cols), ++n;
          }
        }
        *ln_input = s / n;
      };
      std::vector<float> F0, Ft;
      double ln0 = 0, ln_last = 0;
      probe_hidden(F0, &ln0);
      Curve curve{fmt::format("{} {} layers", std::string(norm) == "deepnorm" ? "DeepNorm" : "Post-LN", depth), {}, {}};
      double max50 = 0, last = 0;
      for (int t = 1; t <= steps; ++t) {
        run.step();
        probe_hidden(Ft, &ln_last);
        double d2 = 0;
        for (std::size_t i = 0; i < F0.size(); ++i) d2 += double(Ft[i] - F0[i]) * (Ft[i] - F0[i]);
        last = std::sqrt(d2 / probe.targets.size());  // per token
        if (t <= 50) max50 = std::max(max50, last);
        curve.points.emplace_back(t, last);
      }
      peak[{norm, depth}] = max50;
      if (depth == depths.back()) curves.push_back(curve);
      r.details += fmt::format("| {} | {} | {:.3f} | {:.3f} | {:.2f} -> {:.2f} |\n", depth, curve.title, max50, last, ln0, ln_last);
    }
  const double small = peak[{"layernorm", depths[0]}] / peak[{"deepnorm", depths[0]}];
  const double large = peak[{"layernorm", depths[1]}] / peak[{"deepnorm", depths[1]}];
  const std::string plot = plot_into(ctx, "model-update",
                                     {.title = fmt::format("C10: ||F(x, theta_t) - F(x, theta_0)|| per token, {} layers",
                                                           depths[1]),
                                      .ylabel = "model update", .logy = true},
                                     curves, r.details);
  if (!plot.empty()) r.plots.push_back(plot);
  r.measured = fmt::format("max update over t <= 50, Post-LN / DeepNorm: {:.2f} at {} layers, {:.2f} at {} layers", small,
                           depths[0], large, depths[1]);
  r.details += fmt::format("\nF = the final hidden states (the last block's output) on a fixed validation batch (16 x 64), "
                           "after each of {} Adam steps (lr 1e-3, no warm-up); d 64, FFN 128, 2 heads; seed 1.\n", steps);
  r.verdict = large >= 3 && large > small ? ClaimVerdict::pass : ClaimVerdict::fail;
  return r;
}

ClaimResult claim_c11(const ClaimContext& ctx) {
  ClaimResult r{"C11", "BatchNorm smooths the loss landscape (gradient predictiveness)"};
  r.criterion = "median over probes of max_eta ||grad(theta - eta g) - g||: >= 3x smaller with BN than without";
  r.source = "Santurkar et al. 2018 (VGG on CIFAR-10: BN's gradient predictiveness far better, Fig. 4)";
  const int steps = ctx.quick ? 300 : 1000, every = 50;
  double median_change[2] = {0, 0};
  std::vector<Curve> curves;
  int k = 0;
  for (const char* norm : {"none", "batchnorm"}) {
    const RunConfig c = load_config_file(config_path("mlp-fmnist.json"), {std::string("model.norm.type=") + norm});
    InProcessRun run(c);
    ParamStore<float>& ps = run.params();
    std::vector<float> theta(ps.numel()), g0(ps.numel());
    std::vector<double> changes;
    Curve curve{norm, {}, {}};
    for (int t = 0; t < steps; ++t) {
      run.next_batch();
      run.forward_backward();
      if (t % every == 0) {  // probe along the gradient, on the same batch, then restore
        std::copy_n(ps.data(), ps.numel(), theta.begin());
        std::copy_n(ps.grad(), ps.numel(), g0.begin());
        double worst = 0;
        for (double eta : {0.5, 1.0, 2.0, 4.0}) {
          for (std::size_t i = 0; i < ps.numel(); ++i) ps.data()[i] = theta[i] - float(eta * c.train.lr) * g0[i];
          run.forward_backward();
          double d2 = 0;
          for (std::size_t i = 0; i < ps.numel(); ++i) d2 += double(ps.grad()[i] - g0[i]) * (ps.grad()[i] - g0[i]);
          worst = std::max(worst, std::sqrt(d2));
        }
        std::copy(theta.begin(), theta.end(), ps.data());
        std::copy(g0.begin(), g0.end(), ps.grad());
        changes.push_back(worst);
        curve.points.emplace_back(t, worst);
      }
      run.update(c.train.lr);
    }
    std::vector<double> sorted = changes;
    std::sort(sorted.begin(), sorted.end());
    median_change[k++] = sorted[sorted.size() / 2];
    curves.push_back(curve);
  }
  const std::string plot = plot_into(ctx, "gradient-change",
                                     {.title = "C11: max over eta of ||grad(theta - eta g) - g|| at probe steps",
                                      .ylabel = "gradient change", .logy = true},
                                     curves, r.details);
  if (!plot.empty()) r.plots.push_back(plot);
  r.measured = fmt::format("median gradient change along the step: none {:.3g}, BN {:.3g} (none/BN = {:.2f})",
                           median_change[0], median_change[1], median_change[0] / median_change[1]);
  r.details += fmt::format("\nThe fashion-mnist MLP (4 x 256 ReLU, SGD 0.1 momentum 0.9, batch 128), {} steps; every {} "
                           "steps the gradient g on the step's batch, and the gradient on the same batch after moving "
                           "eta lr g against it, eta in 0.5, 1, 2, 4; seed 1.\n", steps, every);
  r.verdict = median_change[0] >= 3 * median_change[1] ? ClaimVerdict::pass : ClaimVerdict::fail;
  return r;
}

}  // namespace nt
