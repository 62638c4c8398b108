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
  SpeedUp s;
  s.target = value_at_last(ln);
  s.none_steps = first_step_below(no, s.target);
  s.ratio = s.none_steps < 0 ? INFINITY : double(s.none_steps) / N;
  const int rms_steps = first_step_below(rms, s.target);
  s.text = fmt::format("LN's step-{} val loss {:.3f}: none reaches it at {}, RMS at {}", N, s.target,
                       s.none_steps < 0 ? fmt::format("never within {}", 2 * N) : fmt::format("step {}", s.none_steps),
                       rms_steps < 0 ? std::string("never") : fmt::format("step {}", rms_steps));
  return s;
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
  const double target = value_at_last(ln);
  const int none_steps = first_step_below(none, target);
  const double ratio_lm = none_steps < 0 ? INFINITY : double(none_steps) / f.N;
  const std::string plot_lm = plot_into(ctx, "transformer-val-loss",
                                        {.title = "C1: 4-layer Pre-LN transformer on fortunes (mean, band = seeds)",
                                         .ylabel = "validation loss"},
                                        {none, ln, rms}, r.details);
  std::vector<Curve> mlp_curves;
  const int Nm = ctx.quick ? 150 : 400;
  const SpeedUp mlp = convergence_part(ctx, "mlp", config_path("mlp-fmnist.json"),
                                       {"model.n_layers=6", "train.eval_batches=20", "train.stats_every=0"}, Nm,
                                       ctx.quick ? 25 : 25, mlp_curves);
  const std::string plot_mlp = plot_into(ctx, "mlp-val-loss",
                                         {.title = "C1: 6-layer MLP on fashion-mnist (mean, band = seeds)",
                                          .ylabel = "validation loss"},
                                         mlp_curves, r.details);
  for (const auto& p : {plot_lm, plot_mlp})
    if (!p.empty()) r.plots.push_back(p);
  r.measured = fmt::format("transformer: none needs {} (LN's step-{} loss {:.3f}); MLP: {}",
                           none_steps < 0 ? fmt::format("> {} steps, ratio > 2", 2 * f.N)
                                          : fmt::format("{} steps, ratio {:.2f}", none_steps, ratio_lm),
                           f.N, target, std::isinf(mlp.ratio) ? "ratio > 2" : fmt::format("ratio {:.2f}", mlp.ratio));
  r.details += fmt::format("Transformer: validation loss every {} steps, mean of {} seeds; none ran {} steps, LN and "
                           "RMS {}.\nMLP: {}\n", ctx.quick ? 25 : 50, ctx.quick ? 2 : 3, 2 * f.N, f.N, mlp.text);
  r.verdict = ratio_lm >= 1.5 && mlp.ratio >= 1.5 ? ClaimVerdict::pass : ClaimVerdict::fail;
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
  // CV over positions of the std leaving each site, averaged over sites, then over seeds.
  auto cv_of = [](const RunRecord& run, std::vector<double>* profile) {
    double sum = 0;
    int n = 0;
    for (const auto& [key, stds] : last_stats_std(run.dir)) {
      if (key.second.size() < 4 || key.second.substr(key.second.size() - 4) != ".out") continue;
      const double mean = std::accumulate(stds.begin(), stds.end(), 0.0) / stds.size();
      double var = 0;
      for (double s : stds) var += (s - mean) * (s - mean) / stds.size();
      sum += std::sqrt(var) / mean, ++n;
      if (profile) {
        profile->resize(stds.size(), 0.0);
        for (std::size_t t = 0; t < stds.size(); ++t) (*profile)[t] += stds[t];
      }
    }
    return sum / n;
  };
  std::vector<Curve> curves;
  double cv[3] = {0, 0, 0};
  const char* names[] = {"none", "layernorm", "rmsnorm"};
  for (int k = 0; k < 3; ++k) {
    const auto runs = k == 0 ? select(f.none, {}) : select(f.normed, {{"model.norm.type", names[k]}});
    std::vector<double> profile;
    for (const RunRecord* run : runs) cv[k] += cv_of(*run, &profile) / runs.size();
    Curve c{names[k], {}, {}};
    for (std::size_t t = 0; t < profile.size(); ++t) c.points.emplace_back(double(t), profile[t] / profile.back() );
    curves.push_back(c);
  }
  const std::string plot = plot_into(ctx, "position-std",
                                     {.title = "C6: std leaving the norm sites by position (relative to the last)",
                                      .xlabel = "position", .ylabel = "std / std at the last position"},
                                     curves, r.details);
  if (!plot.empty()) r.plots.push_back(plot);
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
    const RunConfig cl = load_config_file(config_path("lm-tiny.json"), {"data.dataset=synthetic-lm"});
    const RunConfig cr = load_config_file(config_path("lm-tiny.json"), {"data.dataset=synthetic-lm", "model.norm.type=rmsnorm"});
    const auto data = make_dataset(cl);
    auto ml = make_model(cl, *data), mr = make_model(cr, *data);
    OptimizerState ol(cl.train, ml->params().numel()), orr(cr.train, mr->params().numel());
    Graph<float> gl, gr;
    Batch batch;
    Rng brng(1, 2);
    data->train_batch(brng, cl.train.batch_size, batch);
    auto step = [&](Model& m, OptimizerState& o, Graph<float>& gg) {
      forward_backward(gg, m, batch, false);
      o.step(m.params().data(), m.params().grad(), 1e-3);
    };
    for (int i = 0; i < 3; ++i) step(*ml, ol, gl), step(*mr, orr, gr);
    for (int i = 0; i < rounds; ++i) {
      ln_step.push_back(ms_of([&] { step(*ml, ol, gl); }));
      rms_step.push_back(ms_of([&] { step(*mr, orr, gr); }));
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
    const RunConfig c = load_config_file(config_path("lm-tiny.json"),
                                         {fmt::format("model.n_layers={}", L), std::string("model.norm.placement=") + placement,
                                          "model.init_std=0.125", "train.threads=1"});
    set_math_threads(1);
    const auto data = make_dataset(c);
    const auto model = make_model(c, *data);
    ParamStore<float>& ps = model->params();
    std::vector<double> sum(ps.numel(), 0.0);
    Graph<float> g;
    Batch batch;
    Rng rng(1, 2);
    for (int b = 0; b < batches; ++b) {
      data->train_batch(rng, c.train.batch_size, batch);
      forward_backward(g, *model, batch, false);
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
