// C20 (src/claims/dyt.cpp): the tanh and line fits (analysis/s_curve.h) on data of known
// parameters, the claim's readers on synthetic runs, and its LN session on a short run.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "analysis/s_curve.h"
#include "claims/claim.h"
#include "claims/evidence.h"
#include "config/config.h"

namespace nt::test {
namespace {

std::vector<double> grid(int n, double lo, double hi) {
  std::vector<double> x;
  for (int i = 0; i < n; ++i) x.push_back(lo + (hi - lo) * i / (n - 1));
  return x;
}

TEST(SCurve, TheTanhFitRecoversKnownParameters) {
  const std::vector<double> x = grid(2001, -6, 6);
  std::vector<double> y;
  for (double v : x) y.push_back(2.5 * std::tanh(0.7 * v));
  const CurveFit t = fit_tanh(x, y);
  EXPECT_NEAR(t.a, 2.5, 1e-4);
  EXPECT_NEAR(t.b, 0.7, 1e-4);
  EXPECT_NEAR(t.r2, 1.0, 1e-9);
  const CurveFit l = fit_line(x, y);
  EXPECT_LT(l.r2, 0.95);        // the saturation a line cannot follow
  EXPECT_NEAR(l.b, 0.0, 1e-9);  // an odd function: no intercept
}

TEST(SCurve, WithNoiseTheFitsAreNearTheTruthAndRSquaredIsTheShareExplained) {
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0, 0.1), xs(0, 2);
  std::vector<double> x, y;
  for (int i = 0; i < 20000; ++i) x.push_back(xs(rng)), y.push_back(-1.5 * std::tanh(1.3 * x.back()) + noise(rng));
  const CurveFit t = fit_tanh(x, y);
  EXPECT_NEAR(t.a, -1.5, 0.01);
  EXPECT_NEAR(t.b, 1.3, 0.03);
  double var = 0;
  for (double v : y) var += v * v / double(y.size());
  EXPECT_NEAR(t.r2, 1 - 0.01 / var, 0.002);  // the noise's variance is what is left
}

TEST(SCurve, OnALineTheTanhFitIsTheLineThroughTheOrigin) {
  const std::vector<double> x = grid(501, -3, 3);
  std::vector<double> y;
  for (double v : x) y.push_back(0.4 * v);
  const CurveFit l = fit_line(x, y), t = fit_tanh(x, y);
  EXPECT_NEAR(l.a, 0.4, 1e-12);
  EXPECT_NEAR(l.b, 0.0, 1e-12);
  EXPECT_NEAR(l.r2, 1.0, 1e-12);
  EXPECT_NEAR(t.r2, 1.0, 1e-5);  // small b: a tanh(b x) ~ a b x
  EXPECT_NEAR(t.a * t.b, 0.4, 1e-3);
  EXPECT_THROW(fit_tanh({1, 2}, {1, 2}), std::invalid_argument);
}

RunRecord ln_run(int seed, std::vector<std::pair<bool, double>> sites, double loss) {
  RunRecord r;
  r.overrides["seed"] = std::to_string(seed);
  r.summary["final_val_loss"] = loss;
  for (const auto& [deep, gap] : sites)
    r.summary["sites"].push_back({{"deep", deep}, {"r2_tanh", 0.9}, {"r2_line", 0.9 - gap}});
  return r;
}

RunRecord dyt_run(int seed, const char* alpha, double loss) {
  RunRecord r;
  r.overrides = {{"seed", std::to_string(seed)}, {"model.norm.dyt_alpha0", alpha}};
  r.summary["final_val_loss"] = loss;
  return r;
}

// (a) per seed the mean of R^2(tanh) - R^2(line) over the deep sites only; (b) DyT(0.5) / LN
TEST(DytClaim, TheFitMeasureIsTheMeanGapOverTheDeeperSitesAndTheLossARatio) {
  const Claim* c = find_claim("C20");
  ASSERT_NE(c, nullptr);
  ClaimContext ctx;
  Evidence ev{&ctx, {1, 2}, {}};
  ev.runs["ln"] = {ln_run(1, {{false, 0.5}, {true, 0.1}, {true, 0.2}}, 2.0),
                   ln_run(2, {{false, 0.0}, {true, 0.0}, {true, 0.04}}, 4.0)};
  for (int s : {1, 2})
    for (const char* a : {"0.1", "0.5", "1", "2"}) ev.runs["dyt"].push_back(dyt_run(s, a, s == 1 ? 2.1 : 3.0));
  const std::vector<double> gap = c->measures.at(0).read(ev);
  ASSERT_EQ(gap.size(), 2u);
  EXPECT_NEAR(gap[0], 0.15, 1e-12);
  EXPECT_NEAR(gap[1], 0.02, 1e-12);
  EXPECT_EQ(text(c->measures.at(0).criterion), ">= 0.05");
  const std::vector<double> loss = c->measures.at(1).read(ev);
  EXPECT_NEAR(loss[0], 1.05, 1e-12);
  EXPECT_NEAR(loss[1], 0.75, 1e-12);
  EXPECT_NEAR(c->measures.at(2).read(ev)[0], 0.1, 1e-12);  // the smallest deep gap
  EXPECT_NEAR(c->measures.at(3).read(ev)[0], 0.5, 1e-12);  // the shallow half's
}

// The LN session on a 2-block model: 5 sites in forward order, the deeper half block 2 and the
// final norm, the pairs LN(x) before the gain bounded by sqrt(d - 1), and the evaluations recorded
TEST(DytClaim, TheLnSessionFitsEverySiteOfTheTrainedModel) {
  const Claim* c = find_claim("C20");
  const RunConfig config = session_config("lm-tiny.json", {"model.n_layers=2", "train.steps=3", "train.eval_every=2",
                                                           "train.eval_batches=1", "train.batch_size=4"});
  const nlohmann::json s = c->settings.at(0).session(config, ClaimContext{});
  const auto& sites = s.at("sites");
  ASSERT_EQ(sites.size(), 5u);
  const std::vector<bool> deep{false, false, true, true, true};
  for (std::size_t k = 0; k < 5; ++k) {
    EXPECT_EQ(sites[k].at("deep").get<bool>(), deep[k]) << k;
    EXPECT_GE(sites[k].at("r2_tanh").get<double>(), sites[k].at("r2_line").get<double>() - 0.01) << k;
  }
  EXPECT_EQ(sites[4].at("place"), "final");
  for (const std::size_t k : {0u, 3u, 4u}) {
    const auto y = sites[k].at("scatter").at("y").get<std::vector<double>>();
    EXPECT_EQ(y.size(), 1500u);
    for (double v : y) ASSERT_LE(std::abs(v), std::sqrt(63.0) + 1e-6);
  }
  EXPECT_FALSE(sites[1].contains("scatter"));
  EXPECT_EQ(s.at("val_loss").size(), 3u);  // at steps 0, 2 and the end (3)
  EXPECT_EQ(s.at("val_loss").back().at(0), 3);
  EXPECT_DOUBLE_EQ(s.at("val_loss").back().at(1).get<double>(), s.at("final_val_loss").get<double>());
}

}  // namespace
}  // namespace nt::test
