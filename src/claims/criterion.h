// The criterion a measure of a claim is held to, as a typed value: its text ("≥ 1.5") and its
// decision on an interval come from the same numbers, so the two cannot disagree.
//
//   AtLeast{b}      PASS when the lower end ≥ b, FAIL when the upper end < b (one-sided)
//   AtMost{b}       PASS when the upper end ≤ b, FAIL when the lower end > b (one-sided)
//   Within{lo, hi}  both ends inside: PASS; the interval outside the band: FAIL (two-sided)
//   NonInferior{m}  a ratio of the new to the reference, lower better: AtMost{1 + m}, said so
//   Above{b}        a direction: PASS when the lower end > b, FAIL when the upper end ≤ b
//   Reported{}      shown with its interval, decides nothing
// Otherwise INCONCLUSIVE, and always with a NaN end.
#pragma once
#include <string>
#include <variant>

#include "analysis/stats.h"

namespace nt {

struct AtLeast {
  double bound;
};
struct AtMost {
  double bound;
};
struct Within {
  double lo, hi;
};
struct NonInferior {
  double margin;
};
struct Above {
  double bound;
};
struct Reported {};
using Criterion = std::variant<AtLeast, AtMost, Within, NonInferior, Above, Reported>;

std::string text(const Criterion& c);  // ">= 1.5", "in [0.98, 1.02]", "-" for Reported
int sides(const Criterion& c);         // 1 for a one-sided criterion, else 2
bool decides(const Criterion& c);      // false for Reported
ClaimVerdict decide(const Criterion& c, const Interval& i);

}  // namespace nt
