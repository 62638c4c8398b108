// The learning rate at step t (from 0), with w = warmup_steps, T = steps:
//   t < w   lr * t / w                       (linear warm-up from 0: step 0 has lr 0)
//   then, with p = (t - w) / max(1, T - w):
//   constant      lr
//   linear        lr (1 - p)
//   cosine        lr (1 + cos(pi p)) / 2
//   inverse_sqrt  lr sqrt(max(1, w) / max(t, w, 1))
#pragma once
#include "config/config.h"

namespace nt {

double learning_rate(const TrainConfig& config, int t);

}  // namespace nt
