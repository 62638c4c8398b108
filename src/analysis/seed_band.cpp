#include "analysis/seed_band.h"

#include <map>

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

}  // namespace nt
