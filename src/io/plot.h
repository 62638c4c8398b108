// Plots as PNG, drawn by gnuplot (Debian gnuplot-nox): writes <stem>.tsv (one block per
// curve: x, y, and the band's low and high when it has one) and <stem>.gp next to it, then
// runs gnuplot. Returns "" on success, else a one-line note (e.g. gnuplot is not installed);
// a missing plot never fails a run.
//
// gnuplot gets data, never code: every title, label and file name goes into the script through
// gnuplot_string, and gnuplot runs without a shell, in the plot's directory. Every file (.tsv,
// .gp, .png, .log) is written afresh and renamed into place, never through a link (io/files.h).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace nt {

// `text` as a gnuplot string constant: single-quoted (in which gnuplot expands neither
// backquotes, nor macros, nor backslashes), a quote doubled, and every control character (a
// newline would end the command and start another) shown as '?'.
std::string gnuplot_string(const std::string& text);

struct Curve {
  std::string title;
  std::vector<std::pair<double, double>> points;  // (x, y)
  std::vector<std::pair<double, double>> band;    // (low, high) per point, e.g. over seeds; may be empty
  std::string color = {};                         // "#rrggbb"; "" the palette's (io/palette.h)
  bool thin = false;                              // a thin line without points, e.g. one seed beside the mean
  bool dots = false;                              // small dots without a line: a scatter
};

struct PlotStyle {
  std::string title, xlabel = "step", ylabel = "loss";
  bool logx = false, logy = false;
  // Integer ticks on x, at most a dozen (layers, depths); on by default when xlabel names layers
  bool integer_x = false;
  // The y axis fitted to the second half of the x range (bands included), where curves that start
  // together part: the early steps run off the top
  bool zoom_last_half = false;
};

std::string plot_curves(const std::string& dir, const std::string& stem, const PlotStyle& style,
                        const std::vector<Curve>& curves);

// A plot's curves are coloured by io/palette.h (a norm always in its colour), its key sits outside
// the data on the right, and an x axis of layers has integer ticks.

// One graph of a figure with several: its axes and curves.
struct Panel {
  PlotStyle style;
  std::vector<Curve> curves;
};
// Panels side by side in `columns` columns (rows as needed), one PNG <stem>.png under a common
// title, the key of each panel outside it on the right; the data in <stem>.tsv (one block per
// curve, the panels' curves in order, each block headed "# <panel title>: <curve title>").
std::string plot_panels(const std::string& dir, const std::string& stem, const std::string& title,
                        const std::vector<Panel>& panels, int columns = 2);

}  // namespace nt
