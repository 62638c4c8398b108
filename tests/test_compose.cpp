// Configs compose (docs/usage.md, "Configs"): --config repeated, later files winning key by key,
// then the positional overrides, then --set; --print-config --sources says where each value came
// from; a contradiction names both keys; every error names its true source.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "helpers.h"

namespace nt::test {
namespace {

using json = nlohmann::json;

std::string write(const TempDir& d, const std::string& name, const std::string& text) {
  std::filesystem::create_directories(d.path);
  std::ofstream(d / name) << text;
  return d / name;
}

std::vector<std::string> problems_of(const ConfigInputs& in) {
  try {
    load_configs(in);
  } catch (const ConfigError& e) {
    return e.problems();
  }
  return {};
}

TEST(Compose, LaterFilesOverrideEarlierKeyByKey) {
  TempDir d;
  const std::string a = write(d, "a.json", R"({"seed": 3, "train": {"lr": 0.1, "steps": 7}})");
  const std::string b = write(d, "b.json", R"({"train": {"lr": 0.2}})");
  ConfigOrigins origins;
  const RunConfig c = load_configs({{a, b}, {}, {}}, &origins);
  EXPECT_EQ(c.seed, 3);
  EXPECT_DOUBLE_EQ(c.train.lr, 0.2);
  EXPECT_EQ(c.train.steps, 7);
  EXPECT_EQ(c.name, "b");  // the last file's stem
  // a 7-step run's intervals, unset, are scaled to its steps: every step (1 = max(1, 7 / 50), ...)
  const std::string scaled = "scaled to train.steps";
  EXPECT_EQ(origins, (ConfigOrigins{{"seed", a},
                                    {"train.eval_every", scaled},
                                    {"train.log_every", scaled},
                                    {"train.lr", b},
                                    {"train.stats_every", scaled},
                                    {"train.steps", a}}));
  EXPECT_EQ(c.train.log_every, 1);
  EXPECT_EQ(c.train.eval_every, 1);
  EXPECT_EQ(c.train.stats_every, 1);
}

TEST(Compose, SetWinsOverPositionalWhateverTheOrder) {
  TempDir d;
  const std::string a = write(d, "a.json", R"({"train": {"lr": 0.1}})");
  ConfigOrigins origins;
  const RunConfig c = load_configs({{a}, {"train.lr=3e-4", "seed=5"}, {"train.lr=1e-3"}}, &origins);
  EXPECT_DOUBLE_EQ(c.train.lr, 1e-3);
  EXPECT_EQ(c.seed, 5);
  // the default 500 steps: 10 evaluations and statistics steps (every 50, not the defaults' 100), and
  // the default log_every (10 = 500 / 50)
  EXPECT_EQ(origins, (ConfigOrigins{{"seed", "override"},
                                    {"train.eval_every", "scaled to train.steps"},
                                    {"train.lr", "--set"},
                                    {"train.stats_every", "scaled to train.steps"}}));
  EXPECT_EQ(c.train.eval_every, 50);
  EXPECT_EQ(c.train.log_every, 10);
}

TEST(Compose, DeepNormWithPreGivenIsAContradictionNamingBoth) {
  EXPECT_EQ(problems_of({{}, {"model.norm.type=deepnorm", "model.norm.placement=pre"}, {}}),
            std::vector<std::string>{"model.norm.placement: pre contradicts model.norm.type deepnorm, which is always "
                                     "post (norm(alpha x + f(x))): give post or leave the placement out (override)"});
  TempDir d;
  const std::string f = write(d, "deep.json", R"({"model": {"norm": {"type": "deepnorm"}}})");
  EXPECT_EQ(problems_of({{f}, {}, {"model.norm.placement=pre"}}),
            std::vector<std::string>{"model.norm.placement: pre contradicts model.norm.type deepnorm, which is always "
                                     "post (norm(alpha x + f(x))): give post or leave the placement out "
                                     "(model.norm.placement: --set; model.norm.type: " +
                                     f + ")"});
  // deepnorm with no placement, or chosen after a file's pre (lm-tiny.json's), resolves to post
  EXPECT_EQ(load_configs({{f}, {}, {}}).model.norm.placement, Placement::post);
  const std::string pre = write(d, "pre.json", R"({"model": {"norm": {"placement": "pre"}}})");
  EXPECT_EQ(load_configs({{pre}, {"model.norm.type=deepnorm"}, {}}).model.norm.placement, Placement::post);
}

TEST(Compose, ErrorsNameTheirTrueSource) {
  TempDir d;
  const std::string a = write(d, "a.json", R"({"seed": 1})");
  const std::string b = write(d, "b.json", R"({"train": {"lr": "fast"}})");
  EXPECT_EQ(problems_of({{a, b}, {}, {}}),
            std::vector<std::string>{"train.lr: expected a number >= 0, got \"fast\" (" + b + ")"});
  EXPECT_EQ(problems_of({{a}, {}, {"train.stpes=3", "seed"}}),
            (std::vector<std::string>{"--set \"seed\": expected key.path=value",
                                      "train.stpes: unknown key (did you mean \"train.steps\"?) (--set)"}));
  // a check across keys blames the layers that set them
  EXPECT_EQ(problems_of({{a}, {"model.d_model=10"}, {}}),
            std::vector<std::string>{"model.n_heads: must divide model.d_model = 10, got 4 (override)"});
}

TEST(Compose, RunTakesRepeatedConfigsAndShowsSources) {
  TempDir d;
  const std::string mine = write(d, "mine.json", R"({"train": {"lr": 0.002, "steps": 9}})");
  const auto r = run_normtool("run --config presets/gpt2.json --config " + mine +
                              " --print-config --sources train.lr=3e-4 --set train.lr=1e-3 seed=4 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = json::parse(r.output);
  EXPECT_DOUBLE_EQ(j["train"]["lr"].get<double>(), 1e-3);
  EXPECT_EQ(j["train"]["steps"], 9);
  EXPECT_EQ(j["seed"], 4);
  EXPECT_EQ(j["name"], "gpt2");  // the preset names its run; the stem of the last file only names an unnamed one
  EXPECT_EQ(j["sources"]["train.lr"], "--set");
  EXPECT_EQ(j["sources"]["seed"], "override");
  EXPECT_EQ(j["sources"]["train.steps"], mine);
  ASSERT_TRUE(j["sources"]["model.norm.type"].is_string());
  EXPECT_NE(j["sources"]["model.norm.type"].get<std::string>().find("configs/presets/gpt2.json"), std::string::npos);
  // without --sources the output keeps its shape
  const auto plain = run_normtool("run --config presets/gpt2.json --config " + mine + " --print-config 2>/dev/null");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_FALSE(json::parse(plain.output).contains("sources"));
}

TEST(Compose, MissingConfigSuggestsTheNearest) {
  const auto r = run_normtool("run --config configs/lm-tny.json --print-config");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output,
            "error: config is invalid: configs/lm-tny.json: cannot read the config file: No such file or "
            "directory (did you mean configs/lm-tiny.json?)\n");
}

TEST(Compose, AConfigGivenAsAnOverrideSuggestsConfig) {
  const auto r = run_normtool("run configs/lm-tiny.json --print-config");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output,
            "error: config is invalid: override \"configs/lm-tiny.json\": expected key.path=value (did you "
            "mean --config configs/lm-tiny.json?)\n");
}

TEST(Compose, PresetIntoAFileIsJsonOnly) {
  TempDir d;
  std::filesystem::create_directories(d.path);
  const auto r = run_shell(binary() + " presets llama > " + (d / "x.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(d / "x.json");
  const json j = json::parse(in, nullptr, false);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["model"]["norm"]["type"], "rmsnorm");
  EXPECT_TRUE(j["_sources"].is_object());
  // and it is a config of its own
  EXPECT_EQ(load_configs({{d / "x.json"}, {}, {}}).model.norm.type,
            load_config_file(source_dir() + "/configs/presets/llama.json", {}).model.norm.type);
  const auto json_flag = run_normtool("presets llama --json");
  EXPECT_TRUE(json::parse(json_flag.output, nullptr, false).is_object()) << json_flag.output;
  const auto text = run_normtool("presets llama --text");
  EXPECT_FALSE(json::parse(text.output, nullptr, false).is_object());
  EXPECT_NE(text.output.find("not mirrored:"), std::string::npos) << text.output;
}

}  // namespace
}  // namespace nt::test
