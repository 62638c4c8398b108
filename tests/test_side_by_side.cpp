// P1 (src/claims/side_by_side.cpp) end to end: `reproduce --quick` trains every seed system's preset of
// configs/presets/, rnnsearch among them, and its report's figures are those computed here again
// from the runs' own stats.csv and layers.jsonl, with the sites written out by name (an
// independent reading of which sites P1 counts: the blocks' attn, ffn, cross, not the embedding or
// final norms; rnnsearch's decoder GRUs' recurrent sites, the GRU as its layer).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "helpers.h"
#include "quick_report.h"

namespace nt::test {
namespace {

namespace fs = std::filesystem;

// The layer P1 should count a stats.csv site entering a norm in, or -1 for a site it leaves out.
int expected_layer(const std::string& preset, int layer, const std::string& site) {
  if (preset == "rnnsearch") {
    static const std::map<std::string, int> gru = {
        {"dec1.state_gates.in", 0}, {"dec1.state_cand.in", 0}, {"dec2.state_gates.in", 1}, {"dec2.state_cand.in", 1}};
    const auto it = gru.find(site);
    return it == gru.end() ? -1 : it->second;
  }
  static const std::set<std::string> block = {"attn.in",     "ffn.in",     "enc.attn.in", "enc.ffn.in",
                                              "dec.attn.in", "dec.ffn.in", "dec.cross.in"};
  return block.count(site) ? layer : -1;
}

struct RunFigures {
  double std_in = 0;                    // mean over the counted (site, position) entries
  std::map<int, double> std_by_layer;   // layer -> mean
  std::map<int, double> grad_by_layer;  // rnnsearch: decoder GRU -> gradient norm at step 0
  std::set<std::string> sites;          // every site of stats.csv at the last step
};

RunFigures figures_of(const std::string& preset, const fs::path& dir) {
  RunFigures f;
  std::ifstream in(dir / "stats.csv");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "step,layer,site,position,mean,std");
  struct Row {
    int step, layer;
    std::string site;
    double std;
  };
  std::vector<Row> rows;
  int last = -1;
  while (std::getline(in, line)) {
    std::stringstream s(line);
    std::string step, layer, site, position, mean, std_text;
    std::getline(s, step, ','), std::getline(s, layer, ','), std::getline(s, site, ',');
    std::getline(s, position, ','), std::getline(s, mean, ','), std::getline(s, std_text, ',');
    rows.push_back({std::stoi(step), std::stoi(layer), site, std::strtod(std_text.c_str(), nullptr)});
    last = std::max(last, rows.back().step);
  }
  double sum = 0;
  int n = 0;
  std::map<int, std::pair<double, int>> by_layer;
  for (const Row& r : rows) {
    if (r.step != last) continue;
    f.sites.insert(r.site);
    const int layer = expected_layer(preset, r.layer, r.site);
    if (layer < 0 || std::isnan(r.std)) continue;
    sum += r.std, ++n;
    by_layer[layer].first += r.std, ++by_layer[layer].second;
  }
  f.std_in = sum / n;
  for (const auto& [layer, s] : by_layer) f.std_by_layer[layer] = s.first / s.second;
  if (preset == "rnnsearch") {
    std::map<int, double> sum2;
    for (const auto& j : read_jsonl((dir / "layers.jsonl").string())) {
      if (j["step"].get<int>() != 0) break;
      EXPECT_EQ(j["layer"].get<int>(), 0) << j.dump();  // what P1 works around: every parameter layer 0
      const std::string param = j["param"];
      const double g = j["grad_norm"];
      if (param.starts_with("dec1.")) sum2[0] += g * g;
      if (param.starts_with("dec2.")) sum2[1] += g * g;
    }
    for (const auto& [gru, s] : sum2) f.grad_by_layer[gru] = std::sqrt(s);
  }
  return f;
}

// The curve of `preset` in a plot's .tsv: x -> mean over seeds (columns x, mean, lo, hi).
std::map<int, double> curve_of(const fs::path& tsv, const std::string& preset) {
  std::ifstream in(tsv);
  EXPECT_TRUE(in) << tsv;
  std::map<int, double> c;
  bool mine = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("# "))
      mine = line == "# " + preset;
    else if (mine && !line.empty()) {
      std::stringstream s(line);
      double x, y;
      s >> x >> y;
      c[int(x)] = y;
    }
  }
  return c;
}

const nlohmann::json* measure(const nlohmann::json& result, const std::string& group_start, const std::string& name) {
  for (const auto& m : result["measures"])
    if (m["group"].get<std::string>().starts_with(group_start) && m["name"] == name) return &m;
  return nullptr;
}

double close(double want) { return 1e-12 + 1e-9 * std::abs(want); }  // the same doubles, summed in another order

// P1 is the seed articles' systems: every preset but the later ones (Gemma 2, OLMo 2), which no seed
// article measured.
TEST(QuickReport, P1HasEverySeedSystemsPresetRnnsearchAmongThemWithItsFiguresRecomputed) {
  const std::set<std::string> later = {"gemma2", "olmo2"};
  std::set<std::string> presets;
  for (const auto& e : fs::directory_iterator(fs::path(source_dir()) / "configs" / "presets"))
    if (e.path().extension() == ".json" && !later.count(e.path().stem().string()))
      presets.insert(e.path().stem().string());
  ASSERT_EQ(presets.size(), 8u);
  ASSERT_TRUE(presets.count("rnnsearch"));

  const fs::path report = quick_report(kQuickAll), dir = report / "P1-presets-side-by-side";
  const nlohmann::json result = read_json((dir / "result.json").string());
  EXPECT_EQ(result["verdict"], "REPORT");
  const std::vector<int> seeds = result["seeds"];
  ASSERT_EQ(seeds.size(), 3u);

  for (const std::string& preset : presets) {
    SCOPED_TRACE(preset);
    // every preset has a row of every table, with a finite value per seed (rnnsearch's gradient ratio: none, "-")
    for (const char* group : {"final validation loss", "std entering the norms", "gradient norm at init",
                              "share of the values entering", "int8 absmax SNR"}) {
      const std::string name = std::string(group) == "int8 absmax SNR" ? preset + ": entering" : preset;
      const nlohmann::json* m = measure(result, group, name);
      ASSERT_NE(m, nullptr) << group;
      const bool none = preset == "rnnsearch" && std::string(group) == "gradient norm at init";
      ASSERT_EQ((*m)["values"].size(), none ? 0u : seeds.size()) << group;
      for (const auto& v : (*m)["values"]) EXPECT_TRUE(v.is_number() && std::isfinite(v.get<double>())) << group;
    }
    // the std entering the norms, per seed, is this test's own reading of the run's stats.csv
    const nlohmann::json& std_in = *measure(result, "std entering the norms", preset);
    std::map<int, double> layer_sum, grad_sum;
    for (std::size_t i = 0; i < seeds.size(); ++i) {
      const fs::path run = dir / preset / ("seed-" + std::to_string(seeds[i])) / "0";  // a sweep per seed
      ASSERT_EQ(read_json((run / "config.json").string())["seed"].get<int>(), seeds[i]);
      const RunFigures f = figures_of(preset, run);
      EXPECT_NEAR(std_in["values"][i].get<double>(), f.std_in, close(f.std_in)) << "seed " << seeds[i];
      if (preset == "rnnsearch") {
        // its four recurrent sites are there, and P1 counts each GRU as a layer
        for (const char* s : {"dec1.state_gates.in", "dec1.state_cand.in", "dec2.state_gates.in", "dec2.state_cand.in"})
          EXPECT_TRUE(f.sites.count(s)) << s;
        ASSERT_EQ(f.std_by_layer.size(), 2u);
        ASSERT_EQ(f.grad_by_layer.size(), 2u);
        EXPECT_GT(f.std_in, 0.0);
      }
      // the embedding and final norms are recorded, and left out
      if (preset == "t5") {
        EXPECT_TRUE(f.sites.count("enc.final.in"));
      }
      if (preset == "bloom") {
        EXPECT_TRUE(f.sites.count("embed.in"));
      }
      for (const auto& [layer, v] : f.std_by_layer) layer_sum[layer] += v / double(seeds.size());
      for (const auto& [layer, v] : f.grad_by_layer) grad_sum[layer] += v / double(seeds.size());
    }
    // the plots' curves: the per-layer std (rnnsearch: per decoder GRU) and rnnsearch's gradient norm per GRU
    const auto std_layer = curve_of(dir / "std-by-layer.tsv", preset);
    ASSERT_EQ(std_layer.size(), layer_sum.size());
    for (const auto& [layer, v] : layer_sum)
      EXPECT_NEAR(std_layer.at(layer), v, 1e-5 * v) << "layer " << layer;  // the .tsv has 6 digits
    if (preset == "rnnsearch") {
      const auto grad = curve_of(dir / "grad-norm-at-init.tsv", preset);
      ASSERT_EQ(grad.size(), 2u);
      for (const auto& [gru, v] : grad_sum) EXPECT_NEAR(grad.at(gru), v, 1e-5 * v) << "GRU " << gru;
      EXPECT_GE(curve_of(dir / "std-by-position.tsv", preset).size(), 10u);  // one point per decoder step
    }
  }
  // REPORT.md's section of P1 shows rnnsearch's undefined gradient ratio as "-", not as a number
  const std::string text = read_text(report / "REPORT.md");
  const std::size_t from = text.find("\n## P1: "), to = text.find("\n## ", from + 1);
  ASSERT_NE(from, std::string::npos);
  const std::string section = text.substr(from, to - from);
  EXPECT_NE(section.find("| rnnsearch | - | - | - | - |"), std::string::npos);
  EXPECT_EQ(section.find("nan"), std::string::npos);
}

}  // namespace
}  // namespace nt::test
