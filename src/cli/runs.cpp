#include "cli/runs.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <memory>

#include "core/errors.h"
#include "io/console.h"
#include "io/run_index.h"
#include "io/table_format.h"

namespace nt::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct RunsOptions {
  std::vector<std::string> dirs{"runs"};
  std::string format;  // "" = table on a terminal, csv otherwise
};

// Every run under the directories, its path as shown; a run that cannot be read keeps its row.
std::vector<std::pair<std::string, RunEntry>> collect(const std::vector<std::string>& dirs) {
  std::vector<std::pair<std::string, RunEntry>> out;
  for (const std::string& root : dirs) {
    std::vector<std::string> notes;
    const std::vector<std::string> found = find_run_directories(root, notes);
    for (const std::string& n : notes) eprint("note: {}\n", printable(n));
    for (const std::string& dir : found) {
      std::string shown = fs::path(dir).lexically_relative(root).lexically_normal().string();
      if (dirs.size() > 1) shown = (fs::path(root) / shown).lexically_normal().string();
      try {
        out.emplace_back(shown, read_run_entry(dir));
      } catch (const InputError& e) {
        eprint("note: {}\n", printable(e.what()));
        RunEntry bad;
        bad.dir = dir;
        bad.status = "unreadable";
        out.emplace_back(shown, std::move(bad));
      }
    }
  }
  return out;
}

int run_runs(const RunsOptions& o) {
  const auto runs = collect(o.dirs);
  std::vector<RunEntry> records;  // the readable runs: an unreadable one's missing values differ in nothing
  for (const auto& [shown, r] : runs)
    if (r.status != "unreadable") records.push_back(r);
  const std::vector<std::string> keys = differing_keys(records);
  Table t{{"path", "status", "steps_done", "steps_total", "final_train_loss", "final_val_loss"}, {}};
  t.columns.insert(t.columns.end(), keys.begin(), keys.end());
  t.exact.assign(t.columns.size(), true);  // config values in full (1e-05, 0.00012), the figures to 4 decimals
  std::fill_n(t.exact.begin(), t.columns.size() - keys.size(), false);
  for (const auto& [shown, r] : runs) {
    std::vector<json> row{shown, r.status, r.steps_done, r.steps_total, r.final_train, r.final_val};
    for (const std::string& k : keys) {
      const auto it = r.config.find(k);
      row.push_back(it == r.config.end() ? json() : it->second);
    }
    t.rows.push_back(std::move(row));
  }
  const std::string format = !o.format.empty() ? o.format : isatty(fileno(stdout)) ? "table" : "csv";
  fmt::print("{}", format_table(t, format));
  if (runs.empty() && format == "table") eprint("no run directories under {}\n", fmt::join(o.dirs, ", "));
  return 0;
}

}  // namespace

void setup_runs(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<RunsOptions>();
  CLI::App* sub = app.add_subcommand(
      "runs", "List the run directories under DIR (sweeps included): status, steps, final losses, differing keys");
  sub->add_option("dirs", o->dirs, "where to look (default runs/)");
  sub->add_option("-f,--format", o->format, "table (default on a terminal), csv (default otherwise) or json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  sub->callback([o, &exit_code] { exit_code = run_runs(*o); });
}

}  // namespace nt::cli
