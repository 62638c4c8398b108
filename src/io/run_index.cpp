#include "io/run_index.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <set>

#include "config/user_json.h"
#include "core/errors.h"
#include "io/files.h"
#include "io/json_file.h"
#include "io/run_files.h"

namespace nt {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

bool regular_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(fs::symlink_status(p, ec));
}

void flatten(const json& j, const std::string& prefix, std::map<std::string, json>& out) {
  if (j.is_object() && !j.empty()) {
    for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
  } else {
    out[prefix] = j;
  }
}

json number_or_null(const json& s, const char* key) { return s.contains(key) && s[key].is_number() ? s[key] : json(); }

}  // namespace

bool is_run_directory(const std::string& dir) {
  const fs::path d(dir);
  return regular_file(d / "config.json") && (regular_file(d / "summary.json") || regular_file(d / "metrics.jsonl"));
}

bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      std::string x = a.substr(i, ie - i), y = b.substr(j, je - j);
      x.erase(0, std::min(x.find_first_not_of('0'), x.size()));
      y.erase(0, std::min(y.find_first_not_of('0'), y.size()));
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = ie, j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

namespace {

// The directories right under `dir` that are not links: run directories into `found`, the others into
// `pending`. False when `dir` cannot be opened (its error in `ec`); a read that fails part way is
// a note naming `dir`.
bool list_directory(const std::string& dir, std::vector<std::string>& found, std::vector<std::string>& pending,
                    std::vector<std::string>& notes, std::error_code& ec) {
  fs::directory_iterator it(dir, ec), end;
  if (ec) return false;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code ignored;  // a link to a directory is never entered: nothing outside is listed
    if (!fs::is_directory(it->symlink_status(ignored))) continue;
    (is_run_directory(it->path().string()) ? found : pending).push_back(it->path().string());
  }
  if (ec)
    notes.push_back(
        fmt::format("{}: cannot read all of it ({}); the runs under it may not all be listed", dir, ec.message()));
  return true;
}

}  // namespace

std::vector<std::string> find_run_directories(const std::string& root, std::vector<std::string>& notes) {
  if (root.empty()) throw UsageError("DIR \"\": an empty directory name");
  std::error_code ec;
  const fs::file_status st = fs::status(root, ec);
  if (!fs::exists(st)) throw UsageError(fmt::format("{}: no such directory", root));
  if (!fs::is_directory(st)) throw UsageError(fmt::format("{}: not a directory", root));
  if (is_run_directory(root)) return {root};
  std::vector<std::string> found, pending{root};
  while (!pending.empty()) {
    const std::string dir = std::move(pending.back());
    pending.pop_back();
    if (list_directory(dir, found, pending, notes, ec)) continue;
    if (dir == root) throw UsageError(fmt::format("{}: cannot read the directory: {}", root, ec.message()));
    notes.push_back(fmt::format("{}: cannot read the directory ({}); the runs under it, if any, are not listed", dir,
                                ec.message()));
  }
  std::sort(found.begin(), found.end(), natural_less);
  return found;
}

namespace {

// config.json's train.steps: null when absent (a foreign tool's run), an integer (10.0 taken as 10,
// as the config loader takes it); anything else an InputError naming the file and the key.
json steps_total(const std::map<std::string, json>& config, const std::string& dir) {
  const auto it = config.find("train.steps");
  if (it == config.end() || it->second.is_number_integer()) return it == config.end() ? json() : it->second;
  const json& v = it->second;
  if (v.is_number_float() && std::isfinite(v.get<double>()) && v.get<double>() == std::floor(v.get<double>()) &&
      std::abs(v.get<double>()) < 9.0e15)
    return json(int64_t(v.get<double>()));
  throw InputError(fmt::format("{}: \"train.steps\" is {}, expected an integer",
                               (fs::path(dir) / "config.json").string(), describe_json(v)));
}

}  // namespace

RunEntry read_run_entry(const std::string& dir) {
  RunEntry r;
  r.dir = dir;
  flatten(read_json_file((fs::path(dir) / "config.json").string()).expect_object().value(), "", r.config);
  const json s = read_summary(dir);  // null when there is none
  const bool live = DirectoryLock::held(dir);
  if (s.is_object() && s.contains("status")) {
    r.status = s["status"].get<std::string>();
    static const std::set<std::string> known{"running", "completed", "diverged", "interrupted", "failed"};
    if (!known.count(r.status))
      throw InputError(
          fmt::format("{}: \"status\" is {}, expected running, completed, diverged, interrupted or "
                      "failed",
                      (fs::path(dir) / "summary.json").string(), describe_json(s["status"])));
    if (r.status == "running" && !live) r.status = "stopped";
  } else {
    r.status = live ? "running" : "stopped";
  }
  if (s.is_object()) {
    if (s.contains("steps_completed") && s["steps_completed"].is_number_integer()) r.steps_done = s["steps_completed"];
    r.final_train = number_or_null(s, "final_train_loss");
    r.final_val = number_or_null(s, "final_val_loss");
  }
  r.steps_total = steps_total(r.config, dir);
  return r;
}

std::string config_text(const json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

std::vector<std::string> all_config_keys(const std::vector<RunEntry>& runs) {
  std::set<std::string> keys;
  for (const RunEntry& r : runs)
    for (const auto& [k, v] : r.config) keys.insert(k);
  return {keys.begin(), keys.end()};
}

bool same_config_value(const RunEntry& a, const RunEntry& b, const std::string& key) {
  const auto x = a.config.find(key), y = b.config.find(key);
  if (x == a.config.end() || y == b.config.end()) return x == a.config.end() && y == b.config.end();
  return x->second == y->second;  // nlohmann's ==: an integer and a float compared as doubles, arrays element-wise
}

std::vector<std::string> differing_keys(const std::vector<RunEntry>& runs) {
  std::vector<std::string> out;
  for (const std::string& k : all_config_keys(runs)) {
    if (k == "name") continue;
    if (std::any_of(runs.begin(), runs.end(), [&](const RunEntry& r) { return !same_config_value(runs[0], r, k); }))
      out.push_back(k);
  }
  return out;
}

std::string short_key(const std::string& key, const std::vector<std::string>& all) {
  for (std::size_t dot = key.rfind('.'); dot != std::string::npos; dot = key.rfind('.', dot - 1)) {
    const std::string suffix = key.substr(dot + 1);
    const bool ambiguous = std::any_of(all.begin(), all.end(), [&](const std::string& other) {
      return other != key && (other == suffix || other.ends_with("." + suffix));
    });
    if (!ambiguous) return suffix;
    if (dot == 0) break;
  }
  return key;
}

std::string run_label(const RunEntry& run, const std::vector<std::string>& keys, const std::vector<std::string>& all) {
  std::string label;
  for (const std::string& k : keys) {
    const auto it = run.config.find(k);
    label += fmt::format("{}{}={}", label.empty() ? "" : " ", short_key(k, all),
                         it == run.config.end() ? "-" : config_text(it->second));
  }
  return label;
}

}  // namespace nt
