// Hostile input, third pass (issue 39): each root cause at its root.
//   - gnuplot gets data, never code: names with a newline and system("..."), or quotes, in a run
//     directory, a compare input or --out run nothing and break no plot;
//   - one writer: links planted in a run or output directory are replaced, never written through;
//     compare refuses an --out that is one of its runs;
//   - one reader: a FIFO or a device where a config or run file should be is refused at once;
//     a file whose keys have the wrong type is exit 2 naming the file and the key;
//   - a closed pipe or `ulimit -f` is a failed write, not a killed process.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "core/read_file.h"
#include "helpers.h"
#include "io/json_file.h"
#include "io/plot.h"

namespace nt::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kLayerNormSmoke = source_dir() + "/configs/smoke/lm-layernorm-pre.json";
const std::string kFourSteps =
    " --config " + kLayerNormSmoke +
    " --set train.steps=4 --set train.eval_every=2 --set train.log_every=1 --set train.stats_every=2";
// `timeout` around a command that must not hang: 124 when it did.
const std::string kTimeout = "timeout 60 ";

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// `script` with $A, $B, ... set to `values` in its environment: paths that may hold anything
// (quotes, newlines) reach the command as they are.
CommandResult run_with(const std::string& script, const std::vector<std::string>& values) {
  for (std::size_t i = 0; i < values.size(); ++i) setenv(std::string(1, char('A' + i)).c_str(), values[i].c_str(), 1);
  return run_shell(script);
}

// A run of the tiny config into `dir` (a path that may hold anything), its exit code.
int tiny_run(const std::string& dir) {
  return run_with(kTimeout + binary() + " run" + kFourSteps + " --out \"$A\"", {dir}).exit_code;
}

// A run of the tiny config in <d>/r with checkpoints, its summary then set to "interrupted" as a
// stopped run's is, so that `run --resume` continues it; "" when the run failed.
std::string stopped_run(const TempDir& d) {
  const std::string run = d / "r";
  if (run_normtool("run" + kFourSteps + " --set train.checkpoint_every=2 --out " + run).exit_code != 0) return "";
  json s = read_json(run + "/summary.json");
  s["status"] = "interrupted";
  write(run + "/summary.json", s.dump());
  return run;
}

TEST(HostileFiles, GnuplotStringsCarryNoCommand) {
  EXPECT_EQ(gnuplot_string("plain"), "'plain'");
  EXPECT_EQ(gnuplot_string("a'b"), "'a''b'");
  EXPECT_EQ(gnuplot_string("x\nsystem(\"touch y\")\r\x7f"),
            "'x?system(\"touch y\")?"
            "?'");
  EXPECT_EQ(gnuplot_string("`id` @m \\"), "'`id` @m \\'");  // not expanded inside single quotes
}

TEST(HostileFiles, ARunDirectoryNamedAsACommandRunsNothingAndDrawsEveryPlot) {
  TempDir d;
  fs::create_directories(d.path);
  const std::string canary = d / "pwned";
  // a newline, then a gnuplot command; and a quote, which broke every plot but loss.png
  for (const std::string& name : {"r'\nsystem(\"touch " + canary + "\")\n'", std::string("a'b")}) {
    const std::string dir = d / name;
    ASSERT_EQ(tiny_run(dir), 0) << name;
    for (const char* png : {"loss.png", "stats.png", "layers.png", "ranges.png"})
      EXPECT_TRUE(fs::is_regular_file(fs::path(dir) / png)) << name << ": " << png;
  }
  EXPECT_FALSE(fs::exists(canary)) << "gnuplot ran a command from a directory's name";
  EXPECT_FALSE(fs::exists(d / "ab")) << "--out a'b wrote into a sibling directory";
  // compare: the same names as its inputs' labels, and as its --out
  const CommandResult c = run_with(kTimeout + binary() + " compare \"$A\" \"$B\" --out \"$C\"",
                                   {d / "a'b", d / ("r'\nsystem(\"touch " + canary + "\")\n'"), d / "c'd"});
  EXPECT_EQ(c.exit_code, 0) << c.output;
  EXPECT_TRUE(fs::is_regular_file(d / "c'd/loss.png"));
  EXPECT_TRUE(fs::is_regular_file(d / "c'd/std.png"));
  EXPECT_FALSE(fs::exists(canary));
}

TEST(HostileFiles, ANameWithAControlCharacterOrANulIsRefused) {
  for (const char* name : {"a\\nb", "a\\u0000b", "a\\u001bb"}) {
    TempDir d;
    write(d.str() + ".json", std::string("{\"name\": \"") + name + "\"}");
    const CommandResult r = run_normtool("run --config " + d.str() + ".json --out " + (d / "r"));
    fs::remove(d.str() + ".json");
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.output;
    EXPECT_NE(r.output.find("name:"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(d / "r")) << name;
  }
}

TEST(HostileFiles, AResumeReplacesPlantedLinksAndWritesNothingThroughThem) {
  TempDir d;
  const std::string run = stopped_run(d);
  ASSERT_FALSE(run.empty());
  const std::string victim = d / "victim";
  write(victim, "precious\n");
  for (const char* name : {"stats.tsv", "stats.gp", "stats.png", "layers.tsv", "layers.png", "ranges.gp", "loss.png"}) {
    fs::remove(fs::path(run) / name);
    fs::create_symlink(victim, fs::path(run) / name);
  }
  const CommandResult r = run_normtool("run --resume " + run);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(victim), "precious\n") << "a write went through a planted link";
  for (const char* name : {"stats.tsv", "stats.gp", "stats.png", "layers.png", "loss.png"})
    EXPECT_FALSE(fs::is_symlink(fs::path(run) / name)) << name;
}

TEST(HostileFiles, CompareRefusesAnOutThatIsOneOfItsRunsAndReplacesPlantedLinks) {
  TempDir d;
  const std::string run = d / "r";
  ASSERT_EQ(tiny_run(run), 0);
  const std::string before = read_text(run + "/loss.png");
  for (const std::string& out : {run, run + "/sub", run + "/."}) {
    const CommandResult r = run_normtool("compare " + run + " --out " + out);
    EXPECT_EQ(r.exit_code, 2) << out << ": " << r.output;
    EXPECT_NE(r.output.find("--out"), std::string::npos) << r.output;
  }
  EXPECT_EQ(read_text(run + "/loss.png"), before);
  fs::create_symlink(run, d / "link");
  EXPECT_EQ(run_normtool("compare " + run + " --out " + (d / "link")).exit_code, 2);

  const std::string victim = d / "victim", out = d / "c";
  write(victim, "precious\n");
  fs::create_directories(out);
  for (const char* name : {"loss.tsv", "loss.gp", "loss.png", "loss.png.tmp", "compare.md", "std.tsv", "loss.log"})
    fs::create_symlink(victim, fs::path(out) / name);
  const CommandResult r = run_normtool("compare " + run + " --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(victim), "precious\n");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(fs::path(out) / "compare.md")));
}

TEST(HostileFiles, TheReaderRefusesAFifoADeviceAndAnOversizedFile) {
  TempDir d;
  fs::create_directories(d.path);
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0644), 0);
  for (const std::string& path : {d / "fifo", std::string("/dev/zero"), d.str()}) {
    try {
      read_file(path, 1 << 20);
      ADD_FAILURE() << path << " was read";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("expected a regular file"), std::string::npos) << e.what();
    }
  }
  write(d / "big", std::string(2000, 'x'));
  EXPECT_THROW(read_file(d / "big", 1000), InputError);
  EXPECT_EQ(read_file(d / "big", 2000).size(), 2000u);
  EXPECT_FALSE(read_file_if_present(d / "none", 10).has_value());
}

TEST(HostileFiles, AFifoOrADeviceWhereAFileShouldBeIsExit2NotAHang) {
  TempDir d;
  const std::string run = d / "r";
  ASSERT_EQ(run_normtool("run" + kFourSteps + " --set train.checkpoint_every=2 --out " + run).exit_code, 0);
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0644), 0);
  // --config
  for (const std::string& config : {d / "fifo", std::string("/dev/zero")}) {
    const CommandResult r = run_shell(kTimeout + binary() + " run --config " + config + " --out " + (d / "x"));
    EXPECT_EQ(r.exit_code, 2) << config << ": " << r.output;
    EXPECT_NE(r.output.find(config), std::string::npos) << r.output;
  }
  // a run's own files, on resume and as compare's input
  for (const char* name : {"config.json", "summary.json", "metrics.jsonl"}) {
    TempDir copy;
    fs::copy(run, copy.path, fs::copy_options::recursive);
    fs::remove(copy.path / name);
    ASSERT_EQ(::mkfifo((copy.path / name).c_str(), 0644), 0);
    for (const std::string& command : {"run --resume " + copy.str(), "compare " + copy.str() + " --out " + (d / "c")}) {
      const CommandResult r = run_shell(kTimeout + binary() + " " + command);
      if (std::string(name) == "metrics.jsonl" && command.rfind("run", 0) == 0) continue;  // completed: not read
      EXPECT_EQ(r.exit_code, 2) << command << " with a FIFO " << name << ": " << r.output;
      EXPECT_NE(r.output.find(name), std::string::npos) << r.output;
    }
  }
}

TEST(HostileFiles, MistypedRunFilesAreExit2NamingTheFileAndTheKey) {
  TempDir d;
  const std::string run = d / "r";
  ASSERT_EQ(tiny_run(run), 0);
  // metrics.jsonl: a step that is a string
  {
    TempDir copy;
    fs::copy(run, copy.path, fs::copy_options::recursive);
    std::ofstream(copy / "metrics.jsonl", std::ios::app) << "{\"step\": \"five\", \"split\": \"train\", \"loss\": 1}\n";
    const CommandResult r = run_normtool("compare " + copy.str() + " --out " + (d / "c"));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("metrics.jsonl:"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("step: is \"five\", expected an integer"), std::string::npos) << r.output;
  }
  // sweep.json: a config path that is a number, a grid value that is not a string
  const std::string sweep = d / "s";
  ASSERT_EQ(run_normtool("sweep" + kFourSteps + " seed=1,2 --out " + sweep).exit_code, 0);
  const json good = read_json(sweep + "/sweep.json");
  for (const auto& [pointer, value] :
       {std::pair{"/config", json(5)}, std::pair{"/grid/0/values/1", json(2)}, std::pair{"/jobs/0/index", json("zero")},
        std::pair{"/threads_per_job", json(1.5)}}) {
    json bad = good;
    bad[json::json_pointer(pointer)] = value;
    write(sweep + "/sweep.json", bad.dump());
    for (const char* command : {"sweep --status ", "sweep --aggregate "}) {
      const CommandResult r = run_normtool(command + sweep);
      EXPECT_EQ(r.exit_code, 2) << command << pointer << ": " << r.output;
      EXPECT_NE(r.output.find("sweep.json"), std::string::npos) << r.output;
      EXPECT_EQ(r.output.find("json.exception"), std::string::npos) << r.output;
    }
  }
}

TEST(HostileFiles, JsonDocNamesTheKeyAndTheExpectedType) {
  const JsonDoc d(json::parse(R"({"a": {"b": [1, "x"]}, "n": 3000000000, "s": "t", "z": null})"), "f.json");
  EXPECT_EQ(d.get<JsonDoc>("a").get<JsonDoc>("b").elements()[0].as<int>(), 1);
  EXPECT_EQ(d.get_or<std::string>("z", "fallback"), "fallback");
  EXPECT_EQ(d.get<int64_t>("n"), 3000000000);
  auto message = [&](auto f) {
    try {
      f();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { d.get<JsonDoc>("a").get<JsonDoc>("b").elements()[1].as<int>(); }),
            "f.json: a.b[1]: is \"x\", expected an integer");
  EXPECT_EQ(message([&] { d.get<int>("n"); }), "f.json: n: is 3000000000, expected an integer");
  EXPECT_EQ(message([&] { d.get<double>("missing"); }), "f.json: missing: missing");
  EXPECT_EQ(message([&] { d.get<bool>("s"); }), "f.json: s: is \"t\", expected true or false");
}

TEST(HostileFiles, AClosedPipeLetsTheRunFinishAndSaysSoInTheSummary) {
  TempDir d;
  // the console (stdout and stderr) into a pipe whose reader has gone after one byte
  const CommandResult r = run_shell("sh -c '" + binary() + " run" + kFourSteps + " --set train.steps=40 --out " +
                                    (d / "r") + " 2>&1; echo $? > " + (d / "code") + "' | head -c 1 >/dev/null");
  EXPECT_EQ(read_text(d / "code"), "0\n") << "exit 141 is SIGPIPE";
  const json s = read_json(d / "r/summary.json");
  EXPECT_EQ(s.value("status", ""), "completed");
  EXPECT_EQ(s.value("steps_completed", 0), 40);
  EXPECT_EQ(s.value("console_lost", false), true);
}

TEST(HostileFiles, ASweepIntoAClosedPipeKeepsItsAggregateAndStatuses) {
  TempDir d;
  run_shell("sh -c '" + binary() + " sweep" + kFourSteps + " seed=1,2 --out " + (d / "s") + " 2>&1; echo $? > " +
            (d / "code") + "' | head -c 1 >/dev/null");
  EXPECT_NE(read_text(d / "code"), "141\n");
  ASSERT_TRUE(fs::exists(d / "s/aggregate.md"));
  for (const json& j : read_json(d / "s/sweep.json")["jobs"]) EXPECT_EQ(j.value("status", ""), "completed") << j.dump();
}

TEST(HostileFiles, AFileSizeLimitStopsTheRunWithACleanError) {
  TempDir d;
  // 200 blocks of 512 bytes: the .reserve fits (64 KiB), the statistics of 400 steps do not
  const CommandResult r =
      run_shell("ulimit -f 200; " + binary() + " run" + kFourSteps +
                " --set train.steps=400 --set train.stats_every=10 --out " + (d / "r") + " 2>&1; echo \"exit=$?\"");
  EXPECT_NE(r.output.find("exit=1"), std::string::npos) << "exit 153 is SIGXFSZ: " << r.output;
  EXPECT_NE(r.output.find("File too large"), std::string::npos) << r.output;
  EXPECT_EQ(read_json(d / "r/summary.json").value("status", ""), "failed");
}

TEST(HostileFiles, ResumeWithPrintConfigPrintsAndDoesNotTrain) {
  TempDir d;
  const std::string run = stopped_run(d);
  ASSERT_FALSE(run.empty());
  const std::string metrics = read_text(run + "/metrics.jsonl");
  const CommandResult r = run_shell(binary() + " run --resume " + run + " --print-config 2>/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(json::parse(r.output)["name"], read_json(run + "/config.json")["name"]);
  EXPECT_EQ(read_text(run + "/metrics.jsonl"), metrics) << "it trained";
  EXPECT_EQ(read_json(run + "/summary.json").value("status", ""), "interrupted");
}

TEST(HostileFiles, InvarianceOnAFamilyItDoesNotMeasureIsExit2) {
  for (const char* config : {"encdec-deep12", "rnn-gru-tiny", "rnnsearch-tiny"}) {
    const CommandResult r = run_normtool("invariance --config " + source_dir() + "/configs/" + config + ".json");
    EXPECT_EQ(r.exit_code, 2) << config << ": " << r.output;  // was 1: "no parameter linear.weight"
    EXPECT_NE(r.output.find("model.arch = "), std::string::npos) << r.output;
  }
}

// OpenBLAS retried its 128 MiB buffers forever under `ulimit -v`, before main (core/openblas.h)
TEST(HostileFiles, AnAddressSpaceLimitNeitherHangsNorChangesWhatRuns) {
  TempDir d;
  const CommandResult r = run_shell("ulimit -v 300000; " + kTimeout + binary() + " run" + kFourSteps + " --out " +
                                    (d / "r") + " 2>&1; echo \"exit=$?\"");
  EXPECT_NE(r.output.find("exit=0"), std::string::npos) << "exit=124 is a hang: " << r.output;
  // the double-precision tables, whose products OpenBLAS would run, go to Eigen's kernels
  const CommandResult inv = run_shell("ulimit -v 300000; " + kTimeout + binary() +
                                      " invariance --transform rescale --norm layernorm 2>&1; echo \"exit=$?\"");
  EXPECT_NE(inv.output.find("exit=0"), std::string::npos) << inv.output;
  EXPECT_NE(inv.output.find("4 of 4 cells agree"), std::string::npos) << inv.output;
}

// ---- from a hostile review of the fixes above -------------------------------------------------

// A copy of a completed run, for tampering.
std::string copy_of(const std::string& run, const TempDir& d, const std::string& name) {
  fs::copy(run, d / name, fs::copy_options::recursive);
  return d / name;
}

TEST(HostileFiles, RunFilesNestedTooDeepAreExit2NotAStackOverflow) {
  TempDir d;
  const std::string run = d / "r";
  ASSERT_EQ(tiny_run(run), 0);
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  {
    const std::string bad = copy_of(run, d, "summary");
    write(bad + "/summary.json", "{\"status\": " + deep + "}");
    const CommandResult r = run_normtool("compare " + bad + " " + run + " --out " + (d / "c1"));
    EXPECT_EQ(r.exit_code, 2) << "139 is a stack overflow: " << r.output;
  }
  {
    const std::string bad = copy_of(run, d, "metrics");
    std::ofstream(bad + "/metrics.jsonl", std::ios::app) << "{\"step\": 1, \"loss\": " << deep << "}\n";
    const CommandResult r = run_normtool("compare " + bad + " --out " + (d / "c2"));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("nested deeper than"), std::string::npos) << r.output;
  }
  const std::string sweep = d / "s";
  ASSERT_EQ(run_normtool("sweep" + kFourSteps + " seed=1,2 --out " + sweep).exit_code, 0);
  write(sweep + "/sweep.json", "{\"config\": " + deep + "}");
  const CommandResult r = run_normtool("sweep --status " + sweep);
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST(HostileFiles, CompareWithAMistypedSummaryIsExit2NamingTheKey) {
  TempDir d;
  const std::string run = d / "r";
  ASSERT_EQ(tiny_run(run), 0);
  json s = read_json(run + "/summary.json");
  s["status"] = 5;
  write(run + "/summary.json", s.dump());
  const CommandResult r = run_normtool("compare " + run + " --out " + (d / "c"));
  EXPECT_EQ(r.exit_code, 2) << r.output;  // was 1: [json.exception.type_error.302]
  EXPECT_NE(r.output.find("summary.json: \"status\" is 5, expected a string"), std::string::npos) << r.output;
}

TEST(HostileFiles, NoFileIsWrittenThroughAHardLink) {
  TempDir d;
  const std::string run = stopped_run(d);
  ASSERT_FALSE(run.empty());
  // a hard-linked copy (cp -al) resumed: the original's logs must not grow
  const std::string metrics = read_text(run + "/metrics.jsonl");
  ASSERT_EQ(run_shell("cp -al " + run + " " + (d / "linked")).exit_code, 0);
  const CommandResult r = run_normtool("run --resume " + (d / "linked"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("hard link"), std::string::npos) << r.output;
  EXPECT_EQ(read_text(run + "/metrics.jsonl"), metrics);
  // a victim hard-linked in as the lock or the reserve
  for (const char* name : {".lock", ".reserve"}) {
    const std::string copy = copy_of(run, d, std::string("copy") + name), victim = d / (std::string("victim") + name);
    write(victim, "precious\n");
    fs::remove(fs::path(copy) / name);
    fs::create_hard_link(victim, fs::path(copy) / name);
    run_normtool("run --resume " + copy);
    EXPECT_EQ(read_text(victim), "precious\n") << name;
  }
}

TEST(HostileFiles, ARefusedResumeLeavesTheDirectoryAsItWas) {
  TempDir d;
  const std::string run = stopped_run(d);
  ASSERT_FALSE(run.empty());
  fs::remove(run + "/layers.jsonl");
  fs::create_symlink(run + "/metrics.jsonl", run + "/layers.jsonl");
  const CommandResult r = run_normtool("run --resume " + run);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(fs::exists(run + "/.reserve")) << "64 KiB left behind by the refusal";
}

TEST(HostileFiles, NoWriteGoesThroughALinkedSubdirectory) {
  TempDir d;
  fs::create_directories(d / "elsewhere");
  // a sweep's logs/
  const std::string sweep = d / "s";
  fs::create_directories(sweep);
  fs::create_directory_symlink(d / "elsewhere", sweep + "/logs");
  const CommandResult r = run_normtool("sweep" + kFourSteps + " seed=1,2 --out " + sweep);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("symbolic link"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_empty(d / "elsewhere"));
  // a sweep job's directory: the link is removed and the job runs inside the sweep
  const std::string sweep2 = d / "s2";
  ASSERT_EQ(run_normtool("sweep" + kFourSteps + " seed=1,2 --out " + sweep2).exit_code, 0);
  fs::rename(sweep2 + "/0", d / "elsewhere/0");
  fs::create_directory_symlink(d / "elsewhere/0", sweep2 + "/0");
  const std::string outside = read_text(d / "elsewhere/0/metrics.jsonl");
  const CommandResult again = run_normtool("sweep" + kFourSteps + " seed=1,2 --out " + sweep2);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_FALSE(fs::is_symlink(sweep2 + "/0"));
  EXPECT_TRUE(fs::is_regular_file(sweep2 + "/0/summary.json"));
  EXPECT_EQ(read_text(d / "elsewhere/0/metrics.jsonl"), outside);
  // ...and a file or a FIFO where a job's directory should be
  fs::remove_all(sweep2 + "/0");
  write(sweep2 + "/0", "not a directory");
  ASSERT_EQ(::mkfifo((sweep2 + "/1.tmp").c_str(), 0644), 0);
  fs::remove_all(sweep2 + "/1");
  fs::rename(sweep2 + "/1.tmp", sweep2 + "/1");
  const CommandResult third = run_normtool("sweep" + kFourSteps + " seed=1,2 --out " + sweep2);
  EXPECT_EQ(third.exit_code, 0) << third.output;
  EXPECT_TRUE(fs::is_regular_file(sweep2 + "/0/summary.json"));
  EXPECT_TRUE(fs::is_regular_file(sweep2 + "/1/summary.json"));
  // a report's claim directory
  fs::create_directories(d / "report");
  fs::create_directory_symlink(d / "elsewhere", d / "report/E4-layernorm-standardizes");
  const CommandResult rep = run_normtool("reproduce E4 --out " + (d / "report"));
  EXPECT_EQ(rep.exit_code, 2) << rep.output;
  EXPECT_FALSE(fs::exists(d / "elsewhere/result.json"));
}

TEST(HostileFiles, CompareDrawsEveryCurveWhenARunHasNoneAndRefusesAnotherRunsDirectory) {
  TempDir d;
  const std::string run = d / "r";
  ASSERT_EQ(tiny_run(run), 0);
  const std::string empty = copy_of(run, d, "empty");
  write(empty + "/metrics.jsonl", "");  // killed before its first log line
  const CommandResult r = run_normtool("compare " + empty + " " + run + " --out " + (d / "c"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("no plot"), std::string::npos) << r.output;  // gnuplot read the wrong block
  EXPECT_TRUE(fs::is_regular_file(d / "c/loss.png"));
  // into another run that is not an input: its loss.png would be drawn over
  const std::string other = copy_of(run, d, "other"), before = read_text(other + "/loss.png");
  const CommandResult o = run_normtool("compare " + empty + " --out " + other);
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_EQ(read_text(other + "/loss.png"), before);
  // again into its own earlier output: allowed
  EXPECT_EQ(run_normtool("compare " + run + " --out " + (d / "c")).exit_code, 0);
}

TEST(HostileFiles, ASparseCheckpointIsRefusedBeforeItIsRead) {
  TempDir d;
  const std::string run = stopped_run(d);
  ASSERT_FALSE(run.empty());
  fs::resize_file(run + "/checkpoint.bin", uintmax_t(4000) << 20);
  const CommandResult r = run_normtool("run --resume " + run);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("more than the"), std::string::npos) << r.output;
}

TEST(HostileFiles, ADataLimitDoesNotHangOpenBlas) {
  TempDir d;
  const CommandResult r =
      run_shell("ulimit -d 300000; NORMTOOL_GEMM=openblas " + kTimeout + binary() + " run" + kFourSteps +
                " --set train.threads=2 --out " + (d / "r") + " 2>&1; echo \"exit=$?\"");
  EXPECT_NE(r.output.find("exit=0"), std::string::npos) << "exit=124 is a hang: " << r.output;
}

}  // namespace
}  // namespace nt::test
