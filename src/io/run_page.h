// index.html of a run directory: a page to keep open in a browser while the run trains. It shows
// the run's name, its status (summary.json's: running, completed, diverged, interrupted, failed),
// the step, the latest train and validation loss, the config keys that differ from the defaults,
// and the run's pictures (loss.png, stats.png, layers.png, ranges.png, linked by name: the page
// lives beside them; the trainer redraws them every train.pictures_every_s while the run trains).
// Rewritten with every summary.json (RunFiles::write_summary: at the start,
// every log and evaluation step, and at the end), atomically and never through a link
// (io/files.h). While the status is running the page reloads itself every kRunPageRefreshS
// seconds; the last write, at any ending, drops the reload.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace nt {

inline constexpr int kRunPageRefreshS = 10;

// What the page shows of the run's config: the steps it runs, and each key whose value differs
// from the default ("train.lr", "0.001"), in the config's key order; the name is the title.
struct RunPageConfig {
  int steps = 0;  // 0: not known
  std::vector<std::pair<std::string, std::string>> changes;
};
// From config.json's content (config_to_json's form); keys of another form are shown as they are.
RunPageConfig run_page_config(const nlohmann::json& config);

// The page: `summary` as summary.json holds it, `pictures` the file names present beside it.
std::string run_page(const nlohmann::json& summary, const RunPageConfig& config,
                     const std::vector<std::string>& pictures);
// Writes <dir>/index.html from `summary` and the pictures present in `dir`; WriteError as io/files.h.
void write_run_page(const std::string& dir, const nlohmann::json& summary, const RunPageConfig& config);

}  // namespace nt
