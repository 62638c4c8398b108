// A claim's parts looked up by name, as its measures are named and never indexed.
#pragma once
#include <algorithm>
#include <stdexcept>
#include <string>

#include "claims/claim.h"

namespace nt::test {

inline const MeasureSpec& measure_named(const Claim& c, const std::string& name) {
  const auto m =
      std::find_if(c.measures.begin(), c.measures.end(), [&](const MeasureSpec& x) { return x.name == name; });
  if (m == c.measures.end()) throw std::runtime_error(c.id + " has no measure " + name);
  return *m;
}

}  // namespace nt::test
