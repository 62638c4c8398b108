// Plots as PNG, drawn by gnuplot (Debian gnuplot-nox): writes <stem>.tsv (one block per
// curve: x, y, and the band's low and high when it has one) and <stem>.gp next to it, then
// runs gnuplot. Returns "" on success, else a one-line note (e.g. gnuplot is not installed);
// a missing plot never fails a run.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace nt {

struct Curve {
  std::string title;
  std::vector<std::pair<double, double>> points;  // (x, y)
  std::vector<std::pair<double, double>> band;    // (low, high) per point, e.g. over seeds; may be empty
};

struct PlotStyle {
  std::string title, xlabel = "step", ylabel = "loss";
  bool logx = false, logy = false;
};

std::string plot_curves(const std::string& dir, const std::string& stem, const PlotStyle& style,
                        const std::vector<Curve>& curves);

}  // namespace nt
