#include "claims/report.h"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>

namespace nt {

namespace fs = std::filesystem;

void save_result(const std::string& claim_dir, const ClaimResult& r) {
  const nlohmann::json j = {{"id", r.id},           {"title", r.title},   {"verdict", to_string(r.verdict)},
                            {"measured", r.measured}, {"criterion", r.criterion}, {"source", r.source},
                            {"plots", r.plots},     {"details", r.details}, {"ran", r.ran}};
  std::ofstream(fs::path(claim_dir) / "result.json") << j.dump(2) << "\n";
}

std::vector<ClaimResult> load_results(const std::string& report_dir) {
  std::vector<ClaimResult> results;
  for (const Claim& c : all_claims()) {
    std::ifstream in(fs::path(report_dir) / (c.id + "-" + c.slug) / "result.json");
    if (!in) continue;
    const auto j = nlohmann::json::parse(in);
    ClaimResult r{j["id"], j["title"]};
    const std::string v = j["verdict"];
    r.verdict = v == "PASS" ? ClaimVerdict::pass : v == "FAIL" ? ClaimVerdict::fail : ClaimVerdict::inconclusive;
    r.measured = j["measured"], r.criterion = j["criterion"], r.source = j["source"], r.details = j["details"];
    r.plots = j["plots"].get<std::vector<std::string>>();
    r.ran = j["ran"];
    results.push_back(std::move(r));
  }
  return results;
}

void write_report(const std::string& dir, const std::vector<ClaimResult>& results) {
  fs::create_directories(dir);
  std::string md = "# normtool: the claims about normalization, reproduced\n\n";
  md += "Rerun everything with `normtool reproduce --jobs 2` (or one claim with the command in its row). Criteria "
        "and sources: `../shared/claims.md`; each claim's setup: `experiments/<id>-<slug>/README.md`.\n\n";
  md += "| claim | verdict | measured | criterion | source | plot | rerun |\n|---|---|---|---|---|---|---|\n";
  nlohmann::json verdicts = nlohmann::json::array();
  for (const ClaimResult& r : results) {
    std::string plots;
    for (const auto& p : r.plots) plots += fmt::format("[{}]({}) ", fs::path(p).filename().string(), p);
    md += fmt::format("| [{}](#{}) {} | **{}** | {} | {} | {} | {} | `normtool reproduce {}` |\n", r.id, r.id, r.title,
                      to_string(r.verdict), r.measured, r.criterion, r.source, plots.empty() ? "-" : plots, r.id);
    verdicts.push_back({{"id", r.id}, {"title", r.title}, {"verdict", to_string(r.verdict)}, {"ran", r.ran},
                        {"measured", r.measured}, {"criterion", r.criterion}, {"source", r.source}, {"plots", r.plots}});
  }
  for (const ClaimResult& r : results) {
    md += fmt::format("\n## {}\n\n**{}**: {}\n\n- measured: {}\n- criterion: {}\n- source: {}\n- rerun: `normtool "
                      "reproduce {}` (setup: `experiments/{}-*/README.md`)\n\n", r.id, r.title, to_string(r.verdict),
                      r.measured, r.criterion, r.source, r.id, r.id);
    for (const auto& p : r.plots) md += fmt::format("![{}]({})\n\n", r.id, p);
    md += r.details + "\n";
  }
  std::ofstream(fs::path(dir) / "REPORT.md") << md;
  std::ofstream(fs::path(dir) / "verdicts.json") << verdicts.dump(2) << "\n";
}

}  // namespace nt
