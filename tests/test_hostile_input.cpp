// normtool attacked as a hostile but realistic user would: each case of the attack gets exit 2
// or the documented code, one line naming the key path or the file, and nothing half-written.
// The full-disk and read-only cases run in a user and mount namespace (`unshare -rm`) with a
// 200 KB tmpfs; where that cannot be set up, they fail saying so.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "helpers.h"

namespace nt::test {
namespace {

namespace fs = std::filesystem;

// The command's exit code is 2, its message holds `needle`, and `out` was not created.
void expect_refused(const CommandResult& r, const std::string& needle, const std::string& out = "") {
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(needle), std::string::npos) << "expected \"" << needle << "\" in: " << r.output;
  if (!out.empty()) {
    EXPECT_FALSE(fs::exists(out)) << out << " was created";
  }
}

CommandResult shell(const std::string& script) { return run_shell(script); }

// Runs `script` (sh) as root of a new user and mount namespace, where it may mount a tmpfs.
CommandResult in_namespace(const TempDir& d, const std::string& script) {
  const std::string file = d / "script.sh";
  std::ofstream(file) << "set -u\n" << script << "\n";
  return shell("unshare --user --map-root-user --mount sh " + file);
}

// The last line of a command's output, without its newline.
std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text.substr(text.rfind('\n') + 1);
}

// ---- 1. a value nested 100,000 deep crashed the error message --------------------------------

TEST(HostileInput, ValueNestedDeepIsRefusedNotACrash) {
  TempDir d;
  fs::create_directories(d.path);
  std::ofstream(d / "deep.json") << "{\"name\": " << std::string(100000, '[') << std::string(100000, ']') << "}";
  expect_refused(run_normtool("run --config " + (d / "deep.json") + " --out " + (d / "run")),
                 "nested deeper than 32 levels", d / "run");
  expect_refused(run_normtool("run --set 'name=" + std::string(5000, '[') + std::string(5000, ']') + "'"),
                 "nested deeper than 32 levels");
}

// ---- 2. library exceptions escaped as exit 1 naming no key -----------------------------------

TEST(HostileInput, NumberOutOfRangeNamesTheKey) {
  TempDir d;
  fs::create_directories(d.path);
  std::ofstream(d / "c.json") << R"({"train": {"lr": 1e999}})";
  expect_refused(run_normtool("run --config " + (d / "c.json")), "train.lr: the number 1e999 is out of range");
  expect_refused(run_normtool("run --set train.lr=-1e400"), "--set \"train.lr\": the number -1e400 is out of range");
}

TEST(HostileInput, InvalidUtf8IsRefusedBeforeTheRunDirectory) {
  TempDir d;
  // the shell is sh: printf writes the bytes
  expect_refused(run_normtool("run --set \"$(printf 'train.lr=\\200')\""),
                 "--set \"train.lr=\xEF\xBF\xBD\": not valid UTF-8");
  expect_refused(run_normtool("run " + kTinyModel + "--set \"$(printf 'name=bad\\377')\" --out " + (d / "run")),
                 "not valid UTF-8", d / "run");
  // an error quoting a file's bytes shows them as \xNN: no invalid byte and no escape sequence reaches
  // the terminal
  fs::create_directories(d.path);
  std::ofstream(d / "bytes.json") << "{\"model\": {\"norm\": {\"type\": \"rms\xff\x1b[2Jnorm\"}}}";
  const CommandResult r = run_normtool("run --config " + (d / "bytes.json"));
  expect_refused(r, "last read: '\"rms\\xff'");
  EXPECT_EQ(r.output.find('\xff'), std::string::npos) << r.output;
  const CommandResult word = run_normtool("\"$(printf 'x\\033[2J')\"");
  expect_refused(word, "unknown subcommand \"x\\x1b[2J\"");
  EXPECT_EQ(word.output.find('\x1b'), std::string::npos) << word.output;
  // an option CLI11 does not know, a C1 control (U+009B, a CSI) and a right-to-left override
  const CommandResult option = run_normtool("run \"$(printf -- '--x\\033[31mRED')\"");
  EXPECT_EQ(option.exit_code, 2) << option.output;
  EXPECT_EQ(option.output.find('\x1b'), std::string::npos) << option.output;
  EXPECT_NE(option.output.find("--x\\x1b[31mRED"), std::string::npos) << option.output;
  const CommandResult c1 = run_normtool("\"$(printf 'x\\302\\2332J\\342\\200\\256')\"");
  expect_refused(c1, "unknown subcommand \"x\\x9b2J\\u{202e}\"");
}

// A newline in a name cannot start a line of its own (a forged "error:"): the message is one line,
// and a config's problems one line each
TEST(HostileInput, ANewlineInANameDoesNotStartALine) {
  const CommandResult resume = run_normtool("run --resume \"$(printf 'ghost\\nerror: forged')\"");
  EXPECT_EQ(resume.exit_code, 2) << resume.output;
  EXPECT_EQ(resume.output, "error: --resume ghost\\x0aerror: forged: no such run directory\n");
  const CommandResult option = run_normtool("run \"$(printf -- '--x\\ny')\"");
  EXPECT_EQ(option.output,
            "The following argument was not expected: --x\\x0ay\nRun with --help for more information.\n");
  const CommandResult config = run_normtool("run --set \"$(printf 'train.lr=1\\terror')\" --set train.steps=0");
  EXPECT_EQ(config.output,
            "error: config is invalid (2 problems):\n"
            "  train.lr: expected a number >= 0, got \"1\\terror\" (--set)\n"
            "  train.steps: expected an integer >= 1 and <= 2147483647, got 0 (--set)\n");
  // the same list inside a sweep job's error keeps its lines
  const CommandResult job =
      run_normtool("sweep --dry-run --config " + smoke_config() + " train.lr=-1,0.1 --set train.steps=0");
  EXPECT_EQ(job.output.rfind("error: job #0 (train.lr=-1): config is invalid (2 problems):\n  train.steps: ", 0), 0u)
      << job.output;
}

// ---- 3. silent wrong values --------------------------------------------------------------------

TEST(HostileInput, IntegersBeyondIntAreRefusedNotWrapped) {
  expect_refused(run_normtool("run --set train.steps=3e9"),
                 "train.steps: expected an integer >= 1 and <= 2147483647, got 3000000000.0 (--set)");
  expect_refused(run_normtool("run --set train.warmup_steps=1e10"), "train.warmup_steps: expected an integer");
  expect_refused(run_normtool("run --set train.eval_batches=1e10"), "train.eval_batches: expected an integer");
}

// Options that would be silently dropped are errors: an empty --out (it fell back to runs/),
// --sources without the config it annotates, a preset's format without a preset
TEST(HostileInput, OptionsThatWouldBeIgnoredAreRefused) {
  expect_refused(run_normtool("run --out ''"), "--out: an empty directory name");
  expect_refused(run_normtool("run --sources"), "--sources requires --print-config");
  expect_refused(run_normtool("presets --json"), "presets: --json prints one preset: give its name");
}

TEST(HostileInput, DuplicateKeysAreRefused) {
  TempDir d;
  fs::create_directories(d.path);
  std::ofstream(d / "c.json") << "{\"train\": {\"lr\": 0.1,\n \"lr\": 0.2}}";
  expect_refused(run_normtool("run --config " + (d / "c.json")), "train.lr: the key appears twice");
  // a dotted key in a file would be a second way to set the nested key, the later silently winning
  std::ofstream(d / "dot.json") << R"({"model": {"norm": {"type": "layernorm"}}, "model.norm.type": "rmsnorm"})";
  expect_refused(run_normtool("run --config " + (d / "dot.json")),
                 "model.norm.type: a key with a '.' in it: objects nest ({\"model\": {...}})");
  std::ofstream(d / "dot2.json") << R"({"model": {"norm.type": "rmsnorm"}})";
  expect_refused(run_normtool("run --config " + (d / "dot2.json")), "model.norm.type: a key with a '.' in it");
  std::ofstream(d / "dot3.json") << R"({"model": {"nrom.type": "rmsnorm"}})";  // no such path: an unknown key
  expect_refused(run_normtool("run --config " + (d / "dot3.json")), "model.nrom.type: unknown key");
}

TEST(HostileInput, InvarianceRefusesDeltaAndSeedOutOfRange) {
  expect_refused(run_normtool("invariance --delta inf"), "--delta: Value inf not in range");
  expect_refused(run_normtool("invariance --delta 0"), "--delta: Value 0 not in range");
  expect_refused(run_normtool("invariance --seed -1"), "--seed: Value -1 not in range");
}

// ---- 4. a full disk destroyed the record -------------------------------------------------------

TEST(HostileInput, FullDiskStopsTheRunWithWholeFilesAndATruthfulSummary) {
  TempDir d;
  fs::create_directories(d.path);
  // a 200 KB disk, a run that logs statistics every 5 steps until it fills; the run directory is
  // copied out before the namespace (and its tmpfs) goes away
  const auto r =
      in_namespace(d, "mkdir -p " + (d / "disk") + " && mount -t tmpfs -o size=200k tmpfs " + (d / "disk") +
                          " || { echo 'cannot mount a tmpfs'; exit 99; }\n" + binary() +
                          " run --config configs/lm-tiny.json --set train.steps=400 --set train.stats_every=5 "
                          "--set train.threads=1 --out " +
                          (d / "disk/run") + "\necho \"exit=$?\"\ncp -r " + (d / "disk/run") + " " + (d / "copy"));
  ASSERT_NE(r.exit_code, 99) << "the test needs a tmpfs in a user namespace (unshare -rm): " << r.output;
  EXPECT_NE(r.output.find("exit=1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cannot write: No space left on device"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(d / "disk/run/"), std::string::npos) << "the message names the file: " << r.output;
  const auto s = read_json(d / "copy/summary.json");
  EXPECT_EQ(s["status"], "failed");
  EXPECT_GT(s["steps_completed"].get<int>(), 0);
  EXPECT_NE(s["error"].get<std::string>().find("No space left on device"), std::string::npos);
  for (const char* f : {"metrics.jsonl", "layers.jsonl"})
    EXPECT_NO_THROW(read_jsonl(d / ("copy/" + std::string(f)))) << f;
  const std::string stats = read_text(d / "copy/stats.csv");
  ASSERT_FALSE(stats.empty());
  EXPECT_EQ(stats.back(), '\n') << "stats.csv ends in a torn row";
  std::istringstream rows(stats);
  for (std::string row; std::getline(rows, row);) EXPECT_EQ(std::count(row.begin(), row.end(), ','), 5) << row;
  EXPECT_FALSE(fs::exists(d / "copy/summary.json.tmp"));
}

TEST(HostileInput, FullDiskLeavesASweepsPreviousAggregate) {
  TempDir d;
  fs::create_directories(d.path);
  // a sweep completes (each job with its final checkpoint), the disk is filled, the sweep runs
  // again with its results reused: writing aggregate.md fails, and the previous one stays whole
  const auto r = in_namespace(
      d, "mkdir -p " + (d / "disk") + " && mount -t tmpfs -o size=4m tmpfs " + (d / "disk") +
             " || { echo 'cannot mount a tmpfs'; exit 99; }\n" + binary() +
             " sweep --config configs/smoke/lm-none-pre.json seed=1,2 --out " + (d / "disk/sweep") +
             " >/dev/null 2>&1 || { echo 'first sweep failed'; exit 98; }\ncp " + (d / "disk/sweep/aggregate.md") +
             " " + (d / "before.md") + "\nhead -c 10000000 /dev/zero > " + (d / "disk/fill") + " 2>/dev/null\n" +
             binary() + " sweep --config configs/smoke/lm-none-pre.json seed=1,2 --out " + (d / "disk/sweep") +
             "\necho \"exit=$?\"\ncp " + (d / "disk/sweep/aggregate.md") + " " + (d / "after.md"));
  ASSERT_NE(r.exit_code, 99) << "the test needs a tmpfs in a user namespace (unshare -rm): " << r.output;
  ASSERT_NE(r.exit_code, 98) << r.output;
  EXPECT_NE(r.output.find("exit=1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cannot write: No space left on device"), std::string::npos) << r.output;
  EXPECT_FALSE(read_text(d / "before.md").empty());
  EXPECT_EQ(read_text(d / "after.md"), read_text(d / "before.md"));
}

// ---- 5. a killed run's summary lied ------------------------------------------------------------

TEST(HostileInput, KilledRunLeavesATruthfulRunningSummary) {
  TempDir d;
  const std::string out = d / "run";
  const auto r = run_normtool("run " + kTinyModel + "--set train.steps=1000000 --set train.log_every=5 --out " + out +
                              " >/dev/null & pid=$!; sleep 1.5; kill -KILL $pid; wait $pid");
  EXPECT_EQ(r.exit_code, 128 + 9) << r.output;
  const auto s = read_json(out + "/summary.json");
  EXPECT_EQ(s["status"], "running");
  int last_step = 0;
  for (const auto& line : read_jsonl(out + "/metrics.jsonl"))
    if (line["split"] == "train") last_step = line["step"];
  EXPECT_GT(last_step, 20);
  // written right after each logged step (it counts that step's update, or the one logged before)
  // and after each evaluation, which comes at the top of a logged step (eval_every 100, log_every 5):
  // killed between the evaluation and that step's line, it counts the 5 steps since the last line
  EXPECT_GE(s["steps_completed"].get<int>(), last_step - 5 + 1);
  EXPECT_LE(s["steps_completed"].get<int>(), last_step + 5);
  EXPECT_TRUE(s["final_train_loss"].is_number());
}

TEST(HostileInput, RunStoppedBeforeItsFirstStepReportsNoLoss) {
  TempDir d;
  const std::string out = d / "run";
  // the first evaluation takes seconds (every validation batch of a large split); SIGTERM lands in it
  const auto r = run_normtool("run " + kTinyModel +
                              "--set data.val_fraction=0.9 --set train.eval_batches=100000 "
                              "--set model.d_model=64 --set model.d_ff=256 --set data.seq_len=64 --out " +
                              out + " >/dev/null & pid=$!; while [ ! -s " + out +
                              "/summary.json ]; do sleep 0.05; done; "
                              "kill -TERM $pid; wait $pid");
  EXPECT_EQ(r.exit_code, 130) << r.output;
  const auto s = read_json(out + "/summary.json");
  EXPECT_EQ(s["status"], "interrupted");
  EXPECT_EQ(s["steps_completed"], 0);
  EXPECT_TRUE(s["final_train_loss"].is_null()) << s.dump();
}

// ---- 6. sweeps ------------------------------------------------------------------------------------

TEST(HostileInput, SweepWithAnotherGridIsRefusedUnlessForced) {
  TempDir d;
  const std::string sweep = "sweep --config configs/smoke/lm-none-pre.json --out " + d.str() + " ";
  ASSERT_EQ(run_normtool(sweep + "seed=1,2").exit_code, 0);
  expect_refused(run_normtool(sweep + "seed=3,4"), "holds a sweep of another grid");
  // forced: job 0 (seed 1) is reused, job 1 (seed 2 before, 3 now) runs again with its new config
  const auto r = run_normtool(sweep + "seed=1,3 --force");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("#0 : seed=1 -> completed (already)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("#1 : seed=3 -> completed\n"), std::string::npos) << r.output;
  EXPECT_EQ(read_json(d / "1/config.json")["seed"], 3);
  // a fixed override changes every job's config: none is reused
  const auto again = run_normtool(sweep + "seed=1,3 --force --set train.lr=0.002");
  EXPECT_EQ(again.output.find("(already)"), std::string::npos) << again.output;
}

TEST(HostileInput, SweepRerunsAJobThatDiedRunning) {
  TempDir d;
  const std::string sweep = "sweep --config configs/smoke/lm-none-pre.json --out " + d.str() + " seed=1";
  ASSERT_EQ(run_normtool(sweep).exit_code, 0);
  auto s = read_json(d / "0/summary.json");
  s["status"] = "running";  // what a job killed by SIGKILL leaves
  std::ofstream(d / "0/summary.json") << s.dump();
  const auto r = run_normtool(sweep);
  EXPECT_EQ(r.output.find("(already)"), std::string::npos) << r.output;
  EXPECT_EQ(read_json(d / "0/summary.json")["status"], "completed");
}

TEST(HostileInput, SecondSweepOnOneDirectoryIsRefusedAndJobsDieWithTheirSweep) {
  TempDir d;
  const std::string out = d / "sweep";
  const std::string sweep = "sweep --config configs/lm-tiny.json --set train.steps=100000 --out " + out + " seed=1,2";
  // both jobs started (each has written its summary) before the second sweep and the kill: a job
  // still loading its data when its sweep dies writes nothing, and a slow machine got there
  const auto r = run_normtool(sweep + " >/dev/null 2>&1 & pid=$!; while [ ! -s " + out + "/0/summary.json ] || " +
                              "[ ! -s " + out + "/1/summary.json ]; do sleep 0.05; done; " + binary() + " " + sweep +
                              " 2>&1; echo \"second=$?\"; kill -KILL $pid; wait $pid; "
                              // the jobs get SIGTERM and stop after their current step: wait for them (30 s at most)
                              "for i in $(seq 150); do pgrep -f -- '--out " +
                              out +
                              "/[0-9]' >/dev/null || break; sleep 0.2; done; "
                              "pgrep -f -- '--out " +
                              out + "/[0-9]' | wc -l");  // [0-9]: not this shell's own line
  EXPECT_NE(r.output.find("another normtool (pid"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("second=2"), std::string::npos) << r.output;
  EXPECT_EQ(last_line(r.output), "0") << "jobs outlived the sweep: " << r.output;
  for (const char* job : {"/0/summary.json", "/1/summary.json"})
    EXPECT_EQ(read_json(out + job)["status"], "interrupted");
}

TEST(HostileInput, HugeGridIsRefused) {
  std::string axes;
  for (const char* key : {"a", "b", "c", "d", "e", "f"}) {
    axes += std::string(" ") + key + "=";
    for (int i = 0; i < 30; ++i) {  // (not "," + std::to_string(i): GCC 12's false -Wrestrict on that operator+)
      if (i) axes += ',';
      axes += std::to_string(i);
    }
  }
  expect_refused(run_normtool("sweep" + axes),
                 "the grid has 30 x 30 x 30 x 30 x 30 x 30 = 729000000 jobs, more than 10000");
}

// ---- 7. exit codes of what cannot be used -------------------------------------------------------

TEST(HostileInput, UnusableOutIsExit2AndLeavesNothing) {
  TempDir d;
  fs::create_directories(d.path);
  std::ofstream(d / "file") << "x";
  expect_refused(run_normtool("run " + kTinyModel + "--out " + (d / "file/run")), "--out " + (d / "file/run"));
  expect_refused(run_normtool("run " + kTinyModel + "--out /proc/normtool-run"), "--out /proc/normtool-run");
  const auto r =
      in_namespace(d, "mkdir -p " + (d / "ro") + " && mount -t tmpfs -o ro tmpfs " + (d / "ro") +
                          " || { echo 'cannot mount a tmpfs'; exit 99; }\n" + binary() + " run " + kTinyModel +
                          "--out " + (d / "ro/run") + "\necho \"exit=$?\"; ls -A " + (d / "ro") + " | wc -l");
  ASSERT_NE(r.exit_code, 99) << r.output;
  EXPECT_NE(r.output.find("exit=2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Read-only file system"), std::string::npos) << r.output;
  EXPECT_EQ(last_line(r.output), "0") << "files left in the read-only directory: " << r.output;
}

// reproduce goes through the same output-directory check as run (issue 39 item 8)
TEST(HostileInput, UnusableReportOutIsExit2NamingIt) {
  TempDir d;
  fs::create_directories(d.path);
  std::ofstream(d / "file") << "x";
  fs::create_symlink("/nonexistent/normtool", d / "dangling");
  for (const std::string& out : {d / "file/report", d / "dangling", std::string("/proc/normtool-report")}) {
    expect_refused(run_normtool("reproduce E4 --out " + out), "--out " + out);
  }
  const auto r = in_namespace(d, "mkdir -p " + (d / "ro") + " && mount -t tmpfs -o ro tmpfs " + (d / "ro") +
                                     " || { echo 'cannot mount a tmpfs'; exit 99; }\n" + binary() + " reproduce E4 " +
                                     "--out " + (d / "ro/report") + "\necho \"exit=$?\"");
  ASSERT_NE(r.exit_code, 99) << r.output;
  EXPECT_NE(r.output.find("exit=2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Read-only file system"), std::string::npos) << r.output;
}

TEST(HostileInput, ValidationSplitSmallerThanABatchIsExit2BeforeTheRunDirectory) {
  TempDir d;
  expect_refused(run_normtool("run " + kTinyModel + "--set data.val_fraction=0.0001 --set train.batch_size=512 --out " +
                              (d / "run")),
                 "fewer than train.batch_size = 512", d / "run");
  // the whole corpus for validation leaves no training split (it quietly kept one document)
  expect_refused(run_normtool("run " + kTinyModel + "--set data.val_fraction=1 --out " + (d / "all")),
                 "data.val_fraction = 1 takes all", d / "all");
}

TEST(HostileInput, ConfigTooBigForMemoryIsRefusedWithTheFigures) {
  TempDir d;
  expect_refused(run_normtool("run --set train.batch_size=4096 --set data.seq_len=4096 --out " + (d / "run")),
                 "the config needs about", d / "run");
  expect_refused(
      run_normtool("run --set model.d_model=8192 --set model.n_layers=1000 --set model.n_heads=8 --out " + (d / "run")),
      "parameters and optimizer", d / "run");
}

TEST(HostileInput, ThreadsBeyondFourPerCoreAreCappedWithAWarning) {
  TempDir d;
  const auto r = run_normtool("run " + kTinyModel + "--set train.steps=3 --set train.threads=1024 --out " + d.str());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("warning: train.threads = 1024 is more than 4 per core"), std::string::npos) << r.output;
  EXPECT_LE(read_json(d / "summary.json")["threads"].get<int>(), 4 * int(std::thread::hardware_concurrency()));
}

TEST(HostileInput, MemoryEstimateIsWithinAFactorOfTwoOfThePeak) {
#ifdef NORMTOOL_SANITIZED
  GTEST_SKIP() << "AddressSanitizer's shadow memory and redzones make the resident size no measure of the estimate";
#endif
  for (const char* config : {"configs/lm-tiny.json", "configs/lm-small.json", "configs/mlp-fmnist.json"}) {
    TempDir d;
    const auto r = run_normtool(std::string("run --config ") + config +
                                " --set train.steps=2 --set train.threads=1 --out " + d.str());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto s = read_json(d / "summary.json");
    const double ratio = s["peak_rss_bytes"].get<double>() / s["memory_estimate_bytes"].get<double>();
    EXPECT_GT(ratio, 0.5) << config;
    EXPECT_LT(ratio, 2.0) << config;
  }
}

// ---- 8. smaller ---------------------------------------------------------------------------------

TEST(HostileInput, NameCannotEscapeTheRunsDirectory) {
  expect_refused(run_normtool("run --set name=../../x"), "name: expected letters, digits");
  expect_refused(run_normtool("run --set name=.hidden"), "name: must not start with '.'");
}

TEST(HostileInput, UnknownSubcommandIsNamed) {
  expect_refused(run_normtool("trian"),
                 "unknown subcommand \"trian\" (expected one of: run, invariance, sweep, reproduce");
}

TEST(HostileInput, ProblemsInsideAnOverriddenObjectAreBlamedOnTheOverride) {
  expect_refused(run_normtool("run --set 'train={\"lr\": \"x\"}'"),
                 "train.lr: expected a number >= 0, got \"x\" (--set)");
}

}  // namespace
}  // namespace nt::test
