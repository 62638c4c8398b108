// The measures of the RMSNorm paper's claims (src/claims/rmsnorm_paper.cpp), read off synthetic runs
// with known numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "claims/claim.h"
#include "claim_parts.h"

namespace nt::test {
namespace {

RunRecord run(int seed, const char* norm, nlohmann::json loss, bool diverged = false) {
  RunRecord r;
  r.overrides = {{"seed", std::to_string(seed)}, {"model.norm.type", norm}};
  r.summary = {{"final_val_loss", loss}, {"diverged", diverged}};
  return r;
}

// C14, per seed: RMS / LN final loss of the off-centre runs, a diverged run (or a null loss) counted
// as ln 256; each norm's off-centre loss over its normal-init run; divergence as 1
TEST(RmsNormClaims, TheOffCentreRatioCountsADivergedRunAsTheUniformPredictor) {
  const ClaimContext ctx;
  Evidence ev{&ctx, {11, 12}, {}};
  ev.runs["rnnsearch-shifted"] = {run(11, "layernorm", 9.0, true), run(11, "rmsnorm", 4.0),
                                  run(12, "layernorm", nullptr), run(12, "rmsnorm", 3.0)};
  ev.runs["rnnsearch-normed"] = {run(11, "layernorm", 2.0), run(11, "rmsnorm", 2.5), run(12, "layernorm", 2.0),
                                 run(12, "rmsnorm", 2.0)};
  ev.runs["transformer-shifted"] = {run(11, "layernorm", 2.0), run(11, "rmsnorm", 3.0), run(12, "layernorm", 4.0),
                                    run(12, "rmsnorm", 3.0)};
  const Claim* c14 = find_claim("C14");
  ASSERT_NE(c14, nullptr);
  const double uniform = std::log(256.0);
  const MeasureSpec& rnn = measure_named(*c14, "RNNSearch, N(0.2, s^2): RMS / LN final validation loss");
  const std::vector<double> v = rnn.read(ev);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_DOUBLE_EQ(v[0], 4.0 / uniform);
  EXPECT_DOUBLE_EQ(v[1], 3.0 / uniform);
  EXPECT_TRUE(std::holds_alternative<AtMost>(rnn.criterion));
  EXPECT_EQ(std::get<AtMost>(rnn.criterion).bound, 1.0);
  EXPECT_EQ(rnn.scale, Scale::log);
  EXPECT_TRUE(rnn.group.empty());
  EXPECT_EQ(measure_named(*c14, "transformer, N(0.2, s^2): RMS / LN final validation loss").read(ev),
            (std::vector<double>{1.5, 0.75}));
  EXPECT_EQ(measure_named(*c14, "RNNSearch, LN, N(0.2, s^2): diverged (1 = yes; the mean is the share)").read(ev),
            (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(measure_named(*c14, "RNNSearch, RMS, N(0.2, s^2): diverged (1 = yes; the mean is the share)").read(ev),
            (std::vector<double>{0.0, 0.0}));
  EXPECT_EQ(measure_named(*c14, "RNNSearch, RMS: final validation loss, N(0.2, s^2) / normal init").read(ev),
            (std::vector<double>{1.6, 1.5}));
}

}  // namespace
}  // namespace nt::test
