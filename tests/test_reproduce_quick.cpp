// `normtool reproduce --quick --ablations`, as CI runs it: every claim of claims.md produces a
// verdict (the experiment ran), every exact claim (E1-E8) passes, the reports (P1) say REPORT,
// and no ablation is left out.
#include <gtest/gtest.h>

#include "claims/claim.h"
#include "claims/statistics.h"
#include "helpers.h"

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
TEST(ReproduceQuick, TheCommittedReportsIntervalsFollowFromTheirValues) {
  EXPECT_GT(expect_intervals_follow_from_values(std::filesystem::path(source_dir()) / "reports"), 100);
}

TEST(ReproduceQuick, EveryClaimHasAVerdictAndTheExactClaimsPass) {
  TempDir d;
  const auto r = run_normtool("reproduce --quick --ablations --jobs 2 --out " + d.str());
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
  EXPECT_EQ(read_text(d / "REPORT.md").find("Ablations not run"), std::string::npos);
  // REPORT.html beside it: every claim's section, every plot of the report inline
  const std::string html = read_text(d / "REPORT.html"), md = read_text(d / "REPORT.md");
  EXPECT_EQ(count(html, "<a id=\""), count(md, "<a id=\""));
  EXPECT_EQ(count(html, "<img src=\"data:image/png;base64,"), count(md, "\n!["));
  EXPECT_GT(expect_intervals_follow_from_values(d.path), 50);
  std::cout << r.output;  // the verdicts, in the CI log
}

// Without --ablations a claim decides on the papers' settings alone: C9's runs without warm-up
// (encoder-decoder and decoder-only) are not made, no measure of an ablation is reported, and the
// report names what was left out.
TEST(ReproduceQuick, WithoutAblationsOnlyTheDecidingSettingsRunAndTheReportSaysWhatWasLeftOut) {
  TempDir d;
  const auto r = run_normtool("reproduce C9 --quick --jobs 2 --out " + d.str());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto result = read_json(d / "C9-deep-post-ln-vs-deepnorm/result.json");
  ASSERT_FALSE(result["measures"].empty());
  for (const auto& m : result["measures"])
    EXPECT_EQ(m["group"].get<std::string>().rfind("ablation", 0), std::string::npos) << m.dump();
  EXPECT_EQ(result["ablations_not_run"], nlohmann::json::array({"ablation: encoder-decoder without warm-up",
                                                                "ablation: decoder-only, depths 6/18/36"}));
  EXPECT_TRUE(std::filesystem::exists(d / "C9-deep-post-ln-vs-deepnorm/encdec-warmup"));
  EXPECT_FALSE(std::filesystem::exists(d / "C9-deep-post-ln-vs-deepnorm/encdec"));
  EXPECT_FALSE(std::filesystem::exists(d / "C9-deep-post-ln-vs-deepnorm/lm"));
  EXPECT_NE(read_text(d / "REPORT.md")
                .find("Ablations not run (`normtool reproduce C9 --ablations` runs them): ablation: encoder-decoder "
                      "without warm-up; ablation: decoder-only, depths 6/18/36."),
            std::string::npos);
}

// The claims that train inside one process run their sessions on --jobs threads and gather the
// results by index: C7's and C10's figures are the same bits at --jobs 1 and 2. Without
// --ablations C7, C8 and C10 report their deciding settings alone.
TEST(ReproduceQuick, InProcessClaimsGiveTheSameFiguresAtAnyJobsAndDecideWithoutAblations) {
  TempDir one, two;
  auto r = run_normtool("reproduce C7 C10 --quick --jobs 1 --out " + one.str());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_normtool("reproduce C7 C8 C10 --quick --jobs 2 --out " + two.str());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* dir : {"C7-post-ln-gradients-at-init", "C10-post-ln-model-update"}) {
    const auto a = read_json(one / (std::string(dir) + "/result.json")),
               b = read_json(two / (std::string(dir) + "/result.json"));
    EXPECT_EQ(a["measures"], b["measures"]) << dir;
    EXPECT_EQ(a["measured"], b["measured"]) << dir;
  }
  for (const char* dir : {"C7-post-ln-gradients-at-init", "C8-post-ln-needs-warmup", "C10-post-ln-model-update"}) {
    const auto result = read_json(two / (std::string(dir) + "/result.json"));
    EXPECT_TRUE(result["ran"].get<bool>()) << result.dump();
    EXPECT_FALSE(result["ablations_not_run"].empty()) << dir;
    for (const auto& m : result["measures"])
      EXPECT_EQ(m["group"].get<std::string>().rfind("ablation", 0), std::string::npos) << dir << ": " << m.dump();
    EXPECT_EQ(result["measured"].get<std::string>().find("ablation"), std::string::npos) << dir;
  }
}

}  // namespace
}  // namespace nt::test
