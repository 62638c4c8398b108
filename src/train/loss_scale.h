// Dynamic loss scaling for fp16 training, PyTorch's torch.amp.GradScaler rule with its defaults:
//
//   backward from scale * loss, so that small gradients stay above fp16's subnormals
//   unscale: g *= 1 / scale (in fp32, on the master gradients)
//   a gradient with inf or NaN (an fp16 overflow): the step is skipped (no update, the
//     optimizer's step count unchanged), scale *= 0.5, and the count of good steps restarts
//   else the update; after growth_interval good steps in a row, scale *= 2
//
// Off (scale 1, nothing skipped) for fp32 and bf16, whose range is fp32's.
#pragma once
#include "config/config.h"
#include "io/binary.h"

namespace nt {

class LossScaler {
 public:
  static constexpr double kInitScale = 65536.0, kGrowth = 2.0, kBackoff = 0.5;
  static constexpr int kGrowthInterval = 2000;

  explicit LossScaler(Precision p) : enabled_(p == Precision::fp16) {}

  bool enabled() const { return enabled_; }
  double scale() const { return enabled_ ? scale_ : 1.0; }

  // The master gradients g (n values) of a backward from scale() * loss: unscaled in place.
  // Returns false, leaving g as it was, when one of them is inf or NaN: the step must be skipped.
  bool unscale(float* g, std::size_t n) const;

  // After the step: found_inf is whether it was skipped.
  void update(bool found_inf);
  int skipped() const { return skipped_; }  // steps skipped so far

  void save(ByteWriter& w) const;
  void load(ByteReader& r);

 private:
  bool enabled_;
  double scale_ = kInitScale;
  int good_steps_ = 0;
  int skipped_ = 0;
};

}  // namespace nt
