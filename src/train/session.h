// Session: one training run in memory. It owns the data, the model, the optimizer, the graph,
// the batch and the data stream, and step() is the update that `normtool run`, the golden tests,
// the benchmarks and the claims all execute:
//
//   step t:  batch <- the data stream (Rng(seed, 2)); a batch without a counted target (padded
//            rows of one byte, a masked LM that chose no position) is dropped, counted, and
//            another drawn: no loss of 0 is trained on, nor made the divergence baseline
//            zero grad, forward (training mode), loss, backward        -> loss, gradients
//            (train.parallel batch, 2+ threads: on shards of the batch's rows, train/shards.h)
//            train.precision bf16/fp16: the forward reads the weights rounded to the format, the
//            model rounds every value between ops (ops/cast.cpp), the gradients come back rounded;
//            the fp32 master weights take the update. fp16: backward from scale * loss, the
//            gradients unscaled; one that overflowed skips the step (train/loss_scale.h)
//            grad_norm = ||gradients||  (before clipping)
//            [inspect(): the caller reads activations and gradients; not timed. After a sharded
//             step the whole batch's forward runs again first, so that the model's sites are the batch's]
//            diverged = loss is NaN/inf or > 1e3 x the first step's loss -> stop, no update
//            clip to train.grad_clip, lr = schedule(t), optimizer update
//
// The records of a run (metrics, statistics, summary) are the trainer's (train/trainer.h).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

#include "config/config.h"
#include "core/graph.h"
#include "data/dataset.h"
#include "io/binary.h"
#include "model/model.h"
#include "train/batch_loss.h"
#include "train/loss_scale.h"
#include "train/optimizer.h"
#include "train/shards.h"

namespace nt {

struct StepResult {
  double loss = 0;        // the batch's mean loss
  double grad_norm = 0;   // global gradient norm before clipping
  double lr = 0;          // the scheduled learning rate of this step
  double ms = 0;          // wall time of the step, without inspect()
  int64_t correct = 0;    // classifier: rows predicted right
  bool diverged = false;  // no update was made
  bool skipped = false;   // fp16: a gradient overflowed at this loss scale; no update was made
  double loss_scale = 1;  // fp16: the scale the backward ran at (else 1)
};

struct Evaluation {
  double loss = 0;        // mean over every counted target of the evaluation rows
  double acc = 0;         // classifier: share of rows predicted right
  int64_t targets = 0;
};

class Session {
 public:
  // Loads the dataset the config names (a DataError when it cannot), builds the model with its
  // init, sets the math threads. Checks that the validation split holds one batch, and that the
  // batches an evaluation reads hold a target (a DataError naming them when not).
  explicit Session(const RunConfig& config);
  Session(const RunConfig& config, std::shared_ptr<const Dataset> data);

  // The next batch from the data stream, then step_on it.
  StepResult step(const std::function<void()>& inspect = {});
  // One step on `batch` (the golden tests feed fixed batches through here); std::invalid_argument
  // for a batch without a counted target.
  StepResult step_on(const Batch& batch, const std::function<void()>& inspect = {});

  // Pieces of a step, for experiments that probe the model between steps.
  void next_batch();                                   // the stream's next batch with a target into batch()
  // Training mode; gradients (unscaled, unless overflow) in params().grad().
  BatchLoss forward_backward(const Batch& batch);
  BatchLoss forward(const Batch& batch, bool training);  // no gradient (batchnorm: batch statistics when training)
  // The logits of `batch` (rows x classes, row-major) from the same pass as forward()
  std::vector<float> logits(const Batch& batch, bool training);
  void update(double lr);                              // clip, then one optimizer step with this lr

  // Everything the next step depends on beyond the config: the step count and first loss, the
  // data stream's position and the batches it dropped without a target, the parameters, the
  // optimizer's moments and step count, BatchNorm's running statistics, fp16's loss scale
  // (train/checkpoint.h frames it). load_state throws std::exception on a stream that does not
  // hold this session's shapes.
  void save_state(ByteWriter& w);
  void load_state(ByteReader& r);

  // Eval mode over the validation batches (eval_batches()); they hold a target (the constructor checks).
  Evaluation evaluate();

  const RunConfig& config() const { return config_; }
  const Dataset& data() const { return *data_; }
  Model& model() { return *model_; }
  ParamStore<float>& params() { return model_->params(); }
  const Batch& batch() const { return batch_; }
  int steps_done() const { return t_; }   // optimizer updates so far
  int64_t batches_without_target() const { return batches_without_target_; }  // drawn and dropped so far
  int threads() const { return threads_; }
  int shards() const { return shards_ ? shards_->count() : 1; }  // a step's data-parallel shards (1: the whole batch)
  int eval_batches() const { return eval_batches_; }  // train.eval_batches, capped by the split
  const LossScaler& loss_scaler() const { return scaler_; }

 private:
  BatchLoss forward_backward(const Batch& batch, bool sharded);

  RunConfig config_;
  std::shared_ptr<const Dataset> data_;
  int threads_;
  int eval_batches_;
  std::unique_ptr<Model> model_;
  OptimizerState optimizer_;
  LossScaler scaler_;
  std::vector<float> master_;  // bf16/fp16: the fp32 weights while the forward reads rounded ones
  Graph<float> graph_;
  std::unique_ptr<Shards> shards_;  // train.parallel batch at 2 threads or more (train/shards.h)
  Batch batch_, eval_batch_;
  Rng rng_;
  int t_ = 0;
  double first_loss_ = 0;
  int64_t batches_without_target_ = 0;
};

}  // namespace nt
