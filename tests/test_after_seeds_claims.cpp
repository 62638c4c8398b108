// The measurements of the claims after the seed papers (src/claims/after_seeds.cpp), on synthetic
// runs and logs with numbers worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fstream>

#include "claims/after_seeds.h"
#include "claims/evidence.h"
#include "claim_parts.h"
#include "helpers.h"
#include "train/session.h"

namespace nt::test {
namespace {

RunRecord run_with(std::vector<std::pair<int, double>> val, nlohmann::json summary) {
  RunRecord r;
  r.val_loss = std::move(val);
  r.summary = std::move(summary);
  return r;
}

// C19: the final validation loss, at most the step-0 one; a diverged or lost final loss is the step-0 one
TEST(AfterSeedsClaims, TheCappedLossIsTheFinalLossAtMostTheInitialOne) {
  const std::vector<std::pair<int, double>> val{{0, 5.5}, {100, 3.0}};
  EXPECT_DOUBLE_EQ(capped_loss(run_with(val, {{"final_val_loss", 3.0}, {"diverged", false}})), 3.0);
  EXPECT_DOUBLE_EQ(capped_loss(run_with(val, {{"final_val_loss", 6.25}, {"diverged", false}})), 5.5);
  EXPECT_DOUBLE_EQ(capped_loss(run_with(val, {{"final_val_loss", 3.0}, {"diverged", true}})), 5.5);
  EXPECT_DOUBLE_EQ(capped_loss(run_with(val, {{"final_val_loss", nullptr}})), 5.5);
  EXPECT_TRUE(std::isnan(capped_loss(run_with({{100, 3.0}}, {{"final_val_loss", 3.0}}))));  // no step 0
}

// C19: per seed, the mean over the rates minus the best; with QK-norm over without
TEST(AfterSeedsClaims, TheLrSensitivityIsTheMeanOverRatesMinusTheBestPerSeed) {
  EXPECT_EQ(lr_sensitivity({{3, 4}, {2, 4}, {4, 4}}), (std::vector<double>{1.0, 0.0}));

  const char* rates[] = {"0.001", "0.003162", "0.01", "0.03162", "0.1", "0.3162"};
  const double without[] = {4.0, 3.0, 3.0, 3.0, 5.0, 7.0};  // 7 is capped at 6: mean 4, best 3 -> 1
  const double with[] = {4.0, 3.0, 3.0, 3.5, 3.5, 4.0};     // mean 3.5, best 3 -> 0.5
  const ClaimContext ctx;
  Evidence ev{&ctx, {11}, {}};
  for (int i = 0; i < 6; ++i)
    for (const char* qk : {"false", "true"}) {
      RunRecord r = run_with({{0, 6.0}}, {{"final_val_loss", std::string(qk) == "true" ? with[i] : without[i]}});
      r.overrides = {{"seed", "11"}, {"model.qk_norm", qk}, {"train.lr", rates[i]}};
      ev.runs["lr"].push_back(r);
    }
  const Claim* c19 = find_claim("C19");
  ASSERT_NE(c19, nullptr);
  const MeasureSpec& m = measure_named(*c19, "LR sensitivity, with QK-norm / without");
  EXPECT_EQ(m.read(ev), (std::vector<double>{0.5}));
  EXPECT_EQ(m.scale, Scale::log);
  EXPECT_TRUE(std::holds_alternative<AtMost>(m.criterion));
  EXPECT_EQ(measure_named(*c19, "LR sensitivity without").read(ev), (std::vector<double>{1.0}));
}

// C19: the largest finite attn_logit_max over every line of layers.jsonl
TEST(AfterSeedsClaims, TheLargestAttentionLogitIsOverEveryLoggedStepAndLayer) {
  TempDir d;
  std::filesystem::create_directories(d.path);
  std::ofstream(d / "layers.jsonl") << R"({"step":0,"layer":0,"param":"attn.q.weight","attn_logit_max":2.5})"
                                       "\n"
                                    << R"({"step":0,"layer":0,"param":"attn.k.weight","grad_norm":99})"
                                       "\n"
                                    << R"({"step":50,"layer":1,"param":"attn.q.weight","attn_logit_max":7.0})"
                                       "\n"
                                    << R"({"step":100,"layer":0,"param":"attn.q.weight","attn_logit_max":null})"
                                       "\n"
                                    << R"({"step":100,"layer":1,"param":"attn.q.weight","attn_logit_max":3.0})"
                                       "\n";
  EXPECT_DOUBLE_EQ(largest_attn_logit(d.str()), 7.0);
}

// C21: the residual stream after block l is attn.in of layer l (final.in after the last), std^2 averaged over
// positions, at the last logged step; the embeddings (layer 0) and the other sites left out
TEST(AfterSeedsClaims, TheBlockOutputVarianceIsTheResidualAfterEachBlockAtTheLastStep) {
  TempDir d;
  std::filesystem::create_directories(d.path);
  std::ofstream(d / "stats.csv") << "step,layer,site,position,mean,std\n"
                                 << "0,1,attn.in,0,0,100\n"  // an earlier step: not read
                                 << "9,0,attn.in,0,0,5\n9,0,attn.in,1,0,5\n"
                                 << "9,1,attn.in,0,0.5,1\n9,1,attn.in,1,-0.5,3\n"  // (1 + 9) / 2 = 5
                                 << "9,1,attn.out,0,0,7\n9,1,attn.out,1,0,7\n"
                                 << "9,1,ffn.in,0,0,7\n9,1,ffn.in,1,0,7\n"
                                 << "9,2,final.in,0,0,4\n9,2,final.in,1,0,6\n";  // (16 + 36) / 2 = 26
  const std::map<int, double> v = block_output_variance(d.str());
  EXPECT_EQ(v, (std::map<int, double>{{1, 5.0}, {2, 26.0}}));
  EXPECT_DOUBLE_EQ(last_over_first(v), 26.0 / 5.0);
  EXPECT_DOUBLE_EQ(depth_rank_correlation({{1, 5.0}, {2, 26.0}, {3, 20.0}, {4, 30.0}}), 0.8);
  EXPECT_DOUBLE_EQ(depth_rank_correlation({{1, 3.0}, {2, 2.0}, {3, 1.0}}), -1.0);
}

// C21: a removed block passes its input through exactly (x + 0), in Pre-LN and Peri-LN, and restoring it gives
// back the model's own loss
TEST(AfterSeedsClaims, ARemovedBlockPassesItsInputThroughAndComesBack) {
  for (const char* placement : {"pre", "peri"}) {
    SCOPED_TRACE(placement);
    Session run(session_config("lm-tiny.json", {"model.n_layers=3", "train.steps=5", "seed=4",
                                                fmt::format("model.norm.placement={}", placement)}));
    for (int t = 0; t < 5; ++t) run.step();  // biases and gains away from their init
    Batch batch;
    run.data().val_batch(0, 4, batch);
    auto attn_in = [&](int layer) {
      for (const SiteCapture& site : run.model().sites())
        if (std::string(site.place) == "attn" && site.layer == layer)
          return std::vector<float>(site.in.data, site.in.data + site.in.size());
      throw std::runtime_error("no attn site at that layer");
    };
    const double whole = run.forward(batch, false).loss.data[0];
    EXPECT_NE(attn_in(1), attn_in(2));
    const SavedParams saved = remove_block(run.params(), 2);
    EXPECT_EQ(saved.size(), std::string(placement) == "peri" ? 8u : 4u);
    const double without = run.forward(batch, false).loss.data[0];
    EXPECT_EQ(attn_in(1), attn_in(2));  // block 2 (layer 1) left the stream as it found it
    EXPECT_NE(without, whole);
    restore_block(run.params(), saved);
    EXPECT_EQ(run.forward(batch, false).loss.data[0], whole);
  }
}

}  // namespace
}  // namespace nt::test
