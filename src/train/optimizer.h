// Optimizers over the flat parameter buffer (PyTorch's update rules, so runs compare):
//   sgd    d = g + wd p;  buf = momentum buf + d;  p -= lr buf
//   adam   g += wd p (L2);  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
//          p -= (lr / (1 - b1^t)) m / (sqrt(v) / sqrt(1 - b2^t) + eps)
//   adamw  p *= 1 - lr wd (decoupled), then adam without the L2 term
// plus global-norm clipping (the learning rate comes from schedule.h).
#pragma once
#include <cstddef>
#include <vector>

#include "config/config.h"
#include "io/binary.h"

namespace nt {

class OptimizerState {
 public:
  OptimizerState(const TrainConfig& config, std::size_t n);
  void step(float* p, const float* g, double lr);  // one update of all n parameters

  // The moments and the step count (train/checkpoint.h).
  void save(ByteWriter& w) const;
  void load(ByteReader& r);

 private:
  TrainConfig c_;
  std::vector<float> m_, v_;  // sgd uses m_ as the momentum buffer
  int t_ = 0;
};

// sqrt(sum g^2) over n values.
double global_norm(const float* g, std::size_t n);

// Scales g by max_norm / (norm + 1e-6) when that is below 1 (torch.nn.utils.clip_grad_norm_).
void clip_to_norm(float* g, std::size_t n, double norm, double max_norm);

}  // namespace nt
