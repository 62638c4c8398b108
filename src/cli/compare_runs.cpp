#include "cli/compare_runs.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <map>

#include "core/errors.h"
#include "io/console.h"
#include "io/json_file.h"
#include "io/run_files.h"

namespace nt::cli {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// A label goes into a table on the terminal and in compare.md: one cell.
std::string one_cell(std::string s) {
  for (char& ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f || ch == '|') ch = '?';
  return s;
}

// A run directory's config.json, summary.json and metrics.jsonl, read as io/json_file.h reads
// them: a missing file says the directory is not a run; a FIFO, a device, a file past its bound or
// a key of the wrong type is an InputError naming the file and the key.
Run read_run(const std::string& dir) {
  std::error_code ec;
  if (dir.empty()) throw UsageError("RUN_DIR \"\": an empty directory name");
  if (!fs::exists(dir, ec)) throw UsageError(fmt::format("{}: no such run directory", dir));
  if (!fs::is_directory(dir, ec))
    throw UsageError(fmt::format("{}: not a directory (give a run or sweep directory)", dir));
  Run r;
  r.dir = dir;
  r.name = fs::path(dir).lexically_normal().filename().string();
  if (r.name.empty()) r.name = fs::path(dir).lexically_normal().parent_path().filename().string();
  r.name = one_cell(r.name);
  for (const char* name : {"config.json", "summary.json", "metrics.jsonl"})
    if (!fs::exists(fs::symlink_status(fs::path(dir) / name, ec)))
      throw UsageError(fmt::format("{}: not a run directory: no {} there", dir, name));
  r.config = read_json_file((fs::path(dir) / "config.json").string()).value();
  r.summary = read_summary(dir);  // the keys compare shows, checked for their types
  if (!r.summary.is_object())
    throw UsageError(fmt::format("{}: summary.json is not a run's summary (not JSON, or cut short)", dir));
  for (const LossPoint& p : read_losses(dir)) (p.val ? r.val : r.train).emplace_back(double(p.step), p.loss);
  r.record = read_run_entry(dir);
  return r;
}

// Two arguments (or a sweep and one of its runs) that name one directory, by identity (device and
// inode: a link, a bind mount or `dir/.` is caught too): a UsageError naming both, since the run
// would count twice in every mean and interval.
void refuse_a_run_twice(const std::vector<Run>& runs) {
  std::map<std::pair<dev_t, ino_t>, std::string> seen;
  for (const Run& r : runs) {
    struct stat st {};
    if (::stat(r.dir.c_str(), &st) != 0) continue;
    const auto [it, fresh] = seen.emplace(std::pair{st.st_dev, st.st_ino}, r.dir);
    if (!fresh)
      throw UsageError(
          fmt::format("{}: the same run directory given twice{} (it would count as two runs, two "
                      "seeds of its grid point); give each run once",
                      r.dir, it->second == r.dir ? "" : fmt::format(" (as {} too)", it->second)));
  }
}

}  // namespace

// The runs the arguments name: a run directory is one; any other directory (a sweep's, a folder of
// runs) stands for the run directories under it (io/run_index.h), and makes the comparison by grid
// point. `grouped` says whether one did.
std::vector<Run> read_runs(const std::vector<std::string>& args, bool& grouped) {
  std::vector<Run> runs;
  grouped = false;
  std::error_code ec;
  for (const std::string& a : args) {
    if (!fs::is_directory(a, ec) || is_run_directory(a)) {
      runs.push_back(read_run(a));
      continue;
    }
    std::vector<std::string> notes;
    const std::vector<std::string> found = find_run_directories(a, notes);
    for (const std::string& n : notes) eprint("note: {}\n", printable(n));
    if (found.empty())
      throw UsageError(
          fmt::format("{}: not a run directory (no config.json and summary.json there), nor a sweep "
                      "or folder of runs (no run directory under it)",
                      a));
    for (const std::string& d : found) runs.push_back(read_run(d));
    grouped = true;
  }
  refuse_a_run_twice(runs);
  return runs;
}

namespace {

// The keys that label runs: those in which they differ and that every run has.
std::vector<std::string> label_keys(const std::vector<RunEntry>& records) {
  std::vector<std::string> keys = differing_keys(records);
  std::erase_if(keys, [&](const std::string& k) {
    return std::any_of(records.begin(), records.end(), [&](const RunEntry& r) { return !r.config.count(k); });
  });
  return keys;
}

// Two runs of one grid point with one seed (a run directory copied, a job run twice): a UsageError
// naming both, since an interval over them would take one seed's curve for two.
void refuse_a_seed_twice(const Group& g, const std::vector<Run>& runs) {
  std::vector<std::pair<nlohmann::json, std::string>> seen;  // seed, the first run with it
  for (std::size_t i : g.runs) {
    const auto seed = runs[i].record.config.find("seed");
    if (seed == runs[i].record.config.end()) continue;  // a foreign tool's run: no seed to tell
    const auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == seed->second; });
    if (it != seen.end())
      throw UsageError(
          fmt::format("{} and {}: two runs of grid point \"{}\" with seed {}: an interval over them "
                      "would count seed {} twice; leave one out",
                      it->second, runs[i].dir, g.label, config_text(seed->second), config_text(seed->second)));
    seen.emplace_back(seed->second, runs[i].dir);
  }
}

}  // namespace

void label_runs(std::vector<Run>& runs) {
  std::vector<RunEntry> records;
  for (const Run& r : runs) records.push_back(r.record);
  const std::vector<std::string> keys = label_keys(records), all = all_config_keys(records);
  std::map<std::string, int> names, labels;
  for (Run& r : runs) {
    if (++names[r.name] > 1) r.name += fmt::format(" ({})", names[r.name]);
    r.label = keys.empty() || keys.size() > 4 ? r.name : one_cell(run_label(r.record, keys, all));
    if (++labels[r.label] > 1 && r.label != r.name) r.label += fmt::format(" ({})", labels[r.label]);
  }
}

// The grid points: runs equal in every differing key but seed, in the order of their first run.
std::vector<Group> make_groups(const std::vector<Run>& runs) {
  std::vector<RunEntry> records;
  for (const Run& r : runs) records.push_back(r.record);
  std::vector<std::string> keys = label_keys(records);
  const std::vector<std::string> all = all_config_keys(records);
  std::erase(keys, std::string("seed"));
  std::vector<Group> groups;
  for (std::size_t i = 0; i < runs.size(); ++i) {  // equal by value (0 and 0.0 alike), not by the label's text
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return std::all_of(keys.begin(), keys.end(),
                         [&](const std::string& k) { return same_config_value(records[g.runs[0]], records[i], k); });
    });
    if (it == groups.end())
      it = groups.insert(groups.end(),
                         Group{keys.empty() ? "all runs" : one_cell(run_label(records[i], keys, all)), {}, {}, {}});
    it->runs.push_back(i);
  }
  for (Group& g : groups) {
    refuse_a_seed_twice(g, runs);
    std::vector<std::vector<std::pair<double, double>>> train, val;
    for (std::size_t i : g.runs) train.push_back(runs[i].train), val.push_back(runs[i].val);
    g.train = seed_band(train);
    g.val = seed_band(val);
  }
  return groups;
}

}  // namespace nt::cli
