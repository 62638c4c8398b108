#include "train/step_statistics.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "train/optimizer.h"

namespace nt {

StepStatistics::StepStatistics(const ParamStore<float>& params)
    : before_update_(params.numel()), grad_norms_(params.count()), logit_max_(params.count()) {}

void StepStatistics::before_update(int step, Session& session, RunFiles& files) {
  const Batch& batch = session.batch();
  for (const SiteCapture& s : session.model().sites()) {
    // a site of another sequence (an encoder's over the source) says its own positions and mask
    const int T = s.T ? s.T : batch.T;
    const float* mask = s.T ? s.mask : batch.real_tokens();
    for (const auto& [tensor, suffix] : {std::pair{s.in, ".in"}, std::pair{s.out, ".out"}}) {
      site_statistics(tensor, batch.B, T, mask, mean_, std_);
      range_statistics(tensor, batch.B, T, mask, ranges_);
      const std::string site = std::string(s.place) + suffix;
      for (int t = 0; t < T; ++t) {
        files.stat(step, s.layer, site.c_str(), t, mean_[t], std_[t]);
        files.range(step, s.layer, site.c_str(), t, ranges_.max_abs[t], ranges_.fp16_outside[t],
                    ranges_.int8_snr_db[t], ranges_.int8_tensor_snr_db[t]);
      }
    }
  }
  files.flush_stats();
  std::fill(logit_max_.begin(), logit_max_.end(), std::nan(""));
  logits_.clear();
  session.model().attention_logits(logits_);
  for (const AttentionLogits& a : logits_)
    if (a.q) logit_max_[a.param] = attention_logit_max(a);
  ParamStore<float>& ps = session.params();
  for (int i = 0; i < ps.count(); ++i) {
    const Tensor<float> p = ps.tensor(i);
    grad_norms_[i] = global_norm(p.grad, p.size());
  }
  std::copy_n(ps.data(), ps.numel(), before_update_.data());
}

void StepStatistics::after_update(int step, const ParamStore<float>& ps, RunFiles& files) {
  for (int i = 0; i < ps.count(); ++i) {
    const auto& info = ps.info(i);
    const float* w = ps.data() + info.offset;
    const float* w0 = before_update_.data() + info.offset;
    double update2 = 0;
    for (std::size_t k = 0; k < info.size(); ++k) update2 += double(w[k] - w0[k]) * (w[k] - w0[k]);
    nlohmann::json line{{"step", step}, {"layer", info.layer}, {"param", info.name}, {"grad_norm", grad_norms_[i]},
                        {"weight_norm", global_norm(w, info.size())}, {"update_norm", std::sqrt(update2)}};
    if (!std::isnan(logit_max_[i])) line["attn_logit_max"] = logit_max_[i];  // the query projection's line
    files.layer(line);
  }
}

}  // namespace nt
