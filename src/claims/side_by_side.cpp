// P1 as data: the seed systems' presets of configs/presets/ on their own tasks, side by side; a report with no
// criterion (Claim::report), every measure Reported, one plot per statistic with every preset on it.
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>

#include "claims/claim.h"
#include "claims/evidence.h"
#include "io/json_file.h"

namespace nt {

namespace {

namespace fs = std::filesystem;

// The presets, in the order of the tables and legends: the decoders, the encoder, the
// encoder-decoders (the Transformer, then the recurrent one).
constexpr const char* kPresets[] = {"gpt", "gpt2", "bloom", "llama", "glm130b", "bert", "t5", "rnnsearch"};
bool recurrent(const std::string& preset) { return preset == "rnnsearch"; }

// The layer a norm site counts in, or -1 when P1 leaves the site out; suffix ".in" (entering the
// norm) or ".out" (leaving it). A Transformer block's sites ("attn.in", "enc.ffn.out",
// "dec.cross.in") at stats.csv's layer, not the embedding or final norms ("embed.in",
// "enc.final.in"); RNNSearch's decoder GRUs' recurrent sites ("dec1.state_gates.in",
// "dec2.state_cand.out"), the GRU as the layer (dec1 0, dec2 1; stats.csv writes 0 for both).
int norm_site_layer(int layer, const std::string& site, const char* suffix) {
  if (!site.ends_with(suffix)) return -1;
  std::string place = site.substr(0, site.size() - std::string(suffix).size());
  for (int gru : {0, 1})
    for (const char* norm : {"state_gates", "state_cand"})
      if (place == fmt::format("dec{}.{}", gru + 1, norm)) return gru;
  if (place.rfind("enc.", 0) == 0 || place.rfind("dec.", 0) == 0) place = place.substr(4);
  return place == "attn" || place == "ffn" || place == "cross" ? layer : -1;
}

// One statistic of a run averaged over the norm sites (NaN entries, e.g. padding, skipped):
// per position, per layer, and overall.
struct Profile {
  std::map<int, std::pair<double, int>> position, layer;  // sum, count
  std::pair<double, int> all = {0, 0};
  void add(int layer_index, std::size_t t, double v) {
    if (std::isnan(v)) return;
    for (auto* s : {&position[int(t)], &layer[layer_index], &all}) s->first += v, ++s->second;
  }
  double mean() const { return all.second ? all.first / all.second : NAN; }
  static std::map<int, double> means(const std::map<int, std::pair<double, int>>& m, double scale = 1) {
    std::map<int, double> out;
    for (const auto& [x, s] : m) out[x] = scale * (s.first / s.second);
    return out;
  }
};

template <class Map, class Column>
Profile profile(const Map& per_site, const char* suffix, Column column) {
  Profile p;
  for (const auto& [key, v] : per_site)
    if (const int layer = norm_site_layer(key.first, key.second, suffix); layer >= 0) {
      const std::vector<double>& x = v.*column;
      for (std::size_t t = 0; t < x.size(); ++t) p.add(layer, t, x[t]);
    }
  return p;
}

// layers.jsonl at its first step (step 0): per layer, the norm of the gradient of all its
// parameters together; the embeddings and their norm left out, so that layer 0 is the first
// block's. RNNSearch writes layer 0 for every parameter: its layers are the decoder GRUs (dec1.* 0,
// dec2.* 1), its other parameters left out.
std::map<int, double> grad_norm_at_init(const std::string& dir, bool recurrent) {
  std::map<int, double> sum2;
  int first = -1;
  for (const JsonDoc& j : read_json_lines((fs::path(dir) / "layers.jsonl").string())) {
    const int step = j.get<int>("step");
    if (first < 0) first = step;
    if (step != first) break;
    const std::string param = j.get<std::string>("param");
    int layer = j.get<int>("layer");
    if (recurrent)
      layer = param.rfind("dec1.", 0) == 0 ? 0 : param.rfind("dec2.", 0) == 0 ? 1 : -1;
    else if (param.find("_emb.") != std::string::npos || param.find("emb_norm.") != std::string::npos)
      layer = -1;
    if (layer < 0) continue;
    const double g = j.get_or<double>("grad_norm", NAN);
    sum2[layer] += g * g;
  }
  for (auto& [layer, s] : sum2) s = std::sqrt(s);
  return sum2;
}

Profile std_entering(const RunRecord& r) { return profile(last_stats(r.dir), ".in", &PositionStats::std); }
Profile ranges_of(const RunRecord& r, const char* suffix, std::vector<double> PositionRanges::*column) {
  return profile(ranges_at(r.dir), suffix, column);
}

// The first block's gradient norm at init over the last block's (the head's layer excluded: its
// own index). Not RNNSearch's (no values, shown "-"): its two GRUs alternate along the recurrence,
// so neither is first or last in depth, and they read inputs of different widths.
double grad_ratio(const RunRecord& r) {
  const std::map<int, double> grad = grad_norm_at_init(r.dir, false);
  const int last_block = grad.empty() ? 0 : std::max(0, grad.rbegin()->first - 1);
  return grad.count(0) && grad.count(last_block) ? grad.at(0) / grad.at(last_block) : NAN;
}

// Each statistic a group, a measure per preset (and per name suffix), in the report's order
std::vector<MeasureSpec> measures() {
  using Value = std::function<double(const RunRecord&)>;
  std::vector<MeasureSpec> m;
  auto add = [&](std::string group, std::vector<std::pair<std::string, Value>> values, bool rnnsearch = true) {
    for (const char* preset : kPresets)
      for (const auto& [suffix, value] : values)
        m.push_back({preset + suffix, Reported{},
                     rnnsearch || !recurrent(preset) ? per_run(preset, {}, value)
                                                     : [](const Evidence&) { return std::vector<double>{}; },
                     group, Scale::linear, false, group.starts_with("final")});
  };
  auto snr = [](const char* suffix) {
    return [suffix](const RunRecord& r) { return ranges_of(r, suffix, &PositionRanges::int8_snr_db).mean(); };
  };
  add("final validation loss (each on its own task: not comparable across tasks)",
      {{"", [](const RunRecord& r) { return summary_number(r, "final_val_loss"); }}});
  add("gradient norm at init, first block / last block (rnnsearch: not defined, -)", {{"", grad_ratio}}, false);
  add("int8 absmax SNR, one scale per token (dB): entering / leaving the norms",
      {{": entering", snr(".in")}, {": leaving", snr(".out")}});
  add("share of the values entering the norms outside fp16's normal range (%)",
      {{"", [](const RunRecord& r) { return 100 * ranges_of(r, ".in", &PositionRanges::fp16_outside).mean(); }}});
  add("std entering the norms (mean over sites, layers, positions; last statistics step)",
      {{"", [](const RunRecord& r) { return std_entering(r).mean(); }}});
  return m;
}

// A plot of one statistic by layer (or position): per preset, the mean over seeds of each run's map
using RunMap = std::function<std::map<int, double>(const RunRecord&, const std::string& preset)>;
PlotSpec by_layer(std::string stem, std::string title, std::string ylabel, RunMap f, bool logy = true,
                  std::string x = "layer (t5: both stacks' layer; rnnsearch: decoder GRU)") {
  return {stem, {"P1: " + title, x, ylabel, false, logy}, [f](const Evidence& ev) {
            std::vector<Curve> curves;
            for (const char* preset : kPresets)
              curves.push_back(mean_of_maps(preset, ev.of(preset), [&](const RunRecord& r) { return f(r, preset); }));
            return curves;
          }};
}

std::vector<PlotSpec> plots() {
  const std::string gru = "layer (rnnsearch: decoder GRU)", std_y = "std over features, mean over sites and seeds";
  std::vector<Series> loss;
  for (const char* preset : kPresets) loss.push_back({preset, preset});
  return {
      val_loss_plot("val-loss",
                    "P1: validation loss, each preset on its task (mean over seeds, band: 95% interval "
                    "over seeds)",
                    loss),
      by_layer(
          "std-by-position", "std of the vector entering the norms, by position (last statistics step)", std_y,
          [](const RunRecord& r, auto&) { return Profile::means(std_entering(r).position); }, true,
          "position (rnnsearch: decoder step)"),
      by_layer("std-by-layer", "std of the vector entering the norms, by layer (last statistics step)", std_y,
               [](const RunRecord& r, auto&) { return Profile::means(std_entering(r).layer); }),
      by_layer("grad-norm-at-init",
               "gradient norm by layer at init (step 0; a Transformer's last layer is its output layer)",
               "gradient norm of the layer's parameters",
               [](const RunRecord& r, auto& preset) { return grad_norm_at_init(r.dir, recurrent(preset)); }),
      by_layer(
          "fp16-outside-by-layer", "share entering the norms outside fp16's normal range, by layer", "% of values",
          [](const RunRecord& r, auto&) {
            return Profile::means(ranges_of(r, ".in", &PositionRanges::fp16_outside).layer, 100);
          },
          false, gru),
      by_layer(
          "int8-snr-by-layer", "int8 absmax SNR (one scale per token) entering the norms, by layer", "SNR (dB)",
          [](const RunRecord& r, auto&) {
            return Profile::means(ranges_of(r, ".in", &PositionRanges::int8_snr_db).layer);
          },
          false, gru),
  };
}

}  // namespace

std::vector<Claim> side_by_side_claims() {
  std::vector<Setting> settings;
  for (const char* preset : kPresets)
    settings.push_back({preset,
                        fmt::format("presets/{}.json", preset),
                        {"train.steps=600", "train.warmup_steps=40", "train.eval_every=150", "train.log_every=150",
                         "train.eval_batches=10", "train.stats_every=599", "train.threads=1"},
                        {"train.steps=40", "train.warmup_steps=2", "train.eval_every=10", "train.log_every=10",
                         "train.stats_every=39"}});
  return {{
      .id = "P1",
      .slug = "presets-side-by-side",
      .title = "The seed articles' systems side by side: what their normalization does to the values it sees",
      .source = "the systems the seed articles name (BERT, GPT, GPT-2, BLOOM, Llama, GLM-130B, T5, RNNSearch), "
                "normalized as their code does it: configs/presets/ and docs/presets.md, every value cited by file "
                "and function",
      .why = "The articles explain normalization through these systems, but the systems differ in task, size and "
             "much besides their norm, and their papers claim nothing about one another's: there is no criterion to "
             "hold them to. What a reader wants is the comparison itself at one scale, with what varies between "
             "seeds shown, so the experiment reports and decides nothing.",
      .settings = settings,
      .measures = measures(),
      .plots = plots(),
      .method = "Losses compare only within a task (the five decoders; rnnsearch with t5). The statistics are "
                "over the norm sites at the last statistics step: a Transformer's blocks' (attn, ffn, t5's cross; "
                "t5's layers counted in each stack) and RNNSearch's decoder GRUs' recurrent norms (of U_g h and U_c "
                "h; the GRU as the layer, the decoder step as the position). The gradient norm at step 0 takes every "
                "parameter of a layer together (not the embeddings); its first block / last block ratio is what "
                "Xiong et al. 2020 predict grows for Post-LN (C7 tests it), shown here, not judged.",
      .report = true,
      .seeds = {1, 2, 3},
      .seeds_why = "A report decides nothing, so more seeds would only narrow intervals that no criterion reads; "
                   "three seeds show what varies between them. Ten took 364 s of the reproduction's 45 minutes, "
                   "three take about 110.",
  }};
}

}  // namespace nt
