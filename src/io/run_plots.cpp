#include "io/run_plots.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/errors.h"
#include "core/read_file.h"
#include "io/plot.h"

namespace nt {

namespace fs = std::filesystem;

int CsvTable::column(const std::string& name) const {
  const auto it = std::find(columns.begin(), columns.end(), name);
  return it == columns.end() ? -1 : int(it - columns.begin());
}

namespace {
std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string f; std::getline(ss, f, ',');) out.push_back(f);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

double num(const std::vector<std::string>& row, int col) {
  if (col < 0 || col >= int(row.size())) return NAN;
  try {
    return std::stod(row[col]);
  } catch (const std::exception&) {
    return NAN;
  }
}

// "layer 0 attn": the curve of one site of one layer
std::string site_title(int layer, const std::string& place) { return fmt::format("layer {} {}", layer, place); }
std::string place_of(const std::string& site) { return site.substr(0, site.rfind('.')); }
std::string side_of(const std::string& site) {
  const auto dot = site.rfind('.');
  return dot == std::string::npos ? "" : site.substr(dot + 1);
}
}  // namespace

CsvTable read_csv(const std::string& path) {
  std::istringstream in(read_file(path, kMaxLogBytes));
  CsvTable t;
  std::string line;
  if (!std::getline(in, line)) throw InputError(fmt::format("{}: empty, expected a header line", path));
  t.columns = split(line);
  for (int n = 2; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    auto row = split(line);
    if (row.size() != t.columns.size())
      throw InputError(fmt::format("{}:{}: expected {} fields, got {}", path, n, t.columns.size(), row.size()));
    t.rows.push_back(std::move(row));
  }
  return t;
}

int last_step(const CsvTable& t) {
  const int c = t.column("step");
  int last = -1;
  for (const auto& r : t.rows) last = std::max(last, int(num(r, c)));
  return last;
}

SiteProfiles site_profiles(const CsvTable& t, int step, const std::string& value) {
  const int cs = t.column("step"), cl = t.column("layer"), csite = t.column("site"), cp = t.column("position"),
            cv = t.column(value);
  SiteProfiles out;
  if (cs < 0 || cl < 0 || csite < 0 || cp < 0 || cv < 0) return out;
  for (const auto& r : t.rows)
    if (int(num(r, cs)) == step) out[{int(num(r, cl)), r[csite]}].emplace_back(num(r, cp), num(r, cv));
  for (auto& [key, points] : out) std::sort(points.begin(), points.end());
  return out;
}

namespace {

// stats.png: four panels, mean and std, entering and leaving; by position (or by layer for an mlp)
std::string plot_stats(const std::string& dir) {
  const CsvTable t = read_csv((fs::path(dir) / "stats.csv").string());
  const int step = last_step(t);
  if (step < 0) return "";
  std::vector<Panel> panels;
  for (const char* value : {"mean", "std"}) {
    const SiteProfiles prof = site_profiles(t, step, value);
    bool one_position = true;
    for (const auto& [key, points] : prof) one_position &= points.size() == 1;
    for (const char* side : {"in", "out"}) {
      Panel p{PlotStyle{fmt::format("{} {} the norm ({})", value, std::string(side) == "in" ? "entering" : "leaving",
                                    side),
                        one_position ? "layer" : "position", value},
              {}};
      if (one_position) {  // an mlp: one point per layer, a curve per place
        std::map<std::string, Curve> by_place;
        for (const auto& [key, points] : prof)
          if (side_of(key.second) == side) {
            Curve& c = by_place[place_of(key.second)];
            c.title = place_of(key.second);
            c.points.emplace_back(double(key.first), points[0].second);
          }
        for (auto& [place, c] : by_place) p.curves.push_back(std::move(c));
      } else {
        for (const auto& [key, points] : prof)
          if (side_of(key.second) == side)
            p.curves.push_back({site_title(key.first, place_of(key.second)), points, {}});
      }
      panels.push_back(std::move(p));
    }
  }
  return plot_panels(dir, "stats",
                     fmt::format("{}: per-position statistics at step {}", fs::path(dir).filename().string(), step),
                     panels);
}

// layers.png: each layer's gradient norm (all its parameters: the root of the sum of squares) over the steps
std::string plot_layers(const std::string& dir) {
  const auto text = read_file_if_present((fs::path(dir) / "layers.jsonl").string(), kMaxLogBytes);
  if (!text) return "";
  std::istringstream in(*text);
  std::map<int, std::map<int, double>> sq;  // layer -> step -> sum of squared gradient norms
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    auto integer = [&](const char* k) { return j[k].is_number_integer() && j[k].get<int64_t>() == j[k].get<int>(); };
    if (!j.is_object() || !j.contains("layer") || !j.contains("step") || !j.contains("grad_norm") ||
        !integer("layer") || !integer("step") || !j["grad_norm"].is_number())
      continue;  // not a record this picture can use
    const double g = j["grad_norm"].get<double>();
    sq[j["layer"].get<int>()][j["step"].get<int>()] += g * g;
  }
  if (sq.empty()) return "";
  Panel p{PlotStyle{"gradient norm of each layer's parameters", "step", "gradient norm", false, true}, {}};
  for (const auto& [layer, steps] : sq) {
    Curve c{fmt::format("layer {}", layer), {}, {}};
    for (const auto& [step, s] : steps) c.points.emplace_back(double(step), std::sqrt(s));
    p.curves.push_back(std::move(c));
  }
  return plot_panels(dir, "layers", fs::path(dir).filename().string() + ": gradient norm by layer", {p}, 1);
}

// ranges.png: by layer, one curve per site: the largest |x| (over positions) and the int8 SNR
// (mean over positions), at the last statistics step
std::string plot_ranges(const std::string& dir) {
  const CsvTable t = read_csv((fs::path(dir) / "ranges.csv").string());
  const int step = last_step(t);
  if (step < 0) return "";
  std::vector<Panel> panels;
  const struct {
    const char* column;
    const char* title;
    const char* ylabel;
    bool max, logy;
  } kinds[] = {{"max_abs", "largest |x|", "max |x| over positions", true, true},
               {"int8_snr_db", "int8 SNR, one absmax scale per token", "SNR (dB), mean over positions", false, false},
               {"int8_tensor_snr_db", "int8 SNR, one absmax scale per tensor", "SNR (dB), mean over positions", false,
                false}};
  for (const auto& k : kinds) {
    if (t.column(k.column) < 0) continue;
    std::map<std::string, Curve> by_site;
    for (const auto& [key, points] : site_profiles(t, step, k.column)) {
      // the mean over the positions that have an SNR: an all-zero vector (a recurrent site at the
      // zero initial state) has none (inf)
      double v = k.max ? -INFINITY : 0, n = 0;
      for (const auto& pt : points)
        if (k.max) v = std::max(v, pt.second);
        else if (std::isfinite(pt.second)) v += pt.second, n += 1;
      if (!k.max) v = n > 0 ? v / n : NAN;
      Curve& c = by_site[key.second];
      c.title = key.second;
      c.points.emplace_back(double(key.first), v);
    }
    Panel p{PlotStyle{k.title, "layer", k.ylabel, false, k.logy}, {}};
    for (auto& [site, c] : by_site) p.curves.push_back(std::move(c));
    panels.push_back(std::move(p));
  }
  return plot_panels(dir, "ranges",
                     fmt::format("{}: value ranges by site at step {}", fs::path(dir).filename().string(), step),
                     panels, 2);
}

}  // namespace

std::string plot_run_pictures(const std::string& dir) {
  std::string notes;
  for (const auto& [file, draw] : {std::pair{"stats.csv", &plot_stats}, std::pair{"layers.jsonl", &plot_layers},
                                   std::pair{"ranges.csv", &plot_ranges}}) {
    if (!fs::exists(fs::path(dir) / file)) continue;
    std::string note;
    try {
      note = draw(dir);
    } catch (const InputError& e) {
      note = fmt::format("no plot from {}: {}", file, e.what());
    }
    if (!note.empty()) notes += (notes.empty() ? "" : "; ") + note;
  }
  return notes;
}

}  // namespace nt
