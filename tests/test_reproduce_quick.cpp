// `normtool reproduce --quick --ablations`, as CI runs it: every claim of claims.md produces a
// verdict (the experiment ran), every exact claim (E1-E8) passes, the reports (P1) say REPORT,
// and no ablation is left out; without --ablations, only the deciding settings run, at any --jobs
// to the same figures. The two reproductions are made once (tests/quick_report.h).
#include <gtest/gtest.h>

#include "claims/claim.h"
#include "claims/statistics.h"
#include "helpers.h"
#include "quick_report.h"

namespace nt::test {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// Every interval in the report's result.json files follows from its per-seed values and the kind
// recorded beside it (scale, confidence, sides), to 1e-3: a reader can recompute every verdict.
// Returns the number of intervals checked.
int expect_intervals_follow_from_values(const std::filesystem::path& report) {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(report)) {
    if (!std::filesystem::exists(entry.path() / "result.json")) continue;
    const nlohmann::json result = read_json(entry.path() / "result.json");  // kept: the loop reads into it
    for (const auto& m : result["measures"]) {
      std::vector<double> values;
      for (const auto& v : m["values"]) values.push_back(v.is_null() ? NAN : v.get<double>());
      const auto& i = m["interval"];
      if (values.size() < 2 || i["lo"].is_null()) continue;
      const Estimate e = estimate(values, i["scale"] == "log" ? Scale::log : Scale::linear,
                                  i["confidence"].get<double>(), i["sides"].get<int>());
      SCOPED_TRACE(entry.path().string() + ": " + m["name"].get<std::string>());
      const double tolerance = 1e-3 * std::max(1.0, std::abs(i["mean"].get<double>()));
      EXPECT_NEAR(e.interval.mean, i["mean"].get<double>(), tolerance);
      EXPECT_NEAR(e.interval.lo, i["lo"].get<double>(), tolerance);
      EXPECT_NEAR(e.interval.hi, i["hi"].get<double>(), tolerance);
      ++checked;
    }
  }
  return checked;
}

// The committed report (reports/, one full run) too: every interval recomputed from its values.
TEST(CommittedReport, EveryIntervalFollowsFromItsValues) {
  EXPECT_GT(expect_intervals_follow_from_values(std::filesystem::path(source_dir()) / "reports"), 100);
}

// The two reproductions the QuickReport tests read, each in a process of its own under CTest.
TEST(QuickReportSetup, EveryClaimWithItsAblations) {
  const CommandResult r = make_quick_report(kQuickAll);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::cout << r.output;  // the verdicts, in the test's log
}

TEST(QuickReportSetup, TheInProcessClaimsAtOneJobWithoutAblations) {
  const CommandResult r = make_quick_report(kQuickOneJob);
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

TEST(QuickReport, EveryClaimHasAVerdictAndTheExactClaimsPass) {
  const std::filesystem::path d = quick_report(kQuickAll);
  const auto verdicts = read_json(d / "verdicts.json");
  ASSERT_EQ(verdicts.size(), all_claims().size()) << verdicts.dump();
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
  const std::string md = read_text(d / "REPORT.md");
  EXPECT_NE(md.find("(QUICK: "), std::string::npos);
  EXPECT_EQ(md.find("(PARTIAL: "), std::string::npos);
  EXPECT_EQ(md.find("Ablations not run"), std::string::npos);
  // REPORT.html beside it: every claim's section, every plot of the report inline
  const std::string html = read_text(d / "REPORT.html");
  EXPECT_EQ(count(html, "<a id=\""), count(md, "<a id=\""));
  EXPECT_EQ(count(html, "<img src=\"data:image/png;base64,"), count(md, "\n!["));
  EXPECT_GT(expect_intervals_follow_from_values(d), 50);
}

// Without --ablations a claim decides on the papers' settings alone: C9's runs without warm-up
// (encoder-decoder and decoder-only) are not made, no measure of an ablation is reported, and the
// report names what was left out; C7 and C10 report their deciding settings alone too.
TEST(QuickReport, WithoutAblationsOnlyTheDecidingSettingsRunAndTheReportSaysWhatWasLeftOut) {
  const std::filesystem::path d = quick_report(kQuickOneJob);
  const auto result = read_json(d / "C9-deep-post-ln-vs-deepnorm/result.json");
  ASSERT_FALSE(result["measures"].empty());
  EXPECT_EQ(result["ablations_not_run"], nlohmann::json::array({"ablation: encoder-decoder without warm-up",
                                                                "ablation: decoder-only, depths 6/18/36"}));
  EXPECT_TRUE(std::filesystem::exists(d / "C9-deep-post-ln-vs-deepnorm/encdec-warmup"));
  EXPECT_FALSE(std::filesystem::exists(d / "C9-deep-post-ln-vs-deepnorm/encdec"));
  EXPECT_FALSE(std::filesystem::exists(d / "C9-deep-post-ln-vs-deepnorm/lm"));
  EXPECT_NE(read_text(d / "REPORT.md")
                .find("Ablations not run (`normtool reproduce C9 --ablations` runs them): ablation: encoder-decoder "
                      "without warm-up; ablation: decoder-only, depths 6/18/36."),
            std::string::npos);
  for (const char* dir : {"C7-post-ln-gradients-at-init", "C9-deep-post-ln-vs-deepnorm", "C10-post-ln-model-update"}) {
    const auto r = read_json(d / dir / "result.json");
    EXPECT_TRUE(r["ran"].get<bool>()) << r.dump();
    EXPECT_FALSE(r["ablations_not_run"].empty()) << dir;
    for (const auto& m : r["measures"])
      EXPECT_EQ(m["group"].get<std::string>().rfind("ablation", 0), std::string::npos) << dir << ": " << m.dump();
    EXPECT_EQ(r["measured"].get<std::string>().find("ablation"), std::string::npos) << dir;
  }
}

// The claims that train inside one process run their sessions on --jobs threads and gather the
// results by index, and a verdict never depends on the ablations run beside it: C7's and C10's
// deciding figures and verdicts at --jobs 1 without ablations are the same bits as at --jobs 2 with them.
TEST(QuickReport, InProcessClaimsGiveTheSameFiguresAtAnyJobsWithOrWithoutAblations) {
  const std::filesystem::path one = quick_report(kQuickOneJob), all = quick_report(kQuickAll);
  for (const char* dir : {"C7-post-ln-gradients-at-init", "C10-post-ln-model-update"}) {
    const auto a = read_json(one / dir / "result.json"), b = read_json(all / dir / "result.json");
    nlohmann::json deciding = nlohmann::json::array();
    for (const auto& m : b["measures"])
      if (m["group"].get<std::string>().rfind("ablation", 0) != 0) deciding.push_back(m);
    ASSERT_FALSE(deciding.empty()) << dir;
    EXPECT_EQ(a["measures"], deciding) << dir;
    EXPECT_EQ(a["verdict"], b["verdict"]) << dir;
  }
}

}  // namespace
}  // namespace nt::test
