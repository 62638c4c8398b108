// Convergence and statistics claims in the papers' recurrent models, with the 4-layer Pre-LN
// transformer and the MLP beside them as ablations: C1 (normalization speeds convergence: RNNSearch
// and the LSTM language model), C2 (RMSNorm matches LayerNorm: RNNSearch), C6 (per-position
// statistics in RNNSearch's decoder, the RMSNorm paper's Table 5). The RNNSearch runs are shared
// by the three, the transformer's too. Every quantity is measured per seed, and the verdict comes
// from its 95% interval over the seeds.
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "claims/claim.h"
#include "claims/evidence.h"
#include "io/paths.h"

namespace nt {

namespace {

// A run's validation loss at step N: the last one logged at or before it
double val_loss_at(const RunRecord& run, int N) {
  double loss = NAN;
  for (const auto& [step, l] : run.val_loss)
    if (step <= N) loss = l;
  return loss;
}

// The steps `none` needs to reach the normalized run's validation loss at step N, over N; 2 when
// it never does within its 2N steps (a lower bound: the value is censored).
double speedup(const RunRecord& normed, const RunRecord& none, int N) {
  const double target = val_loss_at(normed, N);
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

// The language models' steps N (none: 2N), the transformer's and the LSTM's
int lm_steps(const ClaimContext& ctx) { return ctx.quick ? 100 : 600; }

// The 4-layer Pre-LN transformer on fortunes of C1, C2 and C6: a sibling of the claims'
// directories, so that each claim reuses the runs.
Runs fortunes_runs(const ClaimContext& ctx) {
  const std::vector<std::string> fixed{"model.n_layers=4", fmt::format("train.eval_every={}", ctx.quick ? 25 : 50),
                                       fmt::format("train.eval_batches={}", ctx.eval_batches(10)),
                                       fmt::format("train.stats_every={}", ctx.quick ? 50 : 100)};
  return convergence_runs(ctx, (std::filesystem::path(ctx.out).parent_path() / "fortunes-transformer-runs").string(),
                          config_path("lm-tiny.json"), fixed, lm_steps(ctx));
}

// The LN-LSTM language model of the LayerNorm paper (configs/rnn-lstm-tiny.json on fortunes) for
// C1 and C2, a sibling of the claims' directories
Runs lstm_runs(const ClaimContext& ctx) {
  const std::vector<std::string> fixed{fmt::format("train.eval_every={}", ctx.quick ? 25 : 50),
                                       fmt::format("train.eval_batches={}", ctx.eval_batches(10)), "train.stats_every=0"};
  return convergence_runs(ctx, (std::filesystem::path(ctx.out).parent_path() / "lstm-runs").string(),
                          config_path("rnn-lstm-tiny.json"), fixed, lm_steps(ctx));
}

// RNNSearch on gettext-de (configs/rnnsearch-tiny.json), none, layernorm and rmsnorm for the same
// steps (quick 100, else 2000: the baseline sits on the unigram plateau until about step 1000), for
// C1, C2 and C6. C1 reads LN's loss at half of them, so that none has twice LN's steps.
int rnnsearch_steps(const ClaimContext& ctx) { return ctx.quick ? 100 : 2000; }

std::vector<RunRecord> rnnsearch_runs(ClaimContext ctx) {
  ctx.out = (std::filesystem::path(ctx.out).parent_path() / "rnnsearch-runs").string();
  const int every = ctx.quick ? 50 : 250;
  return sweep_runs(ctx, "table5", config_path("rnnsearch-tiny.json"),
                    {fmt::format("train.steps={}", rnnsearch_steps(ctx)), fmt::format("train.eval_every={}", every),
                     fmt::format("train.eval_batches={}", ctx.eval_batches(20)), fmt::format("train.stats_every={}", every)},
                    {"model.norm.type=none,layernorm,rmsnorm", ctx.seeds_axis()});
}

std::vector<const RunRecord*> of_norm(const std::vector<RunRecord>& runs, const char* norm) {
  return select(runs, {{"model.norm.type", norm}});
}

// Per seed, RMS's final validation loss over LN's
std::vector<double> rms_over_ln(const std::vector<const RunRecord*>& ln, const std::vector<const RunRecord*>& rms) {
  const auto l = values_of(ln, "final_val_loss"), r = values_of(rms, "final_val_loss");
  std::vector<double> ratio;
  for (std::size_t i = 0; i < l.size() && i < r.size(); ++i) ratio.push_back(r[i] / l[i]);
  return ratio;
}

}  // namespace

ClaimResult claim_c1(const ClaimContext& ctx) {
  ClaimResult r;
  r.seeds = ctx.seeds;
  const std::vector<RunRecord> rs = rnnsearch_runs(ctx);
  const int Nr = rnnsearch_steps(ctx) / 2;
  const Runs lstm = lstm_runs(ctx);
  const int Nm = ctx.quick ? 100 : 400;
  const Runs lm = ctx.ablations ? fortunes_runs(ctx) : Runs{};
  const std::vector<std::string> mlp_fixed{"model.n_layers=6", fmt::format("train.eval_batches={}", ctx.eval_batches(20)),
                                           "train.stats_every=0", "train.eval_every=25"};
  const Runs mlp = ctx.ablations ? convergence_runs(ctx, ctx.out + "/mlp", config_path("mlp-fmnist.json"), mlp_fixed, Nm)
                                 : Runs{};
  plot_into(ctx, "rnnsearch-val-loss",
            {.title = "C1: RNNSearch on gettext-de (mean, band = seeds)", .ylabel = "validation loss"},
            {mean_curve("none", of_norm(rs, "none"), &RunRecord::val_loss),
             mean_curve("layernorm", of_norm(rs, "layernorm"), &RunRecord::val_loss),
             mean_curve("rmsnorm", of_norm(rs, "rmsnorm"), &RunRecord::val_loss)},
            r);
  for (const auto& [runs, stem, title] : {std::tuple{&lstm, "lstm-val-loss", "LSTM language model on fortunes"},
                                          std::tuple{&lm, "transformer-val-loss", "4-layer Pre-LN transformer on fortunes"},
                                          std::tuple{&mlp, "mlp-val-loss", "6-layer MLP on fashion-mnist"}})
    if (!runs->none.empty())
      plot_into(ctx, stem, {.title = fmt::format("C1: {} (mean, band = seeds)", title), .ylabel = "validation loss"},
                {mean_curve("none", select(runs->none, {}), &RunRecord::val_loss),
                 mean_curve("layernorm", of_norm(runs->normed, "layernorm"), &RunRecord::val_loss),
                 mean_curve("rmsnorm", of_norm(runs->normed, "rmsnorm"), &RunRecord::val_loss)},
                r);
  auto steps_name = [](const char* model, const char* norm, int N) {
    return fmt::format("{}: steps none needs to reach {}'s step-{} loss, / {} (2 = never in {})", model, norm, N, N, 2 * N);
  };
  const std::string ablation = "ablation: the Transformer and the MLP";
  r.measures = {
      measure_at_least(steps_name("RNNSearch", "LN", Nr), speedups(of_norm(rs, "layernorm"), of_norm(rs, "none"), Nr), 1.5),
      measure_at_least(steps_name("LSTM LM", "LN", lstm.N),
                       speedups(of_norm(lstm.normed, "layernorm"), select(lstm.none, {}), lstm.N), 1.5),
      in_group(measure_at_least(steps_name("RNNSearch", "RMS", Nr), speedups(of_norm(rs, "rmsnorm"), of_norm(rs, "none"), Nr),
                                1.5),
               "RMSNorm as the normalized model"),
      in_group(measure_at_least(steps_name("LSTM LM", "RMS", lstm.N),
                                speedups(of_norm(lstm.normed, "rmsnorm"), select(lstm.none, {}), lstm.N), 1.5),
               "RMSNorm as the normalized model")};
  r.measured = fmt::format("steps none needs to reach LN's loss, in units of LN's steps (2 = never): RNNSearch {}, LSTM LM {}",
                           show(r.measures[0].interval, 2), show(r.measures[1].interval, 2));
  if (ctx.ablations) {
    r.measures.insert(r.measures.end(), {
      in_group(measure_at_least(steps_name("transformer", "LN", lm.N),
                                speedups(of_norm(lm.normed, "layernorm"), select(lm.none, {}), lm.N), 1.5),
               ablation),
      in_group(measure_at_least(steps_name("MLP", "LN", Nm), speedups(of_norm(mlp.normed, "layernorm"), select(mlp.none, {}), Nm),
                                1.5),
               ablation),
      in_group(measure_at_least(steps_name("transformer", "RMS", lm.N),
                                speedups(of_norm(lm.normed, "rmsnorm"), select(lm.none, {}), lm.N), 1.5),
               ablation),
      in_group(measure_at_least(steps_name("MLP", "RMS", Nm), speedups(of_norm(mlp.normed, "rmsnorm"), select(mlp.none, {}), Nm),
                                1.5),
               ablation)});
    r.measured += fmt::format("; ablations: transformer {}, MLP {}", show(r.measures[4].interval, 2),
                              show(r.measures[5].interval, 2));
  } else {
    r.ablations_not_run = {"the 4-layer Pre-LN transformer on fortunes", "the 6-layer MLP on fashion-mnist"};
  }
  if (ctx.quick)
    r.setting = fmt::format("quick: RNNSearch N = {}, LSTM N = {}, transformer N = {}, MLP N = {}", Nr, lstm.N,
                            lm_steps(ctx), Nm);
  r.verdict = verdict_of(r.measures);
  return r;
}

ClaimResult claim_c2(const ClaimContext& ctx) {
  ClaimResult r;
  r.seeds = ctx.seeds;
  const std::vector<RunRecord> rs = rnnsearch_runs(ctx);
  const Runs lstm = ctx.ablations ? lstm_runs(ctx) : Runs{};
  const Runs f = ctx.ablations ? fortunes_runs(ctx) : Runs{};
  struct Model {
    const char* name;
    std::vector<const RunRecord*> ln, rms;
  };
  std::vector<Model> models{{"RNNSearch", of_norm(rs, "layernorm"), of_norm(rs, "rmsnorm")}};
  if (ctx.ablations)
    models.insert(models.end(), {{"LSTM LM", of_norm(lstm.normed, "layernorm"), of_norm(lstm.normed, "rmsnorm")},
                                 {"transformer", of_norm(f.normed, "layernorm"), of_norm(f.normed, "rmsnorm")}});
  else
    r.ablations_not_run = {"the LSTM LM on fortunes", "the 4-layer Pre-LN transformer on fortunes"};
  for (const Model& m : models)
    r.measures.push_back(in_group(measure_within(fmt::format("{}: final validation loss, RMS / LN (same seed)", m.name),
                                                 rms_over_ln(m.ln, m.rms), 0.98, 1.02),
                                  &m == &models.front() ? "" : "ablation: the LSTM LM and the Transformer"));
  for (const Model& m : models) {
    r.measures.push_back(measure_reported(fmt::format("{}: final validation loss, LN", m.name), values_of(m.ln, "final_val_loss"),
                                          "the losses"));
    r.measures.push_back(measure_reported(fmt::format("{}: final validation loss, RMS", m.name),
                                          values_of(m.rms, "final_val_loss"), "the losses"));
  }
  const std::size_t losses = models.size();  // where the RNNSearch's LN and RMS losses start
  r.measured = fmt::format("RMS / LN final validation loss: RNNSearch {} (LN {}, RMS {})", show(r.measures[0].interval, 4),
                           show(r.measures[losses].interval, 3), show(r.measures[losses + 1].interval, 3));
  if (ctx.ablations)
    r.measured += fmt::format("; ablations: LSTM LM {}, transformer {}", show(r.measures[1].interval, 4),
                              show(r.measures[2].interval, 4));
  if (ctx.quick)
    r.setting = fmt::format("quick: RNNSearch N = {}, LSTM N = {}, transformer N = {}", rnnsearch_steps(ctx),
                            lm_steps(ctx), lm_steps(ctx));
  r.verdict = verdict_of(r.measures);
  return r;
}

namespace {

// The RMSNorm paper's Table 5: M and S of the decoder GRU's hidden-to-hidden term at positions
// 1-4 and over all positions (ALL), for the baseline, LayerNorm and RMSNorm.
struct Table5Row {
  const char* norm;
  double M[4], M_all, S[4], S_all;
};
constexpr Table5Row kTable5[] = {{"none", {-2.60, -1.19, -1.43, -1.53}, -1.60, {7.35, 2.33, 2.61, 2.73}, 3.04},
                                 {"layernorm", {-0.43, -0.48, -0.50, -0.50}, -0.51, {1.19, 1.51, 1.51, 1.51}, 1.51},
                                 {"rmsnorm", {-0.40, -0.60, -0.69, -0.74}, -0.73, {1.27, 1.51, 1.50, 1.49}, 1.50}};

// The decoder's first GRU reads the previous state through U_g h (gates, 2H) and U_c h
// (candidate, H): the hidden-to-hidden mapping of Table 5. Its sites leaving the norm (`.out`;
// for none the term itself).
constexpr const char* kTable5Sites[] = {"dec1.state_gates.out", "dec1.state_cand.out"};

double mean_finite(const std::vector<double>& v, std::size_t from, std::size_t to) {
  double sum = 0;
  int n = 0;
  for (std::size_t t = from; t < std::min(to, v.size()); ++t)
    if (std::isfinite(v[t])) sum += v[t], ++n;
  return n ? sum / n : NAN;
}

// Position 1's S over the mean of positions 2-4, and the coefficient of variation (%) of S over
// positions 2..T, averaged over the two sites; the per-position M and S of each site for the table.
struct Table5Reading {
  double s1_ratio = 0, cv = 0;
  std::map<std::string, PositionStats> sites;
};

Table5Reading read_table5(const RunRecord& run) {
  Table5Reading r;
  const auto stats = last_stats(run.dir);
  for (const char* site : kTable5Sites) {
    const auto it = stats.find({0, site});
    if (it == stats.end() || it->second.std.size() < 5)
      throw std::runtime_error(fmt::format("{}: stats.csv has no {} over 5 positions", run.dir, site));
    const std::vector<double>& S = it->second.std;
    r.s1_ratio += S[0] / mean_finite(S, 1, 4) / 2;
    const double mean = mean_finite(S, 1, S.size());
    double var = 0;
    int n = 0;
    for (std::size_t t = 1; t < S.size(); ++t)
      if (std::isfinite(S[t])) var += (S[t] - mean) * (S[t] - mean), ++n;
    r.cv += 100 * std::sqrt(var / n) / mean / 2;
    r.sites[site] = it->second;
  }
  return r;
}

// The transformer's statistics (C1's runs), kept as the ablation: the CV over positions of the
// std leaving each site, averaged over sites, per seed.
std::vector<std::vector<double>> transformer_cvs(const Runs& f) {
  auto cv_of = [](const RunRecord& run) {
    double sum = 0;
    int n = 0;
    for (const auto& [key, stats] : last_stats(run.dir)) {
      if (!key.second.ends_with(".out")) continue;
      const auto& stds = stats.std;
      const double mean = std::accumulate(stds.begin(), stds.end(), 0.0) / stds.size();
      double var = 0;
      for (double s : stds) var += (s - mean) * (s - mean) / stds.size();
      sum += std::sqrt(var) / mean, ++n;
    }
    return 100 * sum / n;
  };
  std::vector<std::vector<double>> cv(3);
  const char* names[] = {"none", "layernorm", "rmsnorm"};
  for (int k = 0; k < 3; ++k)
    for (const RunRecord* run : k == 0 ? select(f.none, {}) : of_norm(f.normed, names[k])) cv[k].push_back(cv_of(*run));
  return cv;
}

}  // namespace

ClaimResult claim_c6(const ClaimContext& ctx) {
  ClaimResult r;
  r.seeds = ctx.seeds;
  const int N = rnnsearch_steps(ctx);
  const std::vector<RunRecord> runs = rnnsearch_runs(ctx);
  const char* names[] = {"none", "layernorm", "rmsnorm"};
  std::vector<double> ratio[3], cv[3];
  std::vector<Curve> std_curves, mean_curves;
  std::string table =
      "| norm | site | | M1 | M2 | M3 | M4 | M ALL | S1 | S2 | S3 | S4 | S ALL | S1 / mean(S2..S4) |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (int k = 0; k < 3; ++k) {
    const auto of = select(runs, {{"model.norm.type", names[k]}});
    // M and S per position over the seeds whose batch reached that position
    std::map<std::string, PositionStats> avg;
    std::map<std::string, std::vector<int>> count;
    for (const RunRecord* run : of) {
      const Table5Reading t = read_table5(*run);
      ratio[k].push_back(t.s1_ratio), cv[k].push_back(t.cv);
      for (const auto& [site, ps] : t.sites) {
        PositionStats& a = avg[site];
        std::vector<int>& c = count[site];
        if (a.std.size() < ps.std.size())
          a.mean.resize(ps.std.size(), 0.0), a.std.resize(ps.std.size(), 0.0), c.resize(ps.std.size(), 0);
        for (std::size_t p = 0; p < ps.std.size(); ++p)
          if (std::isfinite(ps.std[p])) a.mean[p] += ps.mean[p], a.std[p] += ps.std[p], ++c[p];
      }
    }
    for (auto& [site, a] : avg)
      for (std::size_t p = 0; p < a.std.size(); ++p)
        a.mean[p] = count[site][p] ? a.mean[p] / count[site][p] : NAN, a.std[p] = count[site][p] ? a.std[p] / count[site][p] : NAN;
    for (const char* site : kTable5Sites) {
      const PositionStats& a = avg[site];
      auto row = [&](const std::vector<double>& v, std::size_t p) { return p < v.size() ? v[p] : NAN; };
      table += fmt::format("| {} | {} | normtool | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | "
                           "{:.3f} | {:.3f} | {:.2f} |\n",
                           names[k], site, row(a.mean, 0), row(a.mean, 1), row(a.mean, 2), row(a.mean, 3),
                           mean_finite(a.mean, 0, a.mean.size()), row(a.std, 0), row(a.std, 1), row(a.std, 2),
                           row(a.std, 3), mean_finite(a.std, 0, a.std.size()), row(a.std, 0) / mean_finite(a.std, 1, 4));
      if (std::string(site) == kTable5Sites[0]) {
        Curve sc{names[k], {}, {}}, mc{names[k], {}, {}};
        for (std::size_t p = 0; p < a.std.size(); ++p)
          if (std::isfinite(a.std[p])) sc.points.push_back({double(p + 1), a.std[p]}), mc.points.push_back({double(p + 1), a.mean[p]});
        std_curves.push_back(sc), mean_curves.push_back(mc);
      }
    }
    const Table5Row& p = kTable5[k];
    table += fmt::format("| {} | hidden-to-hidden | paper | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} |\n",
                         names[k], p.M[0], p.M[1], p.M[2], p.M[3], p.M_all, p.S[0], p.S[1], p.S[2], p.S[3], p.S_all,
                         p.S[0] / ((p.S[1] + p.S[2] + p.S[3]) / 3));
  }
  for (const auto& [stem, what, curves] :
       {std::tuple{"position-std", "std", std_curves}, std::tuple{"position-mean", "mean", mean_curves}})
    plot_into(ctx, stem,
              {.title = fmt::format("C6: {} of U_g h in RNNSearch's first decoder GRU (after its norm)", what),
               .xlabel = "target position", .ylabel = fmt::format("{} (average over seeds)", what),
               .logy = std::string(what) == "std"},
              curves, r);

  r.measures = {
      measure_at_least("none: S at position 1 / mean S at positions 2-4", ratio[0], 1.5),
      measure_within("LN: S at position 1 / mean S at positions 2-4", ratio[1], 1 / 1.5, 1.5),
      measure_within("RMS: S at position 1 / mean S at positions 2-4", ratio[2], 1 / 1.5, 1.5),
      measure_at_most("LN: CV of S over positions 2..T (%)", cv[1], 5),
      measure_at_most("RMS: CV of S over positions 2..T (%)", cv[2], 5),
      measure_reported("none: CV of S over positions 2..T (%)", cv[0], "reported")};
  if (ctx.ablations) {
    const auto tcv = transformer_cvs(fortunes_runs(ctx));
    const std::string ablation = "ablation: the decoder-only transformer of C1 (no state built from an encoder)";
    r.measures.insert(
        r.measures.end(),
        {in_group(measure_at_most("LN: CV over positions of the post-norm std (%)", tcv[1], 5), ablation),
         in_group(measure_at_most("RMS: CV over positions of the post-norm std (%)", tcv[2], 5), ablation),
         in_group(measure_at_least("none: CV over positions of the residual stream's std (%)", tcv[0], 15), ablation)});
  } else {
    r.ablations_not_run = {"the 4-layer decoder-only transformer of C1"};
  }
  r.measured = fmt::format("RNNSearch, S1 / mean(S2..S4): none {}, LN {}, RMS {} (paper 2.87, 0.79, 0.85); CV of S over "
                           "positions 2..T: LN {}%, RMS {}%",
                           show(r.measures[0].interval, 2), show(r.measures[1].interval, 2),
                           show(r.measures[2].interval, 2), show(r.measures[3].interval, 2),
                           show(r.measures[4].interval, 2));
  r.details += fmt::format(
      "RNNSearch (configs/rnnsearch-tiny.json: gettext-de, d_emb 64, state 128, nematus init, Adam 1e-3, clip 1, batch "
      "32), each norm {} steps; stats.csv at the last statistics step, from its training batch: per target position "
      "the mean over the real tokens of the per-vector mean M and std S over the hidden dimension. The sites are the "
      "first decoder GRU's hidden-to-hidden terms, U_g h (gates, 2H) and U_c h (candidate, H), after their norm "
      "(gain and bias included; for none the term itself); position 1 is U s0, s0 the state built from the "
      "encoder's annotations. The ratios and CVs are averaged over the two sites. ALL is the plain mean over the "
      "positions logged. Mean over the seeds:\n\n{}\n"
      "The ablation is the 4-layer decoder-only transformer of C1: sites attn, ffn and final, `.out` rows, CV over "
      "its 64 positions; for none the site's output is its input, the residual stream. A decoder-only model starts "
      "every position from the same embedding table and causal context, with nothing like s0, so its position 1 "
      "cannot stand apart the way Table 5's does.\n",
      N, table);
  if (ctx.quick) r.setting = fmt::format("quick: RNNSearch N = {}, transformer N = {}", N, lm_steps(ctx));
  r.verdict = verdict_of(r.measures);
  return r;
}

}  // namespace nt
