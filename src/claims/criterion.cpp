#include "claims/criterion.h"

#include <cmath>
#include <fmt/format.h>

namespace nt {

namespace {

template <class... F>
struct Overload : F... {
  using F::operator()...;
};

ClaimVerdict above(const Interval& i, double b, bool strict) {
  if (std::isnan(i.lo) || std::isnan(i.hi)) return ClaimVerdict::inconclusive;
  if (strict ? i.lo > b : i.lo >= b) return ClaimVerdict::pass;
  if (strict ? i.hi <= b : i.hi < b) return ClaimVerdict::fail;
  return ClaimVerdict::inconclusive;
}

}  // namespace

std::string text(const Criterion& c) {
  return std::visit(
      Overload{[](AtLeast a) { return fmt::format(">= {:g}", a.bound); },
               [](AtMost a) { return fmt::format("<= {:g}", a.bound); },
               [](Within w) { return fmt::format("in [{:g}, {:g}]", w.lo, w.hi); },
               [](NonInferior n) { return fmt::format("<= {:g} (non-inferior)", 1 + n.margin); },
               [](Above a) { return fmt::format("> {:g}", a.bound); }, [](Reported) { return std::string("-"); }},
      c);
}

int sides(const Criterion& c) {
  return std::holds_alternative<Within>(c) || std::holds_alternative<Reported>(c) ? 2 : 1;
}

bool decides(const Criterion& c) { return !std::holds_alternative<Reported>(c); }

ClaimVerdict decide(const Criterion& c, const Interval& i) {
  return std::visit(
      Overload{[&](AtLeast a) { return at_least(i, a.bound); }, [&](AtMost a) { return at_most(i, a.bound); },
               [&](Within w) {
                 return all_of({at_least(i, w.lo), at_most(i, w.hi)});
               },
               [&](NonInferior n) { return at_most(i, 1 + n.margin); },
               [&](Above a) { return above(i, a.bound, true); }, [](Reported) { return ClaimVerdict::inconclusive; }},
      c);
}

}  // namespace nt
