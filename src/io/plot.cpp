#include "io/plot.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

namespace nt {

namespace {
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}
}  // namespace

std::string plot_curves(const std::string& dir, const std::string& stem, const PlotStyle& style,
                        const std::vector<Curve>& curves) {
  namespace fs = std::filesystem;
  const fs::path data = fs::path(dir) / (stem + ".tsv"), script = fs::path(dir) / (stem + ".gp");
  {
    std::ofstream out(data);
    for (const Curve& c : curves) {
      out << "# " << c.title << "\n";
      for (std::size_t i = 0; i < c.points.size(); ++i) {
        const auto [x, y] = c.points[i];
        if (!std::isfinite(y)) continue;
        out << fmt::format("{:.6g}\t{:.6g}", x, y);
        if (!c.band.empty()) out << fmt::format("\t{:.6g}\t{:.6g}", c.band[i].first, c.band[i].second);
        out << "\n";
      }
      out << "\n\n";
    }
  }
  {
    std::ofstream gp(script);
    gp << "set terminal pngcairo size 800,500 noenhanced\n"
       << "set output " << quoted(stem + ".png") << "\n"
       << "set title " << quoted(style.title) << "\n"
       << "set xlabel " << quoted(style.xlabel) << "\nset ylabel " << quoted(style.ylabel) << "\n"
       << "set grid\nset key top right\nset style fill transparent solid 0.2 noborder\n"
       << (style.logx ? "set logscale x 2\n" : "") << (style.logy ? "set logscale y\n" : "") << "plot ";
    bool first = true;
    for (std::size_t i = 0; i < curves.size(); ++i) {
      if (curves[i].points.empty()) continue;
      const std::string src = quoted(stem + ".tsv") + fmt::format(" index {}", i);
      if (!curves[i].band.empty())
        gp << (first ? "" : ", \\\n     ") << src << " using 1:3:4 with filledcurves linecolor " << i + 1
           << " notitle", first = false;
      gp << (first ? "" : ", \\\n     ") << src << " using 1:2 with linespoints pointsize 0.5 linecolor " << i + 1
         << " title " << quoted(curves[i].title);
      first = false;
    }
    gp << "\n";
  }
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    return fmt::format("no plot: gnuplot is not installed (apt-get install gnuplot-nox); {} is ready for it",
                       script.string());
  const std::string cmd = fmt::format("cd {} && gnuplot {} 2>{}.log", quoted(dir), quoted(stem + ".gp"), quoted(stem));
  if (std::system(cmd.c_str()) != 0) return fmt::format("no plot: gnuplot failed, see {}/{}.log", dir, stem);
  fs::remove(fs::path(dir) / (stem + ".log"));
  return "";
}

}  // namespace nt
