#include "sweep/sweep_plot.h"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>

#include "analysis/seed_band.h"
#include "io/run_files.h"
#include "io/plot.h"

namespace nt {

namespace {
// step -> validation loss of one run (metrics.jsonl's "val" lines)
std::map<double, double> val_curve(const std::string& run_dir) {
  std::map<double, double> out;
  for (const LossPoint& p : read_losses(run_dir))
    if (p.val) out[p.step] = p.loss;
  return out;
}
}  // namespace

std::string sweep_picture(const std::string& dir, const std::vector<SweepJob>& jobs) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::map<double, double>>> groups;
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
    curves.push_back(mean_over_seeds(fmt::format("{} ({} run{})", g, runs.size(), runs.size() == 1 ? "" : "s"), runs));
  }
  if (curves.empty()) return "\nNo sweep.png: no run has a validation loss yet.\n";
  const std::string note =
      plot_curves(dir, "sweep",
                  PlotStyle{.title = fmt::format("{}: validation loss, mean over seeds ({}; y fitted to the last half)",
                                                 std::filesystem::path(dir).filename().string(), kSeedBand),
                            .xlabel = "step",
                            .ylabel = "validation loss",
                            .zoom_last_half = true},
                  curves);
  if (!note.empty()) return fmt::format("\nNo sweep.png: {}\n", note);
  return fmt::format(
      "\n![validation loss against step, one curve per grid point, the mean over {} with its 95% interval as the "
      "band, the y axis fitted to the last half of the steps](sweep.png)\n\nThe curves' data: `sweep.tsv` (step, "
      "mean, and with two seeds or more the 95% interval's low and high).\n",
      most_seeds > 1 ? "its seeds" : "its runs");
}

}  // namespace nt
