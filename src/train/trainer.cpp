#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>

#include "io/plot.h"
#include "io/run_plots.h"
#include "train/checkpoint.h"
#include "train/interrupt.h"
#include "train/run_summary.h"
#include "train/schedule.h"
#include "train/step_statistics.h"

namespace nt {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// The run as the loop advances it: its records, the checkpoints it wrote, and what each writes to
// the run directory (metrics.jsonl lines, summary.json, checkpoint.bin, the console).
class Run {
 public:
  Run(const RunConfig& c, Session& session, RunFiles& files, Progress& progress, RunRecords records)
      : c_(c), session_(session), files_(files), progress_(progress), records_(std::move(records)),
        config_json_(config_to_json(c)), wall_before_(records_.wall_s) {
    records_.step_ms.reserve(std::min(c.train.steps, 1 << 16));
    records_.recent_losses.reserve(c.train.log_every + 1);
  }

  bool diverged() const { return diverged_; }

  json summary(const std::string& status) const {
    return run_summary(c_, status, session_, records_, diverged_, elapsed_s(), checkpoints_);
  }
  void write_summary() { files_.write_summary(summary("running")); }

  // checkpoint.bin with the logs as they stood at `top`, the top of the step
  void checkpoint(const LogSizes& top) {
    records_.wall_s = elapsed_s();  // saved with the records: the wall time of the parts before a resume
    const CheckpointWrite w = save_checkpoint(files_.dir(), config_json_, session_, records_, top);
    records_.wall_s = wall_before_;
    ++checkpoints_.written;
    checkpoints_.ms += w.ms;
    checkpoints_.bytes = w.bytes;
    checkpoints_.step = session_.steps_done();
  }

  // The validation loss before `step`'s update: its metrics line, the summary, the console.
  void evaluate(int step) {
    const Evaluation e = session_.evaluate();
    if (interrupt_requested()) return;
    const bool lm = !session_.data().reports_accuracy();  // lines without "acc"
    records_.add_validation(step, e.loss);
    json line = {{"step", step}, {"split", "val"}, {"loss", number_or_null(e.loss)},
                 {"lr", learning_rate(c_.train, std::min(step, c_.train.steps - 1))}, {"grad_norm", nullptr},
                 {"step_ms", nullptr}, {"elapsed_s", elapsed_s()}};
    if (!lm) line["acc"] = records_.last_val_acc = e.acc;
    files_.metric(line);
    if (step < c_.train.steps) redraw_pictures_when_due();  // the last evaluation's come with finish()
    write_summary();
    progress_.message(lm ? fmt::format("{} step {}: val loss {:.4f}", c_.name, step, e.loss)
                         : fmt::format("{} step {}: val loss {:.4f}, acc {:.4f}", c_.name, step, e.loss, e.acc));
  }

  // A training step done: its records, and its metrics line every log_every steps, at the last
  // step, and for every diverged or skipped step (fp16: a gradient overflowed at this loss scale).
  void record(int step, const StepResult& r) {
    const TrainConfig& tr = c_.train;
    records_.add_step(r.ms, r.loss, tr.log_every);
    if (step % tr.log_every == 0 || step == tr.steps - 1 || r.diverged || r.skipped) {
      json line = {{"step", step}, {"split", "train"}, {"loss", number_or_null(r.loss)}, {"lr", r.lr},
                   {"grad_norm", number_or_null(r.grad_norm)},
                   {"step_ms", records_.ms_since_log / records_.steps_since_log}, {"elapsed_s", elapsed_s()}};
      if (session_.data().reports_accuracy())  // the share of the targets the loss counts
        line["acc"] = double(r.correct) / double(counted_targets(session_.batch()));
      if (session_.loss_scaler().enabled()) line["loss_scale"] = r.loss_scale;
      if (r.skipped) line["skipped"] = true;
      files_.metric(line);
      write_summary();
      records_.train_curve.emplace_back(double(step), r.loss);
      records_.start_log_interval();
    }
    progress_.step(step, r.loss, double(records_.step_ms.size()) / records_.train_s);
    if (r.diverged) {
      diverged_ = true;
      progress_.message(fmt::format("{} diverged at step {}: loss {}", c_.name, step, r.loss));
    }
  }

  // Redraws the pictures when train.pictures_every_s have passed since the last drawing, so that
  // index.html shows them while the run trains (a drawing is a few gnuplot processes)
  void redraw_pictures_when_due() {
    if (std::chrono::duration<double>(Clock::now() - last_drawn_).count() >= c_.train.pictures_every_s)
      draw_pictures();
  }

  // The final summary (and the pictures): completed (exit 0), diverged (1) or interrupted (130).
  TrainOutcome finish() {
    const bool interrupted = interrupt_requested();
    json s = summary(interrupted ? "interrupted" : diverged_ ? "diverged" : "completed");
    if (const std::string note = draw_pictures(); !note.empty()) {
      s["plot"] = note;
      progress_.message(note);
    }
    files_.write_summary(s);
    return {s, interrupted ? 130 : diverged_ ? 1 : 0, ""};
  }

  // A write refused (a full disk), or a failure of normtool's own: status failed, exit 1.
  TrainOutcome fail(const std::exception& e) {
    progress_.done();
    files_.release_reserve();
    json s = summary("failed");
    s["error"] = e.what();
    try {
      files_.write_summary(s);
    } catch (const std::exception&) {  // the previous summary.json stays, whole
    }
    return {s, 1, e.what()};
  }

 private:
  // loss.png from the records, and stats.png, layers.png, ranges.png from the files as they stand
  // (io/run_plots.h); the notes of the pictures that could not be drawn, "" when all were
  std::string draw_pictures() {
    last_drawn_ = Clock::now();
    std::string note = plot_curves(files_.dir(), "loss", PlotStyle{.title = c_.name + ": loss"},
                                   {Curve{"train", records_.train_curve, {}},
                                    Curve{"validation", records_.val_curve, {}}});
    files_.flush_stats();
    if (const std::string more = plot_run_pictures(files_.dir()); !more.empty())
      note += (note.empty() ? "" : "; ") + more;
    return note;
  }

  double elapsed_s() const { return wall_before_ + std::chrono::duration<double>(Clock::now() - wall_start_).count(); }

  const RunConfig& c_;
  Session& session_;
  RunFiles& files_;
  Progress& progress_;
  RunRecords records_;
  const json config_json_;
  const Clock::time_point wall_start_ = Clock::now();
  const double wall_before_;  // the run's earlier parts, when resumed
  Clock::time_point last_drawn_ = wall_start_;
  CheckpointStats checkpoints_;
  bool diverged_ = false;
};

}  // namespace

TrainOutcome train(const RunConfig& c, Session& session, RunFiles& files, Progress& progress, RunRecords records) {
  const TrainConfig& tr = c.train;
  Run run(c, session, files, progress, std::move(records));
  StepStatistics statistics(session.params());
  try {
    run.write_summary();
    const int first_step = session.steps_done();
    LogSizes top;  // where the logs stood at the top of the step: what a checkpoint records
    for (int step = first_step; step < tr.steps; ++step) {
      top = files.sizes();
      if (interrupt_requested()) break;
      if (tr.checkpoint_every > 0 && step > first_step && step % tr.checkpoint_every == 0) run.checkpoint(top);
      if (step % tr.eval_every == 0) run.evaluate(step);
      if (interrupt_requested()) break;  // the checkpoint below cuts the evaluation's line off again
      // every stats_every steps and at the last, so that the pictures reach the end of the run
      const bool statistics_step = tr.stats_every > 0 && (step % tr.stats_every == 0 || step == tr.steps - 1);
      const auto inspect = [&] { statistics.before_update(step, session, files); };
      const StepResult r = statistics_step ? session.step(inspect) : session.step();
      if (statistics_step && !r.diverged) statistics.after_update(step, session.params(), files);
      run.record(step, r);
      if (r.diverged) break;
    }
    // every step ran (a stop during the last one included): the logs as they stand; a stop before
    // the end: the top of the step it came before; a divergence: no checkpoint
    const bool ran_all = session.steps_done() == tr.steps;
    if (!run.diverged() && (interrupt_requested() || ran_all)) run.checkpoint(ran_all ? files.sizes() : top);
    if (!run.diverged() && !interrupt_requested()) run.evaluate(session.steps_done());
    progress.done();
  } catch (const std::exception& e) {
    return run.fail(e);
  }
  return run.finish();
}

}  // namespace nt
