#include "io/plot.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <sstream>

#include "io/files.h"
#include "io/palette.h"

namespace nt {

namespace fs = std::filesystem;

std::string gnuplot_string(const std::string& text) {
  std::string q = "'";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\'')
      q += "''";
    else if (u < 0x20 || u == 0x7f)
      q += '?';  // a newline would end the command and start the next
    else
      q += c;
  }
  return q + "'";
}

namespace {

// A curve's title as the comment heading its block in <stem>.tsv: one line, whatever it holds.
std::string one_line(const std::string& text) {
  std::string s = text;
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s;
}

bool has_points(const Curve& c) {
  return std::any_of(c.points.begin(), c.points.end(), [](const auto& p) { return std::isfinite(p.second); });
}

// A curve's block of <stem>.tsv, headed by its title. A curve with no finite point writes its
// heading alone: an empty block is not one to gnuplot's `index`, and the blocks after it would be
// drawn under the wrong titles. The script numbers the blocks the same way (has_points).
void write_block(std::ostringstream& out, const std::string& heading, const Curve& c) {
  out << "# " << one_line(heading) << "\n";
  if (!has_points(c)) return;
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    const auto [x, y] = c.points[i];
    if (!std::isfinite(y)) continue;
    out << fmt::format("{:.6g}\t{:.6g}", x, y);
    if (!c.band.empty()) out << fmt::format("\t{:.6g}\t{:.6g}", c.band[i].first, c.band[i].second);
    out << "\n";
  }
  out << "\n\n";
}

// `gnuplot <stem>.gp` in `dir`, without a shell, in a process group of its own, its stderr in
// <stem>.log (created afresh, never through a link); its exit status, 127 when there is no gnuplot.
int run_gnuplot(const std::string& dir, const std::string& stem) {
  const std::string log = (fs::path(dir) / (stem + ".log")).string(), gp = stem + ".gp";
  ::unlink(log.c_str());
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  const pid_t pid = fork();
  if (pid < 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  if (pid == 0) {
    // a process group of its own: a terminal's Ctrl-C goes to normtool's group, which stops the run
    // at its next step; gnuplot, killed with it, lost the picture of a run that had finished
    ::setpgid(0, 0);
    const int null = ::open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(fd >= 0 ? fd : null, 2);
    if (::chdir(dir.c_str()) != 0) _exit(126);
    execlp("gnuplot", "gnuplot", gp.c_str(), static_cast<char*>(nullptr));
    if (errno == ENOENT) _exit(127);
    dprintf(2, "gnuplot could not be started: %s\n", std::strerror(errno));  // into <stem>.log
    _exit(126);
  }
  if (fd >= 0) ::close(fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Writes <stem>.tsv and <stem>.gp (io/files.h: atomically, never through a link), then has gnuplot
// draw <stem>.png. gnuplot opens its output following links, so it draws into <stem>.png.tmp, a
// file this process has just created afresh (O_EXCL | O_NOFOLLOW), which is then renamed over
// <stem>.png: a link planted at either name is replaced, never written through. `script` sets
// its output to gnuplot_string(stem + ".png.tmp").
std::string draw(const std::string& dir, const std::string& stem, const std::string& data, const std::string& script) {
  const fs::path base = fs::path(dir) / stem;
  write_file_atomically(base.string() + ".tsv", data);
  write_file_atomically(base.string() + ".gp", script);
  const std::string png = base.string() + ".png", tmp = png + ".tmp";
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw WriteError(tmp, errno);
  ::close(fd);
  const int status = run_gnuplot(dir, stem);
  if (status != 0) {
    ::unlink(tmp.c_str());
    if (status == 127)
      return fmt::format("no plot: gnuplot is not installed (apt-get install gnuplot-nox); {}.gp is ready for it",
                         base.string());
    return fmt::format("no plot: gnuplot failed, see {}.log", base.string());
  }
  if (std::rename(tmp.c_str(), png.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw WriteError(png, e);
  }
  ::unlink((base.string() + ".log").c_str());
  return "";
}

// "set yrange [lo:hi]" over the points (and bands) in the second half of the x range, with a margin
std::string y_range_of_last_half(const std::vector<Curve>& curves, bool logy) {
  double x0 = INFINITY, x1 = -INFINITY, lo = INFINITY, hi = -INFINITY;
  for (const Curve& c : curves)
    for (const auto& [x, y] : c.points) x0 = std::min(x0, x), x1 = std::max(x1, x);
  const double from = (x0 + x1) / 2;
  for (const Curve& c : curves)
    for (std::size_t i = 0; i < c.points.size(); ++i) {
      if (c.points[i].first < from || !std::isfinite(c.points[i].second)) continue;
      lo = std::min(lo, c.points[i].second), hi = std::max(hi, c.points[i].second);
      if (i < c.band.size()) lo = std::min(lo, c.band[i].first), hi = std::max(hi, c.band[i].second);
    }
  if (!(lo < hi)) return "set autoscale y\n";
  if (logy && lo > 0)
    return fmt::format("set yrange [{:.6g}:{:.6g}]\n", lo / std::pow(hi / lo, 0.1), hi * std::pow(hi / lo, 0.1));
  const double margin = (hi - lo) * 0.1;
  return fmt::format("set yrange [{:.6g}:{:.6g}]\n", lo - margin, hi + margin);
}

// The axes of one graph: labels, log scales, integer ticks on a layer axis. A log x axis over less
// than two decades (batch sizes 2..32) ticks at powers of 2, a wider one (learning rates) at powers of 10.
std::string axes_of(const PlotStyle& style, const std::vector<Curve>& curves) {
  double lo = INFINITY, hi = 0;
  for (const Curve& c : curves)
    for (const auto& [x, y] : c.points) hi = std::max(hi, x), lo = x > 0 ? std::min(lo, x) : lo;
  const bool decades = hi >= 100 * lo;
  std::string gp = "set title " + gnuplot_string(style.title) + "\nset xlabel " + gnuplot_string(style.xlabel) +
                   "\nset ylabel " + gnuplot_string(style.ylabel) + "\n" +
                   (!style.logx ? "unset logscale x\nset format x '% h'\n"
                    : decades   ? "set logscale x 10\nset format x '%g'\n"
                                : "set logscale x 2\nset format x '%g'\n") +
                   (style.logy ? "set logscale y\n" : "unset logscale y\n") + "set autoscale y\n";
  if (style.zoom_last_half) gp += y_range_of_last_half(curves, style.logy);
  const bool integers = style.integer_x || style.xlabel.find("layer") != std::string::npos;
  return gp + (integers && !style.logx ? fmt::format("set xtics {}\n", std::max(1.0, std::ceil(hi / 12)))
                                       : "set xtics autofreq\n");
}

// The plot command of one graph: each curve with points in its pen, its band (if any) under it;
// `block` counts the blocks of <stem>.tsv (write_block).
std::string plot_command(const std::string& stem, const std::vector<Curve>& curves, std::size_t& block) {
  std::vector<std::string> titles, colors;
  for (const Curve& c : curves) titles.push_back(c.title), colors.push_back(c.color);
  const std::vector<Pen> pens = pens_for(titles, colors);
  std::string gp = "plot ";
  bool first = true;
  auto add = [&](const std::string& part) { gp += (first ? "" : ", \\\n     ") + part, first = false; };
  for (std::size_t i = 0; i < curves.size(); ++i) {
    const Curve& c = curves[i];
    if (!has_points(c)) continue;
    const std::string src = gnuplot_string(stem + ".tsv") + fmt::format(" index {}", block++);
    const std::string pen = fmt::format("linecolor rgb '{}' dashtype {}", pens[i].color, pens[i].dash);
    if (!c.band.empty()) add(src + " using 1:3:4 with filledcurves " + pen + " notitle");
    const std::string title = " title " + gnuplot_string(c.title);
    add(src + (c.thin   ? " using 1:2 with lines linewidth 0.6 " + pen + " notitle"
               : c.dots ? " using 1:2 with points pointtype 7 pointsize 0.25 " + pen + title
                        : " using 1:2 with linespoints pointsize 0.45 linewidth 1.5 " + pen + title));
  }
  if (first) gp += "NaN notitle";  // no curve has a point: an empty graph, not a gnuplot error
  return gp + "\n";
}

}  // namespace

std::string plot_curves(const std::string& dir, const std::string& stem, const PlotStyle& style,
                        const std::vector<Curve>& curves) {
  std::ostringstream data;
  for (const Curve& c : curves) write_block(data, c.title, c);
  std::size_t block = 0;
  const std::string gp = "set terminal pngcairo size 1000,520 noenhanced font ',10'\nset output " +
                         gnuplot_string(stem + ".png.tmp") +
                         "\nset grid\nset key outside right top vertical Left reverse samplen 2 font ',9'\n"
                         "set style fill transparent solid 0.2 noborder\n" +
                         axes_of(style, curves) + plot_command(stem, curves, block);
  return draw(dir, stem, data.str(), gp);
}

std::string plot_panels(const std::string& dir, const std::string& stem, const std::string& title,
                        const std::vector<Panel>& panels, int columns) {
  std::size_t most_curves = 1;
  for (const Panel& p : panels) most_curves = std::max(most_curves, p.curves.size());
  std::ostringstream data;
  for (const Panel& p : panels)
    for (const Curve& c : p.curves) write_block(data, p.style.title + ": " + c.title, c);

  columns = std::max(1, std::min<int>(columns, int(panels.size())));
  const int rows = (int(panels.size()) + columns - 1) / columns;
  // each panel 560 x 380 plus room for its key (a column of 12 px lines)
  const int key_width = most_curves > 1 ? 170 : 0;
  const int width = columns * (560 + key_width), height = rows * std::max<int>(380, 60 + 13 * int(most_curves));
  std::ostringstream gp;
  gp << fmt::format("set terminal pngcairo size {},{} noenhanced font ',10'\n", width, height + 30) << "set output "
     << gnuplot_string(stem + ".png.tmp") << "\n"
     << fmt::format("set multiplot layout {},{} title {} font ',13'\n", rows, columns, gnuplot_string(title))
     << "set grid\nset style fill transparent solid 0.2 noborder\nset offsets graph 0.03, graph 0.03, graph 0.05, "
        "graph 0.05\n"
     << "set key outside right top vertical Left reverse samplen 2 spacing 0.9 font ',8'\n";
  std::size_t block = 0;
  for (const Panel& p : panels) gp << axes_of(p.style, p.curves) << plot_command(stem, p.curves, block);
  gp << "unset multiplot\n";
  return draw(dir, stem, data.str(), gp.str());
}

}  // namespace nt
