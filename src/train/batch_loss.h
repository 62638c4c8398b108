// A model's loss on a batch: the forward pass to the mean cross-entropy over the counted
// targets, what a training step differentiates and an evaluation sums.
#pragma once
#include <cstdint>

#include "core/graph.h"
#include "data/dataset.h"
#include "model/model.h"

namespace nt {

struct BatchLoss {
  Tensor<float> loss;   // (1, 1), mean over the counted targets
  int64_t correct = 0;  // classifier: rows whose arg-max logit is the label
  bool overflow = false;  // fp16: a gradient overflowed (inf or NaN); gradients left scaled
};

// Forward pass on g (in g's mode) to the mean cross-entropy of the batch, padded targets left
// out; count_correct: also the targets whose arg-max logit is right.
BatchLoss forward_loss(Graph<float>& g, Model& model, const Batch& batch, bool count_correct);

// The targets the loss averages over: the mask's non-zero entries on a padded batch, else every one.
int64_t counted_targets(const Batch& batch);

}  // namespace nt
