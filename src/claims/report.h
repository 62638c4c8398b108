// The reproduction report: each claim's result is kept in <report>/<id>-<slug>/result.json, and
// REPORT.md (one row per claim, then each claim's evidence) and verdicts.json are assembled
// from every result in the directory, so rerunning one claim updates its row and keeps the rest.
#pragma once
#include <string>
#include <vector>

#include "claims/claim.h"

namespace nt {

void save_result(const std::string& claim_dir, const ClaimResult& result);
std::vector<ClaimResult> load_results(const std::string& report_dir);  // in the order of all_claims()
void write_report(const std::string& dir, const std::vector<ClaimResult>& results);

}  // namespace nt
