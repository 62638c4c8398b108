#include "cli/compare.h"
#include "cli/directory_option.h"
#include "cli/compare_runs.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "analysis/seed_band.h"
#include "io/palette.h"
#include "core/errors.h"
#include "io/console.h"
#include "io/files.h"
#include "io/json_file.h"
#include "io/paths.h"
#include "io/plot.h"
#include "io/run_files.h"
#include "io/run_index.h"
#include "io/table_format.h"
#include "io/run_plots.h"

namespace nt::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct CompareOptions {
  std::vector<std::string> runs;
  std::string out;
  std::string site;  // "" = the first .out site of stats.csv
  int layer = 0;
  std::string format = "text";  // text | csv | json
};

// --out must not be one of the runs or inside one (compare would draw over the run's own loss.png),
// by identity (device and inode, so a link or a bind mount of a run is caught too), and it must
// be new, empty, or an earlier compare's output (compare.md), never another directory's files.
void check_out(const std::string& out, const std::vector<std::string>& runs) {
  std::error_code ec;
  std::vector<std::pair<dev_t, ino_t>> inputs;
  for (const std::string& run : runs) {
    struct stat st {};
    if (::stat(run.c_str(), &st) == 0) inputs.emplace_back(st.st_dev, st.st_ino);
  }
  for (fs::path p = fs::weakly_canonical(fs::absolute(out), ec);; p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0 && std::count(inputs.begin(), inputs.end(), std::pair{st.st_dev, st.st_ino}))
      throw UsageError(
          fmt::format("--out {}: is, or is inside, one of the runs compared ({}), whose files compare "
                      "would overwrite; choose a directory outside the runs",
                      out, p.string()));
    if (p == p.parent_path()) break;
  }
  if (fs::is_directory(out, ec) && !fs::is_empty(out, ec) && !fs::exists(fs::path(out) / "compare.md", ec))
    throw UsageError(
        fmt::format("--out {}: holds files but no compare.md (another run's or tool's directory); "
                    "choose a new or empty directory",
                    out));
}

std::string figure(const json& s, const char* key, int digits = 4) {
  if (!s.contains(key) || !s[key].is_number()) return "-";
  return fmt::format("{:.{}f}", s[key].get<double>(), digits);
}

// The config keys in which the runs differ (by value: 0 and 0.0 alike; io/run_index.h), "name" left
// out (train.threads stays: a data-parallel step's last bits depend on it).
std::vector<std::string> differing_config_keys(const std::vector<Run>& runs) {
  std::vector<RunEntry> records;
  for (const Run& r : runs) records.push_back(r.record);
  return differing_keys(records);
}

// A value as one cell of a markdown table on a terminal: control bytes (a newline too) as \xNN
// (io/console.h) and '|' as \|: neither ends the cell or the row.
std::string md_cell(const std::string& text) {
  std::string out;
  for (char c : printable(text)) {
    if (c == '|') out += '\\';
    out.push_back(c);
  }
  return out;
}

std::string table(const std::vector<Run>& runs) {
  const std::vector<std::string> differing = differing_config_keys(runs);
  std::string t = "| run |";
  for (const auto& k : differing) t += fmt::format(" {} |", md_cell(k));
  t += " status | steps | final train loss | final val loss | best val loss | steps/s |\n|---|";
  for (std::size_t i = 0; i < differing.size() + 6; ++i) t += "---|";
  t += "\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const json& s = runs[i].summary;
    t += fmt::format("| {} |", md_cell(runs[i].name));
    for (const auto& k : differing) {
      const auto it = runs[i].record.config.find(k);
      t += fmt::format(" {} |", it == runs[i].record.config.end() ? "-" : md_cell(config_text(it->second)));
    }
    t += fmt::format(" {} | {} | {} | {} | {} | {} |\n", md_cell(runs[i].record.status),  // runs': stopped if no lock
                     s.contains("steps_completed") ? s["steps_completed"].dump() : "-", figure(s, "final_train_loss"),
                     figure(s, "final_val_loss"), figure(s, "best_val_loss"), figure(s, "steps_per_s", 1));
  }
  if (differing.empty()) t += "\nThe configs are the same (apart from name and threads).\n";
  return t;
}

// The std by position at one site, at each run's last statistics step. `site` "" is the first
// .out site of `layer` in the first run's stats.csv that has one; a run without the site gets a note.
Panel std_panel(const std::vector<Run>& runs, int layer, std::string& site, std::vector<std::string>& notes) {
  Panel stdp{PlotStyle{"", "position", "std over the hidden dimension"}, {}};
  for (const Run& r : runs) {
    const fs::path stats = fs::path(r.dir) / "stats.csv";
    if (!fs::exists(stats)) {
      notes.push_back(fmt::format("{}: no stats.csv, no std curve", r.dir));
      continue;
    }
    CsvTable t;
    try {
      t = read_csv(stats.string());
    } catch (const InputError& e) {
      notes.push_back(e.what());
      continue;
    }
    const int step = last_step(t);
    const SiteProfiles prof = site_profiles(t, step, "std");
    if (site.empty())
      for (const auto& [key, points] : prof)
        if (key.first == layer && key.second.size() > 4 && key.second.ends_with(".out")) {
          site = key.second;
          break;
        }
    const auto it = prof.find({layer, site});
    if (it == prof.end()) {
      notes.push_back(site.empty() ? fmt::format("{}: stats.csv has no .out site at layer {} (no such layer, or "
                                                 "none logged: train.stats_every 0), no std curve",
                                                 r.dir, layer)
                                   : fmt::format("{}: no site {} at layer {} in stats.csv", r.dir, site, layer));
      continue;
    }
    stdp.curves.push_back({fmt::format("{} (step {})", r.label, step), it->second, {}});
  }
  return stdp;
}

// Whether a grid point has a 95% t interval: with one seed there is no spread to know (t has no
// degrees of freedom), so no interval is shown and no band drawn, rather than one of width zero.
bool has_interval(const SeedBand& b) { return b.n >= 2; }

// "band: 95% interval over 3 seeds" (or "2-3 seeds" when the grid points have different numbers)
std::string band_caption(const std::vector<Group>& groups) {
  std::size_t lo = SIZE_MAX, hi = 0;
  for (const Group& g : groups) lo = std::min(lo, g.runs.size()), hi = std::max(hi, g.runs.size());
  if (hi < 2) return "no band: one seed per grid point";
  return lo == hi ? fmt::format("band: 95% t interval over {} seeds", hi)
                  : fmt::format("band: 95% t interval over {}-{} seeds", lo, hi);
}

// A grid point's curve: its seeds as thin lines of its colour, then the mean with its band.
void add_group_curves(Panel& p, const Group& g, const std::vector<Run>& runs, bool val, const std::string& color) {
  for (std::size_t i : g.runs) p.curves.push_back({runs[i].label, val ? runs[i].val : runs[i].train, {}, color, true});
  const SeedBand& b = val ? g.val : g.train;
  Curve mean{fmt::format("{} (mean of {})", g.label, b.n), {}, {}, color, false};
  for (std::size_t k = 0; k < b.step.size(); ++k) {
    mean.points.emplace_back(b.step[k], b.mean[k]);
    if (has_interval(b)) mean.band.emplace_back(b.lo[k], b.hi[k]);
  }
  p.curves.push_back(std::move(mean));
}

// loss.png: every run's curves, or with grid points each point's mean, band and seeds.
std::string loss_picture(const std::string& out, const std::vector<Run>& runs, const std::vector<Group>& groups) {
  Panel train{PlotStyle{"train loss", "step", "loss"}, {}}, val{PlotStyle{"validation loss", "step", "loss"}, {}};
  if (groups.empty()) {
    for (const Run& r : runs) {
      train.curves.push_back({r.label, r.train, {}});
      val.curves.push_back({r.label, r.val, {}});
    }
    return plot_panels(out, "loss", "loss of each run", {train, val});
  }
  std::vector<std::string> labels;  // a grid point's colour: its norm's, else the palette's (io/palette.h)
  for (const Group& g : groups) labels.push_back(g.label);
  const std::vector<Pen> pens = pens_for(labels);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    add_group_curves(train, groups[g], runs, false, pens[g].color);
    add_group_curves(val, groups[g], runs, true, pens[g].color);
  }
  return plot_panels(out, "loss", "loss: mean over seeds (thin: each seed), " + band_caption(groups), {train, val});
}

json last_or_null(const std::vector<double>& v) { return v.empty() ? json() : json(v.back()); }
json bound_or_null(const SeedBand& b, const std::vector<double>& v) {
  return has_interval(b) ? last_or_null(v) : json();
}
json final_step(const SeedBand& b) { return b.step.empty() ? json() : json(int64_t(b.step.back())); }

// The grid points at the last step all their seeds reached: mean and 95% interval of each loss (lo
// and hi null for a point of one seed).
Table group_table(const std::vector<Group>& groups) {
  Table t{{"grid_point", "seeds", "train_step", "train_mean", "train_lo", "train_hi", "val_step", "val_mean", "val_lo",
           "val_hi"},
          {}};
  for (const Group& g : groups)
    t.rows.push_back({g.label, g.runs.size(), final_step(g.train), last_or_null(g.train.mean),
                      bound_or_null(g.train, g.train.lo), bound_or_null(g.train, g.train.hi), final_step(g.val),
                      last_or_null(g.val.mean), bound_or_null(g.val, g.val.lo), bound_or_null(g.val, g.val.hi)});
  return t;
}

// The runs' table for --format csv|json: the label, the differing keys, the final figures.
Table runs_table(const std::vector<Run>& runs) {
  const std::vector<std::string> keys = differing_config_keys(runs);
  Table t{{"run", "label"}, {}};  // the directory as given
  t.columns.insert(t.columns.end(), keys.begin(), keys.end());
  for (const char* c : {"status", "steps_done", "final_train_loss", "final_val_loss", "best_val_loss", "steps_per_s"})
    t.columns.push_back(c);
  for (const Run& r : runs) {
    std::vector<json> row{r.dir, r.label};
    for (const std::string& k : keys) row.push_back(r.record.config.count(k) ? r.record.config.at(k) : json());
    const json& s = r.summary;
    row.push_back(r.record.status);
    row.push_back(r.record.steps_done);
    for (const char* k : {"final_train_loss", "final_val_loss", "best_val_loss", "steps_per_s"})
      row.push_back(s.contains(k) && s[k].is_number() ? s[k] : json());
    t.rows.push_back(std::move(row));
  }
  return t;
}

// What stdout gets: the markdown table (text), the runs' or with grid points the points' CSV, or
// both as one JSON object {"runs": [...], "groups": [...]}.
std::string product(const CompareOptions& o, const std::vector<Run>& runs, const std::vector<Group>& groups,
                    const std::string& text) {
  if (o.format == "csv") return table_csv(groups.empty() ? runs_table(runs) : group_table(groups));
  if (o.format == "json") {
    nlohmann::ordered_json j;
    j["runs"] = table_json(runs_table(runs));
    j["groups"] = table_json(group_table(groups));
    if (!groups.empty()) j["band"] = band_caption(groups);
    return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  }
  return text;
}

// compare.md's table of the grid points: the mean and its 95% interval at the last common step.
std::string group_markdown(const std::vector<Group>& groups) {
  if (groups.empty()) return "";
  std::string md =
      fmt::format("\n## By grid point (mean over seeds at the last common step; {})\n\n", band_caption(groups));
  md += "| grid point | seeds | train loss [95% interval] | val loss [95% interval] |\n|---|---|---|---|\n";
  auto cell = [](const SeedBand& b) {
    if (b.step.empty()) return std::string("-");
    if (!has_interval(b)) return fmt::format("{:.4f} [-] (step {})", b.mean.back(), b.step.back());
    return fmt::format("{:.4f} [{:.4f}, {:.4f}] (step {})", b.mean.back(), b.lo.back(), b.hi.back(), b.step.back());
  };
  for (const Group& g : groups)
    md += fmt::format("| {} | {} | {} | {} |\n", md_cell(g.label), g.runs.size(), cell(g.train), cell(g.val));
  return md;
}

int run_compare(const CompareOptions& o) {
  bool grouped = false;
  std::vector<Run> runs = read_runs(o.runs, grouped);
  label_runs(runs);
  const std::vector<Group> groups = grouped ? make_groups(runs) : std::vector<Group>{};
  std::vector<std::string> dirs;
  for (const Run& r : runs) dirs.push_back(r.dir);
  dirs.insert(dirs.end(), o.runs.begin(), o.runs.end());
  // the default: a new directory, never an earlier compare's of the same second
  const std::string out = o.out.empty() ? make_new_directory(default_run_dir("compare")) : o.out;
  try {
    check_out(out, dirs);
  } catch (const UsageError&) {
    std::error_code ec;
    if (o.out.empty()) fs::remove(out, ec);  // the default, made just now (inside a run: run from a run's folder)
    throw;
  }
  make_output_directory(out, "--out " + out);

  const std::string text = table(runs) + group_markdown(groups);
  std::string md = "# normtool compare\n\n" + text;
  std::vector<std::string> notes;
  if (auto n = loss_picture(out, runs, groups); !n.empty()) notes.push_back(n);
  md += groups.empty() ? "\n![train and validation loss of each run](loss.png)\n"
                       : "\n![train and validation loss: per grid point the mean over seeds, " + band_caption(groups) +
                             ", each seed a thin line](loss.png)\n";

  std::string site = o.site;
  Panel stdp = std_panel(runs, o.layer, site, notes);
  if (!stdp.curves.empty()) {
    stdp.style.title = fmt::format("std by position, layer {} {}", o.layer, site);
    if (auto n = plot_panels(out, "std", fmt::format("std leaving or entering the norm: layer {} {}", o.layer, site),
                             {stdp}, 1);
        !n.empty())
      notes.push_back(n);
    md += fmt::format("\n![std by position at layer {} {}](std.png)\n", o.layer, site);
  }
  for (const auto& n : notes) md += "\n- " + md_cell(n);
  md += "\n";
  write_file_atomically((fs::path(out) / "compare.md").string(), md);
  fmt::print("{}", product(o, runs, groups, text));
  for (const auto& n : notes) eprint("note: {}\n", printable(n));
  const std::string done = fmt::format(
      "compare: {} run{}{} -> {} (compare.md, loss.png{})\n", runs.size(), runs.size() == 1 ? "" : "s",
      groups.empty() ? "" : fmt::format(" in {} grid point{}", groups.size(), groups.size() == 1 ? "" : "s"), out,
      stdp.curves.empty() ? "" : ", std.png");
  if (o.format == "text")
    fmt::print("{}", done);
  else
    eprint("{}", done);
  return std::fflush(stdout) == 0 && !std::ferror(stdout) ? 0 : 1;
}

}  // namespace

void setup_compare(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Put runs side by side: their configs' differences and final figures, loss curves and per-position std");
  sub->add_option("runs", o->runs,
                  "run directories (normtool's or any tool's writing the same files), or sweep directories: "
                  "their runs by grid point, the mean over seeds with a 95% t band")
      ->required()
      ->expected(1, -1);
  sub->add_option("-o,--out", o->out,
                  "where to write compare.md, loss.png, std.png (default runs/compare-<YYYYmmdd-HHMMSS>, with -2, "
                  "-3, ... when that is taken)")
      ->check(non_empty_directory);
  sub->add_option("--site", o->site, "the norm site of the std overlay, e.g. attn.out (default: the first .out site)");
  sub->add_option("-f,--format", o->format,
                  "text (the table), csv (the runs' table, or a sweep's grid points: mean, lo, hi at the last "
                  "step) or json (both)")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "csv", "json"}));
  sub->add_option("--layer", o->layer, "the layer of that site")->capture_default_str()->check(CLI::NonNegativeNumber);
  sub->callback([o, &exit_code] { exit_code = run_compare(*o); });
}

}  // namespace nt::cli
