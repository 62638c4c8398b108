// The presets of configs/presets/ (cli/presets.h): each resolves to the values its system's code
// has, sets and cites every normalization key that applies to it, and docs/presets.md carries
// the table `normtool presets --format markdown` generates from them.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "config/config.h"
#include "helpers.h"

namespace nt::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kPresets = fs::path(source_dir()) / "configs" / "presets";

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(kPresets))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

json resolved(const std::string& name) {
  return config_to_json(load_config_file((kPresets / (name + ".json")).string(), {}));
}

const json* find_key(const json& j, const std::string& path) {
  const json* node = &j;
  std::stringstream parts(path);
  for (std::string k; std::getline(parts, k, '.');) {
    if (!node->is_object() || !node->contains(k)) return nullptr;
    node = &(*node)[k];
  }
  return node;
}

// What each system's code has (the citations are in the presets' _sources and docs/presets.md);
// written here a second time so that an edit of a preset that loses one of them fails.
struct Expected {
  std::string arch, type, placement;
  double eps;
  bool affine, final_norm;
  std::string init;
  bool linear_bias, norm_bias, embed_norm;
};
const std::map<std::string, Expected> kExpected = {
    {"gpt", {"transformer", "layernorm", "post", 1e-5, true, false, "normal", true, true, false}},
    {"gpt2", {"transformer", "layernorm", "pre", 1e-5, true, true, "normal", true, true, false}},
    {"llama", {"transformer", "rmsnorm", "pre", 1e-5, true, true, "normal", false, false, false}},
    {"bloom", {"transformer", "layernorm", "pre", 1e-5, true, true, "normal", true, true, true}},
    {"glm130b", {"transformer", "deepnorm", "post", 1e-5, true, false, "xavier", true, true, true}},
    {"bert", {"encoder", "layernorm", "post", 1e-12, true, false, "normal", true, true, true}},
    {"t5", {"encoder-decoder", "rmsnorm", "pre", 1e-6, true, true, "xavier", false, false, false}},
    {"rnnsearch", {"rnnsearch", "layernorm", "", 1e-5, true, false, "nematus", true, true, false}},
    {"gemma2", {"transformer", "rmsnorm", "peri", 1e-6, true, true, "normal", false, false, false}},
    {"olmo2", {"transformer", "rmsnorm", "reordered", 1e-6, true, true, "normal", false, false, false}},
};

TEST(Presets, EachResolvesToItsSystemsValues) {
  const auto names = preset_names();
  ASSERT_EQ(names.size(), kExpected.size()) << "every system of the table has its preset";
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(kExpected.count(name)) << "a preset without expected values in this test";
    const Expected& e = kExpected.at(name);
    const json c = resolved(name);
    EXPECT_EQ(c["name"], name);
    EXPECT_EQ(c["model"]["arch"], e.arch);
    EXPECT_EQ(c["model"]["norm"]["type"], e.type);
    if (e.arch != "rnnsearch") {
      EXPECT_EQ(c["model"]["norm"]["placement"], e.placement);
      EXPECT_EQ(c["model"]["final_norm"], e.final_norm);
    }
    EXPECT_DOUBLE_EQ(c["model"]["norm"]["eps"].get<double>(), e.eps);
    EXPECT_EQ(c["model"]["norm"]["affine"], e.affine);
    EXPECT_EQ(c["model"]["init"], e.init);
    EXPECT_EQ(c["model"]["bias"], e.linear_bias);
    EXPECT_EQ(c["model"]["norm"]["bias"], e.norm_bias);
    EXPECT_EQ(c["model"]["embed_norm"], e.embed_norm);
    if (e.init == "normal") {
      EXPECT_DOUBLE_EQ(c["model"]["init_std"].get<double>(), 0.02);
    }
  }
}

// GLM-130B's code (DeepNormWithGLUMixin.layer_forward) has alpha = (2N)^(1/2), its paper beta =
// (2N)^(-1/2); DeepNet's decoder-only (2N)^(1/4) and (8N)^(-1/4) are normtool's default, so the
// preset must set both, and they must follow its n_layers (4: 2.828427 and 0.353553).
TEST(Presets, Glm130bHasItsOwnDeepNormConstantsNotDeepNets) {
  const json c = resolved("glm130b");
  const double n = c["model"]["n_layers"].get<double>();
  EXPECT_EQ(n, 4);
  EXPECT_NEAR(c["model"]["norm"]["alpha"].get<double>(), std::sqrt(2 * n), 1e-12);
  EXPECT_NEAR(c["model"]["norm"]["beta"].get<double>(), 1 / std::sqrt(2 * n), 1e-12);
  EXPECT_NEAR(c["model"]["norm"]["alpha"].get<double>(), glm130b_alpha(int(n)), 1e-12);
  EXPECT_NEAR(c["model"]["norm"]["alpha"].get<double>(), 2.8284271247461903, 1e-12);
  EXPECT_GT(std::abs(c["model"]["norm"]["alpha"].get<double>() - deepnorm_single_stack(int(n)).alpha), 0.8);
  EXPECT_EQ(c["model"]["embed_norm"], true);
  // the file sets them: without it the same config resolves to DeepNet's constants
  const RunConfig deepnet =
      load_config_file((kPresets / "glm130b.json").string(), {"model.norm.alpha=null", "model.norm.beta=null"});
  EXPECT_NEAR(deepnet.model.norm.alpha.value(), std::pow(8.0, 0.25), 1e-12);
  EXPECT_NEAR(deepnet.model.norm.beta.value(), std::pow(32.0, -0.25), 1e-12);
}

// Every key that decides what a norm sees and applies to the preset is written in its file (not
// left to normtool's defaults) and cited; every citation names a key the file sets.
TEST(Presets, EveryNormalizationKeyIsSetAndCited) {
  const std::vector<std::string> always = {"model.arch", "model.norm.type", "model.norm.eps", "model.norm.affine",
                                           "model.init"};
  for (const auto& name : preset_names()) {
    SCOPED_TRACE(name);
    const json file = read_json((kPresets / (name + ".json")).string());
    const json c = resolved(name);
    ASSERT_TRUE(file.contains("_sources"));
    const json& keys = file["_sources"]["keys"];
    for (const char* k : {"repo", "system", "code", "not_mirrored", "disagreements"})
      EXPECT_FALSE(file["_sources"].value(k, "").empty()) << k;
    std::vector<std::string> wanted = always;
    const bool recurrent = c["model"]["arch"] == "rnnsearch" || c["model"]["arch"] == "rnn";
    if (!recurrent)
      wanted.insert(wanted.end(), {"model.norm.placement", "model.final_norm", "model.bias", "model.norm.bias",
                                   "model.embed_norm", "model.position", "model.ffn"});
    if (c["model"]["norm"]["type"] == "deepnorm") wanted.insert(wanted.end(), {"model.norm.alpha", "model.norm.beta"});
    // the parts that came after the seed systems (Gemma, OLMo 2), none of which the seed systems have:
    // set and cited where a preset uses them
    const json defaults = config_to_json(RunConfig{});
    for (const char* k : {"model.norm.unit_offset", "model.embed_scale", "model.qk_norm", "model.qk_norm_scope",
                          "model.attn_softcap", "model.logit_softcap"})
      if (*find_key(c, k) != *find_key(defaults, k)) wanted.push_back(k);
    if (c["model"]["init"] == "normal") wanted.push_back("model.init_std");
    for (const auto& k : wanted) {
      EXPECT_NE(find_key(file, k), nullptr) << k << " is not set in the preset";
      EXPECT_TRUE(keys.contains(k)) << k << " has no citation";
    }
    for (const auto& [k, v] : keys.items()) {
      EXPECT_NE(find_key(file, k), nullptr) << "cited but not set: " << k;
      EXPECT_GT(v.get<std::string>().size(), 20u) << k;
    }
  }
}

TEST(Presets, SourcesAreNotConfig) {
  EXPECT_NO_THROW(load_config(R"({"_sources": {"keys": {}}, "seed": 3})", "x.json", {}));
  EXPECT_THROW(load_config(R"({"_sources": "a string"})", "x.json", {}), ConfigError);
  EXPECT_THROW(load_config(R"({"model": {"_sources": {}}})", "x.json", {}), ConfigError);  // only at the top
}

TEST(Presets, DocsCarryTheGeneratedTable) {
  const auto r = run_normtool("presets --format markdown");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(fs::path(source_dir()) / "docs" / "presets.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const std::string begin = "<!-- generated: normtool presets --format markdown -->\n";
  const std::string end = "<!-- end of generated -->";
  const auto b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  EXPECT_EQ(doc.substr(b + begin.size(), e - b - begin.size()), r.output)
      << "docs/presets.md is stale: run scripts/update-presets-doc.sh";
}

TEST(Presets, TableHasOneRowPerPreset) {
  const auto r = run_normtool("presets");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::stringstream lines(r.output);
  std::string header;
  std::getline(lines, header);
  for (const char* col : {"family", "placement", "norm", "eps", "biases", "embedding norm", "final norm",
                          "DeepNorm alpha / beta", "init", "source"})
    EXPECT_NE(header.find(col), std::string::npos) << col;
  std::set<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.insert(line.substr(0, line.find(' ')));
  const auto names = preset_names();
  EXPECT_EQ(rows, std::set<std::string>(names.begin(), names.end()));
}

TEST(Presets, OneShowsItsConfigAndSources) {
  const auto r = run_normtool("presets gpt2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"placement\": \"pre\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("model.norm.placement"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("openai/gpt-2"), std::string::npos) << r.output;
}

TEST(Presets, UnknownNameExits2ListingTheKnown) {
  const auto r = run_normtool("presets gtp2");
  EXPECT_EQ(r.exit_code, 2);
  std::string known;
  for (const auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
  EXPECT_EQ(r.output, "error: unknown preset \"gtp2\" (known: " + known + ")\n");
}

// A preset is found from any directory, by its path under the data directory, overrides as usual.
TEST(Presets, RunFromAnyDirectoryWithOverrides) {
  TempDir d;
  const auto r =
      run_shell("cd / && " + binary() + " run --config presets/gpt2.json --print-config model.norm.eps=1e-6");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json c = json::parse(r.output);
  EXPECT_EQ(c["name"], "gpt2");
  EXPECT_DOUBLE_EQ(c["model"]["norm"]["eps"].get<double>(), 1e-6);
  EXPECT_EQ(c["model"]["norm"]["placement"], "pre");
}

}  // namespace
}  // namespace nt::test
