// Run directories found and described for listing side by side (`normtool runs`, `compare`):
// where they are under a folder, what each records (status, steps, final losses) and its config
// flattened to dotted keys, the keys in which a set of runs differ, and labels made of those keys.
//
// A run directory is a directory holding config.json and summary.json or metrics.jsonl (a run
// killed before its first summary still counts). Searching a folder descends into every directory
// (sweeps included) but never into a run directory, and never through a symbolic link: nothing
// outside the folder is listed.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nt {

struct RunEntry {
  std::string dir;                               // the directory as found (root / relative path)
  std::string status;                            // summary.json's, "stopped" when it says running and no process holds
                                                 // the run's lock; no summary: running (lock held) or stopped
  nlohmann::json steps_done, steps_total;        // integers, null when not recorded
  nlohmann::json final_train, final_val;         // numbers, null when not recorded
  std::map<std::string, nlohmann::json> config;  // config.json flattened: "model.norm.type" -> "rmsnorm"
};

bool is_run_directory(const std::string& dir);
// The run directories under `root` (root itself when it is one), in natural order of their paths
// ("2" before "10"); a directory under it that cannot be read (permission denied) is left out with
// a note in `notes` naming it and why. A UsageError naming `root` when it is empty, missing, not a
// directory, or cannot be read.
std::vector<std::string> find_run_directories(const std::string& root, std::vector<std::string>& notes);
// A run's record; an InputError naming the file when config.json or summary.json cannot be read,
// and naming the key when summary.json's status is none of running, completed, diverged,
// interrupted, failed, or config.json's train.steps is not an integer.
RunEntry read_run_entry(const std::string& dir);

// `a` before `b` with digit runs compared as numbers.
bool natural_less(const std::string& a, const std::string& b);
// A flattened config value as text: a string as is, anything else as JSON ("0.003", "true", "null").
std::string config_text(const nlohmann::json& value);
// Whether two runs have the same value of `key` (both missing counts as the same): numbers by value,
// so 0 and 0.0, or 10000 and 10000.0 (a config.json rewritten by jq), are the same.
bool same_config_value(const RunEntry& a, const RunEntry& b, const std::string& key);
// The config keys whose values differ among the runs (same_config_value; a key missing from a run
// counts as a value), sorted; "name", which names a run rather than configures it, left out.
std::vector<std::string> differing_keys(const std::vector<RunEntry>& runs);
// The shortest dotted suffix of `key` that no other key of `all` ends with ("norm.type" for
// "model.norm.type" when "train.optimizer.type" exists too).
std::string short_key(const std::string& key, const std::vector<std::string>& all);
// "norm.type=rmsnorm seed=2": the run's values of `keys` under their short names among `keys`
// and every key of the runs' configs (`all`).
std::string run_label(const RunEntry& run, const std::vector<std::string>& keys, const std::vector<std::string>& all);
// Every key of the runs' configs, sorted.
std::vector<std::string> all_config_keys(const std::vector<RunEntry>& runs);

}  // namespace nt
