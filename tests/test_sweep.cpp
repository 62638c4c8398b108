// Sweeps (grid order, resume, aggregate) and the exact claims' reproduction.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "claims/claim.h"
#include "core/errors.h"
#include "helpers.h"
#include "sweep/sweep.h"

namespace nt::test {
namespace {

TEST(Sweep, GridExpandsInAFixedOrderLastKeyFastest) {
  SweepSpec spec;
  spec.axes = {parse_axis("model.norm.type=layernorm,rmsnorm"), parse_axis("seed=1,2,3")};
  spec.out = "/tmp/x";
  const auto jobs = expand(spec);
  ASSERT_EQ(jobs.size(), 6u);
  EXPECT_EQ(jobs[0].label(), "model.norm.type=layernorm seed=1");
  EXPECT_EQ(jobs[2].label(), "model.norm.type=layernorm seed=3");
  EXPECT_EQ(jobs[3].label(), "model.norm.type=rmsnorm seed=1");
  EXPECT_EQ(jobs[5].group_label(), "model.norm.type=rmsnorm");
  EXPECT_EQ(jobs[4].dir, "/tmp/x/4");
  EXPECT_THROW(parse_axis("seed"), UsageError);
  EXPECT_THROW(parse_axis("seed=1,,2"), UsageError);
}

TEST(SweepCli, DryRunListsTheJobs) {
  const auto r = run_normtool("sweep --config " + source_dir() +
                              "/configs/smoke/mlp-none.json model.norm.type=none,layernorm seed=1,2 --dry-run");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output,
            "#0 : model.norm.type=none seed=1\n#1 : model.norm.type=none seed=2\n"
            "#2 : model.norm.type=layernorm seed=1\n#3 : model.norm.type=layernorm seed=2\n");
}

TEST(SweepCli, BadJobConfigExits2BeforeRunning) {
  TempDir d;
  const auto r = run_normtool("sweep model.norm.type=layernorm,lyernorm --out " + d.str());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("job #1 (model.norm.type=lyernorm)"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(d.path));
}

TEST(SweepCli, RunsResumesAndAggregates) {
  TempDir d;
  const std::string cmd = "sweep --config " + source_dir() +
                          "/configs/smoke/mlp-none.json model.norm.type=none,batchnorm seed=1,2 --jobs 2 --out " +
                          d.str();
  const auto r = run_normtool(cmd);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto sweep = read_json(d / "sweep.json");
  ASSERT_EQ(sweep["jobs"].size(), 4u);
  for (const auto& j : sweep["jobs"]) EXPECT_EQ(j["status"], "completed");
  EXPECT_EQ(sweep["jobs"][3]["overrides"]["model.norm.type"], "batchnorm");
  // the job's run directory says so too
  EXPECT_EQ(read_json(d / "3/config.json")["model"]["norm"]["type"], "batchnorm");
  EXPECT_EQ(read_json(d / "3/config.json")["seed"], 2);
  EXPECT_NE(r.output.find("| model.norm.type=batchnorm | 2/2 |"), std::string::npos) << r.output;

  // a job interrupted half-way is run again; completed ones are kept
  const auto kept = std::filesystem::last_write_time(d / "0/summary.json");
  std::filesystem::remove(d / "2/summary.json");
  const auto again = run_normtool(cmd);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("#0 : model.norm.type=none seed=1 -> completed (already)"), std::string::npos);
  EXPECT_NE(again.output.find("#2 : model.norm.type=batchnorm seed=1 -> completed\n"), std::string::npos)
      << again.output;
  EXPECT_EQ(std::filesystem::last_write_time(d / "0/summary.json"), kept);
}

TEST(SweepCli, AnInterruptedJobResumesFromItsCheckpoint) {
  TempDir d;
  const std::string cmd = "sweep --config " + source_dir() +
                          "/configs/smoke/lm-layernorm-pre.json seed=1 --set train.steps=4000 --out " + d.str();
  // SIGTERM to the sweep reaches the job, which checkpoints where it stands
  const auto stopped = run_normtool(cmd + " >/dev/null 2>&1 & pid=$!; while [ $(cat " + (d / "0/metrics.jsonl") +
                                    " 2>/dev/null | wc -l) -lt 20 ]; do sleep 0.02; done; kill -TERM $pid; wait $pid");
  EXPECT_EQ(stopped.exit_code, 130) << stopped.output;
  const auto before = read_json(d / "0/summary.json");
  ASSERT_EQ(before["status"], "interrupted");
  ASSERT_TRUE(std::filesystem::exists(d / "0/checkpoint.bin"));
  const auto again = run_normtool(cmd);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  const auto after = read_json(d / "0/summary.json");
  EXPECT_EQ(after["status"], "completed");
  EXPECT_EQ(after["resumes"], 1);
  std::ifstream log(d / "logs/0.log");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("resuming at step " + std::to_string(before["steps_completed"].get<int>())), std::string::npos)
      << text;
}

TEST(Sweep, SweepsShareOnePoolTheMostWorkFirst) {
  TempDir d;
  auto spec = [&](const char* name, int steps, const char* seeds) {
    SweepSpec s;
    s.config = source_dir() + "/configs/smoke/mlp-none.json";
    s.fixed = {"train.steps=" + std::to_string(steps)};
    s.axes = {parse_axis(std::string("seed=") + seeds)};
    s.out = d / name;
    return s;
  };
  auto finished = [&](const std::string& job) { return std::filesystem::last_write_time(d / (job + "/summary.json")); };
  // one process: the 2000-step job of the second sweep runs first, then the first sweep's in grid order
  const auto one = run_sweeps({spec("short", 50, "1,2"), spec("long", 2000, "1")}, 1, binary(), true);
  ASSERT_EQ(one.size(), 2u);
  ASSERT_EQ(one[0].size(), 2u);
  ASSERT_EQ(one[1].size(), 1u);
  for (const auto& sweep : one)
    for (const SweepJob& j : sweep) EXPECT_EQ(j.status, "completed") << j.dir;
  EXPECT_LT(finished("long/0"), finished("short/0"));
  EXPECT_LT(finished("short/0"), finished("short/1"));
  EXPECT_EQ(read_json(d / "long/sweep.json")["jobs"][0]["status"], "completed");
  EXPECT_EQ(read_json(d / "short/sweep.json")["jobs"].size(), 2u);
  // two processes: the second sweep's job starts while the first's runs (it would wait for it
  // if each sweep ran its own pool)
  const auto two = run_sweeps({spec("a", 20000, "1"), spec("b", 20000, "1")}, 2, binary(), true);
  EXPECT_EQ(two[0][0].status, "completed");
  EXPECT_EQ(two[1][0].status, "completed");
  EXPECT_LT(std::filesystem::last_write_time(d / "b/0/config.json"), finished("a/0"));
  EXPECT_LT(std::filesystem::last_write_time(d / "a/0/config.json"), finished("b/0"));
}

TEST(Reproduce, EveryExactClaimPasses) {
  for (const Claim& c : all_claims()) {
    if (!c.exact) continue;
    TempDir d;
    const ClaimResult r = c.run(ClaimContext{d.str(), binary(), true, 2, {}});
    EXPECT_EQ(r.verdict, ClaimVerdict::pass) << c.id << ": " << r.measured;
    EXPECT_FALSE(r.measured.empty());
  }
}

TEST(ReproduceCli, WritesTheReport) {
  TempDir d;
  const auto r = run_normtool("reproduce E1 E4 --quick --out " + d.str());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto v = read_json(d / "verdicts.json");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0]["id"], "E1");
  EXPECT_EQ(v[1]["verdict"], "PASS");
  std::ifstream md(d / "REPORT.md");
  std::stringstream text;
  text << md.rdbuf();
  EXPECT_NE(text.str().find("| [E1](#E1-invariance-table)"), std::string::npos);
  EXPECT_EQ(run_normtool("reproduce X9").exit_code, 2);
}

}  // namespace
}  // namespace nt::test
