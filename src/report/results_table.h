// The README's results (issue: results first): one line per claim, its verdict and its deciding
// figure, generated from a report's verdicts.json between two marker lines of README.md. The
// reproduction rewrites it when it writes the report the README links (reports/ of the source
// tree, whose parent holds the README with the markers).
#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace nt {

// Text in a markdown table cell: its own | escaped, so that it does not end the cell (E2's
// "max |ratio - 1|"), and a control character (a newline would end the row) as a space
std::string markdown_cell(const std::string& text);

// The table, marker lines included, of verdicts.json's claims; links go to `report_link`'s anchors.
std::string results_table(const nlohmann::json& verdicts, const std::string& report_link);
// The README with its results replaced (unchanged when it has no markers).
std::string with_results_table(const std::string& readme, const std::string& table);
// Rewrites <report_dir>/../README.md's results from <report_dir>/verdicts.json when that README has
// the markers; true when it changed.
bool sync_results_table(const std::string& report_dir);
// The reports/ beside a source tree's docs/ (following the links of an installed data directory);
// "" when there is none.
std::string source_reports_dir(const std::string& docs_dir);

}  // namespace nt
