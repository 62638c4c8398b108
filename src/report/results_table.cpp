#include "report/results_table.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "claims/claim.h"
#include "io/files.h"
#include "io/json_file.h"

namespace nt {

namespace {

constexpr const char* kBegin =
    "<!-- results: generated from reports/verdicts.json by `normtool reproduce`, do not edit -->";
constexpr const char* kEnd = "<!-- end of the results -->";

// The figure a row shows: the deciding figure's value and criterion ("value" up to the measure's name,
// which the report gives), else the report's deciding figure, or for an older report the first clause
// of its one-line result
std::string figure_of(const nlohmann::json& v) {
  std::string f = v.value("value", "");
  if (const auto cut = f.find(": "); cut != std::string::npos) f.resize(cut);
  if (f.empty()) f = v.value("figure", "");
  if (f.empty()) f = v.value("measured", "");
  if (const auto cut = f.find("; "); cut != std::string::npos && !v.contains("figure")) f.resize(cut);
  if (f.size() > 56) f = f.substr(0, 53) + "...";
  return markdown_cell(f);
}

// A claim's title up to its first clause, and at most 40 characters
std::string short_title(std::string t) {
  for (const char* cut : {"; ", ": "})
    if (const auto at = t.find(cut); at != std::string::npos && at >= 15) t.resize(at);
  if (t.size() > 40) t = t.substr(0, t.rfind(' ', 37)) + "...";
  return t;
}

}  // namespace

std::string markdown_cell(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|') out += '\\';
    out += static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f ? ' ' : ch;
  }
  return out;
}

std::string results_table(const nlohmann::json& verdicts, const std::string& report_link) {
  std::map<std::string, int> count;
  for (const auto& v : verdicts) ++count[v.value("verdict", "?")];
  std::string counts;
  for (const auto& [verdict, n] : count) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, verdict);
  std::string t = fmt::format(
      "{}\n{} claims ({}), from [{}]({}):\n\n| claim | verdict | deciding figure |\n"
      "| --- | --- | --- |\n",
      kBegin, verdicts.size(), counts, report_link, report_link);
  for (const auto& v : verdicts) {
    const std::string id = v.value("id", "?");
    t += fmt::format("| [{}]({}#{}) {} | **{}**{} | {} |\n", id, report_link, id, short_title(v.value("title", "")),
                     v.value("verdict", "?"), v.value("quick", false) ? " (quick)" : "", figure_of(v));
  }
  std::vector<std::string> missing;  // claims of the registry the report has not run
  for (const Claim& c : all_claims())
    if (std::none_of(verdicts.begin(), verdicts.end(), [&](const auto& v) { return v.value("id", "") == c.id; }))
      missing.push_back(c.id);
  if (!missing.empty())
    t += fmt::format("\nNot in this report yet: {} (`normtool reproduce {}`).\n", fmt::join(missing, ", "),
                     fmt::join(missing, " "));
  return t + kEnd + "\n";
}

std::string with_results_table(const std::string& readme, const std::string& table) {
  const auto begin = readme.find(kBegin), end = readme.find(kEnd);
  if (begin == std::string::npos || end == std::string::npos || end < begin) return readme;
  std::size_t rest = end + std::string(kEnd).size();
  if (rest < readme.size() && readme[rest] == '\n') ++rest;
  return readme.substr(0, begin) + table + readme.substr(rest);
}

std::string source_reports_dir(const std::string& docs_dir) {
  std::error_code ec;
  const auto reports = std::filesystem::canonical(docs_dir, ec).parent_path() / "reports";
  return !ec && std::filesystem::exists(reports / "verdicts.json", ec) ? reports.string() : "";
}

bool sync_results_table(const std::string& report_dir) {
  namespace fs = std::filesystem;
  if (report_dir.empty()) return false;
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(report_dir), ec);
  const fs::path readme = dir.parent_path() / "README.md";
  if (ec || dir.filename() != "reports" || !fs::is_regular_file(readme, ec)) return false;
  const std::string now = read_file(readme.string(), kMaxDocumentBytes);
  const std::string want =
      with_results_table(now, results_table(parse_json(read_file((dir / "verdicts.json").string(), kMaxDocumentBytes),
                                                       (dir / "verdicts.json").string()),
                                            "reports/REPORT.md"));
  if (want == now) return false;
  write_file_atomically(readme.string(), want);
  return true;
}

}  // namespace nt
