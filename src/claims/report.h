// The reproduction report: REPORT.md (one row per claim, then each claim's evidence) and
// verdicts.json, in the report directory.
#pragma once
#include <string>
#include <vector>

#include "claims/claim.h"

namespace nt {

void write_report(const std::string& dir, const std::vector<ClaimResult>& results, const std::string& command);

}  // namespace nt
