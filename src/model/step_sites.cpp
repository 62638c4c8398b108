#include "model/step_sites.h"

#include <cstring>

namespace nt {

void StepSites::clear() {
  for (Site& s : sites_) s.in.clear(), s.out.clear();
  fresh_ = false;
}

const std::vector<SiteCapture>& StepSites::gather(int B, int T, const float* mask) const {
  if (fresh_) return gathered_;
  gathered_.clear();
  for (Site& s : sites_) {
    if (s.in.empty()) continue;
    const int C = s.in[0].cols;
    auto by_position = [&](const std::vector<Tensor<float>>& steps, std::vector<float>& seq) {
      seq.resize(std::size_t(B) * T * C);
      for (int t = 0; t < T; ++t)
        for (int b = 0; b < B; ++b)
          std::memcpy(seq.data() + (std::size_t(b) * T + t) * C, steps[t].data + std::size_t(b) * C, sizeof(float) * C);
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
