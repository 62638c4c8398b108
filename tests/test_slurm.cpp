// Sweeps as Slurm job arrays on a real Slurm (scripts/slurm-local.sh starts a one-node cluster;
// scripts/test.sh runs it before the tests). Where Slurm is not up, these tests fail and say
// why: they never pass without having submitted anything.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "helpers.h"

namespace nt::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

CommandResult sh(const std::string& command) { return run_shell(command); }

// Empty when a Slurm node is up: idle, busy, or completing the previous test's job; else why not.
std::string slurm_unavailable() {
  const CommandResult r = sh("sinfo --noheader --format='%T'");
  if (r.exit_code != 0) return "sinfo failed (" + r.output + "): start Slurm with scripts/slurm-local.sh";
  if (r.output.find("idle") == std::string::npos && r.output.find("mixed") == std::string::npos &&
      r.output.find("allocated") == std::string::npos && r.output.find("completing") == std::string::npos)
    return "no Slurm node is up (sinfo: " + r.output + "): start Slurm with scripts/slurm-local.sh";
  return "";
}

std::string job_id_of(const std::string& sweep) { return read_json(sweep + "/sweep.json").value("slurm_job_id", ""); }

// Polls `normtool sweep --status` until no job is pending or running, at most `limit`.
std::string wait_for_sweep(const std::string& sweep, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  std::string last;
  while (Clock::now() < deadline) {
    last = run_normtool("sweep --status " + sweep).output;
    if (last.find(" pending") == std::string::npos && last.find(" running") == std::string::npos) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  sh("scancel " + job_id_of(sweep));
  ADD_FAILURE() << "the Slurm array did not finish within " << limit.count() << " s:\n" << last;
  return last;
}

// aggregate.md without its steps/s column (a speed, not a result).
std::string without_speed(const std::string& path) {
  std::ifstream in(path);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, '|');) cells.push_back(c);
    for (std::size_t i = 0; i < cells.size(); ++i)
      if (i != cells.size() - 2) out += cells[i] + "|";
    out += "\n";
  }
  return out;
}

TEST(Slurm, AFourJobArrayMatchesALocalSweepOfTheSameGrid) {
  const std::string why = slurm_unavailable();
  ASSERT_TRUE(why.empty()) << why;
  TempDir d;
  const std::string grid =
      "--config " + source_dir() + "/configs/smoke/lm-layernorm-post.json model.norm.type=layernorm,rmsnorm seed=1,2 ";
  const CommandResult local = run_normtool("sweep " + grid + "--jobs 2 --out " + (d / "local"));
  ASSERT_EQ(local.exit_code, 0) << local.output;

  const auto t0 = Clock::now();
  const CommandResult submitted = run_normtool("sweep " + grid + "--launcher slurm --out " + (d / "slurm"));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  EXPECT_NE(submitted.output.find("4 of 4 jobs submitted as Slurm job array"), std::string::npos) << submitted.output;
  ASSERT_FALSE(job_id_of(d / "slurm").empty());
  const std::string status = wait_for_sweep(d / "slurm", std::chrono::seconds(400));
  EXPECT_NE(status.find("4 completed"), std::string::npos) << status;
  const CommandResult aggregate = run_normtool("sweep --aggregate " + (d / "slurm"));
  ASSERT_EQ(aggregate.exit_code, 0) << aggregate.output;
  std::cout << "the Slurm array took " << std::chrono::duration<double>(Clock::now() - t0).count() << " s\n";

  EXPECT_EQ(without_speed(d / "slurm/aggregate.md"), without_speed(d / "local/aggregate.md"));
  for (int i = 0; i < 4; ++i) {  // one thread each: the same numbers, bit for bit
    const json a = read_json(d / ("local/" + std::to_string(i) + "/summary.json")),
               b = read_json(d / ("slurm/" + std::to_string(i) + "/summary.json"));
    EXPECT_EQ(a["final_val_loss"], b["final_val_loss"]) << "job " << i;
    EXPECT_EQ(a["final_train_loss"], b["final_train_loss"]) << "job " << i;
  }
  // the array ran exactly the runs a local sweep runs: the same resolved configs
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(read_json(d / ("local/" + std::to_string(i) + "/config.json")),
              read_json(d / ("slurm/" + std::to_string(i) + "/config.json")));

  // submitted again, nothing is left to run
  const CommandResult again = run_normtool("sweep " + grid + "--launcher slurm --out " + (d / "slurm"));
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("nothing to submit"), std::string::npos) << again.output;
}

TEST(Slurm, ARequeuedTaskResumesFromItsCheckpointToTheSameResult) {
  const std::string why = slurm_unavailable();
  ASSERT_TRUE(why.empty()) << why;
  TempDir d;
  const std::string config = "--config " + source_dir() + "/configs/smoke/lm-batchnorm-padded.json ";
  const std::string fixed =
      "--set train.steps=2500 --set train.checkpoint_every=200 --set train.log_every=7 --set train.eval_every=50 "
      "--set train.stats_every=20 ";
  const auto t0 = Clock::now();
  const CommandResult submitted =
      run_normtool("sweep " + config + fixed + "seed=1 --launcher slurm --out " + (d / "sweep"));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  const std::string job = job_id_of(d / "sweep") + "_0";

  // requeue once the task has run past a checkpoint
  const auto deadline = Clock::now() + std::chrono::seconds(400);  // other tests may hold the node
  auto metrics_lines = [&] {
    std::ifstream in(d / "sweep/0/metrics.jsonl");
    int n = 0;
    for (std::string l; std::getline(in, l);) ++n;
    return n;
  };
  while (Clock::now() < deadline && !(fs::exists(d / "sweep/0/checkpoint.bin") && metrics_lines() > 60))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(fs::exists(d / "sweep/0/checkpoint.bin"))
      << "the task never checkpointed: " << sh("cat " + (d / "sweep/logs/0.log")).output;
  const CommandResult requeue = sh("scontrol requeue " + job);
  ASSERT_EQ(requeue.exit_code, 0) << requeue.output;

  const std::string status = wait_for_sweep(d / "sweep", std::chrono::seconds(400));
  EXPECT_NE(status.find("1 completed"), std::string::npos) << status;
  std::cout << "requeue to completion took " << std::chrono::duration<double>(Clock::now() - t0).count() << " s\n";
  const json s = read_json(d / "sweep/0/summary.json");
  EXPECT_EQ(s["status"], "completed");
  EXPECT_GE(s.value("resumes", 0), 1) << "the task started over instead of resuming";
  const std::string log = sh("cat " + (d / "sweep/logs/0.log")).output;
  EXPECT_NE(log.find("resuming at step"), std::string::npos) << log;

  // the same run without a stop
  const CommandResult reference =
      run_normtool("run " + config + fixed + "--set seed=1 --set train.threads=1 --out " + (d / "reference"));
  ASSERT_EQ(reference.exit_code, 0) << reference.output;
  auto lines = [](const std::string& path) {
    std::vector<json> v = read_jsonl(path);
    for (json& l : v) l.erase("step_ms"), l.erase("elapsed_s");
    return v;
  };
  EXPECT_EQ(lines(d / "sweep/0/metrics.jsonl"), lines(d / "reference/metrics.jsonl"));
  EXPECT_EQ(lines(d / "sweep/0/layers.jsonl"), lines(d / "reference/layers.jsonl"));
  EXPECT_TRUE(sh("cmp " + (d / "sweep/0/stats.csv") + " " + (d / "reference/stats.csv")).exit_code == 0);
  EXPECT_EQ(s["final_val_loss"], read_json(d / "reference/summary.json")["final_val_loss"]);
}

// reproduce --launcher slurm --ablations: C5's and C13's sweeps (the MLP at each batch size, whose checkpoints they
// evaluate; a sweep per seed, those at batch 4 shared) as job arrays, C7 (which trains in one process, its ablations
// with it) as the claims' array, E4 here; --collect assembles the report once Slurm has run them, with the ablations
// the submission asked for.
TEST(Slurm, AReproductionSubmittedToSlurmIsCollectedIntoAReport) {
  const std::string why = slurm_unavailable();
  ASSERT_TRUE(why.empty()) << why;
  TempDir d;
  const auto t0 = Clock::now();
  // C5 and C13 share the runs at batch 4: submitted once, each claim waits for them
  const CommandResult submitted =
      run_normtool("reproduce E4 C5 C7 C13 --quick --ablations --launcher slurm --out " + (d / "r"));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  EXPECT_NE(submitted.output.find("C5  PENDING       3 sweep(s) on Slurm"), std::string::npos) << submitted.output;
  EXPECT_NE(submitted.output.find("C13 PENDING       12 sweep(s) on Slurm"), std::string::npos) << submitted.output;
  EXPECT_NE(submitted.output.find("C7  SUBMITTED     task 0 of Slurm job"), std::string::npos) << submitted.output;
  std::set<std::string> jobs;
  const std::regex job(R"(\(Slurm job (\d+)\))");
  for (std::sregex_iterator m(submitted.output.begin(), submitted.output.end(), job), end; m != end; ++m)
    jobs.insert((*m)[1].str());
  EXPECT_EQ(jobs.size(), 12u) << submitted.output;
  CommandResult collected{75, ""};
  while (collected.exit_code == 75 && Clock::now() - t0 < std::chrono::seconds(600)) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    collected = run_normtool("reproduce --collect " + (d / "r"));
  }
  ASSERT_EQ(collected.exit_code, 0) << collected.output;
  std::cout << "submission to report took " << std::chrono::duration<double>(Clock::now() - t0).count() << " s\n";
  const json verdicts = read_json(d / "r/verdicts.json");
  for (const char* id : {"E4", "C5", "C7", "C13"})
    EXPECT_TRUE(verdicts.dump().find(std::string("\"") + id + "\"") != std::string::npos)
        << id << " missing: " << verdicts.dump();
  std::ifstream report(d / "r/REPORT.md");
  const std::string text((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("BN: gap at batch 2 minus gap at batch 32 (points)"), std::string::npos) << text;
  EXPECT_NE(text.find("LN: largest |gap| over the batch sizes (points)"), std::string::npos) << text;
  EXPECT_EQ(text.find("Ablations not run"), std::string::npos) << text;
  EXPECT_NE(text.find("ablation: decoder-only, 12 layers (Xavier)"), std::string::npos) << text;
  EXPECT_NE(text.find("BN: predictions that differ between train and eval mode"), std::string::npos) << text;
  EXPECT_EQ(text.find("failed to run"), std::string::npos) << text;
}

TEST(Slurm, PrintWritesTheScriptWithTheSiteOptionsWithoutSubmitting) {
  TempDir d;
  const CommandResult r =
      run_normtool("sweep --config " + source_dir() +
                   "/configs/smoke/lm-none-pre.json seed=1,2,3 --launcher print --partition gpu "
                   "--time 01:30:00 --cpus-per-task 4 --max-parallel 2 --signal-lead 300 --sbatch-arg=--account=ml "
                   "--sbatch-arg=--qos=low --out " +
                   (d / "s"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("not submitted"), std::string::npos) << r.output;
  std::ifstream in(d / "s/sweep.sbatch");
  const std::string script((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* line : {"#SBATCH --array=0,1,2%2\n", "#SBATCH --partition=gpu\n", "#SBATCH --time=01:30:00\n",
                           "#SBATCH --cpus-per-task=4\n", "#SBATCH --requeue\n", "#SBATCH --signal=B:TERM@300\n",
                           "#SBATCH --account=ml\n", "#SBATCH --qos=low\n", "run --resume \"$dir\""})
    EXPECT_NE(script.find(line), std::string::npos) << line << " not in:\n" << script;
  EXPECT_EQ(read_json(d / "s/sweep.json").value("slurm_job_id", "x"), "");
  // a bash syntax check of the generated script
  EXPECT_EQ(sh("bash -n " + (d / "s/sweep.sbatch")).exit_code, 0);
}

}  // namespace
}  // namespace nt::test
