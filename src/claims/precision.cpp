// C12 as data: normalization narrows the range of hidden values. (a) The int8 SNR with one scale per
// tensor, leaving each norm against entering it, in a 12-layer Pre-LN model (ranges.csv) decides;
// (b) the loss gaps of bf16 and fp16 to fp32 in the 4-layer model are reported.
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <numeric>
#include <utility>

#include "claims/claim.h"
#include "claims/evidence.h"

namespace nt {

namespace {

constexpr const char* kNorms[] = {"none", "layernorm", "rmsnorm"};
constexpr const char* kNormed[] = {"layernorm", "rmsnorm"};
constexpr const char* kLow[] = {"bf16", "fp16"};  // (b)'s formats against fp32
constexpr std::pair<const char*, const char*> kSides[] = {{".in", "entering"}, {".out", "leaving"}};  // a norm's sites
using Column = std::vector<double> PositionRanges::*;
constexpr Column kToken = &PositionRanges::int8_snr_db, kTensor = &PositionRanges::int8_tensor_snr_db,
                 kMax = &PositionRanges::max_abs, kFp16 = &PositionRanges::fp16_outside;

// A column of a run's ranges.csv at its last step, for the sites ending with `suffix` (".in",
// ".out"): averaged over the positions, then the sites (mean); per position, over the sites (profile).
struct SiteAverage {
  double mean = 0;
  std::vector<double> profile;
};
SiteAverage site_average(const std::string& dir, const char* suffix, Column column) {
  SiteAverage a;
  int sites = 0;
  for (const auto& [key, r] : ranges_at(dir)) {
    if (!key.second.ends_with(suffix)) continue;
    const std::vector<double>& v = r.*column;
    a.profile.resize(v.size(), 0.0);
    for (std::size_t t = 0; t < v.size(); ++t) a.profile[t] += v[t];
    a.mean += std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
    ++sites;
  }
  if (sites == 0) return {NAN, {}};
  a.mean /= sites;
  for (double& p : a.profile) p /= sites;
  return a;
}

// (b): the runs of the 4-layer model at each format; (a)'s (12 layers, fp32) are found by the norm alone
Where at(const char* norm, const char* format) { return {{"model.norm.type", norm}, {"train.precision", format}}; }

// Per seed, the (a) run's site average of `column` (times `scale`)
Reader ranges(const char* norm, const char* suffix, Column column, double scale = 1) {
  return per_run("ranges", with_norm(norm),
                 [=](const RunRecord& r) { return scale * site_average(r.dir, suffix, column).mean; });
}
// Leaving the norms minus entering them, in the same model on the same batch
Reader change(const char* norm, Column column) {
  return difference(ranges(norm, ".out", column), ranges(norm, ".in", column));
}
// Final validation loss at `format` minus fp32's, per seed (the same init and data at every format)
Reader gap(const char* norm, const char* format) {
  return difference(field("formats", at(norm, format), "final_val_loss"),
                    field("formats", at(norm, "fp32"), "final_val_loss"));
}
Reader none_minus(const char* norm, const char* format) { return difference(gap("none", format), gap(norm, format)); }

std::vector<MeasureSpec> measures() {
  const std::string token = "(a) one int8 scale per token: no effect, by construction",
                    range = "(a) fp16's range, the same runs";
  std::vector<MeasureSpec> m;
  for (const char* norm : kNormed) {
    const std::string name = short_name(norm);
    m.push_back(
        {.name = fmt::format("(a) {}: int8 SNR leaving the norm - entering it, one scale per tensor (dB)", name),
         .criterion = Above{0},
         .read = change(norm, kTensor),
         .digits = 2});
    m.push_back(reported(fmt::format("{}: SNR leaving - entering, one scale per token (dB)", name),
                         change(norm, kToken), token));
    for (const auto& [suffix, where] : kSides) {
      m.push_back(reported(fmt::format("{}: largest |x| {} the norm", name, where), ranges(norm, suffix, kMax), range));
      m.push_back(reported(fmt::format("{}: share outside fp16's normal range {} the norm (%)", name, where),
                           ranges(norm, suffix, kFp16, 100), range));
    }
  }
  for (const char* format : kLow) {
    const std::string group = fmt::format("(b) {}: final validation loss gap to fp32", format);
    for (const char* norm : kNorms)
      m.push_back(reported(fmt::format("{}: {} - fp32", norm, format), gap(norm, format), group));
    for (const char* norm : kNormed)
      m.push_back(
          reported(fmt::format("{}: none's gap - {}'s gap", format, norm), none_minus(norm, format), group, true, 4));
  }
  return m;
}

// The SNR by position entering or leaving the norm of `norm`'s (a) runs, the mean over the seeds
Curve snr_curve(const Evidence& ev, Column column, const char* norm, const char* suffix, const char* where) {
  Curve c{fmt::format("{} {} the norm", short_name(norm), where), {}, {}};
  const auto runs = ev.of("ranges", with_norm(norm));
  for (const RunRecord* r : runs) {
    const std::vector<double> p = site_average(r->dir, suffix, column).profile;
    c.points.resize(p.size(), {0.0, 0.0});
    for (std::size_t t = 0; t < p.size(); ++t) c.points[t] = {double(t), c.points[t].second + p[t]};
  }
  for (auto& [t, v] : c.points) v /= double(runs.size());
  return c;
}

PlotSpec snr_plot(const char* per, Column column) {
  return {fmt::format("int8-snr-per-{}", per),
          {fmt::format("C12: int8 absmax SNR, one scale per {} ((a) runs, last statistics step)", per), "position",
           "SNR (dB), average over sites and seeds"},
          [column](const Evidence& ev) {
            std::vector<Curve> curves;
            for (const char* norm : kNormed)
              for (const auto& [suffix, where] : kSides) curves.push_back(snr_curve(ev, column, norm, suffix, where));
            return curves;
          }};
}

std::vector<Series> loss_series() {
  std::vector<Series> series;
  for (const char* norm : kNorms)
    for (const char* format : {"fp32", "bf16", "fp16"})
      series.push_back({fmt::format("{} {}", norm, format), "formats", at(norm, format)});
  return series;
}

// (b) read as the null result or not (why: the one floating point predicts); the fp16 runs' skipped steps
std::string gap_notes(const Evidence& ev) {
  std::string t = "Part (b), loss gaps per seed (the same init and data at each format):\n";
  for (const char* format : kLow)
    for (const char* norm : kNormed) {
      const Interval i = mean_interval(none_minus(norm, format)(ev));
      t += fmt::format("- {}: none's loss gap to fp32 minus {}'s: {} — {}.\n", format, norm, show(i, 4),
                       !(i.lo <= 0 && i.hi >= 0)
                           ? "the interval excludes 0: the norm changes what the format costs"
                           : fmt::format("the interval holds 0: no effect of the norm detected (none "
                                         "larger than {:.3f} in loss)",
                                         std::max(std::abs(i.lo), std::abs(i.hi))));
    }
  std::vector<std::string> skipped;
  for (const char* norm : kNorms) {
    std::vector<std::string> n;
    for (const RunRecord* r : ev.of("formats", at(norm, "fp16")))
      n.push_back(r->summary.contains("loss_scale") ? r->summary["loss_scale"]["skipped_steps"].dump() : "?");
    skipped.push_back(fmt::format("{} {}", norm, fmt::join(n, ", ")));
  }
  return t + fmt::format("\nfp16 steps skipped by the loss scaler (per seed): {}.\n", fmt::join(skipped, "; "));
}

}  // namespace

std::vector<Claim> precision_claims() {
  return {{
      .id = "C12",
      .slug = "low-precision-ranges",
      .title = "Normalization narrows the range of hidden values, so low-precision representations (8-bit, 16-bit) "
               "lose less of them; it does not by itself reduce memory",
      .source = "the seed article on normalization (memory efficiency); Micikevicius et al. 2018 (fp16 range, loss "
                "scaling); Dettmers et al. 2022 (int8 outliers)",
      .why = "Revision 2 (claims.md): one absmax scale per token is unchanged by any per-token rescaling, so a "
             "per-row norm cannot move it and the earlier test (>= 6 dB per token) could not pass; it is reported "
             "as no effect, by construction. A range is about values that share one scale: one scale per tensor, "
             "in a 12-layer Pre-LN model trained 1000 steps, where the residual stream grows (E7). The seed article "
             "gives a direction, no number: > 0 dB. (b) unchanged: a float's relative error does not depend on the "
             "magnitude, so the gaps are reported, and a null result is the expected one.",
      .settings = {{"ranges",
                    "lm-tiny.json",
                    {"model.n_layers=12", "train.steps=1000", "train.eval_every=250", "train.eval_batches=10",
                     "train.stats_every=999"},
                    {"model.n_layers=4", "train.steps=50", "train.eval_every=25", "train.stats_every=49"},
                    {"model.norm.type=layernorm,rmsnorm"}},
                   {"formats",
                    "lm-tiny.json",
                    {"model.n_layers=4", "train.steps=400", "train.eval_every=100", "train.eval_batches=10",
                     "train.stats_every=399"},
                    {"train.steps=50", "train.eval_every=12", "train.stats_every=49"},
                    {"model.norm.type=none,layernorm,rmsnorm", "train.precision=fp32,bf16,fp16"}}},
      .measures = measures(),
      .plots = {snr_plot("token", kToken), snr_plot("tensor", kTensor),
                val_loss_plot(
                    "val-loss",
                    "C12: validation loss by norm and format, 4 layers (mean over seeds, band: 95% interval over "
                    "seeds)",
                    loss_series())},
      .method = "(a) The 12-layer runs in fp32, from ranges.csv at the last statistics step (sites attn, ffn and "
                "final): int8 absmax SNR in dB, averaged over the positions, then the sites, of the vector entering "
                "each norm (the residual stream) and leaving it (after the gain), on the same batch. Per token, "
                "dividing by the token's own norm changes nothing by construction (what remains is LN's centring "
                "and the gain). (b) train.precision rounds activations and weights to the format at every op "
                "boundary (nearest even), with fp32 master weights and Adam state, and fp16 with dynamic loss "
                "scaling from 2^16: the final validation loss at bf16 and fp16 minus fp32's, per norm and seed.",
      .details = gap_notes,
  }};
}

}  // namespace nt
