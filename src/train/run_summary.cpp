#include "train/run_summary.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/gemm.h"
#include "io/console.h"
#include "train/memory.h"

namespace nt {

using json = nlohmann::json;

namespace {

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

}  // namespace

json run_summary(const RunConfig& c, const std::string& status, Session& session, const RunRecords& r, bool diverged,
                 double wall_s, const CheckpointStats& checkpoints) {
  const Dataset& data = session.data();
  const int steps_completed = session.steps_done();
  const double steps_per_s = r.train_s > 0 ? double(steps_completed) / r.train_s : NAN;
  json s = {{"name", c.name}, {"status", status}, {"steps_completed", steps_completed},
            {"final_train_loss", number_or_null(r.mean_recent_loss())}, {"final_val_loss", number_or_null(r.last_val)},
            {"best_val_loss", number_or_null(r.best_val)}, {"diverged", diverged}, {"wall_s", wall_s},
            {"train_s", r.train_s}, {"steps_per_s", number_or_null(steps_per_s)},
            {"tokens_per_s", number_or_null(steps_per_s * c.train.batch_size * (data.is_lm() ? c.data.seq_len : 1))},
            {"step_ms_mean", number_or_null(r.step_ms.empty() ? NAN : r.train_s * 1e3 / double(r.step_ms.size()))},
            {"step_ms_median", number_or_null(status == "running" ? NAN : median(r.step_ms))}, {"impl", "normtool"},
            {"version", NORMTOOL_VERSION}, {"threads", session.threads()}, {"shards", session.shards()},
            {"gemm_kernels", gemm_backend()}, {"params", session.params().parameter_count()},
            {"train_rows", data.train_rows()}, {"val_rows", data.val_rows()},
            {"memory_estimate_bytes", estimate_memory(c).total()}};
  if (data.reports_accuracy()) s["final_val_acc"] = number_or_null(r.last_val_acc);
  if (const CorpusFingerprint* f = data.fingerprint())  // seq2seq: which pairs, and how batches pad them
    s["data"] = {{"train_pairs", f->train_pairs}, {"val_pairs", f->val_pairs},
                 {"corpus_fnv1a64", fmt::format("{:016x}", f->hash)}, {"sources", f->sources},
                 {"mean_source_bytes", f->mean_source_bytes}, {"mean_target_bytes", f->mean_target_bytes},
                 {"padding", "right, byte 0, to the batch's longest source and longest target + 1; "
                             "padded positions out of the loss, the accuracy and the statistics"}};
  s["batches_without_target"] = session.batches_without_target();  // drawn again: padded or masked rows
  s["precision"] = to_string(c.train.precision);
  if (session.loss_scaler().enabled())
    s["loss_scale"] = {{"scale", session.loss_scaler().scale()}, {"skipped_steps", session.loss_scaler().skipped()}};
  if (r.resumes > 0) s["resumes"] = r.resumes;
  if (console_lost()) s["console_lost"] = true;  // a closed pipe or terminal: the run went on, its lines lost
  if (checkpoints.written > 0)
    s["checkpoint"] = {{"step", checkpoints.step}, {"bytes", checkpoints.bytes},
                       {"ms_mean", checkpoints.ms / checkpoints.written}, {"written", checkpoints.written}};
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  s["peak_rss_bytes"] = int64_t(usage.ru_maxrss) * 1024;
  return s;
}

}  // namespace nt
