// P1: the presets side by side. Every preset of configs/presets/ (the systems of the seed
// articles, normalized as their code does it) trains on its own task over the seeds, with what
// is not normalization the same for all; the report puts them next to each other:
//   - the final validation loss (each on its task: a masked LM, a causal LM, seq2seq);
//   - at the norm sites (norm_site_layer: a block's attn, ffn, cross; RNNSearch's decoder GRUs'
//     recurrent sites; stats.csv at the last statistics step): the std over the hidden features
//     of the vector entering the norm, per position and per layer;
//   - the gradient norm by layer at init (layers.jsonl at step 0, every parameter of the layer);
//   - ranges.csv at the last statistics step (C12's measurements): the share of the values
//     entering the norms outside fp16's normal range, the int8 absmax SNR (one scale per token)
//     entering and leaving them.
// A report, not a verdict: ClaimVerdict::report. One plot per statistic, every preset on it.
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <nlohmann/json.hpp>

#include "claims/claim.h"
#include "claims/evidence.h"
#include "io/json_file.h"
#include "io/paths.h"

namespace nt {

namespace {

namespace fs = std::filesystem;

// The presets, in the order of the tables and legends: the decoders, the encoder, the
// encoder-decoders (the Transformer, then the recurrent one).
constexpr const char* kPresets[] = {"gpt", "gpt2", "bloom", "llama", "glm130b", "bert", "t5", "rnnsearch"};
bool recurrent(const std::string& preset) { return preset == "rnnsearch"; }

// The layer a norm site counts in, or -1 when P1 leaves the site out; suffix ".in" (the vector
// entering the norm) or ".out" (leaving it).
//  - A Transformer block's sites ("attn.in", "enc.ffn.out", "dec.cross.in"), at the layer
//    stats.csv gives them (t5: encoder and decoder layer l both l); not the embedding or final
//    norms ("embed.in", "enc.final.in"), which are not a block's.
//  - RNNSearch's: its decoder GRUs' recurrent sites ("dec1.state_gates.in", "dec2.state_cand.out"),
//    the products U_g h and U_c h of the previous state entering the GRU's norms of the gates and
//    of the candidate: what the recurrence feeds back into itself step after step, as a block's
//    norms see the stream layer after layer. The GRU is the unit repeated, so layer = the GRU:
//    dec1 0, dec2 1 (stats.csv writes layer 0 for both); its two sites are its two norms, as attn
//    and ffn are a block's. Its other norms are not in stats.csv: the initial state's and the
//    readout's sit where the embedding and final norms do; those of the GRUs' input products
//    (norm_gx, norm_cx), the encoder's and the attention's are not recorded at all.
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
  double sum = 0;
  int n = 0;
  void add(int layer_index, std::size_t t, double v) {
    if (std::isnan(v)) return;
    auto& p = position[int(t)];
    p.first += v, ++p.second;
    auto& l = layer[layer_index];
    l.first += v, ++l.second;
    sum += v, ++n;
  }
  double mean() const { return n ? sum / n : NAN; }
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

// layers.jsonl at its first step (step 0, before any update): per layer, the norm of the
// gradient of all its parameters together, sqrt(sum of the parameters' squared norms); the
// embeddings and their norm (layer 0 too) left out, so that layer 0 is the first block's.
// RNNSearch writes layer 0 for every parameter: its layers are norm_site_layer's, the decoder
// GRUs (the parameters named dec1.* 0, dec2.* 1), and its other parameters are left out.
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

// The mean over seeds of per-seed maps x -> value, as a curve (x where every seed has a value),
// the seeds' min and max as the band.
Curve seeds_curve(const std::string& title, const std::vector<std::map<int, double>>& per_seed) {
  Curve c{title, {}, {}};
  if (per_seed.empty()) return c;
  for (const auto& [x, _] : per_seed.front()) {
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    bool all = true;
    for (const auto& m : per_seed) {
      auto it = m.find(x);
      if (it == m.end() || std::isnan(it->second)) { all = false; break; }
      sum += it->second, lo = std::min(lo, it->second), hi = std::max(hi, it->second);
    }
    if (!all) continue;
    c.points.emplace_back(double(x), sum / double(per_seed.size()));
    c.band.emplace_back(lo, hi);
  }
  return c;
}

std::map<int, double> means(const std::map<int, std::pair<double, int>>& m) {
  std::map<int, double> out;
  for (const auto& [x, s] : m) out[x] = s.first / s.second;
  return out;
}

// What one preset's runs give, per seed.
struct PresetEvidence {
  std::vector<double> loss, std_in, grad_ratio, fp16_in, snr_in, snr_out;
  std::vector<std::map<int, double>> std_by_position, std_by_layer, grad_by_layer, fp16_by_layer, snr_by_layer;
};

PresetEvidence evidence_of(const std::vector<RunRecord>& runs, bool recurrent) {
  PresetEvidence e;
  std::vector<const RunRecord*> all;
  for (const RunRecord& r : runs) all.push_back(&r);
  e.loss = values_of(all, "final_val_loss");
  for (const RunRecord& run : runs) {
    const auto stats = last_stats(run.dir);
    const Profile s = profile(stats, ".in", &PositionStats::std);
    e.std_in.push_back(s.mean());
    e.std_by_position.push_back(means(s.position));
    e.std_by_layer.push_back(means(s.layer));
    const std::map<int, double> grad = grad_norm_at_init(run.dir, recurrent);
    e.grad_by_layer.push_back(grad);
    // the first block's gradient over the last block's (the head's layer excluded: its own
    // index). Not RNNSearch's (grad_ratio left empty, shown "-"): its two GRUs alternate along
    // the recurrence (dec2's state at t enters dec1 at t + 1), so neither is first or last in
    // depth, and they read inputs of different widths, so they are not alike as blocks are.
    if (!recurrent) {
      const int last_block = grad.empty() ? 0 : std::max(0, grad.rbegin()->first - 1);
      e.grad_ratio.push_back(grad.count(0) && grad.count(last_block) ? grad.at(0) / grad.at(last_block) : NAN);
    }
    const auto ranges = ranges_at(run.dir);
    const Profile fp16 = profile(ranges, ".in", &PositionRanges::fp16_outside);
    const Profile snr_in = profile(ranges, ".in", &PositionRanges::int8_snr_db);
    e.fp16_in.push_back(100 * fp16.mean());
    std::map<int, double> fp16_layer = means(fp16.layer);
    for (auto& [layer, v] : fp16_layer) v *= 100;
    e.fp16_by_layer.push_back(fp16_layer);
    e.snr_in.push_back(snr_in.mean());
    e.snr_by_layer.push_back(means(snr_in.layer));
    e.snr_out.push_back(profile(ranges, ".out", &PositionRanges::int8_snr_db).mean());
  }
  return e;
}

}  // namespace

ClaimResult claim_p1(const ClaimContext& ctx) {
  ClaimResult r;
  r.seeds = ctx.seeds;
  const int N = ctx.quick ? 40 : 600;
  std::vector<SweepRequest> sweeps;
  for (const char* preset : kPresets)
    sweeps.push_back({preset, config_path(fmt::format("presets/{}.json", preset)),
                      {fmt::format("train.steps={}", N), fmt::format("train.warmup_steps={}", N / 15),
                       fmt::format("train.eval_every={}", N / 4), fmt::format("train.log_every={}", N / 4),
                       fmt::format("train.eval_batches={}", ctx.eval_batches(10)),
                       fmt::format("train.stats_every={}", N - 1), "train.threads=1"},
                      {ctx.seeds_axis()}});
  const std::vector<std::vector<RunRecord>> runs = sweep_runs(ctx, sweeps);

  std::vector<PresetEvidence> ev;
  for (std::size_t k = 0; k < runs.size(); ++k) ev.push_back(evidence_of(runs[k], recurrent(kPresets[k])));
  const std::string loss = "final validation loss (each on its own task: not comparable across tasks)";
  const std::string stream = "std entering the norms (mean over sites, layers, positions; last statistics step)";
  const std::string grad = "gradient norm at init, first block / last block (rnnsearch: not defined, -)";
  const std::string fp16 = "share of the values entering the norms outside fp16's normal range (%)";
  const std::string snr = "int8 absmax SNR, one scale per token (dB): entering / leaving the norms";
  for (std::size_t k = 0; k < ev.size(); ++k) {
    const std::string name = kPresets[k];
    r.measures.push_back(measure_reported(name, ev[k].loss, loss));
    r.measures.push_back(measure_reported(name, ev[k].std_in, stream));
    r.measures.push_back(measure_reported(name, ev[k].grad_ratio, grad));
    r.measures.push_back(measure_reported(name, ev[k].fp16_in, fp16));
    r.measures.push_back(measure_reported(name + ": entering", ev[k].snr_in, snr));
    r.measures.push_back(measure_reported(name + ": leaving", ev[k].snr_out, snr));
  }
  std::stable_sort(r.measures.begin(), r.measures.end(),
                   [](const Measure& a, const Measure& b) { return a.group < b.group; });
  r.verdict = ClaimVerdict::report;

  // one plot per statistic, every preset on it
  std::vector<Curve> val, std_pos, std_layer, grad_layer, fp16_layer, snr_layer;
  for (std::size_t k = 0; k < ev.size(); ++k) {
    std::vector<const RunRecord*> all;
    for (const RunRecord& run : runs[k]) all.push_back(&run);
    val.push_back(mean_curve(kPresets[k], all, &RunRecord::val_loss));
    std_pos.push_back(seeds_curve(kPresets[k], ev[k].std_by_position));
    std_layer.push_back(seeds_curve(kPresets[k], ev[k].std_by_layer));
    grad_layer.push_back(seeds_curve(kPresets[k], ev[k].grad_by_layer));
    fp16_layer.push_back(seeds_curve(kPresets[k], ev[k].fp16_by_layer));
    snr_layer.push_back(seeds_curve(kPresets[k], ev[k].snr_by_layer));
  }
  plot_into(ctx, "val-loss", {.title = "P1: validation loss, each preset on its task (mean over seeds, band = seeds)",
                              .ylabel = "validation loss"}, val, r);
  plot_into(ctx, "std-by-position",
            {.title = "P1: std of the vector entering the norms, by position (last statistics step)",
             .xlabel = "position (rnnsearch: decoder step)", .ylabel = "std over features, mean over sites and seeds", .logy = true},
            std_pos, r);
  plot_into(ctx, "std-by-layer",
            {.title = "P1: std of the vector entering the norms, by layer (last statistics step)",
             .xlabel = "layer (t5: both stacks' layer; rnnsearch: decoder GRU)", .ylabel = "std over features, mean over sites and seeds",
             .logy = true},
            std_layer, r);
  plot_into(ctx, "grad-norm-at-init",
            {.title = "P1: gradient norm by layer at init (step 0; a Transformer's last layer is its output layer)",
             .xlabel = "layer (t5: both stacks' layer; rnnsearch: decoder GRU)", .ylabel = "gradient norm of the layer's parameters",
             .logy = true},
            grad_layer, r);
  plot_into(ctx, "fp16-outside-by-layer",
            {.title = "P1: share entering the norms outside fp16's normal range, by layer",
             .xlabel = "layer (rnnsearch: decoder GRU)", .ylabel = "% of values"},
            fp16_layer, r);
  plot_into(ctx, "int8-snr-by-layer",
            {.title = "P1: int8 absmax SNR (one scale per token) entering the norms, by layer",
             .xlabel = "layer (rnnsearch: decoder GRU)", .ylabel = "SNR (dB)"},
            snr_layer, r);

  std::vector<std::string> cells;
  for (std::size_t k = 0; k < ev.size(); ++k)
    cells.push_back(fmt::format("{} {:.3f}", kPresets[k], mean_interval(ev[k].loss).mean));
  r.measured = fmt::format("a report, no criterion: final validation loss (mean of {} seeds) {}", ctx.seeds.size(),
                           fmt::join(cells, ", "));
  r.details = fmt::format(
      "Each preset of `configs/presets/` (`normtool presets`: bert, bloom, glm130b, gpt, gpt2, llama, t5, "
      "rnnsearch) trained {} steps with its own settings otherwise (AdamW 1e-3, warm-up {} steps, cosine, "
      "clipping 1, batch 16, one math thread), on its own task: the decoders on fortunes as a causal LM, bert as a "
      "masked LM on fortunes, t5 and rnnsearch seq2seq on gettext-de. Losses of different tasks do not compare "
      "(the five decoders' with one another, rnnsearch's with t5's only); the statistics do, site for site.\n\n"
      "The statistics are over the norm sites at the last statistics step (step {}). A Transformer's are its "
      "blocks' (attn, ffn and t5's cross; not the embedding or final norms). What enters a Pre-LN norm is the "
      "residual stream; what enters a Post-LN or DeepNorm norm is x + f(x) (DeepNorm alpha x + f(x)), normalized "
      "right after, so the std entering says how large the un-normalized stream grew. Layer indices of t5 count "
      "in each stack (encoder and decoder layer l together). RNNSearch's are its decoder GRUs' recurrent sites: "
      "U_g h and U_c h, the previous state's products entering the norms of the update/reset gates and of the "
      "candidate, the two norms of the unit the recurrence repeats as attn and ffn are a block's; its layer is "
      "the GRU (0: dec1, over the target embedding; 1: dec2, over the attended context) and its position the "
      "decoder step. Its other norms (of the input products, the encoder's, the attention's, the initial "
      "state's and the readout's) are not recorded, as the embedding and final norms are left out of the "
      "blocks'.\n\n"
      "The gradient ratio is the first block's gradient norm over the last block's at step 0, every parameter of "
      "the block together (the embeddings and their norm left out): Xiong et al. 2020 predict that Post-LN's "
      "grows toward the output at init and Pre-LN's does not (C7 tests it); here it is shown, not judged. "
      "rnnsearch has none (-): its two decoder GRUs alternate along the recurrence (dec2's state at step t is "
      "dec1's at t + 1), so neither is first or last in depth, and they read inputs of different widths (64 and "
      "256), so they are not alike as blocks are. Its plot of the gradient norm by layer shows each decoder "
      "GRU's, every parameter of the GRU together (layers.jsonl gives every parameter of rnnsearch layer 0: "
      "the GRU is read from the parameter's name).\n",
      N, N / 15, N - 1);
  if (ctx.quick) r.setting = fmt::format("quick: {} steps", N);
  return r;
}

}  // namespace nt
