// Shards: a data-parallel training step (train.parallel = batch), for two math threads or more.
//
// The batch's rows are cut into P shards of consecutive rows (P = the math threads, at most one
// shard a row). Thread s runs the forward and backward of shard s on its own copy of the model
// (shard 0 on the session's), with one math thread inside: no op waits for another thread, which
// a step of a thousand small parallel regions otherwise does. Shard s's loss is the mean over its
// counted targets; its backward starts from n_s / n (n: the batch's counted targets, never 0), so
// the shards' gradients, added in shard order, are the gradient of the batch's mean loss. A shard
// without a target (its rows all padding, or no position chosen) weighs 0 and adds gradients of 0.
//
// The same bits from run to run at a thread count, but not across thread counts: the sums over
// the batch's rows run in another order (train.parallel = ops keeps them). Not for a model with
// statistics across the batch's rows (batchnorm).
#pragma once
#include <exception>
#include <memory>
#include <vector>

#include "config/config.h"
#include "train/batch_loss.h"

namespace nt {

// Whether a run of this config takes data-parallel steps at `threads` math threads.
bool shards_apply(const RunConfig& c, int threads);

class Shards {
 public:
  // count >= 2 shards; the copies of the model are built here (their values are copied in each step).
  Shards(const RunConfig& c, const Dataset& data, int count);
  int count() const { return int(rows_.size()); }

  // Zeroes, then fills model.params().grad() with the gradient of the batch's mean loss times
  // loss_scale; returns that loss (its tensor in shard 0's graph holds the batch's mean) and the
  // correct targets. model and graph are the session's (shard 0).
  BatchLoss forward_backward(Model& model, Graph<float>& graph, const Batch& batch, float loss_scale,
                             bool count_correct);

 private:
  struct Replica {
    std::unique_ptr<Model> model;
    Graph<float> graph;
  };
  std::vector<Replica> replicas_;      // shards 1 .. count - 1
  std::vector<Batch> rows_;            // each shard's rows
  std::vector<BatchLoss> losses_;      // each shard's
  std::vector<int64_t> counted_;       // each shard's counted targets
  std::vector<std::exception_ptr> errors_;
};

}  // namespace nt
