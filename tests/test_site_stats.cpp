// ranges.csv's statistics (train/site_stats.h) against values worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "train/site_stats.h"

namespace nt::test {
namespace {

TEST(RangeStatistics, Int8SnrOfOneVectorIsItsRoundingErrorAtStepMaxOver127) {
  std::vector<float> x{1.0f, 0.5f, -0.25f, 0.1f};
  RangeStats r;
  range_statistics(Tensor<float>{x.data(), nullptr, 1, 4}, 1, 1, nullptr, r);
  // step 1/127: 0.5 -> 63.5 steps, a tie, to even 64; -0.25 -> -31.75 -> -32; 0.1 -> 12.7 -> 13
  const double e1 = 0.5 - 64.0 / 127, e2 = -0.25 + 32.0 / 127, e3 = double(0.1f) - 13.0 / 127;
  const double signal = 1 + 0.25 + 0.0625 + double(0.1f) * double(0.1f);
  EXPECT_NEAR(r.int8_snr_db[0], 10 * std::log10(signal / (e1 * e1 + e2 * e2 + e3 * e3)), 1e-9);
  EXPECT_DOUBLE_EQ(r.max_abs[0], 1.0);
  EXPECT_DOUBLE_EQ(r.fp16_outside[0], 0.0);
}

TEST(RangeStatistics, AnOutlierCostsTheOtherValuesTheirResolution) {
  std::vector<float> flat(64, 1.0f), outlier(64, 1.0f);
  for (int j = 0; j < 64; ++j) flat[j] = outlier[j] = 0.5f + 0.01f * float(j);
  outlier[7] = 100.0f;
  RangeStats a, b;
  range_statistics(Tensor<float>{flat.data(), nullptr, 1, 64}, 1, 1, nullptr, a);
  range_statistics(Tensor<float>{outlier.data(), nullptr, 1, 64}, 1, 1, nullptr, b);
  EXPECT_GT(a.int8_snr_db[0], 40.0);
  // the outlier dominates the signal, yet the other 63 values now round to 0 or 1 step of 100/127
  EXPECT_LT(b.int8_snr_db[0], a.int8_snr_db[0] - 5.0);
}

// Two tokens of the same shape, one 128x smaller (exactly: a power of two): per-token absmax quantizes both equally
// well, one scale for the tensor leaves the small one a hundredth of the steps.
TEST(RangeStatistics, PerTensorScaleCostsSmallTokensTheirResolutionPerTokenDoesNot) {
  std::vector<float> x(2 * 16);
  for (int j = 0; j < 16; ++j) x[j] = 1.0f + 0.37f * float(j % 5) - 0.9f * float(j % 3), x[16 + j] = x[j] / 128.0f;
  RangeStats r;
  range_statistics(Tensor<float>{x.data(), nullptr, 2, 16}, 1, 2, nullptr, r);  // B 1, T 2: a token per position
  EXPECT_NEAR(r.int8_snr_db[0], r.int8_snr_db[1], 1e-6) << "per token: blind to the token's scale";
  EXPECT_DOUBLE_EQ(r.int8_tensor_snr_db[0], r.int8_snr_db[0]) << "the large token sets the tensor's scale";
  // the small token's values are within 1/128 of the range: at most one step of it either way
  EXPECT_LT(r.int8_tensor_snr_db[1], r.int8_snr_db[1] - 30.0);
  double signal = 0, noise = 0, max_abs = 0;
  for (int j = 0; j < 16; ++j) max_abs = std::max(max_abs, std::abs(double(x[j])));  // 1 + 0.37 4 = 2.48
  const double step = max_abs / 127.0;
  for (int j = 0; j < 16; ++j) {
    const double v = double(x[16 + j]), q = std::nearbyint(v / step) * step;
    signal += v * v, noise += (v - q) * (v - q);
  }
  EXPECT_NEAR(r.int8_tensor_snr_db[1], 10 * std::log10(signal / noise), 1e-3);
}

TEST(RangeStatistics, Fp16OutsideCountsOverflowAndSubnormalsPerPositionOverRealTokens) {
  // B 2, T 2, C 4: position 0 from both sequences, position 1 only from sequence 0 (mask)
  std::vector<float> x{70000.0f, 1e-6f, 1.0f,  0.0f,     // b0 t0: overflow, subnormal, normal, zero
                       1.0f,     2.0f,  -3.0f, 4.0f,     // b0 t1
                       0.5f,     0.5f,  0.5f,  6.0e-5f,  // b1 t0: 6e-5 < 2^-14 = 6.10e-5
                       -1e9f,    1.0f,  1.0f,  1.0f};    // b1 t1: padding, left out
  std::vector<float> mask{1, 1, 1, 0};
  RangeStats r;
  range_statistics(Tensor<float>{x.data(), nullptr, 4, 4}, 2, 2, mask.data(), r);
  EXPECT_DOUBLE_EQ(r.fp16_outside[0], 3.0 / 8);
  EXPECT_DOUBLE_EQ(r.max_abs[0], 70000.0);
  EXPECT_DOUBLE_EQ(r.fp16_outside[1], 0.0);
  EXPECT_DOUBLE_EQ(r.max_abs[1], 4.0) << "the padded token's -1e9 is left out";
}

}  // namespace
}  // namespace nt::test
