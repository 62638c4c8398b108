// A claim of ../shared/claims.md as an experiment: it runs (directly, or through training
// runs), measures, and returns a verdict with its evidence. One function per claim.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nt {

enum class ClaimVerdict { pass, fail, inconclusive };
const char* to_string(ClaimVerdict v);

struct ClaimResult {
  ClaimResult() = default;
  ClaimResult(std::string id_, std::string title_, ClaimVerdict v = ClaimVerdict::inconclusive)
      : id(std::move(id_)), title(std::move(title_)), verdict(v) {}
  std::string id;            // "E1"
  std::string title;         // one line
  ClaimVerdict verdict = ClaimVerdict::inconclusive;
  std::string measured;      // the measured figure(s), one line
  std::string criterion;     // the pass criterion, as claims.md states it
  std::string source;        // the source and its own figure
  std::vector<std::string> plots;  // paths relative to the report directory
  std::string details;       // markdown: tables, notes, the runs used
  bool ran = true;           // false when the experiment itself failed to run
};

struct ClaimContext {
  std::string out;           // this claim's directory inside the report directory
  std::string binary;        // the normtool executable, for the runs
  bool quick = false;        // shrunken settings
  int jobs = 2;              // parallel runs
};

struct Claim {
  std::string id, slug;
  bool exact;                // computed directly, no training
  std::function<ClaimResult(const ClaimContext&)> run;
};

// Every claim, in the order of claims.md.
const std::vector<Claim>& all_claims();

// The exact claims (exact.cpp).
ClaimResult claim_e1(const ClaimContext&);
ClaimResult claim_e2(const ClaimContext&);
ClaimResult claim_e3(const ClaimContext&);
ClaimResult claim_e4(const ClaimContext&);
ClaimResult claim_e5(const ClaimContext&);
ClaimResult claim_e6(const ClaimContext&);
ClaimResult claim_e7(const ClaimContext&);
ClaimResult claim_e8(const ClaimContext&);

// The training claims (training.cpp).
ClaimResult claim_c1(const ClaimContext&);
ClaimResult claim_c2(const ClaimContext&);
ClaimResult claim_c3(const ClaimContext&);
ClaimResult claim_c4(const ClaimContext&);
ClaimResult claim_c5(const ClaimContext&);
ClaimResult claim_c6(const ClaimContext&);
ClaimResult claim_c7(const ClaimContext&);
ClaimResult claim_c8(const ClaimContext&);
ClaimResult claim_c9(const ClaimContext&);
ClaimResult claim_c10(const ClaimContext&);
ClaimResult claim_c11(const ClaimContext&);

}  // namespace nt
