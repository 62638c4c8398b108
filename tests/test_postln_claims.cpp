// The measurements of the Post-LN claims in the encoder-decoder (src/claims/postln_gradients.cpp,
// postln.cpp, postln_update.cpp), checked by value against the model's own gradients, the
// contract's constants and a second session's outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <unistd.h>

#include "claims/evidence.h"
#include "claims/postln.h"
#include "claim_parts.h"
#include "data/dataset.h"
#include "train/session.h"

namespace nt::test {
namespace {

// C7's per-stack profile: the Frobenius norm of the batch-averaged W2 gradient, computed here
// parameter by parameter from a second session with the same init and data stream.
TEST(PostLnClaims, W2GradientNormsAreEachStacksOwnLayerByLayer) {
  const RunConfig c =
      session_config("encdec-tiny.json", {"data.dataset=synthetic-seq2seq", "model.n_layers=2", "model.n_dec_layers=3",
                                          "model.norm.placement=post", "model.init=xavier", "model.activation=relu",
                                          "model.d_ff=64", "train.batch_size=8", "seed=7"});
  const std::shared_ptr<const Dataset> data = make_dataset(c);
  const int batches = 3;
  const auto norms = w2_gradient_norms(c, data, batches);
  ASSERT_EQ(norms.size(), 2u);
  ASSERT_EQ(norms.at("enc.").size(), 2u);
  ASSERT_EQ(norms.at("dec.").size(), 3u);

  Session run(c, data);
  ParamStore<float>& ps = run.params();
  std::map<std::pair<std::string, int>, std::vector<double>> sums;  // (name, layer) -> summed gradient
  for (int b = 0; b < batches; ++b) {
    run.next_batch();
    run.forward_backward(run.batch());
    for (int i = 0; i < ps.count(); ++i) {
      const auto& info = ps.info(i);
      if (info.name != "enc.ffn.fc2.weight" && info.name != "dec.ffn.fc2.weight") continue;
      auto& s = sums[{info.name, info.layer}];
      s.resize(info.size(), 0.0);
      for (std::size_t k = 0; k < info.size(); ++k) s[k] += ps.grad()[info.offset + k];
    }
  }
  ASSERT_EQ(sums.size(), 5u);
  for (const auto& [key, s] : sums) {
    double s2 = 0;
    for (double g : s) s2 += (g / batches) * (g / batches);
    const double expected = std::sqrt(s2);
    const double got = norms.at(key.first.substr(0, 4)).at(key.second);
    EXPECT_GT(expected, 0.0);
    EXPECT_NEAR(got, expected, 1e-9 + 1e-6 * expected) << key.first << " layer " << key.second;
  }
  // the decoder-only transformer is one stack, named ""
  const RunConfig lm = session_config("lm-tiny.json", {"model.n_layers=3", "train.batch_size=4"});
  const auto lm_norms = w2_gradient_norms(lm, make_dataset(lm), 1);
  ASSERT_EQ(lm_norms.size(), 1u);
  EXPECT_EQ(lm_norms.at("").size(), 3u);
}

// C9 runs the encoder-decoder with model.n_dec_layers null: the decoder as deep as the encoder,
// and DeepNet's encoder-decoder constants for N = M (DeepNet Figure 2), not the decoder-only ones.
TEST(PostLnClaims, TheDepthSweepsEncoderDecoderIsNByNWithTheEncoderDecoderConstants) {
  for (int n : {6, 12, 18}) {
    const RunConfig c = session_config("encdec-tiny.json", {fmt::format("model.n_layers={}", n),
                                                            "model.n_dec_layers=null", "model.norm.type=deepnorm"});
    EXPECT_EQ(c.model.dec_layers(), n);
    const double nm = std::pow(double(n), 5);
    EXPECT_NEAR(c.deepnorm(StackRole::encoder).alpha, 0.81 * std::pow(nm, 1.0 / 16), 1e-12);
    EXPECT_NEAR(c.deepnorm(StackRole::encoder).beta, 0.87 * std::pow(nm, -1.0 / 16), 1e-12);
    EXPECT_NEAR(c.deepnorm(StackRole::decoder).alpha, std::pow(3.0 * n, 0.25), 1e-12);
    EXPECT_NEAR(c.deepnorm(StackRole::decoder).beta, std::pow(12.0 * n, -0.25), 1e-12);
  }
  // at 6L-6L: encoder alpha 1.418, beta 0.497; decoder alpha 2.060, beta 0.343 (the PyTorch peer's figures)
  const RunConfig six = session_config("encdec-tiny.json", {"model.n_layers=6", "model.n_dec_layers=null"});
  EXPECT_NEAR(six.deepnorm(StackRole::encoder).alpha, 1.418, 5e-4);
  EXPECT_NEAR(six.deepnorm(StackRole::encoder).beta, 0.497, 5e-4);
  EXPECT_NEAR(six.deepnorm(StackRole::decoder).alpha, 2.060, 5e-4);
  EXPECT_NEAR(six.deepnorm(StackRole::decoder).beta, 0.343, 5e-4);
}

// C10's model update is taken over the real target tokens: recomputed here from a second session
// with the same init and data stream, padding left out, and it differs from the same sum over
// every row (so the test fails if padding enters it).
TEST(PostLnClaims, TheModelUpdateIsOverTheRealTargetTokensOnly) {
  const RunConfig c =
      session_config("encdec-tiny.json", {"data.dataset=synthetic-seq2seq", "model.n_layers=2",
                                          "model.n_dec_layers=null", "model.norm.placement=post", "model.init=xavier",
                                          "model.d_ff=64", "train.batch_size=8", "train.warmup_steps=0", "seed=3"});
  const std::vector<int> at{1, 3};
  const UpdateTrace u = model_update(c, at);
  ASSERT_EQ(u.update.size(), at.size());

  Session run(c);
  Batch probe;
  run.data().val_batch(0, c.train.batch_size, probe);
  ASSERT_TRUE(probe.padded);
  ASSERT_LT(probe.real_targets(), int64_t(probe.mask.size()));  // the probe has padding
  auto final_hidden = [&] {
    run.forward(probe, /*training=*/false);
    const Tensor<float>& y = run.model().sites().back().out;
    EXPECT_EQ(std::size_t(y.rows), probe.mask.size());
    return std::vector<double>(y.data, y.data + y.size());
  };
  const std::vector<double> F0 = final_hidden();
  const std::size_t cols = F0.size() / probe.mask.size();
  for (int t = 1, k = 0; t <= at.back(); ++t) {
    run.step();
    if (t != at[k]) continue;
    const std::vector<double> F = final_hidden();
    double real = 0, all = 0, n_real = 0;
    for (std::size_t row = 0; row < probe.mask.size(); ++row) {
      double d2 = 0;
      for (std::size_t j = 0; j < cols; ++j) {
        const double d = F[row * cols + j] - F0[row * cols + j];
        d2 += d * d;
      }
      all += d2;
      if (probe.mask[row] > 0) real += d2, n_real += 1;
    }
    const double expected = std::sqrt(real / n_real), every_row = std::sqrt(all / double(probe.mask.size()));
    EXPECT_NEAR(u.update[k], expected, 1e-9 * expected) << "t = " << t;
    EXPECT_GT(std::abs(every_row - expected), 1e-3 * expected) << "t = " << t << ": padding changes nothing here";
    ++k;
  }
}

// C8's BERT steps to target, per seed: Pre-LN's first evaluation after step 0 at or below Post-LN's
// final loss, over Post-LN's own first; a Pre-LN run that never reaches it counts as 1100 (censored).
TEST(PostLnClaims, TheStepsToTargetAreEachRunsFirstEvaluationAtPostLnsFinalLossCensoredAt1100) {
  auto run = [](int seed, std::vector<std::pair<int, double>> val) {
    RunRecord r;
    r.overrides["seed"] = std::to_string(seed);
    r.summary = {{"final_val_loss", val.back().second}, {"diverged", false}};
    r.val_loss = std::move(val);
    return r;
  };
  const ClaimContext ctx;
  Evidence ev{&ctx, {1, 2, 3}, {}};
  ev.runs["bert-warmup"] = {run(1, {{0, 5.0}, {500, 3.1}, {1000, 3.0}}), run(2, {{0, 5.0}, {900, 3.0}, {1000, 3.0}}),
                            run(3, {{0, 5.0}, {800, 2.9}, {1000, 3.0}})};
  ev.runs["bert-pre"] = {run(1, {{0, 5.0}, {500, 3.01}, {600, 2.99}, {1000, 2.8}}),
                         run(2, {{0, 2.9}, {900, 3.2}, {1000, 3.1}}), run(3, {{0, 5.0}, {400, 3.0}, {1000, 2.9}})};
  const Claim* c8 = find_claim("C8");
  ASSERT_NE(c8, nullptr);
  const auto m = std::find_if(c8->measures.begin(), c8->measures.end(),
                              [](const MeasureSpec& x) { return x.name.find("steps to") != std::string::npos; });
  ASSERT_NE(m, c8->measures.end());
  // 600 / 1000; never (step 0 does not count): 1100 / 900; 400 / 800 (Post-LN reached its final loss early)
  const std::vector<double> v = m->read(ev);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_DOUBLE_EQ(v[0], 0.6);
  EXPECT_DOUBLE_EQ(v[1], 1100.0 / 900.0);
  EXPECT_DOUBLE_EQ(v[2], 0.5);
  EXPECT_EQ(m->scale, Scale::log);
  EXPECT_TRUE(std::holds_alternative<AtMost>(m->criterion));
}

// C16, per seed: Post-LN's max/min over the depths of the last layer's ||grad W2||, and Pre-LN's
// least-squares slope of its log against log L, from each depth's run (the profile's last entry)
TEST(PostLnClaims, TheLastLayersGradientAgainstDepthIsReadOffEachDepthsLastLayer) {
  const std::vector<int> depths{2, 4, 6, 8, 12, 16};
  auto run = [](int seed, const char* placement, int L, double last) {
    RunRecord r;
    r.overrides = {
        {"seed", std::to_string(seed)}, {"model.norm.placement", placement}, {"model.n_layers", std::to_string(L)}};
    r.summary = {{"", std::vector<double>{9.0, last}}};  // layer 0's value is not the last layer's
    return r;
  };
  const ClaimContext ctx;
  Evidence ev{&ctx, {1, 2}, {}};
  for (int seed : {1, 2})
    for (int L : depths) {
      ev.runs["depths"].push_back(run(seed, "post", L, seed == 1 ? 1.0 + 0.01 * L : 2.0));  // 1.02 .. 1.16
      ev.runs["depths"].push_back(run(seed, "pre", L, 3.0 * std::pow(L, seed == 1 ? -0.5 : -0.3)));
    }
  const Claim* c16 = find_claim("C16");
  ASSERT_NE(c16, nullptr);
  const auto spread = measure_named(*c16, "decoder-only, Post-LN: last layer's ||grad W2||, max / min over L").read(ev);
  ASSERT_EQ(spread.size(), 2u);
  EXPECT_NEAR(spread[0], 1.16 / 1.02, 1e-12);
  EXPECT_NEAR(spread[1], 1.0, 1e-12);
  const auto slope =
      measure_named(*c16, "decoder-only, Pre-LN: log-log slope of the last layer's ||grad W2|| over L").read(ev);
  ASSERT_EQ(slope.size(), 2u);
  EXPECT_NEAR(slope[0], -0.5, 1e-12);
  EXPECT_NEAR(slope[1], -0.3, 1e-12);
}

// C17, per seed: the median over blocks of ||LN input|| / sqrt(d), after the run over at step 0, and
// Post-LN's over DeepNorm's at the last step, from what each run's probe recorded
TEST(PostLnClaims, TheNormInputsGrowthIsTheMedianOverBlocksAfterOverBefore) {
  auto run = [](int seed, const char* norm, double before, double after) {
    RunRecord r;
    r.overrides = {{"seed", std::to_string(seed)}, {"model.norm.type", norm}};
    r.summary = {{"median0", before}, {"median", after}};
    return r;
  };
  const ClaimContext ctx;
  Evidence ev{&ctx, {1, 2}, {}};
  ev.runs["no-warmup"] = {run(1, "layernorm", 1.5, 6.0), run(1, "deepnorm", 2.0, 2.5), run(2, "layernorm", 1.0, 3.0),
                          run(2, "deepnorm", 2.0, 2.0)};
  const Claim* c17 = find_claim("C17");
  ASSERT_NE(c17, nullptr);
  EXPECT_EQ(measure_named(*c17, "Post-LN: median over blocks of ||LN input|| / sqrt(d), last step / step 0").read(ev),
            (std::vector<double>{4.0, 3.0}));
  EXPECT_EQ(measure_named(*c17, "Post-LN / DeepNorm: that median at the last step").read(ev),
            (std::vector<double>{2.4, 1.5}));
  EXPECT_EQ(measure_named(*c17, "DeepNorm: median over blocks of ||LN input|| / sqrt(d), last step / step 0").read(ev),
            (std::vector<double>{1.25, 1.0}));
}

// C18, per seed: Post-LN-init's final loss over Post-LN's (a diverged run counts as ln 256), and its
// last decoder block's gradient norm at step 0 over Post-LN's: the norm of all the block's
// parameters' gradients together, from layers.jsonl's step-0 lines (embeddings, other stacks, the
// head and later steps left out)
TEST(PostLnClaims, PostLnInitsGradientIsTheLastDecoderBlocksAtStepZero) {
  const auto root = std::filesystem::temp_directory_path() / ("c18-" + std::to_string(::getpid()));
  auto run = [&](const char* init, double loss, bool diverged, double fc2, double norm) {
    RunRecord r;
    r.dir = (root / init).string();
    std::filesystem::create_directories(r.dir);
    std::ofstream(root / init / "layers.jsonl")
        << R"({"step":0,"param":"dec.tok_emb.weight","layer":0,"grad_norm":100})"
        << "\n"
        << R"({"step":0,"param":"enc.ffn.fc2.weight","layer":1,"grad_norm":70})"
        << "\n"
        << R"({"step":0,"param":"dec.attn.q.weight","layer":0,"grad_norm":1})"
        << "\n"
        << R"({"step":0,"param":"dec.ffn.fc2.weight","layer":1,"grad_norm":)" << fc2 << "}\n"
        << R"({"step":0,"param":"dec.ffn_norm.weight","layer":1,"grad_norm":)" << norm << "}\n"
        << R"({"step":0,"param":"head.weight","layer":2,"grad_norm":50})"
        << "\n"
        << R"({"step":999,"param":"dec.ffn.fc2.weight","layer":1,"grad_norm":200})"
        << "\n";
    r.overrides = {{"seed", "1"}, {"model.init", init}};
    r.summary = {{"final_val_loss", loss}, {"diverged", diverged}};
    return r;
  };
  const ClaimContext ctx;
  Evidence ev{&ctx, {1}, {}};
  ev.runs["no-warmup"] = {run("xavier", 9.0, true, 3.0, 4.0), run("postln-init", 2.0, false, 6.0, 8.0)};
  const Claim* c18 = find_claim("C18");
  ASSERT_NE(c18, nullptr);
  EXPECT_EQ(measure_named(*c18, "Post-LN: last decoder layer's gradient norm at step 0").read(ev),
            (std::vector<double>{5.0}));
  const MeasureSpec& g = measure_named(*c18, "Post-LN-init / Post-LN: last decoder layer's gradient norm at step 0");
  EXPECT_EQ(g.read(ev), (std::vector<double>{2.0}));
  EXPECT_EQ(std::get<AtLeast>(g.criterion).bound, 1.0);
  const MeasureSpec& loss = measure_named(*c18, "Post-LN-init / Post-LN: final validation loss");
  EXPECT_EQ(loss.read(ev), (std::vector<double>{2.0 / std::log(256.0)}));
  EXPECT_EQ(std::get<AtMost>(loss.criterion).bound, 0.9);
  EXPECT_EQ(loss.scale, Scale::log);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace nt::test
