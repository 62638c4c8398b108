// The Post-LN claims, each in the setting of the paper that makes it (Xavier init as Xiong et al.
// 2020 and DeepNet use, their depths and warm-up), with normtool's default small init
// (model.init normal, N(0, 0.02)) beside it as an ablation: C7 (gradients at init), C8 (warm-up),
// C9 (deep Post-LN against DeepNorm); C10 (the early model update) is in postln_update.cpp. Every
// quantity is measured per seed; the verdict comes from its 95% interval over the seeds.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <numeric>

#include "claims/claim.h"
#include "claims/evidence.h"
#include "claims/postln.h"
#include "io/paths.h"
#include "sweep/sweep.h"
#include "train/session.h"

namespace nt {

namespace {

// ---- C7 ----

// Per layer, the Frobenius norm of each block's W2 gradient averaged over `batches` batches
// (Xiong et al.'s "norm of the expected gradient"), at init.
std::vector<double> w2_gradient_norms(const RunConfig& c, const std::shared_ptr<const Dataset>& data, int batches) {
  Session run(c, data);
  ParamStore<float>& ps = run.params();
  std::vector<double> sum(ps.numel(), 0.0);
  for (int b = 0; b < batches; ++b) {
    run.next_batch();
    run.forward_backward(run.batch());
    for (std::size_t i = 0; i < ps.numel(); ++i) sum[i] += ps.grad()[i] / batches;
  }
  std::vector<double> per_layer(c.model.n_layers, 0.0);
  for (int i = 0; i < ps.count(); ++i)
    if (ps.info(i).name == "ffn.fc2.weight") {
      double s2 = 0;
      for (std::size_t k = 0; k < ps.info(i).size(); ++k) s2 += sum[ps.info(i).offset + k] * sum[ps.info(i).offset + k];
      per_layer[ps.info(i).layer] = std::sqrt(s2);
    }
  return per_layer;
}

struct GradientShape {
  std::vector<double> rho, last_first, pre_ratio;  // per seed
  std::vector<std::vector<double>> post, pre;      // per seed, per layer
};

// The claim is about the expected gradient over inits: for claim seed s, the per-layer norms are
// averaged over `inits` initializations with seeds 1000 s + k (disjoint for disjoint seed sets).
GradientShape gradient_shape(const ClaimContext& ctx, const std::vector<std::string>& setting, int L, int batches,
                             int inits) {
  GradientShape g;
  std::vector<double> layers(L);
  std::iota(layers.begin(), layers.end(), 0.0);
  const std::shared_ptr<const Dataset> data = make_dataset(session_config("lm-tiny.json", setting));  // fortunes: no seed
  for (int seed : ctx.seeds) {
    auto averaged = [&](const char* placement) {
      std::vector<double> mean(L, 0.0);
      for (int k = 0; k < inits; ++k) {
        std::vector<std::string> o = setting;
        o.insert(o.end(), {fmt::format("model.n_layers={}", L), std::string("model.norm.placement=") + placement,
                           seed_override(1000 * seed + k)});
        const auto norms = w2_gradient_norms(session_config("lm-tiny.json", o), data, batches);
        for (int l = 0; l < L; ++l) mean[l] += norms[l] / inits;
      }
      return mean;
    };
    g.post.push_back(averaged("post"));
    g.pre.push_back(averaged("pre"));
    const auto& post = g.post.back();
    const auto [lo, hi] = std::minmax_element(g.pre.back().begin(), g.pre.back().end());
    g.rho.push_back(spearman(layers, post));
    g.last_first.push_back(post.back() / post.front());
    g.pre_ratio.push_back(*hi / *lo);
  }
  return g;
}

// ---- C8, C9 ----

// A run's final validation loss; a diverged run counts as ln 256 = 5.545, the loss of the uniform
// predictor, the most a diverged model can be credited with.
std::vector<double> final_losses(const std::vector<const RunRecord*>& runs) {
  std::vector<double> v;
  for (const RunRecord* r : runs) {
    const bool diverged = r->summary.value("diverged", false);
    const double loss = r->summary.contains("final_val_loss") && r->summary["final_val_loss"].is_number()
                            ? r->summary["final_val_loss"].get<double>()
                            : NAN;
    v.push_back(diverged || !std::isfinite(loss) ? std::log(256.0) : loss);
  }
  return v;
}

}  // namespace

ClaimResult claim_c7(const ClaimContext& ctx) {
  ClaimResult r;
  r.seeds = ctx.seeds;
  // 10 batches: the expected gradient of one init is already stable (200 batches change its norms by ~2%);
  // what varies is the init, so each seed averages 8 of them (2 in quick mode)
  const int L = 12, batches = 10, inits = ctx.quick ? 1 : 8;
  // Xiong's setting: Xavier init, ReLU, a d x d feed-forward layer
  const std::vector<std::string> xiong{"model.init=xavier", "model.activation=relu", "model.d_ff=64"};
  const GradientShape main = gradient_shape(ctx, xiong, L, batches, inits);
  const GradientShape small = gradient_shape(ctx, {"model.activation=relu", "model.d_ff=64"}, L, batches, inits);
  const GradientShape wide = gradient_shape(ctx, {"model.init=xavier", "model.activation=relu", "model.d_ff=256"}, L,
                                            batches, inits);
  r.measures = {measure_at_least("Post-LN: Spearman rho(layer, ||grad W2||)", main.rho, 0.8),
                measure_at_least("Post-LN: ||grad W2|| last layer / first layer", main.last_first, 2),
                measure_at_most("Pre-LN: ||grad W2|| max / min over layers", main.pre_ratio, 2)};
  for (const auto& [g, group] : {std::pair{&small, std::string(kSmallInit)},
                                 std::pair{&wide, std::string("ablation: d_ff = 4d (Xavier)")}}) {
    r.measures.push_back(in_group(measure_at_least("Post-LN: Spearman rho", g->rho, 0.8), group));
    r.measures.push_back(in_group(measure_at_least("Post-LN: last / first", g->last_first, 2), group));
    r.measures.push_back(in_group(measure_at_most("Pre-LN: max / min", g->pre_ratio, 2), group));
  }
  std::vector<Curve> curves;
  r.details = "| layer | Post-LN ||grad W2|| | Pre-LN ||grad W2|| | Post-LN, N(0, 0.02) | Pre-LN, N(0, 0.02) |\n"
              "|---|---|---|---|---|\n";
  auto mean_at = [](const std::vector<std::vector<double>>& v, int l) {
    double s = 0;
    for (const auto& x : v) s += x[l] / double(v.size());
    return s;
  };
  Curve post{"Post-LN (Xavier)", {}, {}}, pre{"Pre-LN (Xavier)", {}, {}}, post_small{"Post-LN, N(0, 0.02)", {}, {}},
      pre_small{"Pre-LN, N(0, 0.02)", {}, {}};
  for (int l = 0; l < L; ++l) {
    post.points.emplace_back(l, mean_at(main.post, l));
    pre.points.emplace_back(l, mean_at(main.pre, l));
    post_small.points.emplace_back(l, mean_at(small.post, l));
    pre_small.points.emplace_back(l, mean_at(small.pre, l));
    r.details += fmt::format("| {} | {:.4g} | {:.4g} | {:.4g} | {:.4g} |\n", l, post.points.back().second,
                             pre.points.back().second, post_small.points.back().second, pre_small.points.back().second);
  }
  r.details += fmt::format("\nMeans over the seeds. Each block's FFN output matrix (W^2 in Xiong et al.), the Frobenius "
                           "norm of its gradient averaged over {} batches of fortunes (16 x 64), at init, averaged over "
                           "{} inits per seed: {} layers, d 64, 4 heads.\n", batches, inits, L);
  plot_into(ctx, "grad-norms",
            {.title = "C7: gradient norm of each block's W2 at init (mean over seeds)", .xlabel = "layer",
             .ylabel = "||mean gradient of W2||", .logy = true},
            {post, pre, post_small, pre_small}, r);
  r.measured = fmt::format("Xavier, d_ff = d: Post-LN rho {}, last/first {}; Pre-LN max/min {}. N(0, 0.02): Post-LN "
                           "rho {}, last/first {}",
                           show(r.measures[0].interval, 2), show(r.measures[1].interval, 2),
                           show(r.measures[2].interval, 2), show(r.measures[3].interval, 2),
                           show(r.measures[4].interval, 2));
  r.verdict = verdict_of(r.measures);
  return r;
}

ClaimResult claim_c8(const ClaimContext& ctx) {
  ClaimResult r;
  r.seeds = ctx.seeds;
  const int N = ctx.quick ? 100 : 1000, W = ctx.quick ? 50 : 500, L = ctx.quick ? 6 : 12;
  // constant lr after the warm-up, so that the runs differ only by the warm-up (the README says why)
  const std::vector<std::string> fixed{"model.d_ff=128", "train.beta2=0.98", "train.lr=2e-3", "train.schedule=constant",
                                       fmt::format("train.steps={}", N), fmt::format("train.eval_every={}", N / 10),
                                       fmt::format("train.eval_batches={}", ctx.eval_batches(10)), "train.stats_every=0"};
  struct Setting {
    std::string name, group;
    int layers;
    const char* init;
  };
  std::vector<Setting> settings{{fmt::format("{} layers, Xavier", L), "", L, "xavier"},
                                {fmt::format("{} layers, N(0, 0.02)", L), kSmallInit, L, "normal"}};
  if (!ctx.quick) settings.push_back({"6 layers, Xavier", "6 layers (Xavier)", 6, "xavier"});
  std::vector<SweepRequest> sweeps;  // per setting: Post-LN with and without warm-up, Pre-LN without
  for (const Setting& s : settings) {
    auto o = fixed;
    o.insert(o.end(), {fmt::format("model.n_layers={}", s.layers), std::string("model.init=") + s.init});
    const std::string dir = fmt::format("{}-layers-{}", s.layers, s.init);
    sweeps.push_back({dir + "-post", config_path("lm-tiny.json"), o,
                      {"model.norm.placement=post", fmt::format("train.warmup_steps=0,{}", W), ctx.seeds_axis()}});
    sweeps.push_back({dir + "-pre", config_path("lm-tiny.json"), o,
                      {"model.norm.placement=pre", "train.warmup_steps=0", ctx.seeds_axis()}});
  }
  const auto runs = sweep_runs(ctx, sweeps);
  std::vector<Curve> curves;
  r.details = "| setting | Post-LN, no warm-up | Post-LN, warm-up | Pre-LN, no warm-up |\n|---|---|---|---|\n";
  for (std::size_t k = 0; k < settings.size(); ++k) {
    const Setting& s = settings[k];
    const auto &post = runs[2 * k], &pre = runs[2 * k + 1];
    const auto post0 = select(post, {{"train.warmup_steps", "0"}}),
               postw = select(post, {{"train.warmup_steps", std::to_string(W)}}), pre0 = select(pre, {});
    const auto l_post0 = final_losses(post0), l_postw = final_losses(postw), l_pre0 = final_losses(pre0);
    r.measures.push_back(in_group(
        measure_at_least(fmt::format("{}: Post-LN loss, no warm-up / warm-up {}", s.name, W), ratio(l_post0, l_postw), 1.2),
        s.group));
    r.measures.push_back(in_group(
        measure_at_most(fmt::format("{}: Pre-LN no warm-up / Post-LN warm-up {}", s.name, W), ratio(l_pre0, l_postw), 1.05),
        s.group));
    r.details += fmt::format("| {} | {} | {} | {} |\n", s.name, show(mean_interval(l_post0), 3),
                             show(mean_interval(l_postw), 3), show(mean_interval(l_pre0), 3));
    if (s.group.empty() || s.init == std::string("normal"))
      for (const auto& [runs, label] : {std::pair{post0, "Post-LN, no warm-up"},
                                        std::pair{postw, "Post-LN, warm-up"}, std::pair{pre0, "Pre-LN, no warm-up"}})
        curves.push_back(mean_curve(fmt::format("{} ({})", label, s.init), runs, &RunRecord::val_loss));
  }
  plot_into(ctx, "val-loss",
            {.title = fmt::format("C8: {}-layer transformer, Adam (0.9, 0.98) lr 2e-3, warm-up 0 vs {} (mean over seeds)",
                                  L, W),
             .ylabel = "validation loss"},
            curves, r);
  r.details += fmt::format("\nFinal validation loss (mean [95% interval] over the seeds; a diverged run counts as ln 256). "
                           "{} steps, linear warm-up of {} steps or none, then the constant lr 2e-3; d 64, FFN 128, 4 "
                           "heads, fortunes.\n", N, W);
  r.measured = fmt::format("{} layers, Xavier: Post-LN without / with warm-up {}, Pre-LN without / Post-LN with {}. "
                           "N(0, 0.02): {} and {}",
                           L, show(r.measures[0].interval, 2), show(r.measures[1].interval, 2),
                           show(r.measures[2].interval, 2), show(r.measures[3].interval, 2));
  if (ctx.quick) r.setting = fmt::format("quick: {} layers, {} steps, warm-up {}", L, N, W);
  r.verdict = verdict_of(r.measures);
  return r;
}

ClaimResult claim_c9(const ClaimContext& ctx) {
  ClaimResult r;
  r.seeds = ctx.seeds;
  const std::vector<int> depths = ctx.quick ? std::vector<int>{6, 12} : std::vector<int>{6, 18, 36};
  const int N = ctx.quick ? 50 : 400;
  std::string depth_axis = "model.n_layers=";
  for (int d : depths) depth_axis += std::to_string(d) + (d == depths.back() ? "" : ",");
  const std::vector<std::string> fixed{"model.d_ff=128", "model.n_heads=2", "model.norm.placement=post", "train.lr=1e-3",
                                       fmt::format("train.steps={}", N), fmt::format("train.eval_every={}", N / 4),
                                       fmt::format("train.eval_batches={}", ctx.eval_batches(10)), "train.stats_every=0"};
  // DeepNorm keeps its own init (Xavier with beta) whatever model.init says: one set of its runs serves both
  const auto both = sweep_runs(
      ctx, {{"depths", config_path("lm-tiny.json"), fixed,
             {"model.norm.type=layernorm,deepnorm", "model.init=xavier", depth_axis, ctx.seeds_axis()}},
            {"depths-small-init", config_path("lm-tiny.json"), fixed,
             {"model.norm.type=layernorm", "model.init=normal", depth_axis, ctx.seeds_axis()}}});
  const auto &runs = both[0], &small = both[1];
  auto losses = [&](const std::vector<RunRecord>& set, const char* norm, int depth) {
    return final_losses(select(set, {{"model.norm.type", norm}, {"model.n_layers", std::to_string(depth)}}));
  };
  const std::size_t S = ctx.seeds.size();
  std::vector<double> best_ratio(S, 0.0), worst_growth(S, 0.0), best_ratio_small(S, 0.0);
  Curve post_c{"Post-LN (Xavier)", {}, {}}, deep_c{"DeepNorm", {}, {}}, small_c{"Post-LN, N(0, 0.02)", {}, {}};
  r.details = "| depth | Post-LN (Xavier) | DeepNorm | Post-LN / DeepNorm | Post-LN, N(0, 0.02) |\n|---|---|---|---|---|\n";
  std::vector<double> prev_deep;
  for (int d : depths) {
    const auto post = losses(runs, "layernorm", d), deep = losses(runs, "deepnorm", d), post_small = losses(small, "layernorm", d);
    const auto rt = ratio(post, deep), rt_small = ratio(post_small, deep);
    for (std::size_t s = 0; s < S; ++s) {
      best_ratio[s] = std::max(best_ratio[s], rt[s]);
      best_ratio_small[s] = std::max(best_ratio_small[s], rt_small[s]);
      if (!prev_deep.empty()) worst_growth[s] = std::max(worst_growth[s], deep[s] / prev_deep[s]);
    }
    prev_deep = deep;
    r.measures.push_back(in_group(measure_at_least(fmt::format("{} layers: Post-LN / DeepNorm final loss", d), rt, 1.2),
                                  "per depth (Xavier)"));
    post_c.points.emplace_back(d, mean_interval(post).mean);
    deep_c.points.emplace_back(d, mean_interval(deep).mean);
    small_c.points.emplace_back(d, mean_interval(post_small).mean);
    r.details += fmt::format("| {} | {} | {} | {} | {} |\n", d, show(mean_interval(post), 3), show(mean_interval(deep), 3),
                             show(mean_interval(rt), 2), show(mean_interval(post_small), 3));
  }
  r.measures.insert(r.measures.begin(),
                    {measure_at_least("largest Post-LN / DeepNorm final loss over the depths", best_ratio, 1.2),
                     measure_at_most("largest DeepNorm loss ratio from one depth to the next", worst_growth, 1.03),
                     in_group(measure_at_least("largest Post-LN / DeepNorm final loss over the depths", best_ratio_small,
                                               1.2),
                              kSmallInit)});
  plot_into(ctx, "loss-vs-depth",
            {.title = fmt::format("C9: final validation loss against depth (lr 1e-3, no warm-up, {} steps)", N),
             .xlabel = "layers", .ylabel = "final validation loss"},
            {post_c, deep_c, small_c}, r);
  std::string smallest = "none";
  for (const Measure& m : r.measures)
    if (m.group == "per depth (Xavier)" && m.verdict == ClaimVerdict::pass) {
      smallest = m.name.substr(0, m.name.find(' '));
      break;
    }
  r.measured = fmt::format("largest Post-LN / DeepNorm loss over depths {} (smallest depth whose interval passes 1.2: "
                           "{}); DeepNorm's worst growth from one depth to the next {}; N(0, 0.02) Post-LN: {}",
                           show(r.measures[0].interval, 2), smallest, show(r.measures[1].interval, 3),
                           show(r.measures[2].interval, 2));
  r.details += fmt::format("\nFinal validation loss, mean [95% interval] over the seeds (a diverged run counts as ln 256). "
                           "{} steps, d 64, FFN 128, 2 heads, Adam 1e-3, no warm-up, fortunes; DeepNorm alpha = "
                           "(2N)^(1/4), beta = (8N)^(-1/4), its own init.\n", N);
  if (ctx.quick) r.setting = fmt::format("quick: depths 6 and 12, {} steps", N);
  r.verdict = verdict_of(r.measures);
  return r;
}

}  // namespace nt
