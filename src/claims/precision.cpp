// C12 as data: normalization narrows the range of hidden values. (a) The int8 SNR leaving each norm
// against entering it (ranges.csv of the fp32 runs) decides; (b) the loss gaps to fp32 are reported.
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <numeric>

#include "claims/claim.h"
#include "claims/evidence.h"

namespace nt {

namespace {

constexpr const char* kNorms[] = {"none", "layernorm", "rmsnorm"};
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

Where at(const char* norm, const char* format) { return {{"model.norm.type", norm}, {"train.precision", format}}; }

// Per seed, the fp32 run's site average of `column` (times `scale`)
Reader ranges(const char* norm, const char* suffix, Column column, double scale = 1) {
  return per_run("runs", at(norm, "fp32"),
                 [=](const RunRecord& r) { return scale * site_average(r.dir, suffix, column).mean; });
}
// Leaving `norm`'s norms minus entering those of `from` (by default the same model's)
Reader change(const char* norm, Column column, const char* from = nullptr) {
  return difference(ranges(norm, ".out", column), ranges(from ? from : norm, ".in", column));
}
// Final validation loss at `format` minus fp32's, per seed (the same init and data at every format)
Reader gap(const char* norm, const char* format) {
  return difference(field("runs", at(norm, format), "final_val_loss"),
                    field("runs", at(norm, "fp32"), "final_val_loss"));
}
Reader none_minus(const char* norm, const char* format) { return difference(gap("none", format), gap(norm, format)); }

MeasureSpec db(std::string name, Reader read, std::string group = "", bool headline = false) {
  return {.name = name, .criterion = AtLeast{6}, .read = read, .group = group, .headline = headline, .digits = 2};
}
MeasureSpec shown(std::string name, Reader read, std::string group, bool headline = false) {
  return {.name = name, .criterion = Reported{}, .read = read, .group = group, .headline = headline, .digits = 4};
}

std::vector<MeasureSpec> measures() {
  const std::string tensor = "(a) one int8 scale per tensor (the range across tokens counts)",
                    across = "(a) against the none model's residual stream", range = "(a) fp16's range (fp32 runs)";
  std::vector<MeasureSpec> m = {
      db("(a) LN: int8 SNR leaving the norm - entering it (residual stream), per-token scale (dB)",
         change("layernorm", kToken)),
      db("(a) RMS: int8 SNR leaving the norm - entering it, per-token scale (dB)", change("rmsnorm", kToken)),
      db("LN: SNR leaving the norm - entering it, per-tensor scale (dB)", change("layernorm", kTensor), tensor, true),
      db("RMS: SNR leaving the norm - entering it, per-tensor scale (dB)", change("rmsnorm", kTensor), tensor, true),
      db("LN leaving the norm - none's residual stream, per-token scale (dB)", change("layernorm", kToken, "none"),
         across),
      db("RMS leaving the norm - none's residual stream, per-token scale (dB)", change("rmsnorm", kToken, "none"),
         across),
      db("LN leaving the norm - none's residual stream, per-tensor scale (dB)", change("layernorm", kTensor, "none"),
         across),
      shown("none: residual stream int8 SNR, per-token scale (dB)", ranges("none", ".in", kToken), across),
      shown("none: residual stream int8 SNR, per-tensor scale (dB)", ranges("none", ".in", kTensor), across),
      shown("LN: largest |x| entering the norm", ranges("layernorm", ".in", kMax), range),
      shown("LN: largest |x| leaving the norm", ranges("layernorm", ".out", kMax), range),
      shown("none: largest |x| in the residual stream", ranges("none", ".in", kMax), range),
      shown("LN: share outside fp16's normal range entering the norm (%)", ranges("layernorm", ".in", kFp16, 100),
            range),
      shown("LN: share outside fp16's normal range leaving the norm (%)", ranges("layernorm", ".out", kFp16, 100),
            range),
      shown("none: share outside fp16's normal range, residual stream (%)", ranges("none", ".in", kFp16, 100), range)};
  for (const char* format : {"bf16", "fp16"}) {
    const std::string group = fmt::format("(b) {}: final validation loss gap to fp32", format);
    for (const char* norm : kNorms)
      m.push_back(shown(fmt::format("{}: {} - fp32", norm, format), gap(norm, format), group));
    for (const char* norm : {"layernorm", "rmsnorm"})
      m.push_back(shown(fmt::format("{}: none's gap - {}'s gap", format, norm), none_minus(norm, format), group, true));
  }
  return m;
}

// The SNR by position entering and leaving the norms (fp32 runs), the mean over the seeds
PlotSpec snr_plot(const char* per, Column column) {
  auto curve = [column](const Evidence& ev, std::string title, const char* norm, const char* suffix) {
    Curve c{std::move(title), {}, {}};
    const auto runs = ev.of("runs", at(norm, "fp32"));
    for (const RunRecord* r : runs) {
      const std::vector<double> p = site_average(r->dir, suffix, column).profile;
      c.points.resize(p.size(), {0.0, 0.0});
      for (std::size_t t = 0; t < p.size(); ++t) c.points[t] = {double(t), c.points[t].second + p[t]};
    }
    for (auto& [t, v] : c.points) v /= double(runs.size());
    return c;
  };
  return {fmt::format("int8-snr-per-{}", per),
          {fmt::format("C12: int8 absmax SNR, one scale per {} (fp32 runs, last statistics step)", per), "position",
           "SNR (dB), average over sites and seeds"},
          [curve](const Evidence& ev) {
            return std::vector<Curve>{curve(ev, "LN entering the norm", "layernorm", ".in"),
                                      curve(ev, "LN leaving the norm", "layernorm", ".out"),
                                      curve(ev, "RMS entering the norm", "rmsnorm", ".in"),
                                      curve(ev, "RMS leaving the norm", "rmsnorm", ".out"),
                                      curve(ev, "none: residual stream", "none", ".in")};
          }};
}

std::vector<Curve> loss_curves(const Evidence& ev) {
  std::vector<Curve> curves;
  for (const char* norm : kNorms)
    for (const char* format : {"fp32", "bf16", "fp16"})
      curves.push_back(
          mean_curve(fmt::format("{} {}", norm, format), ev.of("runs", at(norm, format)), &RunRecord::val_loss));
  return curves;
}

// (b) read as the null result or not (why: the one floating point predicts); the fp16 runs' skipped steps
std::string gap_notes(const Evidence& ev) {
  std::string t = "Part (b), loss gaps per seed (the same init and data at each format):\n";
  for (const char* format : {"bf16", "fp16"})
    for (const char* norm : {"layernorm", "rmsnorm"}) {
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
    for (const RunRecord* r : ev.of("runs", at(norm, "fp16")))
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
      .why = "(a) 6 dB is one bit of int8 resolution: a smaller gain would not change what 8 bits hold; the "
             "comparison is the unnormalized residual stream, the norm's input, as it would be quantized. (b) A "
             "float's relative error does not depend on the magnitude within its range, so no threshold is set: "
             "the gap is reported with its interval, and a null result is the expected one.",
      .settings = {{"runs",
                    "lm-tiny.json",
                    {"model.n_layers=4", "train.steps=400", "train.eval_every=100", "train.eval_batches=10",
                     "train.stats_every=399"},
                    {"train.steps=50", "train.eval_every=12", "train.stats_every=49"},
                    {"model.norm.type=none,layernorm,rmsnorm", "train.precision=fp32,bf16,fp16"}}},
      .measures = measures(),
      .plots = {snr_plot("token", kToken),
                snr_plot("tensor", kTensor),
                {"val-loss",
                 {.title = "C12: validation loss by norm and format (mean over seeds, band = seeds)",
                  .ylabel = "validation loss"},
                 loss_curves}},
      .method = "train.precision rounds activations and weights to the format at every op boundary (nearest "
                "even), with fp32 master weights and Adam state, and fp16 with dynamic loss scaling from 2^16. (a) "
                "From ranges.csv of the fp32 runs at the last statistics step, sites attn, ffn and final: each SNR "
                "averaged over the positions, then the sites, in dB; a Pre-LN norm's input is the residual stream, "
                "as is the same site's input without a norm. (b) The final validation loss at bf16 and fp16 minus "
                "fp32's, per norm and seed.",
      .details = gap_notes,
  }};
}

}  // namespace nt
