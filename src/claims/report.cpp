#include "claims/report.h"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>

namespace nt {

void write_report(const std::string& dir, const std::vector<ClaimResult>& results, const std::string& command) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  std::string md = "# normtool: the claims about normalization, reproduced\n\n";
  md += fmt::format("Rerun with `{}`. Criteria and sources: `../shared/claims.md`; each claim's setup: "
                    "`experiments/<id>-<slug>/README.md`.\n\n", command);
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
