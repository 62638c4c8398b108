// The claim registry: complete metadata, one experiment README per claim whose header is the
// registry's (regenerate with `normtool reproduce --sync-readmes`).
#include <gtest/gtest.h>

#include <optional>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

#include "claims/claim.h"
#include "claims/runner.h"
#include "core/errors.h"
#include "report/report.h"
#include "paths.h"

namespace nt::test {
namespace {

TEST(Claims, RegistryHasEveryFieldOnce) {
  std::set<std::string> ids, slugs;
  for (const Claim& c : all_claims()) {
    SCOPED_TRACE(c.id);
    EXPECT_TRUE(ids.insert(c.id).second);
    EXPECT_TRUE(slugs.insert(c.slug).second);
    for (const std::string& field : {c.title, criterion_text(c), c.source, setup_text(c), c.why})
      EXPECT_GT(field.size(), 10u);
    EXPECT_EQ(c.exact, c.id[0] == 'E');
    EXPECT_EQ(c.run == nullptr, !c.settings.empty() && !c.measures.empty()) << "a function, or settings and measures";
    EXPECT_EQ(find_claim(c.id), &c);
  }
  EXPECT_EQ(find_claim("X9"), nullptr);
}

// A setting's setup describes its runs, not its base config: lm-tiny.json is a 2-layer Pre-LN
// transformer, but every run here is Post-LN with 6 or 12 layers; the fixed 18 layers, which the
// axis sets again in every run, is not shown.
TEST(Claims, ASettingIsDescribedAtItsAxesFirstValues) {
  const Claim c{.id = "T1",
                .settings = {{.name = "s",
                              .config = "lm-tiny.json",
                              .overrides = {"model.n_layers=18", "train.steps=7"},
                              .axes = {"model.norm.placement=post", "model.n_layers=6,12"}}}};
  const std::string t = setup_text(c);
  EXPECT_NE(t.find("with `train.steps=7` (transformer, 6 layers,"), std::string::npos) << t;
  EXPECT_NE(t.find("Post-LN layernorm"), std::string::npos) << t;
  EXPECT_EQ(t.find("Pre-LN"), std::string::npos) << t;
  EXPECT_EQ(t.find("n_layers=18"), std::string::npos) << t;
  EXPECT_NE(t.find("over `model.norm.placement=post`, `model.n_layers=6,12`"), std::string::npos) << t;
}

// Every run of every claim is a valid config, in the full mode and the quick one, ablations
// included: reproduce checks this before it starts, else a setting broken in the full mode fails
// only when its sweep starts, an hour in. A broken run is named: the claim, the setting, the run.
TEST(Claims, EveryRunOfEveryClaimIsAValidConfig) {
  const auto problem = [](const Claim& c, bool quick) -> std::string {
    ClaimContext ctx;
    ctx.quick = quick, ctx.ablations = true;
    try {
      check_settings(c, ctx);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  for (const Claim& c : all_claims())
    for (bool quick : {false, true}) EXPECT_EQ(problem(c, quick), "") << c.id << (quick ? " --quick" : "");
  const Claim broken{.id = "T1",
                     .settings = {{.name = "s",
                                   .config = "lm-tiny.json",
                                   .axes = {"model.d_model=64,66"},  // 66 is not a multiple of 4 heads
                                   .group = "an ablation",
                                   .quick_axes = {"model.d_model=64"}}}};
  const std::string full = problem(broken, false);
  EXPECT_NE(full.find("claim T1, setting s (configs/lm-tiny.json): the run seed=1 model.d_model=66: "),
            std::string::npos)
      << full;
  EXPECT_NE(full.find("model.d_model"), full.rfind("model.d_model")) << "the config's own error names the key too";
  EXPECT_EQ(problem(broken, true), "") << "in quick mode the setting runs d_model 64 only";
  // The setup text describes a setting at its axes' first values: a broken one is named the same way
  Claim first_broken = broken;
  first_broken.settings[0].axes = {"model.d_model=66,64"};
  try {
    setup_text(first_broken);
    ADD_FAILURE() << "a setting described at d_model 66 with 4 heads";
  } catch (const InputError& e) {
    EXPECT_TRUE(std::string_view(e.what()).starts_with("claim T1, setting s (configs/lm-tiny.json): ")) << e.what();
  }
}

// `reproduce core` is the seed papers' claims as first listed (E1-E8, C1-C13, P1), the budget's;
// `reproduce extra` every other, C14 on; together each claim once.
TEST(Claims, CoreAndExtraSplitTheClaims) {
  std::size_t core = 0, extra = 0;
  for (const Claim& c : all_claims()) {
    const bool first_list = c.id[0] != 'C' || std::stoi(c.id.substr(1)) <= 13;
    EXPECT_EQ(c.core, first_list) << c.id;
    const auto& group = claims_named(c.core ? "core" : "extra");
    EXPECT_NE(std::find(group.begin(), group.end(), &c), group.end()) << c.id;
    ++(c.core ? core : extra);
    EXPECT_EQ(claims_named(c.id), std::vector<const Claim*>{&c});
  }
  EXPECT_EQ(claims_named("core").size(), core);
  EXPECT_EQ(claims_named("extra").size(), extra);
  EXPECT_EQ(core, 22u);
  EXPECT_TRUE(claims_named("C99").empty());
}

// Runs shared between claims (C1, C2 and C14's RNNSearch LN/RMS runs, C1 and C2's LSTM runs; C1, C2, C6
// and C14's transformer runs) are the same runs in every claim that names them: the same config,
// overrides, quick overrides and axes, so that a reproduction of several claims runs them once.
TEST(Claims, SharedRunsAreTheSameInEveryClaim) {
  std::map<std::string, std::pair<const Setting*, int>> seen;  // shared/name -> the first, and its users
  for (const Claim& c : all_claims())
    for (const Setting& s : c.settings) {
      if (s.shared.empty()) continue;
      auto& [first, users] = seen.try_emplace(s.shared + "/" + s.name, &s, 0).first->second;
      ++users;
      SCOPED_TRACE(c.id + " " + s.shared + "/" + s.name);
      EXPECT_EQ(s.config, first->config);
      EXPECT_EQ(s.overrides, first->overrides);
      EXPECT_EQ(s.quick, first->quick);
      EXPECT_EQ(s.axes, first->axes);
    }
  EXPECT_EQ(seen["rnnsearch-runs/rnnsearch-normed"].second, 3)
      << "C1, C2 and C14 (C6 trains its own, to a matched loss)";
}

TEST(Claims, ExperimentReadmesStartWithTheRegistryHeader) {
  for (const Claim& c : all_claims()) {
    const auto path =
        std::filesystem::path(source_dir()) / "experiments" / (std::string(c.id) + "-" + c.slug) / "README.md";
    std::ifstream in(path);
    ASSERT_TRUE(in) << path;
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(with_readme_header(c, text.str()), text.str())
        << path << " is out of date: run `normtool reproduce --sync-readmes`";
  }
}

// A report (P1) has the verdict REPORT: written into result.json and read back as such, never
// turned into INCONCLUSIVE; and it is the only kind of result P1 gives.
TEST(Claims, ReportVerdictSurvivesTheReport) {
  EXPECT_STREQ(to_string(ClaimVerdict::report), "REPORT");
  const Claim* p1 = find_claim("P1");
  ASSERT_NE(p1, nullptr);
  EXPECT_FALSE(p1->exact);
  const auto dir = std::filesystem::temp_directory_path() / ("normtool-report-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "P1-presets-side-by-side");
  ClaimResult r;
  r.verdict = ClaimVerdict::report;
  r.measured = "a report";
  r.seeds = {1, 2};
  r.measures = {measure_of("gpt", {2.5, 2.6}, Reported{}, "final validation loss")};
  save_result((dir / "P1-presets-side-by-side").string(), r);
  const auto results = load_results(dir.string());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].first, p1);
  EXPECT_EQ(results[0].second.verdict, ClaimVerdict::report);
  write_report(dir.string(), results);
  std::ifstream in(dir / "verdicts.json");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("\"verdict\": \"REPORT\""), std::string::npos) << text.str();
  std::filesystem::remove_all(dir);
}

// The README's and REPORT.md's figure for a claim is the measure that made its verdict: a PASS's
// first deciding measure, a FAIL's first failing one, an INCONCLUSIVE's first undecided one, or the
// unmet precondition that left it undecided; never a passing figure beside FAIL or INCONCLUSIVE.
TEST(Claims, TheHeadlineIsTheMeasureThatMadeTheVerdict) {
  const Claim* c10 = find_claim("C10");
  ASSERT_NE(c10, nullptr);
  const auto dir = std::filesystem::temp_directory_path() / ("normtool-headline-" + std::to_string(::getpid()));
  // the verdict the runner gives: verdict_of's, or INCONCLUSIVE when a precondition is not met
  const auto value_of = [&](std::vector<Measure> measures, std::optional<ClaimVerdict> verdict = {}) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / (c10->id + "-" + c10->slug));
    ClaimResult r;
    r.measures = std::move(measures);
    r.verdict = verdict.value_or(verdict_of(r.measures));
    r.seeds = {1, 2, 3, 4};
    save_result((dir / (c10->id + "-" + c10->slug)).string(), r);
    write_report(dir.string(), load_results(dir.string()));
    std::ifstream in(dir / "verdicts.json");
    const nlohmann::json v = nlohmann::json::parse(in).at(0);
    return v.at("verdict").get<std::string>() + " " + v.at("value").get<std::string>();
  };
  const Measure pass = measure_of("passes", {30, 32, 35, 31}, AtLeast{3});
  const Measure undecided = measure_of("undecided", {0.7, 1.3, 1.9, 1.1}, AtLeast{1});
  const Measure fails = measure_of("fails", {1, 1.1, 1.2, 1.05}, AtLeast{3});
  EXPECT_EQ(pass.verdict, ClaimVerdict::pass);
  EXPECT_EQ(undecided.verdict, ClaimVerdict::inconclusive);
  EXPECT_EQ(fails.verdict, ClaimVerdict::fail);
  const auto names = [](const std::string& value, const std::string& verdict, const std::string& name) {
    return value.starts_with(verdict + " ") && value.ends_with(": " + name);
  };
  EXPECT_PRED3(names, value_of({pass, pass}), "PASS", "passes");
  EXPECT_PRED3(names, value_of({pass, undecided}), "INCONCLUSIVE", "undecided");
  EXPECT_PRED3(names, value_of({pass, undecided, fails}), "FAIL", "fails");
  Measure unmet = measure_of("precondition", {0, 1, 0, 1}, AtLeast{1});
  unmet.precondition = true;
  ASSERT_NE(unmet.verdict, ClaimVerdict::pass);
  const std::string value = value_of({unmet, pass}, ClaimVerdict::inconclusive);
  EXPECT_TRUE(value.ends_with(": precondition")) << value;
  std::filesystem::remove_all(dir);
}

TEST(Claims, ReadmeHeaderIsReplacedNotStacked) {
  const Claim& c = all_claims().front();
  const std::string once = with_readme_header(c, "Hand-written text.\n");
  EXPECT_EQ(with_readme_header(c, once), once);
  EXPECT_NE(once.find(criterion_text(c)), std::string::npos);
  EXPECT_NE(once.find("Hand-written text."), std::string::npos);
}

}  // namespace
}  // namespace nt::test
