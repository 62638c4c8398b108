#include "train/batch_loss.h"

#include <algorithm>

#include "ops/ops.h"

namespace nt {

BatchLoss forward_loss(Graph<float>& g, Model& model, const Batch& batch, bool count_correct) {
  Tensor<float> logits = model.logits(g, batch);
  const Tensor<float> weight =
      batch.padded ? Tensor<float>{const_cast<float*>(batch.mask.data()), nullptr, int(batch.mask.size()), 1}
                   : Tensor<float>{};
  BatchLoss r{cross_entropy(g, logits, batch.targets.data(), weight)};
  if (count_correct)  // classification: every row; seq2seq: the target positions the mask counts
    for (int n = 0; n < logits.rows; ++n) {
      if (batch.padded && batch.mask[n] == 0.0f) continue;  // a target the loss does not count
      const float* row = logits.data + int64_t(n) * logits.cols;
      r.correct += int(std::max_element(row, row + logits.cols) - row) == batch.targets[n];
    }
  return r;
}

int64_t counted_targets(const Batch& batch) {
  return batch.padded ? batch.real_targets() : int64_t(batch.targets.size());
}

}  // namespace nt
