// What the Post-LN claims (postln.cpp: C7, C8, C9; postln_update.cpp: C10) share.
#pragma once
#include <fmt/format.h>

#include <string>
#include <vector>

namespace nt {

inline constexpr const char* kSmallInit = "ablation: model.init normal, N(0, 0.02) (normtool's default)";

inline std::string seed_override(int seed) { return fmt::format("seed={}", seed); }

// a[i] / b[i], over the shorter of the two
inline std::vector<double> ratio(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> v;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) v.push_back(a[i] / b[i]);
  return v;
}

}  // namespace nt
