#include "claims/statistics.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace nt {

const char* to_string(Scale s) { return s == Scale::log ? "log" : "linear"; }

Rules rules_v1() { return {"v1", {}, 0.05, false, false}; }

Rules rules_v2() { return {"v2", {3, 6, 10}, 0.05, true, true}; }

Rules default_rules() { return rules_v2(); }

std::string rules_text(const Rules& r) {
  const std::string looks =
      r.looks.empty() ? fmt::format("one look at every seed, at confidence {:.3g}%", 100 * (1 - r.alpha))
                      : fmt::format(
                            "looks at {} seeds, each at confidence 1 - {:g}/{} = {:.3g}% (the claim stops at the "
                            "first look that decides)",
                            fmt::join(r.looks, ", "), r.alpha, r.looks.size(), 100 * (1 - r.alpha / r.looks.size()));
  return fmt::format(
      "{}; {}; {}", looks,
      r.one_sided ? "one-sided bounds for 'at least' and 'at most', two-sided for a band" : "two-sided intervals",
      r.log_ratios ? "ratios on the log scale (geometric mean)" : "every measure on the linear scale");
}

std::vector<int> looks_for(const Rules& rules, int n) {
  std::vector<int> looks;
  for (int k : rules.looks)
    if (k < n) looks.push_back(k);
  looks.push_back(n);
  return looks;
}

double look_confidence(const Rules& rules, int n) {
  return 1 - rules.alpha / double(rules.looks.empty() ? 1 : looks_for(rules, n).size());
}

Estimate estimate(const std::vector<double>& values, Scale scale, double confidence, int sides) {
  Estimate e{{}, scale, confidence, sides};
  const bool usable = std::all_of(values.begin(), values.end(),
                                  [&](double v) { return std::isfinite(v) && (scale == Scale::linear || v > 0); });
  // one-sided: each end a bound at `confidence`, i.e. the two-sided interval at 2 confidence − 1
  const double level = sides == 1 ? 2 * confidence - 1 : confidence;
  if (!usable) {
    e.interval = mean_interval(values, level);
    e.interval.lo = e.interval.hi = NAN;
    if (scale == Scale::log) e.interval.mean = NAN;
    return e;
  }
  if (scale == Scale::linear) {
    e.interval = mean_interval(values, level);
    return e;
  }
  std::vector<double> logs(values.size());
  std::transform(values.begin(), values.end(), logs.begin(), [](double v) { return std::log(v); });
  const Interval l = mean_interval(logs, level);
  e.interval = {l.n, std::exp(l.mean), l.sd, std::exp(l.lo), std::exp(l.hi)};
  return e;
}

}  // namespace nt
