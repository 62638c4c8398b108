// The statistics of a verdict (docs/claims.md, "The statistics of a verdict"): how the values of a
// measure over seeds become an interval, and how the seeds are looked at. Every training claim's
// verdict goes through here; the rules are data (Rules), and the runner (claims/runner.cpp) reads
// them, so a change of rule is one edit.
//
//   interval   linear: the mean, mean ± t·sd/√n; log (a ratio of positive quantities): the
//              geometric mean, exp(mean(log r) ± t·sd(log r)/√n), which never reaches below 0
//   sides      2: both ends at (1 + confidence)/2; 1: each end a one-sided bound at `confidence`
//              (a criterion "at least" reads the lower end, "at most" the upper)
//   looks      the seed counts the verdict is read at, in order; each look at confidence
//              1 − alpha / (number of looks) (Bonferroni); the claim stops at the first look that
//              decides (PASS or FAIL)
#pragma once
#include <string>
#include <vector>

#include "analysis/stats.h"

namespace nt {

enum class Scale { linear, log };
const char* to_string(Scale s);

struct Rules {
  std::string name;         // "v1", "v2"
  std::vector<int> looks;   // seed counts; empty: one look at every seed given
  double alpha = 0.05;      // the error rate over all looks
  bool one_sided = false;   // "at least" and "at most" criteria read one-sided bounds
  bool log_ratios = false;  // a measure of a ratio gets its interval on the log scale
};

// The rules the committed reports were decided by until revision 2: one look at every seed, a 95%
// two-sided interval, arithmetic for ratios too.
Rules rules_v1();
// claims.md's rules: looks at 3, 6 and 10 seeds at 1 − 0.05/3, one-sided bounds for one-sided
// criteria, ratios on the log scale.
Rules rules_v2();
Rules default_rules();  // the rules every verdict is decided by: rules_v2

// The rules in words, for the report: "looks at 3, 6 and 10 seeds, each at confidence 98.3%; ..."
std::string rules_text(const Rules& rules);

// The seed counts looked at for `n` seeds: the rules' looks below n, then n itself.
std::vector<int> looks_for(const Rules& rules, int n);
double look_confidence(const Rules& rules, int n);  // the confidence of every look of a list of n seeds

// The interval of `values` (NaN when one is not finite, or not positive on the log scale).
struct Estimate {
  Interval interval;  // n, mean (geometric on the log scale), sd (of the values or their logs), lo, hi
  Scale scale = Scale::linear;
  double confidence = 0.95;
  int sides = 2;
};
Estimate estimate(const std::vector<double>& values, Scale scale, double confidence, int sides);

}  // namespace nt
