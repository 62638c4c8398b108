// Curves of several seeds of one config as one: at each step that every curve has, the mean over
// the seeds and its two-sided Student-t interval (stats.h: mean_interval, mean +- t sd / sqrt(n)).
// A diverged seed's curve stops early: the band stops with it. One seed: a band of width zero.
#pragma once
#include <utility>
#include <vector>

namespace nt {

struct SeedBand {
  int n = 0;  // seeds
  std::vector<double> step, mean, lo, hi;
};

SeedBand seed_band(const std::vector<std::vector<std::pair<double, double>>>& curves, double level = 0.95);

}  // namespace nt
