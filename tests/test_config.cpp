// Strict config parsing: every problem named by its key path and the offending value, all
// reported at once; overrides parsed as JSON with a string fallback.
#include <gtest/gtest.h>

#include <tuple>

#include <sstream>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "norms/norm_kind.h"

namespace nt {
namespace {

std::vector<std::string> problems_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    load_config(text, "test.json", overrides);
  } catch (const ConfigError& e) {
    return e.problems();
  }
  return {};
}

TEST(Config, EmptyObjectGivesTheSpecDefaults) {
  const RunConfig c = load_config("{}", "configs/x.json", {});
  EXPECT_EQ(c.name, "x");  // the file's stem
  EXPECT_EQ(c.seed, 1);
  EXPECT_EQ(c.data.dataset, DatasetKind::fortunes);
  EXPECT_EQ(c.data.seq_len, 64);
  EXPECT_EQ(c.model.norm.type, NormType::layernorm);
  EXPECT_EQ(c.model.norm.placement, Placement::pre);
  EXPECT_DOUBLE_EQ(c.model.norm.eps, 1e-5);
  EXPECT_EQ(c.train.steps, 500);
  EXPECT_EQ(c.train.optimizer, Optimizer::adam);
  const auto j = config_to_json(c);
  EXPECT_EQ(j["model"]["norm"]["bn_axes"], "batch_time");
  EXPECT_TRUE(j["model"]["norm"]["alpha"].is_null());
  EXPECT_EQ(j["train"]["threads"], 0);
}

// A norm kind prints by the name the config spells, in a stream and in GoogleTest's messages alike
TEST(Config, NormKindsPrintByTheirConfigNames) {
  std::ostringstream os;
  const RunConfig c = load_config(R"({"model": {"norm": {"type": "rmsnorm"}}})", "a.json", {});
  os << NormType::layernorm << ' ' << c.model.norm.type;
  EXPECT_EQ(os.str(), "layernorm rmsnorm");
  EXPECT_EQ(testing::PrintToString(NormType::batchnorm), "batchnorm");
}

TEST(Config, ResolvedConfigRoundTrips) {
  const RunConfig c = load_config(R"({"model": {"norm": {"type": "rmsnorm"}}, "train": {"lr": 3e-4}})", "a.json", {});
  const RunConfig d = load_config(config_to_json(c).dump(), "b.json", {});
  EXPECT_EQ(config_to_json(c), config_to_json(d));
}

TEST(Config, UnknownEnumNamesKeyPathAndValue) {
  const auto p = problems_of(R"({"model": {"norm": {"type": "lyernorm"}}})");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0],
            "model.norm.type: expected one of " + join_names(norm_type_names()) + ", got \"lyernorm\" (test.json)");
}

TEST(Config, UnknownKeySuggestsTheClosest) {
  const auto p = problems_of(R"({"model": {"nrom": {}}, "train": {"stpes": 3}})");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0], "model.nrom: unknown key (did you mean \"model.norm\"?) (test.json)");
  EXPECT_EQ(p[1], "train.stpes: unknown key (did you mean \"train.steps\"?) (test.json)");
}

TEST(Config, KeyAtTheWrongLevelPointsToItsPlace) {
  const auto p = problems_of(R"({"lr": 0.1})");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], "lr: unknown key (did you mean \"train.lr\"?) (test.json)");
}

TEST(Config, WrongTypesAndRangesAllReportedAtOnce) {
  const auto p = problems_of(
      R"({"seed": "1", "train": {"lr": "3e-4", "steps": 0, "batch_size": 2.5}, "model": {"norm": {"affine": 1}},
          "data": {"val_fraction": 1.5}})");
  ASSERT_EQ(p.size(), 6u);
  EXPECT_EQ(p[0], "data.val_fraction: expected a number > 0 and <= 1, got 1.5 (test.json)");
  EXPECT_EQ(p[1], "model.norm.affine: expected true or false, got 1 (test.json)");
  EXPECT_EQ(p[2], "seed: expected an integer >= 0 and <= 2147483647, got \"1\" (test.json)");
  EXPECT_EQ(p[3], "train.batch_size: expected an integer >= 1 and <= 1048576, got 2.5 (test.json)");
  EXPECT_EQ(p[4], "train.lr: expected a number >= 0, got \"3e-4\" (test.json)");
  EXPECT_EQ(p[5], "train.steps: expected an integer >= 1 and <= 2147483647, got 0 (test.json)");
}

TEST(Config, ObjectExpectedWhereAnObjectLives) {
  const auto p = problems_of(R"({"model": "big"})");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], "model: expected an object, got \"big\" (test.json)");
}

TEST(Config, InconsistentCombinations) {
  EXPECT_EQ(problems_of(R"({"data": {"dataset": "fashion-mnist"}})")[0],
            "model.arch: transformer needs a language-modelling dataset (fortunes|synthetic-lm), got data.dataset "
            "\"fashion-mnist\", a classification dataset (model.arch mlp) (test.json)");
  EXPECT_EQ(problems_of(R"({"model": {"d_model": 10, "n_heads": 4}})")[0],
            "model.n_heads: must divide model.d_model = 10, got 4 (test.json)");
  EXPECT_EQ(problems_of(R"({"data": {"dataset": "synthetic-classify"}, "model": {"arch": "mlp",
            "norm": {"type": "deepnorm"}}})")[0],
            "model.norm.type: deepnorm is a transformer residual scheme, not for model.arch mlp: expected one of "
            "none|batchnorm|layernorm|rmsnorm|prmsnorm|scalenorm (test.json)");
  // a batch statistic of one value: the norm would output its bias alone, whatever the input
  EXPECT_EQ(problems_of(R"({"model": {"norm": {"type": "batchnorm", "bn_axes": "batch"}},
            "train": {"batch_size": 1}})")[0],
            "train.batch_size: batchnorm with model.norm.bn_axes batch takes each statistic over the batch's rows "
            "at one position: it needs at least 2 rows, got 1 (test.json)");
  EXPECT_EQ(problems_of(R"({"model": {"norm": {"type": "batchnorm"}}, "data": {"seq_len": 1},
            "train": {"batch_size": 1}})")[0],
            "train.batch_size: batchnorm takes each statistic over train.batch_size x data.seq_len = 1 x 1 value: it "
            "needs at least 2 (test.json)");
  EXPECT_TRUE(problems_of(R"({"model": {"norm": {"type": "batchnorm"}}, "train": {"batch_size": 1}})").empty())
      << "batch_time over the positions of one row";
}

// A key that the config does not read, given a value other than its default, would be ignored
// without a word: refused, naming what reads it. At its default (a full config.json) it is accepted.
TEST(Config, AKeyNothingReadsIsRefusedNamingWhatReadsIt) {
  const std::tuple<std::string, std::vector<std::string>, std::string> cases[] = {
      {"{}",
       {"train.momentum=0.5"},
       "train.momentum: read only with train.optimizer sgd, which this config is not; got 0.5"},
      {R"({"train": {"optimizer": "sgd"}})",
       {"train.beta2=0.95"},
       "train.beta2: read only with train.optimizer adam|adamw"},
      {"{}",
       {"model.cell=lstm"},
       "model.cell: model.arch transformer does not read it (model.arch rnn does); got \"lstm\""},
      {"{}", {"model.norm.p=0.25"}, "model.norm.p: read only with model.norm.type prmsnorm"},
      {"{}", {"model.norm.dyt_alpha0=1"}, "model.norm.dyt_alpha0: read only with model.norm.type dyt"},
      {"{}", {"model.norm.alpha=2"}, "model.norm.alpha: read only with model.norm.type deepnorm"},
      {"{}", {"model.norm.momentum=0.5"}, "model.norm.momentum: read only with a norm over the batch"},
      {"{}", {"model.rotary_base=500"}, "model.rotary_base: read only with model.position rotary"},
      {"{}",
       {"data.max_len=20"},
       "data.max_len: model.arch transformer does not read it (model.arch encoder-decoder|rnnsearch"},
      {"{}",
       {"data.mask_prob=0.3"},
       "data.mask_prob: model.arch transformer does not read it (model.arch encoder does)"},
      {R"({"data": {"dataset": "synthetic-lm"}})",
       {"data.path=/srv/data"},
       "data.path: read only with a dataset read from files"},
      {"{}", {"model.hidden=128"}, "model.hidden: model.arch transformer does not read it (model.arch mlp does)"},
      {R"({"data": {"dataset": "synthetic-classify"}, "model": {"arch": "mlp"}})",
       {"data.seq_len=32"},
       "data.seq_len: model.arch mlp does not read it (model.arch transformer|encoder|rnn does)"},
      {R"({"data": {"dataset": "synthetic-classify"}, "model": {"arch": "mlp"}})",
       {"model.d_ff=64"},
       "model.d_ff: model.arch mlp does not read it (model.arch transformer|encoder|encoder-decoder does)"},
  };
  for (const auto& [file, overrides, message] : cases) {
    const auto p = problems_of(file, overrides);
    ASSERT_EQ(p.size(), 1u) << message;
    EXPECT_TRUE(p[0].starts_with(message)) << p[0];
  }
  // read where they apply, and any key at its default
  EXPECT_TRUE(problems_of("{}", {"train.optimizer=sgd", "train.momentum=0.5"}).empty());
  // set in a layer before the key that decides, it is superseded (a file's sgd with its momentum, run
  // with adam); in the same layer, or after, it is refused: whether the default is spelled out or not
  EXPECT_TRUE(problems_of(R"({"train": {"optimizer": "sgd", "momentum": 0.5}})", {"train.optimizer=adam"}).empty());
  EXPECT_FALSE(problems_of("{}", {"model.norm.p=0.25", "model.norm.type=layernorm"}).empty());
  EXPECT_FALSE(problems_of(R"({"train": {"optimizer": "adam", "momentum": 0.5}})").empty());
  EXPECT_FALSE(problems_of(R"({"train": {"optimizer": "adam"}})", {"train.momentum=0.5"}).empty());
  // a sweep's axes are a layer after its fixed overrides: p for the prmsnorm jobs of a grid of norms
  EXPECT_NO_THROW(load_configs({{}, {"model.norm.p=0.25"}, {"model.norm.type=layernorm"}}));
  EXPECT_TRUE(problems_of("{}", {"model.norm.type=prmsnorm", "model.norm.p=0.25"}).empty());
  EXPECT_TRUE(problems_of("{}", {"model.position=rotary", "model.rotary_base=500"}).empty());
  nlohmann::json defaults = config_to_json(RunConfig{});  // every key at its default (a config.json's)
  defaults["name"] = "defaults";
  for (const std::string& q : problems_of(defaults.dump(), {})) ADD_FAILURE() << q;
}

TEST(Config, NotJsonQuotesTheParserPosition) {
  const auto p = problems_of("{\"seed\": 1,\n }");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("test.json: not valid JSON"), std::string::npos) << p[0];
  EXPECT_NE(p[0].find("line 2"), std::string::npos) << p[0];
}

TEST(Config, CommentsAreAllowed) { EXPECT_EQ(load_config("{ // a comment\n \"seed\": 3 }", "c.json", {}).seed, 3); }

TEST(Config, OverridesParseJsonThenFallBackToString) {
  const RunConfig c = load_config(
      "{}", "x.json",
      {"model.norm.type=deepnorm", "train.lr=3e-4", "model.norm.alpha=2.5", "model.final_norm=false", "name=my run"});
  EXPECT_EQ(c.model.norm.type, NormType::deepnorm);
  EXPECT_DOUBLE_EQ(c.train.lr, 3e-4);
  EXPECT_DOUBLE_EQ(*c.model.norm.alpha, 2.5);
  EXPECT_FALSE(c.model.final_norm);
  EXPECT_EQ(c.name, "my run");
  EXPECT_FALSE(load_config("{}", "x.json", {"model.norm.alpha=null"}).model.norm.alpha.has_value());
}

TEST(Config, BadOverridesAreNamedAsOverrides) {
  const auto p = problems_of("{}", {"train.lr=fast", "model.norm.tpye=rmsnorm", "steps"});
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0], "override \"steps\": expected key.path=value");
  EXPECT_EQ(p[1], "model.norm.tpye: unknown key (did you mean \"model.norm.type\"?) (override)");
  EXPECT_EQ(p[2], "train.lr: expected a number >= 0, got \"fast\" (override)");
}

TEST(Config, DeepNormResolvesPostAndDeepNetConstants) {  // claim E8's constants, N = 12
  const RunConfig c = load_config(R"({"model": {"n_layers": 12, "norm": {"type": "deepnorm"}}})", "d.json", {});
  EXPECT_EQ(c.model.norm.placement, Placement::post);
  // deepnorm is always post: pre given with it is a contradiction naming both keys (docs/usage.md, Configs)
  try {
    load_config(R"({"model": {"norm": {"type": "deepnorm", "placement": "pre"}}})", "d.json", {});
    ADD_FAILURE() << "deepnorm with pre was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.problems(), std::vector<std::string>{"model.norm.placement: pre contradicts model.norm.type deepnorm, "
                                                     "which is always post (norm(alpha x + f(x))): give post or leave "
                                                     "the placement out (d.json)"});
  }
  EXPECT_NEAR(*c.model.norm.alpha, 2.2134, 1e-4);
  EXPECT_NEAR(*c.model.norm.beta, 0.3195, 1e-4);
  const RunConfig d = load_config(R"({"model": {"norm": {"type": "deepnorm", "alpha": 1.5}}})", "d.json", {});
  EXPECT_DOUBLE_EQ(*d.model.norm.alpha, 1.5);
}

}  // namespace
}  // namespace nt
