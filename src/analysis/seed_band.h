// The one meaning of a band in every picture: the mean over seeds with its two-sided Student-t
// interval (stats.h: mean_interval, mean +- t sd / sqrt(n)), at each step every seed has. A diverged
// seed's curve stops early: the band stops with it. Captions say so in kSeedBand's words.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "io/plot.h"

namespace nt {

inline constexpr const char* kSeedBand = "band: 95% interval over seeds";

struct SeedBand {
  int n = 0;  // seeds
  std::vector<double> step, mean, lo, hi;
};
// Curves (step, value) of several seeds of one config as one; one seed: a band of width zero.
SeedBand seed_band(const std::vector<std::vector<std::pair<double, double>>>& curves, double level = 0.95);

// seed_band as a curve to draw, over the finite values of per-seed maps x -> value; with one seed
// no band.
Curve mean_over_seeds(const std::string& title, const std::vector<std::map<double, double>>& per_seed);

}  // namespace nt
