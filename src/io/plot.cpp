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

std::string plot_curves(const std::string& dir, const std::string& stem, const std::string& title,
                        const std::vector<Curve>& curves, bool log_y) {
  namespace fs = std::filesystem;
  const fs::path data = fs::path(dir) / (stem + ".tsv"), script = fs::path(dir) / (stem + ".gp");
  {
    std::ofstream out(data);
    for (std::size_t i = 0; i < curves.size(); ++i) {
      out << "# " << curves[i].title << "\n";
      for (auto [step, loss] : curves[i].points)
        if (std::isfinite(loss)) out << step << "\t" << fmt::format("{:.6g}", loss) << "\n";
      out << "\n\n";
    }
  }
  {
    std::ofstream gp(script);
    gp << "set terminal pngcairo size 800,500 noenhanced\n"
       << "set output " << quoted(stem + ".png") << "\n"
       << "set title " << quoted(title) << "\n"
       << "set xlabel 'step'\nset ylabel 'loss'\nset grid\nset key top right\n"
       << (log_y ? "set logscale y\n" : "") << "plot ";
    bool first = true;
    for (std::size_t i = 0; i < curves.size(); ++i) {
      if (curves[i].points.empty()) continue;
      gp << (first ? "" : ", \\\n     ") << quoted(stem + ".tsv") << " index " << i
         << " using 1:2 with linespoints pointsize 0.5 title " << quoted(curves[i].title);
      first = false;
    }
    gp << "\n";
  }
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    return fmt::format("no plot: gnuplot is not installed (apt-get install gnuplot-nox); {} is ready for it",
                       script.string());
  const std::string cmd = fmt::format("cd {} && gnuplot {} 2>{}.log", quoted(dir), quoted(stem + ".gp"), quoted(stem));
  if (std::system(cmd.c_str()) != 0)
    return fmt::format("no plot: gnuplot failed, see {}/{}.log", dir, stem);
  fs::remove(fs::path(dir) / (stem + ".log"));
  return "";
}

}  // namespace nt
