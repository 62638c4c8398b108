#include "sweep/sweep_plot.h"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>

#include "io/run_files.h"
#include "io/plot.h"

namespace nt {

namespace {
// step -> validation loss of one run (metrics.jsonl's "val" lines)
std::map<int, double> val_curve(const std::string& run_dir) {
  std::map<int, double> out;
  for (const LossPoint& p : read_losses(run_dir))
    if (p.val) out[p.step] = p.loss;
  return out;
}
}  // namespace

std::string sweep_picture(const std::string& dir, const std::vector<SweepJob>& jobs) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::map<int, double>>> groups;
  for (const SweepJob& j : jobs) {
    const std::string g = j.group_label().empty() ? "all" : j.group_label();
    if (!groups.count(g)) order.push_back(g);
    auto curve = val_curve(j.dir);
    if (!curve.empty()) groups[g].push_back(std::move(curve));
  }
  std::vector<Curve> curves;
  int most_seeds = 0;
  for (const std::string& g : order) {
    const auto& runs = groups[g];
    if (runs.empty()) continue;
    most_seeds = std::max(most_seeds, int(runs.size()));
    Curve c{fmt::format("{} ({} run{})", g, runs.size(), runs.size() == 1 ? "" : "s"), {}, {}};
    // the steps every run of the point reached (a diverged run stops early: its steps only)
    for (const auto& [step, first] : runs[0]) {
      std::vector<double> v;
      for (const auto& r : runs)
        if (auto it = r.find(step); it != r.end()) v.push_back(it->second);
      if (v.size() != runs.size()) continue;
      double mean = 0, var = 0;
      for (double x : v) mean += x / double(v.size());
      for (double x : v) var += v.size() > 1 ? (x - mean) * (x - mean) / double(v.size() - 1) : 0;
      c.points.emplace_back(double(step), mean);
      c.band.emplace_back(mean - std::sqrt(var), mean + std::sqrt(var));
    }
    curves.push_back(std::move(c));
  }
  if (curves.empty()) return "\nNo sweep.png: no run has a validation loss yet.\n";
  const std::string note =
      plot_curves(dir, "sweep",
                  PlotStyle{.title = fmt::format("{}: validation loss, mean over seeds, band +- 1 sd",
                                                 std::filesystem::path(dir).filename().string()),
                            .xlabel = "step",
                            .ylabel = "validation loss"},
                  curves);
  if (!note.empty()) return fmt::format("\nNo sweep.png: {}\n", note);
  return fmt::format(
      "\n![validation loss against step, one curve per grid point, the mean over {} with a band of one "
      "standard deviation](sweep.png)\n\nThe curves' data: `sweep.tsv` (step, mean, mean - sd, mean + sd).\n",
      most_seeds > 1 ? "its seeds" : "its runs");
}

}  // namespace nt
