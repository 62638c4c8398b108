#include "train/step.h"

#include <algorithm>

#include "ops/ops.h"

namespace nt {

BatchLoss forward_loss(Graph<float>& g, Model& model, const Batch& batch, bool count_correct) {
  Tensor<float> logits = model.logits(g, batch);
  const Tensor<float> weight =
      batch.padded ? Tensor<float>{const_cast<float*>(batch.mask.data()), nullptr, int(batch.mask.size()), 1}
                   : Tensor<float>{};
  BatchLoss r{cross_entropy(g, logits, batch.targets.data(), weight)};
  if (count_correct)
    for (int n = 0; n < logits.rows; ++n) {
      const float* row = logits.data + int64_t(n) * logits.cols;
      r.correct += int(std::max_element(row, row + logits.cols) - row) == batch.targets[n];
    }
  return r;
}

BatchLoss forward_backward(Graph<float>& g, Model& model, const Batch& batch, bool count_correct) {
  model.params().zero_grad();
  g.reset();
  g.set_mode(/*training=*/true, /*grad=*/true);
  BatchLoss r = forward_loss(g, model, batch, count_correct);
  g.backward(r.loss);
  return r;
}

}  // namespace nt
