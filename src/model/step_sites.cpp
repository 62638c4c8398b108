#include "model/step_sites.h"

#include <cstring>

namespace nt {

void StepSites::clear() {
  for (Site& s : sites_) s.in.clear(), s.out.clear(), s.rows.clear();
  fresh_ = false;
}

const std::vector<SiteCapture>& StepSites::gather(int B, int T, const float* mask) const {
  if (fresh_) return gathered_;
  gathered_.clear();
  for (Site& s : sites_) {
    if (s.in.empty()) continue;
    const int C = s.in[0].cols;
    auto by_position = [&](const std::vector<Tensor<float>>& steps, std::vector<float>& seq) {
      seq.assign(std::size_t(B) * T * C, 0.0f);
      for (std::size_t t = 0; t < steps.size() && t < std::size_t(T); ++t)
        for (int i = 0; i < steps[t].rows; ++i) {
          const std::size_t b = s.rows[t] ? s.rows[t][i] : i;
          std::memcpy(seq.data() + (b * T + t) * C, steps[t].data + std::size_t(i) * C, sizeof(float) * C);
        }
      return Tensor<float>{seq.data(), nullptr, B * T, C};
    };
    const Tensor<float> in = by_position(s.in, s.in_seq);
    const Tensor<float> out = s.out[0].data == s.in[0].data ? in : by_position(s.out, s.out_seq);
    gathered_.push_back({s.layer, s.place, in, out, T, mask});
  }
  fresh_ = true;
  return gathered_;
}

}  // namespace nt
