#include "train/loss_scale.h"

#include "core/number_format.h"
#include "core/parallel.h"

namespace nt {

bool LossScaler::unscale(float* g, std::size_t n) const {
  if (!enabled_) return true;
  if (!all_finite(g, n)) return false;
  const float inverse = float(1.0 / scale_);  // GradScaler: the reciprocal in double, applied in fp32
  parallel_chunks(int64_t(n), [&](int64_t i, int64_t count) {
    for (int64_t k = i; k < i + count; ++k) g[k] *= inverse;
  });
  return true;
}

void LossScaler::update(bool found_inf) {
  if (!enabled_) return;
  if (found_inf) {
    scale_ *= kBackoff;
    good_steps_ = 0;
    ++skipped_;
  } else if (++good_steps_ == kGrowthInterval) {
    scale_ *= kGrowth;
    good_steps_ = 0;
  }
}

void LossScaler::save(ByteWriter& w) const {
  w.put(scale_);
  w.put(int32_t(good_steps_));
  w.put(int32_t(skipped_));
}

void LossScaler::load(ByteReader& r) {
  scale_ = r.get<double>();
  good_steps_ = r.get<int32_t>();
  skipped_ = r.get<int32_t>();
}

}  // namespace nt
