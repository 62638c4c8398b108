// train.precision: rounding to bf16 and fp16 (core/number_format.h) against exact bit patterns
// and against a reference in double; the cast op (ops/cast.cpp); fp16's dynamic loss scaling
// (train/loss_scale.h) by itself and in a training session; the config's refusals.
#include <gtest/gtest.h>

#include <bit>
#include <fstream>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "config/config.h"
#include "core/number_format.h"
#include "helpers.h"
#include "ops/ops.h"
#include "train/loss_scale.h"
#include "train/session.h"

namespace nt::test {
namespace {

using json = nlohmann::json;

float from_bits(uint32_t u) { return std::bit_cast<float>(u); }
uint32_t bits_of(float x) { return std::bit_cast<uint32_t>(x); }

TEST(Bf16Rounding, ExactBitPatterns) {
  struct Case {
    uint32_t in;
    uint16_t out;
    const char* what;
  };
  for (const Case& c : std::vector<Case>{
           {0x3f800000u, 0x3f80, "1"},
           {0xbfc00000u, 0xbfc0, "-1.5"},
           {0x3f808000u, 0x3f80, "1 + 2^-8: a tie, to the even 0x3f80"},
           {0x3f818000u, 0x3f82, "a tie above an odd pattern, up to the even 0x3f82"},
           {0x3f808001u, 0x3f81, "just above the tie: up"},
           {0x3f807fffu, 0x3f80, "just below the tie: down"},
           {0x00018000u, 0x0002, "a subnormal tie, to the even 0x0002"},
           {0x00008000u, 0x0000, "half the smallest bf16 subnormal: a tie, to the even zero"},
           {0x00008001u, 0x0001, "just above it: the smallest subnormal"},
           {0x80008001u, 0x8001, "the same, negative"},
           {0x7f7fffffu, 0x7f80, "FLT_MAX: rounds up to inf"},
           {0x7f7f7fffu, 0x7f7f, "below the tie under inf: the largest finite bf16"},
           {0x7f7f8000u, 0x7f80, "the tie under inf: to the even neighbour, inf"},
           {0x7f800000u, 0x7f80, "inf"},
           {0xff800000u, 0xff80, "-inf"},
           {0x7f800001u, 0x7fc0, "a signalling NaN whose payload sits in the cut bits: still NaN, quiet"},
           {0xffc00000u, 0xffc0, "-NaN"},
       }) {
    EXPECT_EQ(float_to_bf16_bits(from_bits(c.in)), c.out) << c.what;
  }
}

TEST(Fp16Rounding, ExactBitPatterns) {
  struct Case {
    float in;
    uint16_t out;
    const char* what;
  };
  for (const Case& c : std::vector<Case>{
           {1.0f, 0x3c00, "1"},
           {-2.0f, 0xc000, "-2"},
           {1.0f + 0x1p-11f, 0x3c00, "1 + 2^-11: a tie, to the even 0x3c00"},
           {1.0f + 3 * 0x1p-11f, 0x3c02, "1 + 3 2^-11: a tie above an odd pattern, to 0x3c02"},
           {65504.0f, 0x7bff, "the largest finite fp16"},
           {65519.996f, 0x7bff, "just below the tie under inf"},
           {65520.0f, 0x7c00, "the tie under inf: to the even neighbour, inf"},
           {-1e6f, 0xfc00, "overflow: -inf"},
           {0x1p-14f, 0x0400, "the smallest normal"},
           {0x1p-24f, 0x0001, "the smallest subnormal"},
           {0x1p-25f, 0x0000, "half of it: a tie, to the even zero"},
           {0x1p-25f * 1.0001f, 0x0001, "just above half: the smallest subnormal"},
           {3 * 0x1p-25f, 0x0002, "a subnormal tie above an odd pattern, to 0x0002"},
           {1023 * 0x1p-24f, 0x03ff, "the largest subnormal"},
           {0x1p-14f - 0x1p-25f, 0x0400,
            "the tie between the largest subnormal and the smallest normal, to the even normal"},
           {-0.0f, 0x8000, "-0"},
           {1e-10f, 0x0000, "underflow to zero"},
           {std::numeric_limits<float>::infinity(), 0x7c00, "inf"},
       }) {
    EXPECT_EQ(float_to_fp16_bits(c.in), c.out) << c.what << " (" << c.in << ")";
  }
  const uint16_t nan = float_to_fp16_bits(from_bits(0x7f800001u));
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0) << "a NaN stays NaN";
  EXPECT_NE(nan & 0x0200, 0) << "and quiet";
  EXPECT_EQ(float_to_fp16_bits(from_bits(0xffc00000u)) & 0x8000, 0x8000) << "its sign kept";
}

// Every pattern of the format read as a float and rounded back is itself (NaNs stay NaN).
TEST(FormatRounding, EveryPatternRoundTrips) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float b = bf16_bits_to_float(uint16_t(h)), f = fp16_bits_to_float(uint16_t(h));
    if (std::isnan(b))
      EXPECT_TRUE(std::isnan(round_to(Precision::bf16, b)));
    else
      ASSERT_EQ(float_to_bf16_bits(b), h) << std::hex << h;
    if (std::isnan(f))
      EXPECT_TRUE(std::isnan(round_to(Precision::fp16, f)));
    else
      ASSERT_EQ(float_to_fp16_bits(f), h) << std::hex << h;
  }
}

// The nearest value of the format with ties to even, worked out in double from the format's
// exponent range and fraction width: an independent reference for finite values in range.
double reference_round(double x, int fraction_bits, int min_exponent, double largest) {
  if (x == 0) return x;
  const int e = std::max(int(std::floor(std::log2(std::abs(x)))), min_exponent);
  const double ulp = std::ldexp(1.0, e - fraction_bits);
  const double q = std::nearbyint(x / ulp) * ulp;  // x / ulp is exact: a power-of-two scaling
  return std::abs(q) > largest ? std::copysign(INFINITY, x) : q;
}

TEST(FormatRounding, MatchesAReferenceInDoubleOverRandomValues) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> exponent(-30, 17), mantissa(1, 2);
  const double bf16_max = std::ldexp(255.0, 120), fp16_max = 65504.0;
  for (int i = 0; i < 200000; ++i) {
    const float x = float((gen() & 1 ? -1 : 1) * mantissa(gen) * std::exp2(exponent(gen)));
    // fp16: 10 fraction bits, normals from 2^-14 (below it the step stays 2^-24)
    const double f = reference_round(x, 10, -14, fp16_max);
    ASSERT_EQ(double(round_to(Precision::fp16, x)), std::abs(x) >= 65520.0 ? std::copysign(INFINITY, x) : f) << x;
    ASSERT_EQ(double(round_to(Precision::bf16, x)), reference_round(x, 7, -126, bf16_max)) << x;
  }
}

// The vector path (the hardware's conversions for fp16) gives the scalar path's bits, over
// random bit patterns and the special ones.
TEST(FormatRounding, InPlaceEqualsTheScalarRounding) {
  std::mt19937 gen(11);
  std::vector<float> x(100003);
  for (float& v : x) v = from_bits(uint32_t(gen()));
  for (uint32_t special : {0x7f800001u, 0xffc00000u, 0x7f800000u, 0x00000001u, 0x38800000u, 0x477ff000u, 0x477fefffu})
    x.push_back(from_bits(special));
  for (Precision p : {Precision::bf16, Precision::fp16}) {
    std::vector<float> y = x;
    round_in_place(p, y.data(), y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float s = round_to(p, x[i]);
      if (std::isnan(s))
        ASSERT_TRUE(std::isnan(y[i])) << i;
      else
        ASSERT_EQ(bits_of(y[i]), bits_of(s)) << kPrecisionNames[int(p)] << " " << std::hex << bits_of(x[i]);
    }
  }
  std::vector<float> z = x;
  round_in_place(Precision::fp32, z.data(), z.size());
  EXPECT_EQ(std::memcmp(z.data(), x.data(), x.size() * sizeof(float)), 0) << "fp32 rounds nothing";
}

// The cast op rounds its input in place and the gradient on its way back: a gradient below fp16's
// smallest subnormal vanishes unless the loss is scaled, which is why fp16 needs loss scaling.
TEST(Cast, RoundsTheValueForwardAndTheGradientBackward) {
  Graph<float> g;
  Tensor<float> x = g.tensor(1, 3, true);
  x.data[0] = 1.0f + 0x1p-11f, x.data[1] = 70000.0f, x.data[2] = 0.1f;
  Tensor<float> y = cast(g, x, Precision::fp16);
  EXPECT_EQ(y.data, x.data) << "in place";
  EXPECT_EQ(y.data[0], 1.0f);
  EXPECT_TRUE(std::isinf(y.data[1]));
  EXPECT_EQ(y.data[2], round_to(Precision::fp16, 0.1f));
  Tensor<float> w = g.tensor(1, 3, false);
  w.data[0] = 1e-8f, w.data[1] = 0.0f, w.data[2] = 3e-8f;
  Tensor<float> prod = mul(g, y, w);
  prod.data[1] = 0;  // inf * 0
  g.backward(sum(g, prod));
  EXPECT_EQ(x.grad[0], 0.0f) << "1e-8 is below fp16's smallest subnormal (5.96e-8): flushed";
  EXPECT_EQ(x.grad[2], 0x1p-24f) << "3e-8 rounds to the smallest subnormal";

  Graph<float> scaled;
  Tensor<float> a = scaled.tensor(1, 1, true);
  a.data[0] = 1.0f;
  Tensor<float> c = scaled.tensor(1, 1, false);
  c.data[0] = 1e-8f;
  scaled.backward(sum(scaled, mul(scaled, cast(scaled, a, Precision::fp16), c)), 65536.0f);
  EXPECT_NEAR(a.grad[0] / 65536.0f, 1e-8f, 1e-8f * 1e-3f) << "scaled by 2^16 it survives";
}

TEST(LossScaler, BacksOffOnOverflowSkipsAndGrowsAfterTheInterval) {
  LossScaler s(Precision::fp16);
  EXPECT_EQ(s.scale(), 65536.0);
  std::vector<float> g{65536.0f, -131072.0f};
  EXPECT_TRUE(s.unscale(g.data(), g.size()));
  EXPECT_EQ(g[0], 1.0f);
  EXPECT_EQ(g[1], -2.0f);
  std::vector<float> bad{1.0f, INFINITY, 2.0f};
  EXPECT_FALSE(s.unscale(bad.data(), bad.size()));
  EXPECT_EQ(bad[0], 1.0f) << "left as it was";
  bad[1] = NAN;
  EXPECT_FALSE(s.unscale(bad.data(), bad.size()));
  s.update(true);
  EXPECT_EQ(s.scale(), 32768.0);
  EXPECT_EQ(s.skipped(), 1);
  for (int i = 0; i < LossScaler::kGrowthInterval - 1; ++i) s.update(false);
  EXPECT_EQ(s.scale(), 32768.0);
  s.update(false);
  EXPECT_EQ(s.scale(), 65536.0) << "after 2000 good steps in a row";
  s.update(false);
  s.update(true);
  EXPECT_EQ(s.scale(), 32768.0);
  for (int i = 0; i < LossScaler::kGrowthInterval - 1; ++i) s.update(false);
  EXPECT_EQ(s.scale(), 32768.0) << "an overflow restarts the count";

  LossScaler off(Precision::bf16);
  EXPECT_EQ(off.scale(), 1.0);
  EXPECT_TRUE(off.unscale(bad.data(), bad.size())) << "bf16 has fp32's range: no scaling, nothing skipped";
}

RunConfig tiny(std::vector<std::string> overrides) {
  overrides.insert(overrides.end(), {"data.dataset=synthetic-lm", "data.seq_len=32", "model.d_model=32",
                                     "model.n_heads=2", "model.d_ff=64", "train.batch_size=8", "train.threads=1"});
  return load_config_file("", overrides);
}

double cosine(const float* a, const float* b, std::size_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < n; ++i) ab += double(a[i]) * b[i], aa += double(a[i]) * a[i], bb += double(b[i]) * b[i];
  return ab / std::sqrt(aa * bb);
}

// The first step's gradient at bf16 and fp16 points where fp32's does, unscaled to its size; the
// weights the forward read were rounded, and the fp32 masters are back afterwards.
TEST(PrecisionSession, GradientsFollowFp32AndMastersStayFp32) {
  Session ref(tiny({}));
  ref.next_batch();
  ref.forward_backward(ref.batch());
  const std::size_t P = ref.params().numel();
  for (const char* p : {"bf16", "fp16"}) {
    SCOPED_TRACE(p);
    Session s(tiny({std::string("train.precision=") + p}));
    ASSERT_EQ(std::memcmp(s.params().data(), ref.params().data(), P * sizeof(float)), 0) << "the same fp32 init";
    s.next_batch();
    const BatchLoss b = s.forward_backward(s.batch());
    EXPECT_FALSE(b.overflow);
    EXPECT_EQ(std::memcmp(s.params().data(), ref.params().data(), P * sizeof(float)), 0) << "masters restored";
    EXPECT_GT(cosine(s.params().grad(), ref.params().grad(), P), std::string(p) == "fp16" ? 0.999 : 0.99);
    const double norm = global_norm(s.params().grad(), P), ref_norm = global_norm(ref.params().grad(), P);
    EXPECT_NEAR(norm / ref_norm, 1.0, 0.02) << "unscaled";
    // the weights' gradients came out of the products in the format, at the loss scale
    const Precision format = std::string(p) == "fp16" ? Precision::fp16 : Precision::bf16;
    const float scale = float(s.loss_scaler().scale());
    for (std::size_t i = 0; i < P; ++i) {
      const float scaled = s.params().grad()[i] * scale;  // exact: a power of two
      ASSERT_EQ(round_to(format, scaled), scaled) << "parameter entry " << i;
    }
  }
}

// Weights so large that the scaled gradients overflow fp16: those steps are skipped (no update,
// the scale halved each time) until the scale fits, and training goes on between them.
TEST(PrecisionSession, Fp16SkipsOverflowingStepsAndBacksOff) {
  Session s(tiny({"train.precision=fp16", "model.init_std=1.0"}));
  std::vector<float> before(s.params().numel());
  int skipped = 0, updated = 0;
  double scale = 65536.0;
  for (int i = 0; i < 30; ++i) {
    std::copy_n(s.params().data(), before.size(), before.data());
    const StepResult r = s.step();
    ASSERT_FALSE(r.diverged);
    EXPECT_EQ(r.loss_scale, scale) << "step " << i;
    const bool changed = std::memcmp(before.data(), s.params().data(), before.size() * sizeof(float)) != 0;
    EXPECT_EQ(changed, !r.skipped) << "step " << i;
    if (r.skipped)
      ++skipped, scale /= 2;  // halved after each overflow (no growth within 2000 steps)
    else
      ++updated;
  }
  EXPECT_GT(skipped, 0) << "init_std 1 overflows fp16 at scale 2^16";
  EXPECT_GT(updated, 10);
  EXPECT_EQ(s.loss_scaler().skipped(), skipped);
  EXPECT_EQ(s.steps_done(), 30) << "a skipped step still counts in the schedule and the data stream";
}

// `normtool run` at bf16 and fp16: it trains, logs the range statistics and the skipped steps.
TEST(PrecisionRun, TrainsLogsRangesAndSkippedSteps) {
  TempDir tmp;
  const std::string base = "run --config " + source_dir() + "/configs/smoke/lm-layernorm-pre.json";
  CommandResult r = run_normtool(base + " train.precision=bf16 --out " + (tmp / "bf16"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json s = read_json(tmp / "bf16/summary.json");
  EXPECT_EQ(s["precision"], "bf16");
  EXPECT_FALSE(s.contains("loss_scale"));
  const std::vector<json> m = read_jsonl(tmp / "bf16/metrics.jsonl");
  EXPECT_LT(m.back()["loss"].get<double>(), m.front()["loss"].get<double>() - 0.3);
  std::ifstream ranges(tmp / "bf16/ranges.csv");
  std::string header, line;
  std::getline(ranges, header);
  EXPECT_EQ(header, "step,layer,site,position,max_abs,fp16_outside,int8_snr_db,int8_tensor_snr_db");
  int rows = 0;
  while (std::getline(ranges, line)) ++rows;
  EXPECT_EQ(rows, 3 /*steps 0, 30 and the last, 59*/ * 5 /*sites*/ * 2 /*in, out*/ * 32 /*positions*/);

  r = run_normtool(base + " train.precision=fp16 model.init_std=1.0 --out " + (tmp / "fp16"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  s = read_json(tmp / "fp16/summary.json");
  int skipped_lines = 0;
  for (const json& record : read_jsonl(tmp / "fp16/metrics.jsonl"))
    if (record.contains("skipped")) {
      ++skipped_lines;
      EXPECT_TRUE(record["grad_norm"].is_null());
      EXPECT_TRUE(record.contains("loss_scale"));
    }
  EXPECT_GT(skipped_lines, 0);
  EXPECT_EQ(s["loss_scale"]["skipped_steps"], skipped_lines) << "every skipped step has its line";
}

TEST(PrecisionConfig, BadInputIsRefusedWithTheKeyPath) {
  CommandResult r = run_normtool("run train.precision=fp8 --out /nonexistent/x");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("train.precision: expected one of fp32|bf16|fp16, got \"fp8\""), std::string::npos)
      << r.output;
  r = run_normtool("run train.precision=fp16 model.init_std=1e-9 --out /nonexistent/x");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("model.init_std: 1e-09 is below fp16's smallest subnormal"), std::string::npos) << r.output;
  EXPECT_NO_THROW(load_config_file("", {"train.precision=bf16", "model.init_std=1e-9"})) << "bf16 has fp32's range";
}

}  // namespace
}  // namespace nt::test
