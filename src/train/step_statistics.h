// What a statistics step (every train.stats_every) records. Before the update, from the step's
// training forward: each norm site's per-position statistics (stats.csv, ranges.csv;
// train/site_stats.h) and each parameter's gradient norm. After it: each parameter's gradient,
// weight and update norms (layers.jsonl). Buffers sized once, outside the loop.
#pragma once
#include <vector>

#include "io/run_files.h"
#include "train/session.h"
#include "train/site_stats.h"

namespace nt {

class StepStatistics {
 public:
  explicit StepStatistics(const ParamStore<float>& params);
  void before_update(int step, Session& session, RunFiles& files);
  void after_update(int step, const ParamStore<float>& params, RunFiles& files);

 private:
  std::vector<float> before_update_;  // the weights before the update
  std::vector<double> grad_norms_;    // per parameter
  std::vector<double> logit_max_;     // per parameter: attn_logit_max on a query weight's line, else NaN
  std::vector<AttentionLogits> logits_;
  std::vector<double> mean_, std_;    // per position
  RangeStats ranges_;
};

}  // namespace nt
