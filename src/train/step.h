// The work of one training step on a batch, shared by the trainer, the tests and the
// benchmarks: the forward pass to the loss (padded targets left out), and the backward pass.
#pragma once
#include <cstdint>

#include "core/graph.h"
#include "data/dataset.h"
#include "model/model.h"

namespace nt {

struct BatchLoss {
  Tensor<float> loss;   // (1, 1), mean over the counted targets
  int64_t correct = 0;  // classifier: rows whose arg-max logit is the label
};

// Forward pass on g (in g's mode) to the mean cross-entropy of the batch.
BatchLoss forward_loss(Graph<float>& g, Model& model, const Batch& batch, bool count_correct);

// zero_grad, forward (training mode), loss, backward. The gradients are then in
// model.params().grad(); the graph keeps the activations until its next reset.
BatchLoss forward_backward(Graph<float>& g, Model& model, const Batch& batch, bool count_correct);

}  // namespace nt
