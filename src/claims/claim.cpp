#include "claims/claim.h"

#include <fmt/format.h>

namespace nt {

std::string ClaimContext::seeds_axis() const { return fmt::format("seed={}", fmt::join(seeds, ",")); }

Measure measure_at_least(std::string name, const std::vector<double>& per_seed, double threshold) {
  Measure m{std::move(name), per_seed, mean_interval(per_seed), fmt::format(">= {:g}", threshold)};
  m.verdict = at_least(m.interval, threshold);
  return m;
}

Measure measure_at_most(std::string name, const std::vector<double>& per_seed, double threshold) {
  Measure m{std::move(name), per_seed, mean_interval(per_seed), fmt::format("<= {:g}", threshold)};
  m.verdict = at_most(m.interval, threshold);
  return m;
}

ClaimVerdict verdict_of(const std::vector<Measure>& measures) {
  std::vector<ClaimVerdict> v;
  for (const Measure& m : measures) v.push_back(m.verdict);
  return all_of(v);
}

}  // namespace nt
