// The BatchNorm claims on the fashion-mnist MLP: C4 (BN degrades at small batches), C5 (BN
// differs between training and inference), C11 (BN smooths the loss landscape).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "claims/claim.h"
#include "claims/evidence.h"
#include "io/paths.h"
#include "train/session.h"

namespace nt {

ClaimResult claim_c4(const ClaimContext& ctx) {
  ClaimResult r;
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
                                 {"model.norm.type=batchnorm,layernorm", ctx.seeds_axis()});
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
  plot_into(ctx, "error-vs-batch",
                                     {.title = "C4: fashion-mnist MLP, validation error after equal epochs",
                                      .xlabel = "batch size", .ylabel = "validation error (%)", .logx = true},
                                     {curves["batchnorm"], curves["layernorm"]}, r);
  r.measured = fmt::format("error change from batch 32 to 2: BN {:+.2f} points, LN {:+.2f}", bn, ln);
  r.details += fmt::format("\n{} epoch(s) at every batch size, SGD with momentum 0.9 and lr 0.1 x batch/128, "
                           "evaluation on 2560 test images with BN's running statistics.\n", epochs);
  r.verdict = verdict_of(bn >= 3 && bn >= 3 * ln);
  return r;
}

ClaimResult claim_c5(const ClaimContext& ctx) {
  ClaimResult r;
  const int B = 4, eval_rows = 2560;
  const int steps = int((ctx.quick ? 0.25 : 1.0) * 60000 / B);
  r.details = "| norm | eval-mode accuracy | train-mode accuracy | gap (points) |\n|---|---|---|---|\n";
  double gap[2] = {0, 0};
  int k = 0;
  for (const char* norm : {"batchnorm", "layernorm"}) {
    Session run(session_config("mlp-fmnist.json", {fmt::format("train.batch_size={}", B),
                                                   fmt::format("train.lr={}", 0.1 * B / 128),
                                                   std::string("model.norm.type=") + norm}));
    for (int s = 0; s < steps; ++s) run.step();
    double acc[2] = {0, 0};  // eval mode (running statistics), then train mode (batch statistics)
    for (int mode = 0; mode < 2; ++mode) {
      int64_t correct = 0;
      Batch batch;
      for (int i = 0; i < eval_rows / B; ++i) {
        run.data().val_batch(i, B, batch);
        correct += run.forward(batch, /*training=*/mode == 1).correct;
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
  r.verdict = verdict_of(gap[0] >= 1 && std::abs(gap[1]) < 0.1);
  return r;
}

ClaimResult claim_c11(const ClaimContext& ctx) {
  ClaimResult r;
  const int steps = ctx.quick ? 300 : 1000, every = 50;
  double median_change[2] = {0, 0};
  std::vector<Curve> curves;
  int k = 0;
  for (const char* norm : {"none", "batchnorm"}) {
    const RunConfig c = session_config("mlp-fmnist.json", {std::string("model.norm.type=") + norm});
    Session run(c);
    ParamStore<float>& ps = run.params();
    std::vector<float> theta(ps.numel()), g0(ps.numel());
    std::vector<double> changes;
    Curve curve{norm, {}, {}};
    for (int t = 0; t < steps; ++t) {
      run.next_batch();
      run.forward_backward(run.batch());
      if (t % every == 0) {  // probe along the gradient, on the same batch, then restore
        std::copy_n(ps.data(), ps.numel(), theta.begin());
        std::copy_n(ps.grad(), ps.numel(), g0.begin());
        double worst = 0;
        for (double eta : {0.5, 1.0, 2.0, 4.0}) {
          for (std::size_t i = 0; i < ps.numel(); ++i) ps.data()[i] = theta[i] - float(eta * c.train.lr) * g0[i];
          run.forward_backward(run.batch());
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
    median_change[k++] = median(changes);
    curves.push_back(curve);
  }
  plot_into(ctx, "gradient-change",
            {.title = "C11: max over eta of ||grad(theta - eta g) - g|| at probe steps", .ylabel = "gradient change",
             .logy = true},
            curves, r);
  r.measured = fmt::format("median gradient change along the step: none {:.3g}, BN {:.3g} (none/BN = {:.2f})",
                           median_change[0], median_change[1], median_change[0] / median_change[1]);
  r.details += fmt::format("\nThe fashion-mnist MLP (4 x 256 ReLU, SGD 0.1 momentum 0.9, batch 128), {} steps; every {} "
                           "steps the gradient g on the step's batch, and the gradient on the same batch after moving "
                           "eta lr g against it, eta in 0.5, 1, 2, 4; seed 1.\n", steps, every);
  r.verdict = verdict_of(median_change[0] >= 3 * median_change[1]);
  return r;
}

}  // namespace nt
