#include "cli/compare.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "core/errors.h"
#include "io/files.h"
#include "io/json_file.h"
#include "io/paths.h"
#include "io/plot.h"
#include "io/run_files.h"
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
};

struct Run {
  std::string dir, label;
  json config, summary;
  std::vector<std::pair<double, double>> train, val;
};

// A run directory's config.json, summary.json and metrics.jsonl, read as io/json_file.h reads
// them: a missing file says the directory is not a run; a FIFO, a device, a file past its bound or
// a key of the wrong type is an InputError naming the file and the key.
Run read_run(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw UsageError(fmt::format("{}: no such run directory", dir));
  Run r;
  r.dir = dir;
  r.label = fs::path(dir).lexically_normal().filename().string();
  if (r.label.empty()) r.label = fs::path(dir).lexically_normal().parent_path().filename().string();
  for (char& ch : r.label)  // the label goes into a table on the terminal and in compare.md: one cell
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f || ch == '|') ch = '?';
  for (const char* name : {"config.json", "summary.json", "metrics.jsonl"})
    if (!fs::exists(fs::symlink_status(fs::path(dir) / name, ec)))
      throw UsageError(fmt::format("{}: not a run directory: no {} there", dir, name));
  r.config = read_json_file((fs::path(dir) / "config.json").string()).value();
  r.summary = read_summary(dir);  // the keys compare shows, checked for their types
  if (!r.summary.is_object())
    throw UsageError(fmt::format("{}: summary.json is not a run's summary (not JSON, or cut short)", dir));
  for (const LossPoint& p : read_losses(dir)) (p.val ? r.val : r.train).emplace_back(double(p.step), p.loss);
  return r;
}

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
      throw UsageError(fmt::format("--out {}: is, or is inside, one of the runs compared ({}), whose files compare "
                                   "would overwrite; choose a directory outside the runs", out, p.string()));
    if (p == p.parent_path()) break;
  }
  if (fs::is_directory(out, ec) && !fs::is_empty(out, ec) && !fs::exists(fs::path(out) / "compare.md", ec))
    throw UsageError(fmt::format("--out {}: holds files but no compare.md (another run's or tool's directory); "
                                 "choose a new or empty directory", out));
}

void flatten(const json& j, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
  } else {
    out[prefix] = j.is_string() ? j.get<std::string>() : j.dump();
  }
}

std::string figure(const json& s, const char* key, int digits = 4) {
  if (!s.contains(key) || !s[key].is_number()) return "-";
  return fmt::format("{:.{}f}", s[key].get<double>(), digits);
}

std::string table(const std::vector<Run>& runs) {
  std::vector<std::map<std::string, std::string>> flat(runs.size());
  std::set<std::string> keys;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    flatten(runs[i].config, "", flat[i]);
    for (const auto& [k, v] : flat[i]) keys.insert(k);
  }
  std::vector<std::string> differing;
  for (const std::string& k : keys) {
    if (k == "name") continue;  // names the run (train.threads stays: a data-parallel step's last bits depend on it)
    std::set<std::string> values;
    for (const auto& f : flat) values.insert(f.count(k) ? f.at(k) : "-");
    if (values.size() > 1) differing.push_back(k);
  }
  std::string t = "| run |";
  for (const auto& k : differing) t += fmt::format(" {} |", k);
  t += " status | steps | final train loss | final val loss | best val loss | steps/s |\n|---|";
  for (std::size_t i = 0; i < differing.size() + 6; ++i) t += "---|";
  t += "\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const json& s = runs[i].summary;
    t += fmt::format("| {} |", runs[i].label);
    for (const auto& k : differing) t += fmt::format(" {} |", flat[i].count(k) ? flat[i].at(k) : "-");
    t += fmt::format(" {} | {} | {} | {} | {} | {} |\n", s.value("status", "-"),
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
      notes.push_back(fmt::format("{}: no site {} at layer {} in stats.csv", r.dir, site, layer));
      continue;
    }
    stdp.curves.push_back({fmt::format("{} (step {})", r.label, step), it->second, {}});
  }
  return stdp;
}

int run_compare(const CompareOptions& o) {
  std::vector<Run> runs;
  for (const std::string& d : o.runs) runs.push_back(read_run(d));
  std::map<std::string, int> seen;  // two runs of the same folder name: number them
  for (Run& r : runs)
    if (++seen[r.label] > 1) r.label += fmt::format(" ({})", seen[r.label]);
  const std::string out = o.out.empty() ? default_run_dir("compare") : o.out;
  check_out(out, o.runs);
  make_output_directory(out, "--out " + out);

  std::string md = "# normtool compare\n\n" + table(runs);
  std::vector<std::string> notes;

  Panel train{PlotStyle{"train loss", "step", "loss"}, {}}, val{PlotStyle{"validation loss", "step", "loss"}, {}};
  for (const Run& r : runs) {
    train.curves.push_back({r.label, r.train, {}});
    val.curves.push_back({r.label, r.val, {}});
  }
  if (auto n = plot_panels(out, "loss", "loss of each run", {train, val}); !n.empty()) notes.push_back(n);
  md += "\n![train and validation loss of each run](loss.png)\n";

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
  for (const auto& n : notes) md += "\n- " + n;
  md += "\n";
  write_file_atomically((fs::path(out) / "compare.md").string(), md);
  fmt::print("{}", table(runs));
  for (const auto& n : notes) fmt::print(stderr, "note: {}\n", n);
  fmt::print("compare: {} runs -> {} (compare.md, loss.png{})\n", runs.size(), out,
             stdp.curves.empty() ? "" : ", std.png");
  return std::fflush(stdout) == 0 && !std::ferror(stdout) ? 0 : 1;
}

}  // namespace

void setup_compare(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Put runs side by side: their configs' differences and final figures, loss curves and per-position std");
  sub->add_option("runs", o->runs, "run directories (normtool's or any tool's writing the same files)")
      ->required()
      ->expected(1, -1);
  sub->add_option("-o,--out", o->out,
                  "where to write compare.md, loss.png, std.png (default runs/compare-<YYYYmmdd-HHMMSS>)");
  sub->add_option("--site", o->site, "the norm site of the std overlay, e.g. attn.out (default: the first .out site)");
  sub->add_option("--layer", o->layer, "the layer of that site")->capture_default_str()->check(CLI::NonNegativeNumber);
  sub->callback([o, &exit_code] { exit_code = run_compare(*o); });
}

}  // namespace nt::cli
