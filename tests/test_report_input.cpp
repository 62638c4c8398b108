// What `reproduce` reads from the user: its --seeds, its --out, and the result.json files of a
// report directory, which a user may have edited. A result that contradicts itself is refused
// (exit 2, naming the file and the key), and found before any claim runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "helpers.h"

namespace nt::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kC4 = "C4-batchnorm-small-batches";

// A copy of the committed report's C4 (a training claim with intervals over seeds) in `dir`, edited by `edit`
std::string edited_c4(const TempDir& d, const std::string& name, const std::function<void(json&)>& edit) {
  const fs::path dir = d.path / name / kC4;
  fs::create_directories(dir);
  json result = read_json(source_dir() + "/reports/" + kC4 + "/result.json");
  edit(result);
  std::ofstream(dir / "result.json") << result.dump(2);
  return (d.path / name).string();
}

void expect_refused(const CommandResult& r, const std::string& what) {
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(what), std::string::npos) << r.output;
}

TEST(ReportInput, SeedsAreAListOrRangesEachSeedOnce) {
  TempDir d;
  EXPECT_EQ(run_normtool("reproduce E4 --seeds 11-13 --out " + (d / "r")).exit_code, 0);
  // 1-3 holds 2: the range is expanded, both ends included
  expect_refused(run_normtool("reproduce E4 --seeds 1-3,2 --out " + (d / "x")),
                 "--seeds \"1-3,2\": seed 2 is given twice");
  expect_refused(run_normtool("reproduce E4 --seeds 1,2,3, --out " + (d / "x")), "--seeds \"1,2,3,\": an empty seed");
  expect_refused(run_normtool("reproduce E4 --seeds 3-1 --out " + (d / "x")), "ranges a-b with a <= b, got \"3-1\"");
  expect_refused(run_normtool("reproduce E4 --seeds 0-1000 --out " + (d / "x")), "more than 1000 seeds");
  EXPECT_EQ(run_normtool("reproduce E4 --seeds 0-999 --out " + (d / "r")).exit_code, 0);
  EXPECT_FALSE(fs::exists(d.path / "x"));
}

TEST(ReportInput, AnEmptyOutIsRefused) {
  expect_refused(run_normtool("reproduce E4 --out ''"), "--out: an empty directory name");
  expect_refused(run_normtool("sweep --dry-run --config " + smoke_config() + " seed=1,2 --out ''"),
                 "--out: an empty directory name");
  // they ran as if not given: --write-report '' a whole reproduction
  for (const auto& [command, option] : {std::pair{"reproduce", "--write-report"},
                                        {"reproduce E4", "--collect"},
                                        {"sweep", "--status"},
                                        {"sweep", "--aggregate"}})
    expect_refused(run_normtool(fmt::format("{} {} ''", command, option)),
                   fmt::format("{}: an empty directory name", option));
}

// The committed C4 as it is rebuilds; each edit that makes it contradict itself is named
TEST(ReportInput, AResultThatContradictsItselfIsRefused) {
  TempDir d;
  EXPECT_EQ(run_normtool("reproduce --write-report " + edited_c4(d, "same", [](json&) {})).exit_code, 0);
  const std::string file = kC4 + std::string("/result.json: ");
  expect_refused(run_normtool("reproduce --write-report " +
                              edited_c4(d, "lo", [](json& r) { r["measures"][0]["interval"]["lo"] = -10.0; })),
                 file + "measures[0]: interval: ");
  expect_refused(run_normtool("reproduce --write-report " + edited_c4(d, "seeds",
                                                                      [](json& r) {
                                                                        r["seeds"] = {1, 1, 1};
                                                                      })),
                 file + "seeds: a seed given twice");
  expect_refused(run_normtool("reproduce --write-report " +
                              edited_c4(d, "values", [](json& r) { r["measures"][0]["values"].push_back(3.0); })),
                 file + "measures[0]: values: 4 of them, expected 3 (one per seed)");
  expect_refused(run_normtool("reproduce --write-report " +
                              edited_c4(d, "kind", [](json& r) { r["measures"][0]["interval"]["confidence"] = 7; })),
                 "expected linear or log, 1 or 2, and within (0, 1)");
  expect_refused(
      run_normtool("reproduce --write-report " + edited_c4(d, "verdict", [](json& r) { r["verdict"] = "FAIL"; })),
      file + "verdict: is FAIL, but its measures give PASS");
  // a measure's verdict is its criterion's on its interval; a nulled interval is not one its values give
  expect_refused(run_normtool("reproduce --write-report " + edited_c4(d, "measure",
                                                                      [](json& r) {
                                                                        r["measures"][0]["verdict"] = "FAIL";
                                                                        r["verdict"] = "FAIL";
                                                                      })),
                 file + "measures[0]: verdict: is FAIL, but its interval 51.7448 [28.1080, 75.3815] gives PASS");
  expect_refused(run_normtool("reproduce --write-report " +
                              edited_c4(d, "null", [](json& r) { r["measures"][0]["interval"]["lo"] = nullptr; })),
                 file + "measures[0]: interval: ");
  expect_refused(run_normtool("reproduce --write-report " + edited_c4(d, "ran", [](json& r) { r["ran"] = false; })),
                 file + "verdict: is PASS, but a claim that failed to run (ran: false) is INCONCLUSIVE");
}

// A REPORT.md that is a link (even to a real report) is named as one: writing would go through it
TEST(ReportInput, ALinkedReportIsNamedAsALink) {
  TempDir d;
  ASSERT_EQ(run_normtool("reproduce E4 --out " + (d / "real")).exit_code, 0);
  fs::create_directories(d.path / "linked");
  fs::create_symlink(d.path / "real/REPORT.md", d.path / "linked/REPORT.md");
  expect_refused(run_normtool("reproduce E4 --out " + (d / "linked")), "its REPORT.md is a symbolic link");
}

// A figure's text with a newline stays in its row of the results table
TEST(ReportInput, ANewlineInAFigureDoesNotEndItsRow) {
  TempDir d;
  ASSERT_EQ(run_normtool("reproduce E4 --out " + (d / "r")).exit_code, 0);
  const std::string file = d / "r/E4-layernorm-standardizes/result.json";
  json result = read_json(file);
  result["measured"] = "one\ntwo | three";
  std::ofstream(file) << result.dump(2);
  ASSERT_EQ(run_normtool("reproduce --write-report " + (d / "r")).exit_code, 0);
  const std::string report = read_text(d / "r/REPORT.md");
  const std::size_t row = report.find("| [E4]");
  ASSERT_NE(row, std::string::npos) << report;
  const std::string line = report.substr(row, report.find('\n', row) - row);
  EXPECT_NE(line.find("one two \\| three"), std::string::npos) << line;
}

// A report directory whose other claim's result cannot be used is refused before E4 runs, not after
TEST(ReportInput, AnUnusableResultBesideTheClaimsIsFoundBeforeTheyRun) {
  TempDir d;
  const std::string dir = edited_c4(d, "r", [](json& r) { r["seeds"] = {1, 1, 1}; });
  const CommandResult r = run_normtool("reproduce E4 --out " + dir);
  expect_refused(r, "seeds: a seed given twice");
  EXPECT_FALSE(fs::exists(d.path / "r/E4-layernorm-standardizes"));
  // the claim that runs again may have a broken result: it is replaced
  ASSERT_EQ(run_normtool("reproduce E4 --out " + (d / "own")).exit_code, 0);
  std::ofstream(d.path / "own/E4-layernorm-standardizes/result.json") << "{";
  const CommandResult again = run_normtool("reproduce E4 --out " + (d / "own"));
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(read_json(d / "own/E4-layernorm-standardizes/result.json")["verdict"], "PASS");
}

}  // namespace
}  // namespace nt::test
