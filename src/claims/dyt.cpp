// Transformers without Normalization (Zhu et al. 2025), as data: C20, Dynamic Tanh
// y = gamma tanh(alpha x) + beta in place of the norm, and the S-shaped input-output map of a
// trained LayerNorm that motivates it (§3, Fig. 2-3).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <numeric>
#include <random>

#include "analysis/s_curve.h"
#include "claims/claim.h"
#include "claims/evidence.h"
#include "train/session.h"

namespace nt {

namespace {

constexpr const char* kAlphas[] = {"0.1", "0.5", "1", "2"};  // alpha_0; 0.5 the paper's default
constexpr int kScatter = 1500;                               // points of a site drawn in the S-curve plot

const std::vector<std::string> kOverrides = {"model.n_layers=4", "train.steps=600", "train.eval_every=50",
                                             "train.eval_batches=10", "train.stats_every=0"};
const std::vector<std::string> kQuick = {"train.steps=100", "train.eval_every=25"};

// A site's pairs (x, LN(x) before the gain and bias) over every element of its real rows
std::pair<std::vector<double>, std::vector<double>> ln_pairs(const SiteCapture& site, const Batch& probe, double eps) {
  std::vector<double> x, y;
  const bool masked = probe.padded && probe.mask.size() == std::size_t(site.in.rows);
  for (int row = 0; row < site.in.rows; ++row) {
    if (masked && probe.mask[std::size_t(row)] == 0) continue;
    const float* v = site.in.data + std::size_t(row) * site.in.cols;
    double mean = 0, var = 0;
    for (int j = 0; j < site.in.cols; ++j) mean += v[j];
    mean /= site.in.cols;
    for (int j = 0; j < site.in.cols; ++j) var += (v[j] - mean) * (v[j] - mean);
    const double inv = 1 / std::sqrt(var / site.in.cols + eps);
    for (int j = 0; j < site.in.cols; ++j) x.push_back(v[j]), y.push_back((v[j] - mean) * inv);
  }
  return {x, y};
}

// Up to kScatter of the pairs, drawn without replacement by a fixed stream
nlohmann::json scatter(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<std::size_t> at(x.size());
  std::iota(at.begin(), at.end(), std::size_t(0));
  std::mt19937 rng(20);
  std::shuffle(at.begin(), at.end(), rng);
  at.resize(std::min(at.size(), std::size_t(kScatter)));
  nlohmann::json xs = nlohmann::json::array(), ys = nlohmann::json::array();
  for (std::size_t i : at) xs.push_back(x[i]), ys.push_back(y[i]);
  return {{"x", xs}, {"y", ys}};
}

// The sites of the S-curve plots: the first, the last block's last and the final norm
bool drawn(std::size_t k, std::size_t n) { return k == 0 || k + 2 >= n; }

// Every norm site on the first validation batch, in eval mode, in forward order: the fits of LN(x)
// against x; deep: the sites of the deeper half of the blocks and the final norm
nlohmann::json fit_sites(Session& run, const RunConfig& c) {
  Batch probe;
  run.data().val_batch(0, c.train.batch_size, probe);
  run.forward(probe, /*training=*/false);
  const auto& sites = run.model().sites();
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t k = 0; k < sites.size(); ++k) {
    const auto [x, y] = ln_pairs(sites[k], probe, c.model.norm.eps);
    const CurveFit t = fit_tanh(x, y), l = fit_line(x, y);
    out.push_back({{"place", sites[k].place},
                   {"layer", sites[k].layer},
                   {"deep", 2 * sites[k].layer >= c.model.n_layers},
                   {"r2_tanh", t.r2},
                   {"r2_line", l.r2},
                   {"a", t.a},
                   {"b", t.b},
                   {"c", l.a},
                   {"d", l.b}});
    if (drawn(k, sites.size())) out.back()["scatter"] = scatter(x, y);
  }
  return out;
}

// One job: the LN model trained as `normtool run` trains it (evaluated at every eval_every and at the
// end), then its sites fitted
nlohmann::json ln_probe(const RunConfig& c, const ClaimContext&) {
  Session run(c);
  nlohmann::json val = nlohmann::json::array();
  bool diverged = false;
  for (int step = 0; step < c.train.steps && !diverged; ++step) {
    if (step % c.train.eval_every == 0) val.push_back({step, run.evaluate().loss});
    diverged = run.step().diverged;
  }
  const double last = diverged ? NAN : run.evaluate().loss;
  if (!diverged) val.push_back({run.steps_done(), last});
  return {{"val_loss", val}, {"final_val_loss", last}, {"sites", fit_sites(run, c)}};
}

// Per seed, over the LN runs' sites deep (or not): the mean, or the smallest, of R^2(tanh) - R^2(line)
Reader fit_gain(bool deep, bool smallest) {
  return per_run("ln", {}, [deep, smallest](const RunRecord& r) {
    std::vector<double> gaps;
    for (const auto& s : r.summary.at("sites"))
      if (s.at("deep").get<bool>() == deep)
        gaps.push_back(s.at("r2_tanh").get<double>() - s.at("r2_line").get<double>());
    if (gaps.empty()) return double(NAN);
    if (smallest) return *std::min_element(gaps.begin(), gaps.end());
    double m = 0;
    for (double g : gaps) m += g / double(gaps.size());
    return m;
  });
}

Reader dyt_loss(const char* alpha) { return field("dyt", {{"model.norm.dyt_alpha0", alpha}}, "final_val_loss"); }

std::vector<MeasureSpec> c20_measures() {
  const Reader ln = field("ln", {}, "final_val_loss");
  std::vector<MeasureSpec> m{
      {"LN, deeper half of the sites: mean of R^2(a tanh(bx)) - R^2(cx + d)", AtLeast{0.05}, fit_gain(true, false)},
      {"DyT (alpha_0 = 0.5) / LN: final validation loss", NonInferior{0.02}, ratio(dyt_loss("0.5"), ln), "", Scale::log,
       false, false, 4},
      {"LN, deeper half of the sites: smallest R^2(tanh) - R^2(line)", Reported{}, fit_gain(true, true), "the fits"},
      {"LN, shallower half of the sites: mean R^2(tanh) - R^2(line)", Reported{}, fit_gain(false, false), "the fits"}};
  for (const char* a : kAlphas)
    if (std::string(a) != "0.5")
      m.push_back({fmt::format("DyT (alpha_0 = {}) / LN: final validation loss", a), Reported{}, ratio(dyt_loss(a), ln),
                   "the alpha_0 sweep", Scale::log, false, false, 4});
  m.push_back({"LN: final validation loss", Reported{}, ln, "the alpha_0 sweep"});
  for (const char* a : kAlphas)
    m.push_back(
        {fmt::format("DyT (alpha_0 = {}): final validation loss", a), Reported{}, dyt_loss(a), "the alpha_0 sweep"});
  return m;
}

// Where a site is, in words
std::string site_name(const nlohmann::json& site) {
  const std::string place = site.at("place");
  return place == "final" ? "the final norm"
                          : fmt::format("block {}'s {} norm", site.at("layer").get<int>() + 1, place);
}

// The S-curve of the k-th drawn site of the first seed's LN run: its scatter, the tanh and the line fitted
std::vector<Curve> s_curve(const Evidence& ev, int k) {
  const nlohmann::json* site = nullptr;
  for (const auto& s : ev.of("ln").front()->summary.at("sites"))
    if (s.contains("scatter") && k-- == 0) site = &s;
  if (!site) return {};
  const auto xs = site->at("scatter").at("x").get<std::vector<double>>();
  const auto ys = site->at("scatter").at("y").get<std::vector<double>>();
  Curve dots{fmt::format("layernorm, {}: {} of the pairs", site_name(*site), xs.size()), {}, {}};
  dots.dots = true;
  for (std::size_t i = 0; i < xs.size(); ++i) dots.points.emplace_back(xs[i], ys[i]);
  const auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
  const double a = site->at("a"), b = site->at("b"), c = site->at("c"), d = site->at("d");
  Curve tanh_fit{fmt::format("{:.2f} tanh({:.3g} x), R^2 = {:.3f}", a, b, site->at("r2_tanh").get<double>()), {}, {}};
  Curve line{fmt::format("{:.3g} x + {:.2f}, R^2 = {:.3f}", c, d, site->at("r2_line").get<double>()), {}, {}};
  for (int i = 0; i <= 100; ++i) {
    const double x = *lo + (*hi - *lo) * i / 100;
    tanh_fit.points.emplace_back(x, a * std::tanh(b * x)), line.points.emplace_back(x, c * x + d);
  }
  tanh_fit.color = "#000000", line.color = "#999999";
  return {dots, tanh_fit, line};
}

// The mean validation loss over the seeds of LN (its sessions' records) and of DyT at alpha_0 = 0.5
std::vector<Curve> loss_curves(const Evidence& ev) {
  auto session_val_loss = [](const RunRecord& r) {
    std::map<int, double> m;
    for (const auto& p : r.summary.at("val_loss")) m[p.at(0).get<int>()] = p.at(1).get<double>();
    return m;
  };
  return {mean_of_maps("layernorm", ev.of("ln"), session_val_loss),
          mean_curve("dyt, alpha_0 = 0.5", ev.of("dyt", {{"model.norm.dyt_alpha0", "0.5"}}), &RunRecord::val_loss)};
}

std::vector<PlotSpec> c20_plots() {
  std::vector<PlotSpec> p{{"val-loss",
                           {.title = "C20: validation loss, LayerNorm and DyT (alpha_0 = 0.5) (mean, band: 95% "
                                     "interval over seeds)",
                            .ylabel = "validation loss",
                            .zoom_last_half = true},
                           loss_curves}};
  for (int k = 0; k < 3; ++k)
    p.push_back({fmt::format("s-curve-{}", k + 1),
                 {.title = fmt::format("C20: a trained LayerNorm's output against its input (first seed), site {} "
                                       "of the 3 drawn",
                                       k + 1),
                  .xlabel = "x, the norm's input",
                  .ylabel = "LN(x) before the gain"},
                 [k](const Evidence& ev) { return s_curve(ev, k); }});
  return p;
}

// Per site, the means over the seeds of the fits' R^2 and parameters
std::string c20_details(const Evidence& ev) {
  const auto runs = ev.of("ln");
  const auto& first = runs.front()->summary.at("sites");
  std::string t =
      "The fits per norm site (forward order), means over the seeds:\n\n| site | deeper half | R^2 tanh | "
      "R^2 line | difference | a | b |\n|---|---|---|---|---|---|---|\n";
  for (std::size_t k = 0; k < first.size(); ++k) {
    double rt = 0, rl = 0, a = 0, b = 0;
    for (const RunRecord* r : runs) {
      const auto& s = r->summary.at("sites").at(k);
      const double n = double(runs.size());
      rt += s.at("r2_tanh").get<double>() / n, rl += s.at("r2_line").get<double>() / n;
      a += s.at("a").get<double>() / n, b += s.at("b").get<double>() / n;
    }
    t += fmt::format("| {} | {} | {:.4f} | {:.4f} | {:.4f} | {:.3g} | {:.3g} |\n", site_name(first[k]),
                     first[k].at("deep").get<bool>() ? "yes" : "no", rt, rl, rt - rl, a, b);
  }
  return t;
}

}  // namespace

std::vector<Claim> dyt_claims() {
  return {{
      .id = "C20",
      .slug = "dynamic-tanh-replaces-norm",
      .title = "Dynamic Tanh replaces the norm without loss; a trained LayerNorm's input-output map is S-shaped",
      .source = "Zhu et al. 2025 (Transformers without Normalization) §3 Fig. 2-3 (a trained LN's output against "
                "its input, before the affine part, is S-shaped in the deeper layers) and §4-§5 (DyT, "
                "alpha_0 = 0.5 by default, matches LN across tasks)",
      .why = "Read off the paper before any run (claims.md): (a) per seed, the mean over the deeper half of the "
             "norm sites of R^2(a tanh(bx)) - R^2(cx + d) >= 0.05 (AtLeast), the sites in forward order and the "
             "deeper half those of blocks 3-4 plus the final norm (5 of 9; the paper's S-shapes are in its deeper "
             "layers); the tanh without an offset because LN(x) before the affine part has mean 0 per token, "
             "the line with one (2 parameters each); their smallest and the shallower half's mean reported. "
             "(b) DyT (alpha_0 = 0.5) / LN final validation loss with an upper bound <= 1.02 (NonInferior, log "
             "scale); the other alpha_0 reported.",
      .settings =
          {{.name = "ln", .config = "lm-tiny.json", .overrides = kOverrides, .quick = kQuick, .session = ln_probe},
           {.name = "dyt",
            .config = "lm-tiny.json",
            .overrides = kOverrides,
            .quick = kQuick,
            .axes = {"model.norm.type=dyt", fmt::format("model.norm.dyt_alpha0={}", fmt::join(kAlphas, ","))}}},
      .measures = c20_measures(),
      .plots = c20_plots(),
      .method = "C15's model. LN is trained in this "
                "process as `normtool run` trains it; then, in eval mode on the first validation batch (16 x 64 "
                "tokens), each norm site's input x and LN(x) before the gain and bias, over every element "
                "(65,536 pairs), are fitted by least squares with a tanh(bx) (b on a log grid, then golden "
                "section; a closed-form) and with cx + d. DyT at alpha_0 = 0.1, 0.5, 1, 2 runs as sweeps; per "
                "seed, each final validation loss over LN's.",
      .details = c20_details,
      .seeds = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
      .core = false,
  }};
}

}  // namespace nt
