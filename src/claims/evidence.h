// Evidence for the training claims: run a sweep into the claim's directory, read its runs
// back (metrics.jsonl, stats.csv, summary.json), average over seeds, plot with seed bands.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "claims/claim.h"
#include "config/config.h"
#include "core/graph.h"
#include "data/dataset.h"
#include "model/model.h"
#include "train/optimizer.h"
#include "train/step.h"
#include "io/plot.h"
#include "sweep/sweep.h"

namespace nt {

struct RunRecord {
  std::string dir;
  std::map<std::string, std::string> overrides;  // the sweep job's
  nlohmann::json summary;
  std::vector<std::pair<int, double>> val_loss, val_acc, train_loss;  // (step, value)
};

// Runs `axes` over `config` with `fixed` overrides into <ctx.out>/<name> (resumable) and
// reads every job back. Throws when a job failed to run.
std::vector<RunRecord> sweep_runs(const ClaimContext& ctx, const std::string& name, const std::string& config,
                                  const std::vector<std::string>& fixed, const std::vector<std::string>& axes);

// The runs whose overrides match all of `where` (key -> value).
std::vector<const RunRecord*> select(const std::vector<RunRecord>& runs, const std::map<std::string, std::string>& where);

// Mean over runs at each step every run has, with the min and max as the band.
Curve mean_curve(const std::string& title, const std::vector<const RunRecord*>& runs,
                 std::vector<std::pair<int, double>> RunRecord::*series);

// Mean of a summary field over runs (NaN where absent), and its values.
double mean_of(const std::vector<const RunRecord*>& runs, const char* field);

// stats.csv of a run: rows at the last logged step, (layer, site) -> mean and std per position.
struct PositionStats {
  std::vector<double> mean, std;
};
std::map<std::pair<int, std::string>, PositionStats> last_stats(const std::string& dir);

// "PNG file name" when the plot was drawn, else "" (the note goes to `details`).
std::string plot_into(const ClaimContext& ctx, const std::string& stem, const PlotStyle& style,
                      const std::vector<Curve>& curves, std::string& details);

// A model trained in this process, for the claims that probe it between steps: one math
// thread, the trainer's data stream (Rng(seed, 2)) and optimizer. step() is the trainer's
// step without clipping, schedule, evaluation or records.
struct InProcessRun {
  explicit InProcessRun(const RunConfig& c);
  void next_batch();                  // the next training batch into `batch`
  BatchLoss forward_backward();       // on `batch`; the gradients are then in model->params()
  void update(double lr);             // one optimizer step
  void step() { next_batch(), forward_backward(), update(config.train.lr); }
  ParamStore<float>& params() { return model->params(); }

  RunConfig config;
  std::unique_ptr<Dataset> data;
  std::unique_ptr<Model> model;
  OptimizerState optimizer;
  Graph<float> graph;
  Batch batch;
  Rng rng;
};

// The configs folder of the source tree.
std::string config_path(const std::string& name);

}  // namespace nt
