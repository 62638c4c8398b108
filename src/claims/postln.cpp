// The Post-LN claims: C7 (gradients at init), C8 (warm-up), C9 (deep Post-LN against DeepNorm),
// C10 (the early model update).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <numeric>

#include "claims/claim.h"
#include "claims/evidence.h"
#include "io/paths.h"
#include "sweep/sweep.h"
#include "train/session.h"

namespace nt {

ClaimResult claim_c7(const ClaimContext& ctx) {
  ClaimResult r;
  const int L = 12, batches = 20;
  std::vector<Curve> curves;
  double rho = NAN, last_first = NAN, pre_ratio = NAN;  // computed below
  r.details = "| layer | Post-LN ||grad W2|| | Pre-LN ||grad W2|| |\n|---|---|---|\n";
  std::vector<std::vector<double>> norms;
  for (const char* placement : {"post", "pre"}) {
    Session run(session_config("lm-tiny.json", {fmt::format("model.n_layers={}", L),
                                                std::string("model.norm.placement=") + placement, "model.init_std=0.125"}));
    ParamStore<float>& ps = run.params();
    std::vector<double> sum(ps.numel(), 0.0);
    for (int b = 0; b < batches; ++b) {
      run.next_batch();
      run.forward_backward(run.batch());
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
  const auto& post = norms[0];
  std::vector<double> layers(L);
  std::iota(layers.begin(), layers.end(), 0.0);
  rho = spearman(layers, post);
  last_first = post[L - 1] / post[0];
  const auto [lo, hi] = std::minmax_element(norms[1].begin(), norms[1].end());
  pre_ratio = *hi / *lo;
  for (int l = 0; l < L; ++l) r.details += fmt::format("| {} | {:.4g} | {:.4g} |\n", l, norms[0][l], norms[1][l]);
  r.details += fmt::format("\nThe FFN's second matrix of each block (W^2 in Xiong et al.), Frobenius norm of the gradient "
                           "averaged over {} batches of fortunes (16 x 64), at init: {} layers, d 64, weights N(0, 1/d).\n",
                           batches, L);
  plot_into(ctx, "grad-norms",
                                     {.title = "C7: gradient norm of each block's W2 at init", .xlabel = "layer",
                                      .ylabel = "||mean gradient of W2||", .logy = true},
                                     curves, r);
  r.measured = fmt::format("Post-LN: rho {:.2f}, last/first {:.2f}; Pre-LN max/min {:.2f}", rho, last_first, pre_ratio);
  r.verdict = verdict_of(rho >= 0.8 && last_first >= 2 && pre_ratio <= 2);
  return r;
}

ClaimResult claim_c8(const ClaimContext& ctx) {
  ClaimResult r;
  const int N = ctx.quick ? 300 : 1500, W = ctx.quick ? 100 : 500;
  // constant after the warm-up, so that the runs differ only by the warm-up (experiment README: why not inverse_sqrt)
  const std::vector<std::string> fixed{"model.n_layers=6", "model.d_ff=128", "train.beta2=0.98", "train.lr=2e-3",
                                       "train.schedule=constant", fmt::format("train.steps={}", N),
                                       fmt::format("train.eval_every={}", N / 10), "train.eval_batches=10",
                                       "train.stats_every=0"};
  const auto post = sweep_runs(ctx, "post", config_path("lm-tiny.json"), fixed,
                               {"model.norm.placement=post", fmt::format("train.warmup_steps=0,{}", W), ctx.seeds_axis()});
  const auto pre = sweep_runs(ctx, "pre", config_path("lm-tiny.json"), fixed,
                              {"model.norm.placement=pre", "train.warmup_steps=0", ctx.seeds_axis()});
  const auto post0 = select(post, {{"train.warmup_steps", "0"}}), postw = select(post, {{"train.warmup_steps", std::to_string(W)}});
  const auto pre0 = select(pre, {});
  bool post0_diverged = false;
  for (const RunRecord* run : post0) post0_diverged |= run->summary.value("diverged", false);
  const double l_post0 = mean_of(post0, "final_val_loss"), l_postw = mean_of(postw, "final_val_loss"),
               l_pre0 = mean_of(pre0, "final_val_loss");
  plot_into(ctx, "val-loss",
            {.title = fmt::format("C8: 6-layer transformer, Adam lr 2e-3, warm-up 0 vs {}", W), .ylabel = "validation loss"},
            {mean_curve("Post-LN, no warm-up", post0, &RunRecord::val_loss),
             mean_curve(fmt::format("Post-LN, warm-up {}", W), postw, &RunRecord::val_loss),
             mean_curve("Pre-LN, no warm-up", pre0, &RunRecord::val_loss)},
            r);
  r.measured = fmt::format("final val loss: Post-LN no warm-up {:.3f}{}, Post-LN warm-up {:.3f} (ratio {:.2f}); Pre-LN no "
                           "warm-up {:.3f} (ratio to Post-LN warm-up {:.2f})", l_post0, post0_diverged ? " (diverged)" : "",
                           l_postw, l_post0 / l_postw, l_pre0, l_pre0 / l_postw);
  r.details += fmt::format("\n{} steps, linear warm-up of {} steps (or none), then the constant lr 2e-3; Adam (0.9, 0.98), "
                           "6 layers, d 64, FFN 128, 4 heads, fortunes.\n", N, W);
  r.verdict = verdict_of((post0_diverged || l_post0 >= 1.2 * l_postw) && l_pre0 <= 1.05 * l_postw);
  return r;
}

ClaimResult claim_c9(const ClaimContext& ctx) {
  ClaimResult r;
  const std::string depths = ctx.quick ? "6,12,18" : "6,18,36";
  const int N = ctx.quick ? 150 : 300;
  const auto runs = sweep_runs(ctx, "depths", config_path("lm-tiny.json"),
                               {"model.d_ff=128", "model.n_heads=2", "model.norm.placement=post", "train.lr=1e-3",
                                fmt::format("train.steps={}", N), fmt::format("train.eval_every={}", N / 6),
                                "train.eval_batches=10", "train.stats_every=0"},
                               {"model.norm.type=layernorm,deepnorm", "model.n_layers=" + depths, ctx.seeds_axis()});
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
  plot_into(ctx, "loss-vs-depth",
                                     {.title = "C9: final validation loss against depth (lr 1e-3, no warm-up)",
                                      .xlabel = "layers", .ylabel = "final validation loss"},
                                     {post_c, deep_c}, r);
  r.measured = fmt::format("smallest depth with Post-LN >= 1.2x DeepNorm: {}; DeepNorm non-increasing in depth: {}",
                           smallest < 0 ? std::string("none") : std::to_string(smallest), monotone ? "yes" : "no");
  r.details += fmt::format("\n{} steps, d 64, FFN 128, 2 heads, Adam 1e-3, no warm-up, fortunes; DeepNorm alpha = (2N)^(1/4), "
                           "beta = (8N)^(-1/4).\n", N);
  r.verdict = verdict_of(smallest > 0 && monotone);
  return r;
}

ClaimResult claim_c10(const ClaimContext& ctx) {
  ClaimResult r;
  const int steps = ctx.quick ? 60 : 200;
  const std::vector<int> depths = ctx.quick ? std::vector<int>{6, 12} : std::vector<int>{6, 18};
  std::map<std::pair<std::string, int>, double> peak;
  std::vector<Curve> curves;
  r.details = "| depth | model | max update, t <= 50 | update at the last step | LN input ||x||/sqrt(d), t = 0 -> last |\n"
              "|---|---|---|---|---|\n";
  for (int depth : depths)
    for (const char* norm : {"layernorm", "deepnorm"}) {
      const RunConfig c = session_config(
          "lm-tiny.json",
          {fmt::format("model.n_layers={}", depth), "model.d_ff=128", "model.n_heads=2", "model.norm.placement=post",
           std::string("model.norm.type=") + norm, "train.lr=1e-3"});
      Session run(c);
      Model* model = &run.model();
      Graph<float> probe_graph(false, false);
      Batch probe;
      run.data().val_batch(0, c.train.batch_size, probe);  // the fixed probe batch
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
  plot_into(ctx, "model-update",
                                     {.title = fmt::format("C10: ||F(x, theta_t) - F(x, theta_0)|| per token, {} layers",
                                                           depths[1]),
                                      .ylabel = "model update", .logy = true},
                                     curves, r);
  r.measured = fmt::format("max update over t <= 50, Post-LN / DeepNorm: {:.2f} at {} layers, {:.2f} at {} layers", small,
                           depths[0], large, depths[1]);
  r.details += fmt::format("\nF = the final hidden states (the last block's output) on a fixed validation batch (16 x 64), "
                           "after each of {} Adam steps (lr 1e-3, no warm-up); d 64, FFN 128, 2 heads; seed 1.\n", steps);
  r.verdict = verdict_of(large >= 3 && large > small);
  return r;
}

}  // namespace nt
