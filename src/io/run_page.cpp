#include "io/run_page.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "io/files.h"
#include "io/html.h"

namespace nt {

using json = nlohmann::json;

namespace {

// The pictures a run draws (trainer: loss.png; io/run_plots.h: the others), in the page's order
constexpr const char* kPictures[] = {"loss.png", "stats.png", "layers.png", "ranges.png"};

// Every leaf of `j` as "a.b.c" -> value (an array is one leaf)
void flatten(const json& j, const std::string& prefix, std::vector<std::pair<std::string, json>>& out) {
  if (!j.is_object() || j.empty()) {
    out.emplace_back(prefix, j);
    return;
  }
  for (const auto& [key, value] : j.items()) flatten(value, prefix.empty() ? key : prefix + "." + key, out);
}

std::string shown(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump(-1, ' ', false, json::error_handler_t::replace);
}

// A figure of the summary: a number with `digits` decimals, else "-" (null, missing, NaN)
std::string figure(const json& summary, const char* key, int digits = 4) {
  const auto it = summary.find(key);
  if (it == summary.end() || !it->is_number() || !std::isfinite(it->get<double>())) return "-";
  return it->is_number_integer() ? std::to_string(it->get<long long>())
                                 : fmt::format("{:.{}f}", it->get<double>(), digits);
}

std::string text_of(const json& summary, const char* key) {
  const auto it = summary.find(key);
  return it == summary.end() ? "" : shown(*it);
}

std::string row(const std::string& name, const std::string& value_html) {
  return "<tr><th>" + html_escape(name) + "</th><td>" + value_html + "</td></tr>\n";
}

std::string figures_table(const json& summary, const RunPageConfig& config) {
  const std::string status = text_of(summary, "status");
  std::string t = "<table>\n" + row("status", fmt::format("<strong class=\"{0}\">{0}</strong>", html_escape(status)));
  const std::string step = figure(summary, "steps_completed");
  t += row("steps done", config.steps > 0 ? fmt::format("{} of {}", step, config.steps) : step);
  t += row("train loss (mean of the last logged steps)", figure(summary, "final_train_loss"));
  t += row("validation loss (latest)", figure(summary, "final_val_loss"));
  t += row("best validation loss", figure(summary, "best_val_loss"));
  if (summary.contains("final_val_acc")) t += row("validation accuracy (latest)", figure(summary, "final_val_acc"));
  t += row("steps per second", figure(summary, "steps_per_s", 1));
  t += row("wall time (s)", figure(summary, "wall_s", 1));
  for (const char* key : {"error", "plot"})
    if (summary.contains(key)) t += row(key, html_escape(text_of(summary, key)));
  return t + "</table>\n";
}

std::string changes_table(const RunPageConfig& config) {
  if (config.changes.empty()) return "<p>Every config key has its default value (config.json).</p>\n";
  std::string t = "<h2>Config keys that differ from the defaults</h2>\n<table>\n<tr><th>key</th><th>value</th></tr>\n";
  for (const auto& [key, value] : config.changes)
    t += "<tr><td><code>" + html_escape(key) + "</code></td><td><code>" + html_escape(value) + "</code></td></tr>\n";
  return t + "</table>\n";
}

}  // namespace

RunPageConfig run_page_config(const json& config) {
  RunPageConfig out;
  if (!config.is_object()) return out;
  std::vector<std::pair<std::string, json>> now, defaults;
  flatten(config, "", now);
  flatten(config_to_json(RunConfig{}), "", defaults);
  for (const auto& [key, value] : now) {
    if (key == "name") continue;
    const auto d = std::find_if(defaults.begin(), defaults.end(), [&](const auto& kv) { return kv.first == key; });
    if (d == defaults.end() || d->second != value) out.changes.emplace_back(key, shown(value));
    if (key == "train.steps" && value.is_number_integer()) out.steps = value.get<int>();
  }
  return out;
}

std::string run_page(const json& summary, const RunPageConfig& config, const std::vector<std::string>& pictures) {
  const std::string name = text_of(summary, "name"), status = text_of(summary, "status");
  const bool running = status == "running";
  std::string body = "<h1>" + html_escape(name) + "</h1>\n";
  body += running ? fmt::format("<p>The run is training: this page reloads itself every {} s.</p>\n", kRunPageRefreshS)
                  : "<p>The run has ended: this page no longer reloads.</p>\n";
  body += figures_table(summary, config) + changes_table(config);
  for (const std::string& p : pictures)
    body += "<h2>" + html_escape(p) + "</h2>\n<img src=\"" + html_escape(p) + "\" alt=\"" + html_escape(p) + "\">\n";
  if (pictures.empty())
    body += "<p>The pictures (loss.png, stats.png, layers.png, ranges.png) are drawn when the run ends.</p>\n";
  return html_page(fmt::format("{}: {}", name, status), body, running ? kRunPageRefreshS : 0);
}

void write_run_page(const std::string& dir, const json& summary, const RunPageConfig& config) {
  std::vector<std::string> pictures;
  for (const char* p : kPictures) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(std::filesystem::symlink_status(std::filesystem::path(dir) / p, ec)))
      pictures.emplace_back(p);
  }
  write_file_atomically((std::filesystem::path(dir) / "index.html").string(), run_page(summary, config, pictures));
}

}  // namespace nt
