// Loss curves as a PNG, drawn by gnuplot (Debian gnuplot-nox) from the run's losses:
// writes loss.tsv (block 0 train, block 1 validation) and loss.gp next to them, then runs
// gnuplot. Returns "" on success, else a one-line note (e.g. gnuplot is not installed);
// a missing plot never fails a run.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace nt {

struct Curve {
  std::string title;
  std::vector<std::pair<int, double>> points;  // (step, loss)
};

std::string plot_curves(const std::string& dir, const std::string& stem, const std::string& title,
                        const std::vector<Curve>& curves, bool log_y = false);

}  // namespace nt
