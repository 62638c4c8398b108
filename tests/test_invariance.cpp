// Claims E1-E4: the invariance table of the LayerNorm and RMSNorm papers, cell by cell, in
// float64 (eps 0) and float32 (eps 1e-5); the gradient geometry; the model level; the CLI.
#include <gtest/gtest.h>

#include <map>

#include <cmath>

#include <fmt/format.h>

#include "analysis/invariance.h"
#include "analysis/model_invariance.h"
#include "config/config.h"
#include "helpers.h"
#include "norms/norms.h"

namespace nt::test {
namespace {

TEST(Invariance, EveryCellOfThePapersTableInFloat64AndFloat32) {  // claim E1
  // delta >= 1 here: shrinking by delta < 1 brings the summed inputs (variance ~1) toward eps, and
  // float32 then sees eps itself (~1.5e-5 at delta 0.5, the next test); float64 is exact for any delta.
  for (uint64_t seed : {1, 2, 3})
    for (double delta : {2.0, 3.0, 10.0}) {
      LayerSetup s;
      s.seed = seed;
      s.delta = delta;
      const auto cells = layer_invariance(s, table_norms(), all_transforms());
      ASSERT_EQ(cells.size(), table_norms().size() * 6);
      for (const Cell& c : cells) {
        SCOPED_TRACE(fmt::format("{} {} seed {} delta {}", c.norm, to_string(c.transform), seed, delta));
        if (c.expected) {
          EXPECT_LT(c.exact.rel_diff, 1e-10);
          EXPECT_LT(c.practical.rel_diff, c.norm == "prmsnorm" ? 1e-3 : 1e-5);
        } else {
          EXPECT_GT(c.exact.rel_diff, 1e-2);
          EXPECT_GT(c.practical.rel_diff, 1e-2);
        }
        EXPECT_TRUE(c.agrees);
      }
    }
}

TEST(Invariance, TheTableIsThePapers) {  // independent of the code's constant: spelled out again here
  const std::map<std::string, std::string> rows{{"batchnorm", "101110"}, {"weightnorm", "101000"},
                                                {"layernorm", "110101"}, {"rmsnorm", "100101"},
                                                {"prmsnorm", "100101"},   // RMSNorm's (Zhang & Sennrich §4)
                                                {"scalenorm", "100101"},  // RMSNorm's: ||a|| = sqrt(H) RMS(a)
                                                {"dyt", "000000"},        // no statistic: nothing is divided out
                                                {"none", "000000"}};
  for (const std::string& n : table_norms())
    for (Transform t : all_transforms())
      EXPECT_EQ(paper_expects_invariant(n, t), rows.at(n)[int(t)] == '1') << n << " " << to_string(t);
  EXPECT_EQ(table_norms().size(), rows.size());
  EXPECT_EQ(parse_transforms("rescale").size(), 4u);
  EXPECT_EQ(parse_transforms("recenter").size(), 2u);
  EXPECT_THROW(parse_transforms("rescal"), UsageError);
}

TEST(Invariance, ExactForAnyPositiveDelta) {
  for (double delta : {0.01, 0.5, 100.0}) {
    LayerSetup s;
    s.delta = delta;
    for (const Cell& c : layer_invariance(s, table_norms(), all_transforms()))
      EXPECT_EQ(c.exact.verdict, c.expected ? Verdict::invariant : Verdict::changed)
          << c.norm << " " << to_string(c.transform) << " delta " << delta;
  }
}

TEST(Invariance, ShrinkingMakesEpsVisibleInFloat32) {
  // With delta < 1 the summed inputs shrink toward eps: rel ~ eps / (2 sigma^2) (1/delta^2 - 1).
  LayerSetup s;
  s.delta = 0.05;
  const auto cells = layer_invariance(s, {"layernorm"}, {Transform::data_rescale});
  EXPECT_LT(cells[0].exact.rel_diff, 1e-10);
  EXPECT_NEAR(cells[0].practical.rel_diff, 1e-5 / 2 * (1 / (0.05 * 0.05) - 1), 1e-3);
}

TEST(Invariance, GradientScalesInverselyWithTheWeights) {  // claim E2
  const auto rows = gradient_scaling(LayerSetup{});
  ASSERT_EQ(rows.size(), 9u);  // layernorm, rmsnorm, batchnorm x delta 0.5, 2, 10
  for (const auto& r : rows) {
    EXPECT_NEAR(r.grad_ratio, 1.0, 1e-8) << to_string(r.norm) << " delta " << r.delta;
    EXPECT_LT(std::abs(r.grad_w_cosine), 1e-8) << to_string(r.norm);  // the gradient is orthogonal to W
    if (r.norm == NormType::layernorm) {
      EXPECT_LT(r.column_sum, 1e-8);  // and to every 1 gamma^T
    }
  }
}

TEST(Invariance, JacobianSpectralNormIsOneOverTheStatistic) {  // claim E3
  const auto rows = jacobian_norms(1);
  ASSERT_EQ(rows.size(), 6u);
  for (const auto& r : rows) {
    EXPECT_LT(std::abs(r.product - 1.0), 1e-9) << to_string(r.norm) << " scale " << r.scale;
    EXPECT_GT(r.spectral_norm, 0.05 / r.scale);  // a real Jacobian, of the input's scale
  }
}

TEST(Invariance, ModelLevelMlpFollowsTheTable) {
  const RunConfig c =
      load_config("{}", "mlp.json",
                  {"data.dataset=synthetic-classify", "model.arch=mlp", "model.hidden=32", "train.batch_size=32"});
  const auto cells = model_invariance(c, all_transforms(), 3.0);
  ASSERT_EQ(cells.size(), (all_norm_types().size() - 2) * 6);  // every kind but deepnorm and dyt x 6 transforms
  for (const auto& cell : cells) {
    SCOPED_TRACE(fmt::format("{} {}", to_string(cell.norm), to_string(cell.transform)));
    EXPECT_TRUE(cell.agrees) << cell.site_change.rel_diff << " " << cell.logits_change.rel_diff;
    EXPECT_EQ(cell.site, "layer 0 hidden");
  }
}

TEST(Invariance, ModelLevelPreTransformer) {
  const RunConfig c = load_config(
      "{}", "lm.json",
      {"data.dataset=synthetic-lm", "data.seq_len=16", "model.d_model=32", "model.n_heads=2", "train.batch_size=8"});
  const auto cells = model_invariance(c, all_transforms(), 3.0);
  ASSERT_EQ(cells.size(), all_norm_types().size() * 6);  // every kind x 6 transforms
  int judged = 0;
  for (const auto& cell : cells) {
    SCOPED_TRACE(fmt::format("{} {}", to_string(cell.norm), to_string(cell.transform)));
    EXPECT_TRUE(cell.agrees) << cell.site_change.rel_diff << " " << cell.logits_change.rel_diff;
    judged += cell.applicable && cell.predict_site != Prediction::approximate;
  }
  // every pre kind (all but deepnorm) x 3 weight transforms, and deepnorm's w_i rescale (LayerNorm is not
  // invariant to it); deepnorm's other two are "approximately invariant", not judged
  EXPECT_EQ(judged, int(all_norm_types().size() - 1) * 3 + 1);
  // LayerNorm everywhere removes the recentering's shift all the way to the logits:
  for (const auto& cell : cells) {
    if (cell.norm == NormType::layernorm && cell.transform == Transform::weight_recenter) {
      EXPECT_LT(cell.logits_change.rel_diff, 1e-4);
    }
  }
}

// Recentering layer 0 of a 2-layer ReLU MLP under RMSNorm drives every unit below 0: layer 1's
// summed inputs are a row of zeros, which eps 0 turned into 0/0 = NaN logits that still "agreed"
// (NaN counted as changed). The model level's eps keeps them finite, and a cell whose measurement
// is not finite never agrees.
TEST(Invariance, ModelLevelMeasuresAreFiniteWhereARowOfZerosMeetsANorm) {
  const RunConfig c = load_config_file(source_dir() + "/configs/smoke/mlp-batchnorm.json", {});
  const auto cells = model_invariance(c, all_transforms(), 3.0);
  ASSERT_EQ(cells.size(), (all_norm_types().size() - 2) * 6);
  for (const auto& cell : cells) {
    SCOPED_TRACE(fmt::format("{} {}", to_string(cell.norm), to_string(cell.transform)));
    EXPECT_TRUE(std::isfinite(cell.site_change.rel_diff) && std::isfinite(cell.logits_change.rel_diff));
    EXPECT_TRUE(cell.agrees) << cell.site_change.rel_diff << " " << cell.logits_change.rel_diff;
  }
}

// A norm the config refuses in every site (batchnorm or dyt beside model.qk_norm in the reordered
// placement) is not applicable, with the config's reason, not an internal error; one norm by name.
TEST(Invariance, ModelLevelNormsTheConfigRefusesAreNotApplicable) {
  const RunConfig c = load_config_file(source_dir() + "/configs/smoke/lm-layernorm-reordered-qk-norm.json", {});
  int applicable = 0;
  for (const auto& cell : model_invariance(c, all_transforms(), 3.0)) {
    SCOPED_TRACE(fmt::format("{} {}", to_string(cell.norm), to_string(cell.transform)));
    EXPECT_TRUE(cell.agrees);
    applicable += cell.applicable;
    if (cell.norm == NormType::batchnorm) {
      EXPECT_FALSE(cell.applicable);
      EXPECT_NE(cell.why.find("the config refuses this norm: model.qk_norm"), std::string::npos) << cell.why;
    }
  }
  EXPECT_EQ(applicable, 2 * 3);  // layernorm and rmsnorm (reordered, QK-norm) x the 3 weight transforms
  const auto one = model_invariance(c, all_transforms(), 3.0, "rmsnorm");
  ASSERT_EQ(one.size(), 6u);
  for (const auto& cell : one) EXPECT_EQ(cell.norm, NormType::rmsnorm);
  EXPECT_THROW(model_invariance(c, all_transforms(), 3.0, "weightnorm"), UsageError);
}

TEST(Invariance, ExampleStandardizesTheSeedArticlesSample) {  // claim E4
  const std::string text = invariance_example();
  EXPECT_NE(text.find("LN(x)          = [-0.707105, 0.000000, 1.414210, -1.414210, 0.707105]"), std::string::npos)
      << text;
}

TEST(InvarianceCli, AllPrintsTheFullTableAndExits0) {
  const auto r = run_normtool("invariance --transform all");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::size_t rows = table_norms().size();
  EXPECT_NE(r.output.find(fmt::format("{0} of {0} cells agree", rows * 6)), std::string::npos) << r.output;
  const auto rescale = run_normtool("invariance --transform rescale");
  EXPECT_NE(rescale.output.find(fmt::format("{0} of {0} cells agree", rows * 4)), std::string::npos) << rescale.output;
  EXPECT_EQ(rescale.output.find("W recenter"), std::string::npos);
}

TEST(InvarianceCli, JsonMatchesTheSpec) {
  const auto r = run_normtool("invariance --format json");
  ASSERT_EQ(r.exit_code, 0);
  const auto j = nlohmann::json::parse(r.output);
  ASSERT_EQ(j.size(), table_norms().size() * 6);
  int none_invariant = 0;
  for (const auto& cell : j) {
    for (const char* k : {"norm", "transform", "max_abs_diff", "rel_diff", "invariant", "expected", "agrees"})
      EXPECT_TRUE(cell.contains(k)) << k;
    EXPECT_EQ(cell["invariant"], cell["expected"]);
    EXPECT_TRUE(cell["agrees"].get<bool>());
    if (cell["norm"] == "none") none_invariant += cell["invariant"].get<bool>();
  }
  EXPECT_EQ(none_invariant, 0);  // the none row is ✗ everywhere
}

TEST(InvarianceCli, BadArgumentsExit2) {
  EXPECT_EQ(run_normtool("invariance --transform rescal").exit_code, 2);
  EXPECT_EQ(run_normtool("invariance --norm lyernorm").exit_code, 2);
  EXPECT_EQ(run_normtool("invariance --delta -1").exit_code, 2);
  EXPECT_EQ(run_normtool("invariance --format xml").exit_code, 2);
  // the layer level's options with a config are errors naming them, not ignored
  const std::string config = "invariance --config " + source_dir() + "/configs/smoke/mlp-batchnorm.json";
  for (const char* option : {"--seed", "--geometry", "--norm"}) {
    const auto r = run_normtool(config + (std::string(option) == "--seed"   ? " --seed 7"
                                          : std::string(option) == "--norm" ? " --norm deepnorm"
                                                                            : " --geometry"));
    EXPECT_EQ(r.exit_code, 2) << option << r.output;
    EXPECT_NE(r.output.find(std::string("error: ") + option + ":"), std::string::npos) << r.output;
  }
  const auto rms = run_normtool(config + " --norm rmsnorm");
  EXPECT_EQ(rms.exit_code, 0) << rms.output;
  EXPECT_NE(rms.output.find("6 of 6 applicable cells agree"), std::string::npos) << rms.output;
}

}  // namespace
}  // namespace nt::test
