#include "claims/claim.h"

#include <fmt/format.h>

namespace nt {

std::string ClaimContext::seeds_axis() const { return fmt::format("seed={}", fmt::join(seeds, ",")); }

namespace {

Measure measure(std::string name, const std::vector<double>& values, std::string criterion) {
  Measure m;
  m.name = std::move(name);
  m.values = values;
  m.interval = mean_interval(values);
  m.criterion = std::move(criterion);
  return m;
}

}  // namespace

Measure measure_at_least(std::string name, const std::vector<double>& values, double threshold) {
  Measure m = measure(std::move(name), values, fmt::format(">= {:g}", threshold));
  m.verdict = at_least(m.interval, threshold);
  return m;
}

Measure measure_at_most(std::string name, const std::vector<double>& values, double threshold) {
  Measure m = measure(std::move(name), values, fmt::format("<= {:g}", threshold));
  m.verdict = at_most(m.interval, threshold);
  return m;
}

Measure measure_within(std::string name, const std::vector<double>& values, double lo, double hi) {
  Measure m = measure(std::move(name), values, fmt::format("in [{:g}, {:g}]", lo, hi));
  m.verdict = all_of({at_least(m.interval, lo), at_most(m.interval, hi)});
  return m;
}

Measure measure_nonzero(std::string name, const std::vector<double>& values) {
  Measure m = measure(std::move(name), values, "!= 0");
  const bool excludes_zero = m.interval.lo > 0 || m.interval.hi < 0;  // false when NaN
  m.verdict = excludes_zero ? ClaimVerdict::pass : ClaimVerdict::inconclusive;
  return m;
}

Measure measure_reported(std::string name, const std::vector<double>& values, std::string group) {
  return Measure{std::move(name), values, {}, mean_interval(values), "-", ClaimVerdict::inconclusive, std::move(group)};
}

Measure in_group(Measure m, std::string group) {
  m.group = std::move(group);
  return m;
}

ClaimVerdict verdict_of(const std::vector<Measure>& measures) {
  std::vector<ClaimVerdict> v;
  for (const Measure& m : measures)
    if (m.group.empty()) v.push_back(m.verdict);
  return all_of(v);
}

}  // namespace nt
