// `normtool invariance`: the invariance tables of the LayerNorm and RMSNorm papers, measured
// (src/analysis/invariance.h), printed as a table or the spec's JSON array. Exit status 1
// when any cell disagrees with the papers, 2 on bad usage.
#include "cli/invariance.h"

#include <fmt/color.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "analysis/invariance.h"
#include "analysis/model_invariance.h"
#include "config/config.h"
#include "train/memory.h"
#include "io/paths.h"

namespace nt::cli {

namespace {

struct InvarianceOptions {
  std::string transform = "all";
  std::string norm = "all";
  std::string format = "table";
  std::vector<std::string> configs;    // --config, in order (run's precedence)
  std::vector<std::string> overrides;  // positional k=v, for the model level
  std::vector<std::string> sets;       // --set k=v, over the positional ones
  double delta = 3.0;
  int seed = 1;
  bool explain = false, geometry = false, example = false;
  bool seed_given = false;  // --seed on the command line (the model level takes the config's)
};

const char* mark(bool invariant) { return invariant ? "✓" : "✗"; }
const char* mark(Verdict v) { return v == Verdict::invariant ? "✓" : v == Verdict::changed ? "✗" : "?"; }
const char* mark(Prediction p) { return p == Prediction::invariant ? "✓" : p == Prediction::changed ? "✗" : "≈"; }

// Pads UTF-8 text to `width` display columns (each code point one column).
std::string pad(const std::string& s, std::size_t width) {
  std::size_t cols = 0;
  for (unsigned char c : s) cols += (c & 0xC0) != 0x80;
  return s + std::string(width > cols ? width - cols : 0, ' ');
}

void print_table(const std::vector<Cell>& cells, const LayerSetup& s, bool explain, bool color) {
  fmt::print(
      "Invariance of y = norm(W x), no pre-norm bias: W {}x{} ~ N(0, 1/{}), x {}x{} ~ N(0, 1), delta {}, seed {}\n",
      s.units, s.inputs, s.inputs, s.cases, s.inputs, s.delta, s.seed);
  std::string own;  // rows whose float32 tolerance is not the papers' 1e-5 (their descriptions, src/norms/, say why)
  for (const std::string& n : table_norms())
    if (float32_invariant_below(n) != 1e-5) own += fmt::format("; {} below {:g}", n, float32_invariant_below(n));
  fmt::print(
      "Each cell: measured/paper (✓ invariant, ✗ changed, ? in between), then rel = ||y' - y|| / ||y||\n"
      "in float64 with eps 0 (✓ below 1e-10) and in float32 with eps {:g} (✓ below 1e-5{}); ✗ above 1e-2.\n\n",
      s.eps32, own);
  std::vector<Transform> ts;
  std::vector<std::string> ns;
  for (const Cell& c : cells) {
    if (std::find(ts.begin(), ts.end(), c.transform) == ts.end()) ts.push_back(c.transform);
    if (std::find(ns.begin(), ns.end(), c.norm) == ns.end()) ns.push_back(c.norm);
  }
  constexpr std::size_t kCell = 22;
  fmt::print("{:<11}", "method");
  for (Transform t : ts) fmt::print("{}", pad(short_name(t), kCell));
  fmt::print("\n");
  for (const std::string& n : ns) {
    fmt::print("{:<11}", n);
    for (Transform t : ts)
      for (const Cell& c : cells)
        if (c.norm == n && c.transform == t) {
          const std::string text = fmt::format("{}/{} {:.0e} {:.0e}", mark(c.exact.verdict), mark(c.expected),
                                               c.exact.rel_diff, c.practical.rel_diff);
          const std::string shown = c.agrees ? text : text + " !";
          if (color && !c.agrees)
            fmt::print(fg(fmt::color::red) | fmt::emphasis::bold, "{}", pad(shown, kCell));
          else
            fmt::print("{}", pad(shown, kCell));
        }
    fmt::print("\n");
  }
  int disagree = 0;
  for (const Cell& c : cells) disagree += !c.agrees;
  fmt::print("\n{} of {} cells agree with Ba et al. 2016 Table 1 and Zhang & Sennrich 2019 Table 1{}\n",
             cells.size() - disagree, cells.size(),
             disagree ? " (disagreements marked !: a cell agrees when both its float64 and float32 measurements "
                        "give the paper's verdict)"
                      : "");
  if (explain) {
    fmt::print("\nWhy:\n");
    for (const Cell& c : cells)
      fmt::print("  {:<10} {:<22} {}  {}\n", c.norm, to_string(c.transform), mark(c.expected),
                 invariance_reason(c.norm, c.transform));
  }
}

nlohmann::json to_json(const Cell& c) {
  return {{"norm", c.norm},
          {"transform", to_string(c.transform)},
          {"max_abs_diff", c.exact.max_abs_diff},
          {"rel_diff", c.exact.rel_diff},
          {"invariant", c.exact.verdict == Verdict::invariant},
          {"expected", c.expected},
          {"agrees", c.agrees},
          {"precision", "float64, eps 0"},
          {"float32",
           {{"max_abs_diff", c.practical.max_abs_diff},
            {"rel_diff", c.practical.rel_diff},
            {"invariant", c.practical.verdict == Verdict::invariant}}},
          {"reason", invariance_reason(c.norm, c.transform)}};
}

void print_geometry() {
  fmt::print("\nGradient geometry (float64, eps 0; claims E2, E3)\n");
  fmt::print(
      "W' = delta W leaves the output unchanged and scales the gradient by 1/delta (L = sum(y * R), R random):\n");
  fmt::print("  {:<10} {:>6} {:>22} {:>20} {:>24}\n", "norm", "delta", "|dL/dW'| delta / |dL/dW|", "cos(dL/dW, W)",
             "max|1^T dL/dW| / |dL/dW|");
  for (const ScalingRow& r : gradient_scaling(LayerSetup{}))
    fmt::print("  {:<10} {:>6} {:>22.15f} {:>20.2e} {:>24}\n", to_string(r.norm), r.delta, r.grad_ratio,
               r.grad_w_cosine, std::isnan(r.column_sum) ? "-" : fmt::format("{:.2e}", r.column_sum));
  fmt::print("The norm's Jacobian has spectral norm 1/sigma(x) (layernorm) and 1/RMS(x) (rmsnorm), x in R^64:\n");
  fmt::print("  {:<10} {:>8} {:>14} {:>14} {:>18}\n", "norm", "x scale", "||J||_2", "sigma or RMS", "||J||_2 * stat");
  for (const JacobianRow& r : jacobian_norms(1))
    fmt::print("  {:<10} {:>8} {:>14.6g} {:>14.6g} {:>18.15f}\n", to_string(r.norm), r.scale, r.spectral_norm,
               r.statistic, r.product);
}

nlohmann::json to_json(const ModelCell& c) {
  nlohmann::json j = {
      {"norm", to_string(c.norm)}, {"transform", to_string(c.transform)}, {"applicable", c.applicable}, {"why", c.why}};
  if (!c.applicable) return j;
  j.update({{"site", c.site},
            {"max_abs_diff", c.site_change.max_abs_diff},
            {"rel_diff", c.site_change.rel_diff},
            {"invariant", c.site_change.verdict == Verdict::invariant},
            {"expected", to_string(c.predict_site)},
            {"logits_rel_diff", c.logits_change.rel_diff},
            {"logits_invariant", c.logits_change.verdict == Verdict::invariant},
            {"logits_expected", to_string(c.predict_logits)},
            {"agrees", c.agrees}});
  return j;
}

void print_model_table(const std::vector<ModelCell>& cells, const RunConfig& c, double delta, bool explain) {
  fmt::print("Model-level invariance: {} ({}, {} placement) at init, seed {}, delta {}, float32 with eps 1e-30\n",
             c.name, to_string(c.model.arch), to_string(c.model.norm.placement), c.seed, delta);
  fmt::print(
      "Each cell: the first norm's output, then the logits: measured/predicted and rel = ||y' - y|| / ||y||;\n"
      "✓ invariant (rel < 1e-4, float32 rounding), ✗ changed, "
      "≈ predicted approximately invariant (not judged).\n\n");
  std::vector<Transform> ts;
  for (const auto& cell : cells)
    if (std::find(ts.begin(), ts.end(), cell.transform) == ts.end()) ts.push_back(cell.transform);
  constexpr std::size_t kCell = 28;
  fmt::print("{:<11}", "norm");
  for (Transform t : ts) fmt::print("{}", pad(short_name(t), kCell));
  fmt::print("\n");
  std::optional<NormType> last;
  for (const auto& cell : cells) {
    if (cell.norm != last) {
      if (last) fmt::print("\n");
      fmt::print("{:<11}", to_string(cell.norm));
      last = cell.norm;
    }
    const std::string text =
        !cell.applicable
            ? "n/a"
            : fmt::format("{}/{} {:.0e}  {}/{} {:.0e}{}", mark(cell.site_change.verdict), mark(cell.predict_site),
                          cell.site_change.rel_diff, mark(cell.logits_change.verdict), mark(cell.predict_logits),
                          cell.logits_change.rel_diff, cell.agrees ? "" : " !");
    fmt::print("{}", pad(text, kCell));
  }
  int disagree = 0, applicable = 0;
  for (const auto& cell : cells) disagree += !cell.agrees, applicable += cell.applicable;
  fmt::print("\n\n{} of {} applicable cells agree with the prediction{}\n", applicable - disagree, applicable,
             disagree ? " (disagreements marked !)" : "");
  if (explain) {
    fmt::print("\nWhy:\n");
    for (const auto& cell : cells)
      fmt::print("  {:<10} {:<22} {}\n", to_string(cell.norm), to_string(cell.transform), cell.why);
  }
}

void print_example() { fmt::print("{}", invariance_example()); }

int run(const InvarianceOptions& o) {
  const std::vector<Transform> transforms = parse_transforms(o.transform);
  if (o.example) {
    print_example();
    return 0;
  }
  LayerSetup setup;
  setup.delta = o.delta;
  setup.seed = uint64_t(o.seed);
  if (!o.configs.empty() || !o.overrides.empty() || !o.sets.empty()) {
    // the layer level's options that the model level has no use for: an error, not ignored
    if (o.geometry)
      throw UsageError("--geometry: the gradient geometry is measured on the layer-level table; drop the config");
    if (o.seed_given)
      throw UsageError(
          fmt::format("--seed: the model level draws from the config's seed; give seed={} as an "
                      "override instead",
                      o.seed));
    ConfigInputs in{{}, o.overrides, o.sets};
    for (const std::string& f : o.configs) in.files.push_back(find_config(f));
    const RunConfig config = load_configs(in);
    check_memory(config);  // as run does: a model too large to allocate is exit 2 with the figures
    const auto rows = model_invariance(config, transforms, o.delta, o.norm);
    if (o.format == "json") {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& r : rows) out.push_back(to_json(r));
      fmt::print("{}\n", out.dump(2));
    } else {
      print_model_table(rows, config, o.delta, o.explain);
    }
    for (const auto& r : rows)
      if (!r.agrees) return 1;
    return 0;
  }
  const auto cells = layer_invariance(setup, parse_table_norms(o.norm), transforms);
  if (o.format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const Cell& c : cells) out.push_back(to_json(c));
    fmt::print("{}\n", out.dump(2));
  } else {
    print_table(cells, setup, o.explain, isatty(fileno(stdout)) && !std::getenv("NO_COLOR"));
    if (o.geometry) print_geometry();
  }
  for (const Cell& c : cells)
    if (!c.agrees) return 1;
  return 0;
}

}  // namespace

void setup_invariance(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<InvarianceOptions>();
  CLI::App* sub = app.add_subcommand("invariance", "Measure the invariance tables of the LayerNorm and RMSNorm papers");
  sub->add_option("-t,--transform", o->transform,
                  "a transform (weight-rescale, weight-recenter, weight-vector-rescale, data-rescale, data-recenter, "
                  "case-rescale) or a group (rescale, recenter, all)")
      ->capture_default_str();
  sub->add_option(
         "-n,--norm", o->norm,
         "a row of the table (" +
             [] {
               std::string rows;
               for (const std::string& n : table_norms()) rows += n + ", ";
               return rows;
             }() +
             "or all)")
      ->capture_default_str();
  sub->add_option("-f,--format", o->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  // float32 squares of delta-scaled values overflow beyond 1e6
  sub->add_option("--delta", o->delta, "the scale of the rescale transforms")
      ->capture_default_str()
      ->check(CLI::Range(1e-6, 1e6));
  sub->add_option("--seed", o->seed, "seed of W, x and the transforms' random vectors")
      ->capture_default_str()
      ->check(CLI::Range(0, 2147483647));
  sub->add_option("-c,--config", o->configs,
                  "measure at model level: the configured model at init (repeatable, as "
                  "for run)")
      ->allow_extra_args(false);
  sub->add_option("-s,--set", o->sets, "override a config key for the model level: --set model.norm.placement=post")
      ->allow_extra_args(false);
  sub->add_option("overrides", o->overrides, "config overrides as key.path=value (model level)");
  sub->add_flag("--explain", o->explain, "a one-line reason under the table for every cell");
  sub->add_flag("--geometry", o->geometry, "also the gradient geometry: 1/delta gradient scaling, Jacobian norms");
  sub->add_flag("--example", o->example, "LayerNorm on [2,3,5,1,4], and BatchNorm and RMSNorm on a batch");
  sub->callback([o, sub, &exit_code] {
    o->seed_given = sub->count("--seed") > 0;
    exit_code = run(*o);
  });
}

}  // namespace nt::cli
