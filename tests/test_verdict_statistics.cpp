// The statistics of a verdict (claims/statistics.h), the typed criteria (claims/criterion.h) and
// the runner's staged looks and preconditions (claims/runner.h), against closed forms and small
// claims whose per-seed values are known.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>

#include "claims/runner.h"
#include "config/config.h"

namespace nt::test {
namespace {

TEST(VerdictStatistics, LogScaleIsTheGeometricMeanWithAnIntervalOfTheLogs) {
  const std::vector<double> v{2, 8, 4};
  const Estimate e = estimate(v, Scale::log, 0.95, 2);
  EXPECT_NEAR(e.interval.mean, 4, 1e-12);                                                      // (2 * 8 * 4)^(1/3)
  const double sd = std::sqrt((std::pow(std::log(0.5), 2) + std::pow(std::log(2.0), 2)) / 2);  // logs about ln 4
  const double half = student_t_quantile(0.975, 2) * sd / std::sqrt(3.0);
  EXPECT_NEAR(e.interval.lo, 4 * std::exp(-half), 1e-9);
  EXPECT_NEAR(e.interval.hi, 4 * std::exp(half), 1e-9);
  EXPECT_GT(e.interval.lo, 0);  // where the arithmetic interval would reach below 0
  EXPECT_LT(estimate(v, Scale::linear, 0.95, 2).interval.lo, 0);
  // a ratio that is not positive has no log: no interval, so no verdict
  const Estimate bad = estimate({1.0, -1.0, 2.0}, Scale::log, 0.95, 2);
  EXPECT_TRUE(std::isnan(bad.interval.lo));
  EXPECT_EQ(decide(AtLeast{0.5}, bad.interval), ClaimVerdict::inconclusive);
}

TEST(VerdictStatistics, OneSidedBoundsUseTheOneSidedQuantile) {
  const Estimate e = estimate({1, 2, 3}, Scale::linear, 0.95, 1);
  EXPECT_NEAR(e.interval.hi - 2, 2.919985580355516 / std::sqrt(3.0), 1e-9);  // t_{0.95, 2}
  EXPECT_NEAR(2 - e.interval.lo, 2.919985580355516 / std::sqrt(3.0), 1e-9);
  EXPECT_EQ(e.sides, 1);
}

TEST(VerdictStatistics, LooksAreThreeSixAndTenAtBonferroniConfidence) {
  const Rules v2 = rules_v2();
  EXPECT_EQ(looks_for(v2, 10), (std::vector<int>{3, 6, 10}));
  EXPECT_EQ(looks_for(v2, 5), (std::vector<int>{3, 5}));
  EXPECT_EQ(looks_for(v2, 3), (std::vector<int>{3}));
  EXPECT_NEAR(look_confidence(v2, 10), 1 - 0.05 / 3, 1e-15);
  EXPECT_NEAR(look_confidence(v2, 3), 0.95, 1e-15);  // one look planned: no correction
  EXPECT_EQ(looks_for(rules_v1(), 10), (std::vector<int>{10}));
  EXPECT_NEAR(look_confidence(rules_v1(), 10), 0.95, 1e-15);
}

TEST(VerdictStatistics, CriteriaSayWhatTheyDecide) {
  const Interval above{3, 2.0, 0.1, 1.6, 2.4}, straddles{3, 1.0, 0.1, 0.9, 1.1}, below{3, 0.5, 0.1, 0.3, 0.7};
  EXPECT_EQ(text(AtLeast{1.5}), ">= 1.5");
  EXPECT_EQ(text(AtMost{0.9}), "<= 0.9");
  EXPECT_EQ(text(Within{0.98, 1.02}), "in [0.98, 1.02]");
  EXPECT_EQ(text(NonInferior{0.02}), "<= 1.02 (non-inferior)");
  EXPECT_EQ(text(Above{1}), "> 1");
  EXPECT_EQ(sides(AtLeast{1}), 1);
  EXPECT_EQ(sides(Within{0, 1}), 2);
  EXPECT_EQ(decide(AtLeast{1.5}, above), ClaimVerdict::pass);
  EXPECT_EQ(decide(AtLeast{1.5}, below), ClaimVerdict::fail);
  EXPECT_EQ(decide(NonInferior{0.02}, below), ClaimVerdict::pass);
  EXPECT_EQ(decide(NonInferior{0.02}, above), ClaimVerdict::fail);
  EXPECT_EQ(decide(Above{1}, straddles), ClaimVerdict::inconclusive);
  EXPECT_EQ(decide(Above{1}, Interval{3, 1.0, 0.1, 0.8, 1.0}), ClaimVerdict::fail);  // not above 1 anywhere
  EXPECT_EQ(decide(Within{0.8, 1.2}, straddles), ClaimVerdict::pass);
  EXPECT_EQ(decide(Within{0.8, 1.2}, above), ClaimVerdict::fail);
  EXPECT_FALSE(decides(Reported{}));
}

// A claim whose one session "measures" value(seed); counts the sessions run
std::atomic<int> sessions{0};
Claim toy(std::function<double(int)> value, Criterion criterion, std::vector<MeasureSpec> more = {}) {
  Claim c{.id = "T1", .slug = "toy", .title = "a toy", .source = "this test", .why = "to test the runner"};
  c.settings = {
      {.name = "toy", .config = "mlp-fmnist.json", .session = [value](const RunConfig& rc, const ClaimContext&) {
         ++sessions;
         return nlohmann::json{{"value", value(rc.seed)}};
       }}};
  c.measures = {{"value", criterion, [](const Evidence& ev) {
                   std::vector<double> v;
                   for (const RunRecord* r : ev.of("toy")) v.push_back(r->summary["value"].get<double>());
                   return v;
                 }}};
  c.measures.insert(c.measures.end(), more.begin(), more.end());
  return c;
}

ClaimContext context() {
  ClaimContext ctx;
  ctx.out = (std::filesystem::temp_directory_path() / "normtool-toy").string();
  ctx.jobs = 1;
  ctx.seeds = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  ctx.rules = rules_v2();
  return ctx;
}

TEST(VerdictStatistics, AClaimStopsAtTheFirstLookThatDecides) {
  sessions = 0;
  const ClaimResult r = reproduce_claim(toy([](int seed) { return 2 + 0.01 * seed; }, AtLeast{1}), context());
  EXPECT_EQ(r.verdict, ClaimVerdict::pass);
  EXPECT_EQ(r.look, 3);
  EXPECT_EQ(r.seeds, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(sessions, 3);  // seeds 4-10 never ran
  ASSERT_EQ(r.measures.size(), 1u);
  EXPECT_NEAR(r.measures[0].confidence, 1 - 0.05 / 3, 1e-12);
  EXPECT_EQ(r.measures[0].sides, 1);
}

TEST(VerdictStatistics, AnUndecidedClaimLooksAgainWithoutRerunningASeed) {
  sessions = 0;
  const ClaimResult r = reproduce_claim(toy([](int seed) { return seed % 2 ? 0.0 : 2.0; }, AtLeast{1}), context());
  EXPECT_EQ(r.verdict, ClaimVerdict::inconclusive);
  EXPECT_EQ(r.look, 10);
  EXPECT_EQ(r.seeds.size(), 10u);
  EXPECT_EQ(sessions, 10);  // the sessions of seeds 1-3 and 4-6 were kept across the looks
}

TEST(VerdictStatistics, AnUnmetPreconditionIsInconclusiveWithItsReasonNeverFail) {
  MeasureSpec quality{.name = "baseline quality", .criterion = AtLeast{100}, .read = [](const Evidence& ev) {
                        return std::vector<double>(ev.seeds.size(), 1.0);
                      }};
  quality.precondition = true;
  const ClaimResult r = reproduce_claim(toy([](int) { return 0.0; }, AtLeast{1}, {quality}), context());
  EXPECT_EQ(r.verdict, ClaimVerdict::inconclusive);  // the deciding measure alone would FAIL
  EXPECT_NE(r.reason.find("precondition not met: baseline quality >= 100"), std::string::npos) << r.reason;
  EXPECT_EQ(r.look, 10);  // an unmet precondition decides nothing, so every look was taken
}

}  // namespace
}  // namespace nt::test
