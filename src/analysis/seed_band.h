// The one meaning of a band in every picture: the mean over seeds with its 95% Student-t interval
// (analysis/stats.h), at each x that every seed has. Captions say so in kSeedBand's words.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "io/plot.h"

namespace nt {

inline constexpr const char* kSeedBand = "band: 95% interval over seeds";

// One curve per group of seeds: at each x of the first seed that every seed has with a finite
// value, the mean and, with two seeds or more, its 95% interval as the band (one seed: no band).
Curve mean_over_seeds(const std::string& title, const std::vector<std::map<double, double>>& per_seed);

}  // namespace nt
