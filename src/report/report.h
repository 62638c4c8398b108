// The reproduction report: each claim's result is kept in <report>/<id>-<slug>/result.json, and
// REPORT.md (one row per claim, then each claim's evidence), REPORT.html (the same text as one
// self-contained page, report/report_html.h) and verdicts.json are assembled
// from every result in the directory with the claims' metadata from the registry, so
// rerunning one claim updates its row and keeps the rest.
//
// The experiment READMEs (experiments/<id>-<slug>/README.md) start with a header generated
// from the registry, between two marker lines; the text after it is written by hand.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "claims/claim.h"

namespace nt {

// A claim's directory in a report: <id>-<slug>
std::string dir_name(const Claim& c);

// <claim_dir>/result.json (report/result_file.cpp)
void save_result(const std::string& claim_dir, const ClaimResult& result);
// The results found in the report directory, in the order of all_claims(), but those of `skip`
// (claims about to run again). An InputError naming the file and the key when one cannot be used:
// a key missing or of another type, or a result that contradicts itself (a seed twice, an interval
// its values do not give, a verdict its measures do not give).
std::vector<std::pair<const Claim*, ClaimResult>> load_results(const std::string& report_dir,
                                                               const std::vector<const Claim*>& skip = {});
void write_report(const std::string& dir, const std::vector<std::pair<const Claim*, ClaimResult>>& results);

// The generated header of a claim's experiment README, marker lines included.
std::string readme_header(const Claim& claim);
// README text with its header replaced by (or, without markers, prefixed with) the generated one.
std::string with_readme_header(const Claim& claim, const std::string& readme);
// Rewrites the header of every experiment README under `experiments_dir`; returns the files changed.
std::vector<std::string> sync_readmes(const std::string& experiments_dir);

// docs/claims.md's generated part, marker lines included: every claim with its source and the
// source's figures, the criterion, why the criterion is what it is, and the experiment.
std::string claims_reference();
// The document with its generated part replaced by (or, without markers, followed by) claims_reference().
std::string with_claims_reference(const std::string& doc);

}  // namespace nt
