#include "analysis/seed_band.h"

#include <cmath>

#include "analysis/stats.h"

namespace nt {

SeedBand seed_band(const std::vector<std::vector<std::pair<double, double>>>& curves, double level) {
  SeedBand b;
  b.n = int(curves.size());
  if (curves.empty()) return b;
  std::map<double, std::vector<double>> at;  // step -> the seeds' values (a step logged twice: its last)
  for (const auto& c : curves) {
    std::map<double, double> last;
    for (const auto& [step, v] : c) last[step] = v;
    for (const auto& [step, v] : last) at[step].push_back(v);
  }
  for (const auto& [step, values] : at) {
    if (int(values.size()) != b.n) continue;
    const Interval i = mean_interval(values, level);
    b.step.push_back(step);
    b.mean.push_back(i.mean);
    b.lo.push_back(i.lo);
    b.hi.push_back(i.hi);
  }
  return b;
}

Curve mean_over_seeds(const std::string& title, const std::vector<std::map<double, double>>& per_seed) {
  std::vector<std::vector<std::pair<double, double>>> curves;
  for (const auto& seed : per_seed) {
    auto& c = curves.emplace_back();
    for (const auto& [x, v] : seed)
      if (std::isfinite(v)) c.emplace_back(x, v);
  }
  const SeedBand b = seed_band(curves);
  Curve c{title, {}, {}};
  for (std::size_t i = 0; i < b.step.size(); ++i) {
    c.points.emplace_back(b.step[i], b.mean[i]);
    if (per_seed.size() > 1) c.band.emplace_back(b.lo[i], b.hi[i]);
  }
  return c;
}

}  // namespace nt
