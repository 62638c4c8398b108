#include "io/plot.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "io/files.h"

namespace nt {

namespace {
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}
// `gnuplot <stem>.gp` in `dir`, its stderr in <stem>.log, run without a shell (no quoting of the
// directory's name can go wrong); its exit status, 127 when there is no gnuplot.
int run_gnuplot(const std::string& dir, const std::string& stem) {
  const std::string log = (std::filesystem::path(dir) / (stem + ".log")).string(), gp = stem + ".gp";
  ::unlink(log.c_str());
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  const pid_t pid = fork();
  if (pid < 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(fd >= 0 ? fd : null, 2);
    if (::chdir(dir.c_str()) != 0) _exit(126);
    execlp("gnuplot", "gnuplot", gp.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  if (fd >= 0) ::close(fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::string plot_curves(const std::string& dir, const std::string& stem, const PlotStyle& style,
                        const std::vector<Curve>& curves) {
  namespace fs = std::filesystem;
  const fs::path data = fs::path(dir) / (stem + ".tsv"), script = fs::path(dir) / (stem + ".gp");
  {
    std::ostringstream out;
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
    write_file_atomically(data.string(), out.str());
  }
  {
    std::ostringstream gp;
    gp << "set terminal pngcairo size 800,500 noenhanced\n"
       << "set output " << quoted(stem + ".png") << "\n"
       << "set title " << quoted(style.title) << "\n"
       << "set xlabel " << quoted(style.xlabel) << "\nset ylabel " << quoted(style.ylabel) << "\n"
       << "set grid\nset key " << style.key << "\nset style fill transparent solid 0.2 noborder\n"
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
    write_file_atomically(script.string(), gp.str());
  }
  // gnuplot writes <stem>.png itself, following a link there: a planted one is removed first
  ::unlink((fs::path(dir) / (stem + ".png")).c_str());
  const int status = run_gnuplot(dir, stem);
  if (status == 127)
    return fmt::format("no plot: gnuplot is not installed (apt-get install gnuplot-nox); {} is ready for it",
                       script.string());
  if (status != 0) return fmt::format("no plot: gnuplot failed, see {}/{}.log", dir, stem);
  fs::remove(fs::path(dir) / (stem + ".log"));
  return "";
}

std::string plot_panels(const std::string& dir, const std::string& stem, const std::string& title,
                        const std::vector<Panel>& panels, int columns) {
  namespace fs = std::filesystem;
  const fs::path data = fs::path(dir) / (stem + ".tsv"), script = fs::path(dir) / (stem + ".gp");
  std::size_t most_curves = 1;
  for (const Panel& p : panels) most_curves = std::max(most_curves, p.curves.size());
  {
    std::ofstream out(data);
    for (const Panel& p : panels)
      for (const Curve& c : p.curves) {
        out << "# " << p.style.title << ": " << c.title << "\n";
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
    columns = std::max(1, std::min<int>(columns, int(panels.size())));
    const int rows = (int(panels.size()) + columns - 1) / columns;
    // each panel 560 x 380 plus room for its key (a column of 12 px lines)
    const int key_width = most_curves > 1 ? 170 : 0;
    const int width = columns * (560 + key_width), height = rows * std::max<int>(380, 60 + 13 * int(most_curves));
    std::ofstream gp(script);
    gp << fmt::format("set terminal pngcairo size {},{} noenhanced font ',10'\n", width, height + 30)
       << "set output " << quoted(stem + ".png") << "\n"
       << fmt::format("set multiplot layout {},{} title {} font ',13'\n", rows, columns, quoted(title))
       << "set grid\nset style fill transparent solid 0.2 noborder\nset offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05\n"
       << "set key outside right top vertical Left reverse samplen 2 spacing 0.9 font ',8'\n";
    std::size_t block = 0;
    for (const Panel& p : panels) {
      gp << "set title " << quoted(p.style.title) << "\nset xlabel " << quoted(p.style.xlabel) << "\nset ylabel "
         << quoted(p.style.ylabel) << "\n"
         << (p.style.logx ? "set logscale x 2\n" : "unset logscale x\n")
         << (p.style.logy ? "set logscale y\n" : "unset logscale y\n") << "plot ";
      bool first = true;
      for (std::size_t i = 0; i < p.curves.size(); ++i, ++block) {
        const Curve& c = p.curves[i];
        if (c.points.empty()) continue;
        const std::string src = quoted(stem + ".tsv") + fmt::format(" index {}", block);
        const int color = int(i % 8) + 1, dash = int(i / 8) + 1;
        if (!c.band.empty())
          gp << (first ? "" : ", \\\n     ") << src << " using 1:3:4 with filledcurves linecolor " << color
             << " notitle", first = false;
        gp << (first ? "" : ", \\\n     ") << src << fmt::format(" using 1:2 with linespoints pointsize 0.4 "
                                                                 "linecolor {} dashtype {} title ", color, dash)
           << quoted(c.title);
        first = false;
      }
      if (first) gp << "NaN notitle";  // an empty panel keeps its place
      gp << "\n";
    }
    gp << "unset multiplot\n";
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
