// The literature after the seed papers, as data: C19, QK-norm removes the growth of the attention
// logits and with it the loss's sensitivity to the learning rate (Wortsman et al. 2023, small-scale
// proxies; Dehghani et al. 2023); C21, the curse of depth: Pre-LN's residual stream grows with depth
// and LayerNorm Scaling bounds it (Sun et al. 2025; Peri-LN, Kim et al. 2025, reported).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <mutex>

#include "analysis/seed_band.h"
#include "analysis/stats.h"
#include "claims/after_seeds.h"
#include "claims/claim.h"
#include "claims/evidence.h"
#include "config/config.h"
#include "io/json_file.h"
#include "train/checkpoint.h"
#include "train/session.h"

namespace nt {

namespace fs = std::filesystem;

// ---- C19 ----

double capped_loss(const RunRecord& r) {
  const bool has_initial = !r.val_loss.empty() && r.val_loss.front().first == 0;
  const double initial = has_initial ? r.val_loss.front().second : NAN;
  if (!std::isfinite(initial)) return NAN;
  const double final_loss = summary_number(r, "final_val_loss");
  const bool diverged = r.summary.is_object() && r.summary.value("diverged", false);
  if (diverged || !std::isfinite(final_loss)) return initial;
  return std::min(final_loss, initial);
}

std::vector<double> lr_sensitivity(const std::vector<std::vector<double>>& by_rate) {
  std::vector<double> v;
  if (by_rate.empty()) return v;
  for (std::size_t s = 0; s < by_rate.front().size(); ++s) {
    double sum = 0, best = INFINITY;
    for (const std::vector<double>& at : by_rate) sum += at.at(s), best = std::min(best, at.at(s));
    v.push_back(sum / double(by_rate.size()) - best);
  }
  return v;
}

double largest_attn_logit(const std::string& dir) {
  double m = NAN;
  for (const JsonDoc& j : read_json_lines((fs::path(dir) / "layers.jsonl").string())) {
    const double x = j.get_or<double>("attn_logit_max", NAN);
    if (std::isfinite(x) && !(x <= m)) m = x;
  }
  return m;
}

// ---- C21 ----

std::map<int, double> block_output_variance(const std::string& dir) {
  std::map<int, double> v;
  for (const auto& [key, s] : last_stats(dir)) {
    const auto& [layer, site] = key;
    if (layer == 0 || (site != "attn.in" && site != "final.in")) continue;
    double sum = 0;
    int n = 0;
    for (double sd : s.std)
      if (std::isfinite(sd)) sum += sd * sd, ++n;
    v[layer] = n > 0 ? sum / n : NAN;
  }
  return v;
}

double depth_rank_correlation(const std::map<int, double>& variance) {
  std::vector<double> x, y;
  for (const auto& [l, v] : variance) x.push_back(l), y.push_back(v);
  return x.size() < 2 ? NAN : spearman(x, y);
}

double last_over_first(const std::map<int, double>& variance) {
  return variance.empty() ? NAN : variance.rbegin()->second / variance.begin()->second;
}

SavedParams remove_block(ParamStore<float>& params, int l) {
  static const std::vector<std::string> kBranchEnds{"attn.out.weight",     "attn.out.bias",        "ffn.fc2.weight",
                                                    "ffn.fc2.bias",        "attn_out_norm.weight", "attn_out_norm.bias",
                                                    "ffn_out_norm.weight", "ffn_out_norm.bias"};
  SavedParams saved;
  for (int i = 0; i < params.count(); ++i) {
    const auto& info = params.info(i);
    if (info.layer != l - 1 || std::find(kBranchEnds.begin(), kBranchEnds.end(), info.name) == kBranchEnds.end())
      continue;
    float* p = params.data() + info.offset;
    saved.emplace_back(info.offset, std::vector<float>(p, p + info.size()));
    std::fill(p, p + info.size(), 0.0f);
  }
  return saved;
}

void restore_block(ParamStore<float>& params, const SavedParams& saved) {
  for (const auto& [offset, values] : saved) std::copy(values.begin(), values.end(), params.data() + offset);
}

std::map<int, double> removal_loss_increase(const std::string& dir) {
  const RunConfig c = load_config_file((fs::path(dir) / "config.json").string(), {});
  Session run(c);
  RunRecords records;
  load_checkpoint(dir, config_to_json(c), run, records);
  const double whole = run.evaluate().loss;
  std::map<int, double> increase;
  for (int l = 1; l <= c.model.n_layers; ++l) {
    const SavedParams saved = remove_block(run.params(), l);
    increase[l] = run.evaluate().loss - whole;
    restore_block(run.params(), saved);
  }
  return increase;
}

namespace {

// The learning rates: 1e-3 to 3e-1 in steps of sqrt(10) (claims.md)
constexpr const char* kRates[] = {"0.001", "0.003162", "0.01", "0.03162", "0.1", "0.3162"};

Where at_rate(const char* qk, const char* lr) { return {{"model.qk_norm", qk}, {"train.lr", lr}}; }
std::string with_or_without(const char* qk) { return std::string(qk) == "true" ? "with QK-norm" : "without"; }
double attn_logit(const RunRecord& r) { return largest_attn_logit(r.dir); }

// Per seed, the LR sensitivity of the runs with (qk "true") or without QK-norm
Reader sensitivity(const char* qk) {
  return [qk](const Evidence& ev) {
    std::vector<std::vector<double>> by_rate;
    for (const char* lr : kRates) by_rate.push_back(per_run("lr", at_rate(qk, lr), capped_loss)(ev));
    return lr_sensitivity(by_rate);
  };
}

std::vector<MeasureSpec> c19_measures() {
  MeasureSpec decides{"LR sensitivity, with QK-norm / without", AtMost{1},
                      ratio(sensitivity("true"), sensitivity("false")), "", Scale::log};
  std::vector<MeasureSpec> m{decides};
  for (const char* qk : {"false", "true"})
    m.push_back({fmt::format("LR sensitivity {}", with_or_without(qk)), Reported{}, sensitivity(qk),
                 "the sensitivities", Scale::linear, false, true});
  for (const char* qk : {"false", "true"})
    for (const char* lr : kRates)
      m.push_back({fmt::format("lr {:g}, {}: largest attention logit", std::stod(lr), with_or_without(qk)), Reported{},
                   per_run("lr", at_rate(qk, lr), attn_logit), "the largest attention logit per learning rate",
                   Scale::log});
  return m;
}

// Without and with QK-norm, the mean over seeds of f(run) against the learning rate
std::vector<Curve> over_rates(const Evidence& ev, double (*f)(const RunRecord&)) {
  std::vector<Curve> curves;
  for (const char* qk : {"false", "true"}) {
    std::vector<std::map<double, double>> per_seed(ev.seeds.size());
    for (const char* lr : kRates) {
      const std::vector<const RunRecord*> runs = ev.of("lr", at_rate(qk, lr));
      for (std::size_t i = 0; i < runs.size() && i < per_seed.size(); ++i) per_seed[i][std::stod(lr)] = f(*runs[i]);
    }
    curves.push_back(mean_over_seeds(std::string(qk) == "true" ? "Pre-LN + QK-norm" : "Pre-LN", per_seed));
  }
  return curves;
}
std::vector<Curve> loss_curves(const Evidence& ev) { return over_rates(ev, capped_loss); }
std::vector<Curve> logit_curves(const Evidence& ev) { return over_rates(ev, attn_logit); }

std::string c19_details(const Evidence& ev) {
  return "Mean over seeds per learning rate: the final validation loss (a diverged run's: its initial loss)\n\n" +
         curves_table("learning rate", loss_curves(ev), "{:.3f}") +
         "\nand the largest attention logit |q.k| / sqrt(d_head) over the logged steps and layers\n\n" +
         curves_table("learning rate", logit_curves(ev), "{:.3g}");
}

Claim c19() {
  return {
      .id = "C19",
      .slug = "qk-norm-lr-sensitivity",
      .title =
          "QK-norm lowers the LR sensitivity: it removes the attention-logit growth that makes high learning "
          "rates unstable",
      .source =
          "Wortsman et al. 2023 (small-scale proxies for large-scale instabilities) §3.1, Fig. 1: "
          "attention logits grow without bound at high learning rates and qk-layernorm removes that, lowering "
          "the LR sensitivity; Dehghani et al. 2023 (ViT-22B) introduced the query/key norm",
      .why =
          "Read off Wortsman et al. §2-3 before any run (claims.md): their LR sensitivity, the mean over the "
          "learning rates of min(final loss, initial loss) minus the best of them, per seed with and without "
          "QK-norm; the claim holds when the ratio with / without is below 1 (upper one-sided bound <= 1, on the "
          "log scale). The min makes a diverged run count as its initial loss, as theirs does. The largest "
          "attention logit per learning rate, the quantity whose growth they track, is reported. Fresh seeds "
          "11-20.",
      .settings = {{.name = "lr",
                    .config = "lm-tiny.json",
                    .overrides = {"model.n_layers=4", "train.steps=400", "train.warmup_steps=20",
                                  "train.schedule=cosine", "train.eval_every=100", "train.eval_batches=10",
                                  "train.stats_every=50"},
                    .quick = {"train.steps=60", "train.warmup_steps=3", "train.eval_every=30", "train.stats_every=20"},
                    .axes = {"model.qk_norm=false,true", fmt::format("train.lr={}", fmt::join(kRates, ","))}}},
      .measures = c19_measures(),
      .plots = {{"loss-vs-lr",
                 {.title = "C19: final validation loss against the learning rate (mean, " + std::string(kSeedBand) +
                           "; a diverged run: its initial loss)",
                  .xlabel = "learning rate",
                  .ylabel = "final validation loss",
                  .logx = true},
                 loss_curves},
                {"attn-logit-vs-lr",
                 {.title = "C19: the largest attention logit against the learning rate (mean, " +
                           std::string(kSeedBand) + ")",
                  .xlabel = "learning rate",
                  .ylabel = "max |q.k| / sqrt(d_head)",
                  .logx = true,
                  .logy = true},
                 logit_curves}},
      .method =
          "C1's ablation model; the schedule (a linear warm-up, then a cosine decay) is Wortsman et al.'s, "
          "shortened; QK-norm is a LayerNorm on each "
          "head's queries and keys. Per run, its loss is the final validation loss, at most the validation loss at "
          "step 0 (a diverged "
          "run: the step-0 loss); per seed, the LR sensitivity is the mean of those over the six rates minus "
          "their smallest. The largest attention logit is the largest attn_logit_max of layers.jsonl over "
          "the logged steps (every 50) and the four layers.",
      .details = c19_details,
      .core = false,
  };
}

// The 12-layer transformer on fortunes trained 1000 steps (C12's model), its statistics logged at the last step
Setting deep(const char* name, const char* axis) {
  return {.name = name,
          .config = "lm-tiny.json",
          .overrides = {"model.n_layers=12", "train.steps=1000", "train.eval_every=250", "train.eval_batches=10",
                        "train.stats_every=999"},
          .quick = {"train.steps=50", "train.eval_every=25", "train.stats_every=49"},
          .axes = {axis}};
}

constexpr std::pair<const char*, const char*> kDepthRuns[] = {
    {"pre", "Pre-LN"}, {"scaled", "Pre-LN + LayerNorm Scaling"}, {"peri", "Peri-LN"}};

Reader of_profile(const char* setting, double (*f)(const std::map<int, double>&)) {
  return per_run(setting, {}, [f](const RunRecord& r) { return f(block_output_variance(r.dir)); });
}

// Each run's blocks removed once: the measures, the plot and the table read it again
const std::map<int, double>& removal(const RunRecord& r) {
  static std::mutex lock;
  static std::map<std::string, std::map<int, double>> done;
  std::lock_guard<std::mutex> hold(lock);
  const auto it = done.find(r.dir);
  return it != done.end() ? it->second : done.emplace(r.dir, removal_loss_increase(r.dir)).first->second;
}

// The mean loss increase over the shallower (blocks 1..L/2) or the deeper half (L/2+1..L)
Reader removal_half(const char* setting, bool deeper) {
  return per_run(setting, {}, [deeper](const RunRecord& r) {
    const std::map<int, double>& m = removal(r);
    const int half = int(m.size()) / 2;
    double sum = 0;
    int n = 0;
    for (const auto& [l, x] : m)
      if ((l > half) == deeper) sum += x, ++n;
    return n > 0 ? sum / n : NAN;
  });
}

std::vector<MeasureSpec> c21_measures() {
  std::vector<MeasureSpec> m{
      {"Pre-LN: Spearman rho(block, variance of its output)", AtLeast{0.8}, of_profile("pre", depth_rank_correlation)},
      {"Pre-LN: variance of the last block's output / the first's", AtLeast{2}, of_profile("pre", last_over_first), "",
       Scale::log},
      {"LayerNorm Scaling / Pre-LN: that last / first", AtMost{1},
       ratio(of_profile("scaled", last_over_first), of_profile("pre", last_over_first)), "", Scale::log}};
  for (const auto& [setting, title] : {kDepthRuns[1], kDepthRuns[2]}) {
    m.push_back({fmt::format("{}: Spearman rho(block, variance of its output)", title), Reported{},
                 of_profile(setting, depth_rank_correlation), "LayerNorm Scaling and Peri-LN"});
    m.push_back({fmt::format("{}: variance of the last block's output / the first's", title), Reported{},
                 of_profile(setting, last_over_first), "LayerNorm Scaling and Peri-LN", Scale::log});
  }
  m.push_back({"Peri-LN / Pre-LN: that last / first", Reported{},
               ratio(of_profile("peri", last_over_first), of_profile("pre", last_over_first)),
               "LayerNorm Scaling and Peri-LN", Scale::log});
  for (const auto& [setting, title] : kDepthRuns)
    m.push_back({fmt::format("{}: final validation loss", title), Reported{}, field(setting, {}, "final_val_loss"),
                 "final validation losses"});
  for (const auto& [setting, title] : kDepthRuns)
    for (const bool deeper : {false, true})
      m.push_back({fmt::format("{}: loss increase when a block of the {} half is removed, mean", title,
                               deeper ? "deeper" : "shallower"),
                   Reported{}, removal_half(setting, deeper), "the loss increase when a block is removed"});
  return m;
}

// Mean over seeds of a per-block profile of each run, one curve per model
std::vector<Curve> by_block(const Evidence& ev, const std::function<std::map<int, double>(const RunRecord&)>& f) {
  std::vector<Curve> curves;
  for (const auto& [setting, title] : kDepthRuns) curves.push_back(mean_of_maps(title, ev.of(setting), f));
  return curves;
}
std::vector<Curve> variance_curves(const Evidence& ev) {
  return by_block(ev, [](const RunRecord& r) { return block_output_variance(r.dir); });
}
std::vector<Curve> removal_curves(const Evidence& ev) { return by_block(ev, removal); }

std::string c21_details(const Evidence& ev) {
  return "Mean over seeds of the variance of each block's output (the residual stream after block l) at the last "
         "step\n\n" +
         curves_table("block", variance_curves(ev), "{:.3g}") +
         "\nand of the validation loss's increase when block l alone is removed (its residual branches zeroed)\n\n" +
         curves_table("block", removal_curves(ev), "{:.3g}");
}

Claim c21() {
  return {
      .id = "C21",
      .slug = "curse-of-depth",
      .title =
          "The curse of depth: in Pre-LN the residual stream's variance grows with depth, so deep blocks do "
          "little; LayerNorm Scaling (1/sqrt(l)) bounds it",
      .source =
          "Sun et al. 2025 (The curse of depth in large language models) §3-4: in Pre-LN the output variance "
          "grows with depth, so deep blocks act almost as the identity; scaling block l's norm outputs by "
          "1/sqrt(l) (LayerNorm Scaling) bounds the growth. Kim et al. 2025 (Peri-LN) reported beside",
      .why =
          "Read off Sun et al. before any run (claims.md): the growth as a monotone trend, Spearman's rho of "
          "(block, variance of its output) >= 0.8, and a size, the last block's over the first's >= 2 (one-sided "
          "lower bounds); LayerNorm Scaling bounds it: its last / first over Pre-LN's < 1 (upper bound <= 1, log "
          "scale). Peri-LN, its final losses and the others' profiles are reported. Fresh seeds 11-16.",
      .settings = {deep("pre", "model.norm.depth_scaling=false"), deep("scaled", "model.norm.depth_scaling=true"),
                   deep("peri", "model.norm.placement=peri")},
      .measures = c21_measures(),
      .plots = {{"variance-by-block",
                 {.title =
                      "C21: variance of each block's output at the last step (mean, " + std::string(kSeedBand) + ")",
                  .xlabel = "block l (its output: the residual stream after it)",
                  .ylabel = "variance over the hidden dimension",
                  .logy = true,
                  .integer_x = true},
                 variance_curves},
                {"loss-increase-by-block",
                 {.title = "C21: validation loss increase when block l alone is removed (mean, " +
                           std::string(kSeedBand) + ")",
                  .xlabel = "block l (removed)",
                  .ylabel = "loss increase",
                  .integer_x = true},
                 removal_curves}},
      .method =
          "C12's model; LayerNorm Scaling (model.norm.depth_scaling) multiplies the outputs of block l's input "
          "norms by 1/sqrt(l). Block l's output is the residual "
          "stream after it, read in stats.csv at the last step (999): the std over the hidden dimension "
          "entering block l + 1's first norm (attn.in of layer l; after the last block the final norm's, "
          "final.in), averaged over the batch's tokens at each position; its square averaged over the 64 "
          "positions is the block's variance. Per seed, Spearman's rho of (l, variance) over l = 1..12 and "
          "the variance at l = 12 over l = 1. Reported: each trained run's checkpoint loaded in this process, "
          "the validation loss's increase (10 batches) when block l alone is removed, its residual branches "
          "zeroed (Pre-LN: attention output projection and fc2; Peri-LN: also its output norms) so that it "
          "passes its input through.",
      .details = c21_details,
      .seeds = {11, 12, 13, 14, 15, 16},
      .seeds_why =
          "A 12-layer run of 1000 steps takes about 40 s at one thread, three runs a seed: six seeds (looks "
          "at 3 and 6) keep the claim near 5 minutes at --jobs 2 should it not stop at 3.",
      .core = false,
  };
}

}  // namespace

std::vector<Claim> after_seeds_claims() { return {c19(), c21()}; }

}  // namespace nt
