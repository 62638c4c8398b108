#include "train/schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace nt {

double learning_rate(const TrainConfig& c, int t) {
  const int w = c.warmup_steps;
  if (t < w) return c.lr * double(t) / double(w);
  const double p = double(t - w) / double(std::max(1, c.steps - w));
  switch (c.schedule) {
    case Schedule::constant: return c.lr;
    case Schedule::linear: return c.lr * (1.0 - p);
    case Schedule::cosine: return c.lr * 0.5 * (1.0 + std::cos(std::numbers::pi * p));
    case Schedule::inverse_sqrt: return c.lr * std::sqrt(double(std::max(1, w)) / double(std::max({t, w, 1})));
  }
  return c.lr;
}

}  // namespace nt
