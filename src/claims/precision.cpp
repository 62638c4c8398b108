// C12: normalization narrows the range of hidden values, so low-precision representations lose
// less of them. One sweep of the 4-layer Pre-LN transformer of C1 on fortunes: none, LN and RMS
// at fp32, bf16 and fp16 (train.precision), over the seeds.
//   (a) ranges.csv of the fp32 runs at their last statistics step: the int8 absmax SNR of the
//       vector leaving each norm against the vector entering it (the residual stream), per token
//       (the claim's "vector": decides) and with one scale per tensor (reported beside); the
//       none runs' residual stream; fp16's range.
//   (b) the final validation loss at bf16 and fp16 minus fp32's, per norm, and none's gap minus
//       LN's and RMS's: reported with intervals, no verdict (claims.md).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <numeric>

#include "claims/claim.h"
#include "claims/evidence.h"
#include "io/paths.h"

namespace nt {

namespace {

constexpr const char* kNorms[] = {"none", "layernorm", "rmsnorm"};
constexpr const char* kFormats[] = {"fp32", "bf16", "fp16"};

// A column of ranges.csv averaged over positions and over the sites of a run, for rows whose site
// ends with `suffix` (".in", ".out"); per position too (profile), averaged over the sites.
struct SiteAverage {
  double mean = 0;
  std::vector<double> profile;
};
SiteAverage site_average(const std::map<std::pair<int, std::string>, PositionRanges>& ranges, const char* suffix,
                         std::vector<double> PositionRanges::*column) {
  SiteAverage a;
  int sites = 0;
  for (const auto& [key, r] : ranges) {
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

std::vector<double> differences(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> d;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) d.push_back(a[i] - b[i]);
  return d;
}

Curve profile_curve(const std::string& title, const std::vector<std::vector<double>>& per_seed) {
  Curve c{title, {}, {}};
  if (per_seed.empty()) return c;
  for (std::size_t t = 0; t < per_seed.front().size(); ++t) {
    double sum = 0;
    for (const auto& p : per_seed) sum += p[t];
    c.points.emplace_back(double(t), sum / double(per_seed.size()));
  }
  return c;
}

}  // namespace

ClaimResult claim_c12(const ClaimContext& ctx) {
  ClaimResult r;
  r.seeds = ctx.seeds;
  const int N = ctx.quick ? 50 : 400;
  const std::vector<RunRecord> runs =
      sweep_runs(ctx, "runs", config_path("lm-tiny.json"),
                 {"model.n_layers=4", fmt::format("train.steps={}", N), fmt::format("train.eval_every={}", N / 4),
                  fmt::format("train.eval_batches={}", ctx.eval_batches(10)), fmt::format("train.stats_every={}", N - 1)},
                 {"model.norm.type=none,layernorm,rmsnorm", "train.precision=fp32,bf16,fp16", ctx.seeds_axis()});
  auto of = [&](const char* norm, const char* format) {
    return select(runs, {{"model.norm.type", norm}, {"train.precision", format}});
  };

  // (a) per seed, from the fp32 runs' last statistics step
  struct Part {
    std::vector<double> in, out;            // per-token SNR (dB), averaged over sites and positions
    std::vector<double> tensor_in, tensor_out;
    std::vector<double> fp16_in, fp16_out;  // share outside fp16's normal range (%)
    std::vector<double> max_in, max_out;    // largest |x| at a site, averaged over positions and sites
    std::vector<std::vector<double>> profile_in, profile_out, tensor_profile_in, tensor_profile_out;
  };
  Part part[3];
  for (int k = 0; k < 3; ++k)
    for (const RunRecord* run : of(kNorms[k], "fp32")) {
      const auto ranges = ranges_at(run->dir);
      Part& p = part[k];
      const SiteAverage in = site_average(ranges, ".in", &PositionRanges::int8_snr_db),
                        out = site_average(ranges, ".out", &PositionRanges::int8_snr_db),
                        tin = site_average(ranges, ".in", &PositionRanges::int8_tensor_snr_db),
                        tout = site_average(ranges, ".out", &PositionRanges::int8_tensor_snr_db);
      p.in.push_back(in.mean), p.out.push_back(out.mean), p.tensor_in.push_back(tin.mean),
          p.tensor_out.push_back(tout.mean);
      p.profile_in.push_back(in.profile), p.profile_out.push_back(out.profile);
      p.tensor_profile_in.push_back(tin.profile), p.tensor_profile_out.push_back(tout.profile);
      p.fp16_in.push_back(100 * site_average(ranges, ".in", &PositionRanges::fp16_outside).mean);
      p.fp16_out.push_back(100 * site_average(ranges, ".out", &PositionRanges::fp16_outside).mean);
      p.max_in.push_back(site_average(ranges, ".in", &PositionRanges::max_abs).mean);
      p.max_out.push_back(site_average(ranges, ".out", &PositionRanges::max_abs).mean);
    }
  const Part &none = part[0], &ln = part[1], &rms = part[2];
  const std::string per_tensor = "(a) one int8 scale per tensor (the range across tokens counts)";
  const std::string across = "(a) against the none model's residual stream";
  const std::string range = "(a) fp16's range (fp32 runs)";
  r.measures = {
      measure_at_least("(a) LN: int8 SNR leaving the norm - entering it (residual stream), per-token scale (dB)",
                       differences(ln.out, ln.in), 6),
      measure_at_least("(a) RMS: the same (dB)", differences(rms.out, rms.in), 6),
      in_group(measure_at_least("LN: SNR leaving the norm - entering it, per-tensor scale (dB)",
                                differences(ln.tensor_out, ln.tensor_in), 6),
               per_tensor),
      in_group(measure_at_least("RMS: the same (dB)", differences(rms.tensor_out, rms.tensor_in), 6), per_tensor),
      in_group(measure_at_least("LN leaving the norm - none's residual stream, per-token scale (dB)",
                                differences(ln.out, none.in), 6),
               across),
      in_group(measure_at_least("RMS leaving the norm - none's residual stream, per-token scale (dB)",
                                differences(rms.out, none.in), 6),
               across),
      in_group(measure_at_least("LN leaving the norm - none's residual stream, per-tensor scale (dB)",
                                differences(ln.tensor_out, none.tensor_in), 6),
               across),
      measure_reported("none: residual stream int8 SNR, per-token scale (dB)", none.in, across),
      measure_reported("none: residual stream int8 SNR, per-tensor scale (dB)", none.tensor_in, across),
      measure_reported("LN: largest |x| entering the norm", ln.max_in, range),
      measure_reported("LN: largest |x| leaving the norm", ln.max_out, range),
      measure_reported("none: largest |x| in the residual stream", none.max_in, range),
      measure_reported("LN: share outside fp16's normal range entering the norm (%)", ln.fp16_in, range),
      measure_reported("LN: share outside fp16's normal range leaving the norm (%)", ln.fp16_out, range),
      measure_reported("none: share outside fp16's normal range, residual stream (%)", none.fp16_in, range),
  };

  // (b) the loss gaps to fp32, per seed (the same init and data at every format)
  std::string null_notes;
  std::vector<std::string> gap_lines;
  for (const char* format : {"bf16", "fp16"}) {
    const std::string group = fmt::format("(b) {}: final validation loss gap to fp32", format);
    std::vector<double> gap[3];
    for (int k = 0; k < 3; ++k) {
      gap[k] = differences(values_of(of(kNorms[k], format), "final_val_loss"),
                           values_of(of(kNorms[k], "fp32"), "final_val_loss"));
      r.measures.push_back(measure_reported(fmt::format("{}: {} - fp32", kNorms[k], format), gap[k], group));
    }
    const bool bf16 = std::string(format) == "bf16";
    for (int k : {1, 2}) {
      Measure m = measure_reported(fmt::format("none's gap - {}'s gap", kNorms[k]), differences(gap[0], gap[k]), group);
      const bool null_result = m.interval.lo <= 0 && m.interval.hi >= 0;
      gap_lines.push_back(fmt::format("{} none - {} {}", format, k == 1 ? "LN" : "RMS", show(m.interval, 4)));
      const double bound = std::max(std::abs(m.interval.lo), std::abs(m.interval.hi));
      null_notes += fmt::format(
          "- {}: none's loss gap to fp32 minus {}'s: {} — {}.\n", format, kNorms[k], show(m.interval, 4),
          !null_result ? std::string("the interval excludes 0: the norm changes what the format costs")
          : bf16 ? fmt::format("the interval holds 0: no effect of the norm detected (none larger than {:.3f} in loss), "
                               "the null result floating point predicts: bf16 has fp32's range and its relative "
                               "precision does not depend on magnitude", bound)
                 : fmt::format("the interval holds 0: no effect of the norm detected (none larger than {:.3f} in loss); "
                               "fp16's range did not bind (the shares outside its normal range above), so only its "
                               "relative precision acted, which does not depend on magnitude", bound));
      r.measures.push_back(m);
    }
  }
  r.verdict = verdict_of(r.measures);

  // the fp16 runs' skipped steps
  std::string skipped;
  for (const char* norm : kNorms) {
    std::vector<std::string> per_seed;
    for (const RunRecord* run : of(norm, "fp16"))
      per_seed.push_back(run->summary.contains("loss_scale")
                             ? std::to_string(run->summary["loss_scale"]["skipped_steps"].get<int>())
                             : "?");
    skipped += fmt::format("{}{} {}", skipped.empty() ? "" : "; ", norm, fmt::join(per_seed, ", "));
  }

  // plots: the SNR by position (fp32 runs), the validation loss of every run kind
  std::vector<Curve> snr, tensor_snr, losses;
  for (const auto& [k, label] : {std::pair{1, "LN"}, std::pair{2, "RMS"}}) {
    snr.push_back(profile_curve(fmt::format("{} entering the norm", label), part[k].profile_in));
    snr.push_back(profile_curve(fmt::format("{} leaving the norm", label), part[k].profile_out));
    tensor_snr.push_back(profile_curve(fmt::format("{} entering the norm", label), part[k].tensor_profile_in));
    tensor_snr.push_back(profile_curve(fmt::format("{} leaving the norm", label), part[k].tensor_profile_out));
  }
  snr.push_back(profile_curve("none: residual stream", none.profile_in));
  tensor_snr.push_back(profile_curve("none: residual stream", none.tensor_profile_in));
  plot_into(ctx, "int8-snr-per-token",
            {.title = "C12: int8 absmax SNR, one scale per token (fp32 runs, last statistics step)",
             .xlabel = "position", .ylabel = "SNR (dB), average over sites and seeds"},
            snr, r);
  plot_into(ctx, "int8-snr-per-tensor",
            {.title = "C12: int8 absmax SNR, one scale per tensor (fp32 runs, last statistics step)",
             .xlabel = "position", .ylabel = "SNR (dB), average over sites and seeds"},
            tensor_snr, r);
  for (const char* norm : kNorms)
    for (const char* format : kFormats)
      losses.push_back(mean_curve(fmt::format("{} {}", norm, format), of(norm, format), &RunRecord::val_loss));
  plot_into(ctx, "val-loss", {.title = "C12: validation loss by norm and format (mean over seeds, band = seeds)",
                              .ylabel = "validation loss"},
            losses, r);

  r.measured = fmt::format(
      "(a) int8 SNR leaving minus entering the norm, per-token scale: LN {} dB, RMS {} dB; per-tensor scale: LN {} "
      "dB, RMS {} dB; (b) loss gap differences {}",
      show(r.measures[0].interval, 2), show(r.measures[1].interval, 2), show(r.measures[2].interval, 2),
      show(r.measures[3].interval, 2), fmt::join(gap_lines, ", "));
  r.details += fmt::format(
      "The 4-layer Pre-LN transformer of C1 (d 64, fortunes, seq 64, batch 16, Adam 1e-3), {} steps, at fp32, bf16 "
      "and fp16 (train.precision: activations and weights rounded to nearest even at every op boundary, fp32 "
      "master weights and Adam state; fp16 with dynamic loss scaling from 2^16). Part (a) from ranges.csv of the "
      "fp32 runs at step {} (the last statistics step), sites attn, ffn and final; each SNR is averaged over the "
      "64 positions and then the sites, in dB. A Pre-LN norm's input is the residual stream; for none the site's "
      "input is the residual stream at the same place.\n\n"
      "Per-token absmax quantization divides each token by its own largest |x|, so a norm's per-token rescaling "
      "cannot change it: only the shape of the vector inside a token can (LN's centring, the gain). One scale "
      "per tensor is where the range across tokens counts, and where narrowing it can help.\n\n"
      "Part (b), loss gaps per seed (the same init and data at each format):\n{}\n"
      "fp16 steps skipped by the loss scaler (per seed): {}.\n",
      N, N - 1, null_notes, skipped);
  if (ctx.quick) r.setting = fmt::format("quick: {} steps", N);
  return r;
}

}  // namespace nt
