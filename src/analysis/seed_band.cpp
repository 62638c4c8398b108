#include "analysis/seed_band.h"

#include <cmath>

#include "analysis/stats.h"

namespace nt {

Curve mean_over_seeds(const std::string& title, const std::vector<std::map<double, double>>& per_seed) {
  Curve c{title, {}, {}};
  if (per_seed.empty()) return c;
  std::vector<std::pair<double, double>> band;
  for (const auto& [x, first] : per_seed.front()) {
    std::vector<double> v;
    for (const auto& seed : per_seed)
      if (auto it = seed.find(x); it != seed.end() && std::isfinite(it->second)) v.push_back(it->second);
    if (v.size() != per_seed.size()) continue;  // an x not every seed reached (one diverged)
    const Interval i = mean_interval(v);
    c.points.emplace_back(x, i.mean);
    band.emplace_back(i.lo, i.hi);
  }
  if (per_seed.size() > 1) c.band = std::move(band);
  return c;
}

}  // namespace nt
