// `normtool reproduce --quick`, as CI runs it: every claim of claims.md produces a verdict
// (the experiment ran), every exact claim (E1-E8) passes, and the reports (P1) say REPORT.
#include <gtest/gtest.h>

#include "claims/claim.h"
#include "helpers.h"

namespace nt::test {
namespace {

TEST(ReproduceQuick, EveryClaimHasAVerdictAndTheExactClaimsPass) {
  TempDir d;
  const auto r = run_normtool("reproduce --quick --jobs 2 --out " + d.str());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto verdicts = read_json(d / "verdicts.json");
  ASSERT_EQ(verdicts.size(), all_claims().size()) << r.output;
  for (const auto& v : verdicts) {
    EXPECT_TRUE(v["ran"].get<bool>()) << v.dump();
    const std::string verdict = v["verdict"];
    const char kind = v["id"].get<std::string>()[0];
    if (kind == 'P') {  // a report (P1): no criterion, never PASS or FAIL
      EXPECT_EQ(verdict, "REPORT") << v.dump();
    } else {
      EXPECT_TRUE(verdict == "PASS" || verdict == "FAIL" || verdict == "INCONCLUSIVE") << v.dump();
    }
    if (kind == 'E') {
      EXPECT_EQ(verdict, "PASS") << v.dump();
    }
  }
  EXPECT_TRUE(std::filesystem::exists(d / "REPORT.md"));
  std::cout << r.output;  // the verdicts, in the CI log
}

}  // namespace
}  // namespace nt::test
