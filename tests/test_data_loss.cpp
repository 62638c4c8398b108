// Hostile input, second pass (issue 21), part two: lost data and silent wrong results. Every
// case here is deterministic: a "stopped" run is a completed one whose summary says otherwise,
// a concurrent normtool is this test holding the directory's lock, a forged checkpoint has its
// CRC recomputed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "helpers.h"

namespace nt::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

void spit(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// A finished tiny run whose summary.json is made to say it was interrupted: --resume reads its
// checkpoint (taken at the end) as that of a stopped run.
std::string stopped_run(const TempDir& d, const std::string& extra = "") {
  fs::create_directories(d.path);
  const std::string out = d / "r";
  const CommandResult r = run_normtool("run" + four_step_run() + extra + " --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  json s = read_json(out + "/summary.json");
  s["status"] = "interrupted";
  spit(out + "/summary.json", s.dump(2));
  return out;
}

// The checkpoint with `edit` applied to its bytes and its CRC recomputed; `at` is where the
// session's state starts (the step count, then the first loss, then the four stream words).
template <class Edit>
void forge_checkpoint(const std::string& dir, Edit edit) {
  std::string bytes = read_text(dir + "/checkpoint.bin");
  uint64_t text_len = 0;
  std::memcpy(&text_len, bytes.data() + 8 + 4 + 8, 8);
  const std::size_t at = 8 + 4 + 8 + 8 + text_len + 8;  // magic, version, hash, config text, data fingerprint
  edit(bytes, at);
  const uint32_t crc =
      uint32_t(crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(bytes.data()), uInt(bytes.size() - 4)));
  std::memcpy(bytes.data() + bytes.size() - 4, &crc, 4);
  spit(dir + "/checkpoint.bin", bytes);
}

// This process holds <dir>/.lock as a running normtool would.
struct HeldLock {
  int fd;
  explicit HeldLock(const std::string& dir) : fd(::open((dir + "/.lock").c_str(), O_RDWR | O_CREAT, 0644)) {
    EXPECT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
  }
  ~HeldLock() { ::close(fd); }
};

TEST(DataLoss, ASecondNormtoolInARunDirectoryIsRefused) {
  TempDir d;
  const std::string out = stopped_run(d);
  const std::string metrics = read_text(out + "/metrics.jsonl");
  {
    HeldLock held(out);
    const CommandResult r = run_normtool("run --resume " + out);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--resume " + out + ": another normtool"), std::string::npos) << r.output;
    EXPECT_EQ(read_text(out + "/metrics.jsonl"), metrics);
  }
  EXPECT_EQ(run_normtool("run --resume " + out).exit_code, 0) << "the lock is the only obstacle";
}

TEST(DataLoss, ASweepDoesNotDeleteAJobInWhichANormtoolWorks) {
  TempDir d;
  fs::create_directories(d.path);
  const std::string sweep = d / "s";
  ASSERT_EQ(run_normtool("sweep" + four_step_run() + " seed=1,2 --out " + sweep).exit_code, 0);
  json s = read_json(sweep + "/1/summary.json");
  s["status"] = "running";  // a job that died: a rerun starts it afresh, removing its directory
  spit(sweep + "/1/summary.json", s.dump());
  HeldLock held(sweep + "/1");  // ... unless a normtool works there
  const CommandResult r = run_normtool("sweep" + four_step_run() + " seed=1,2 --out " + sweep);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("job #1"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(sweep + "/1/checkpoint.bin"));
}

TEST(DataLoss, ResumeDoesNotWriteThroughPlantedSymlinks) {
  for (const char* name : {"metrics.jsonl", ".reserve", "summary.json.tmp", "checkpoint.bin.tmp", "loss.tsv"}) {
    TempDir d;
    const std::string out = stopped_run(d);
    const std::string victim = d / "victim";
    spit(victim, "precious\n");
    if (std::string(name) == "metrics.jsonl") {  // a link with the log's own content: resume would cut and append
      spit(victim, read_text(out + "/" + name));
    }
    const std::string before = read_text(victim);
    fs::remove(out + "/" + name);
    fs::create_symlink(victim, out + "/" + name);
    forge_checkpoint(out, [](std::string& b, std::size_t at) {  // back to step 2, so that steps run and write
      const int32_t step = 2;
      std::memcpy(b.data() + at, &step, 4);
    });
    const CommandResult r = run_normtool("run --resume " + out);
    EXPECT_EQ(read_text(victim), before) << name << " was written through: " << r.output;
  }
}

TEST(DataLoss, ACheckpointWithAStepBeyondTheRunOrAZeroStreamIsRefused) {
  TempDir d;
  const std::string out = stopped_run(d);
  const std::string good = read_text(out + "/checkpoint.bin");
  for (const int32_t step : {5, -1, 1 << 30}) {
    forge_checkpoint(out, [&](std::string& b, std::size_t at) { std::memcpy(b.data() + at, &step, 4); });
    const CommandResult r = run_normtool("run --resume " + out);
    EXPECT_EQ(r.exit_code, 2) << step << ": " << r.output;
    EXPECT_NE(r.output.find("outside 0..train.steps = 4"), std::string::npos) << r.output;
  }
  spit(out + "/checkpoint.bin", good);
  forge_checkpoint(out, [](std::string& b, std::size_t at) {
    const int32_t step = 3;  // one step to run: with a zero stream it would never draw its batch
    std::memcpy(b.data() + at, &step, 4);
    std::memset(b.data() + at + 4 + 8, 0, 32);
  });
  const CommandResult r = run_normtool("run --resume " + out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("all zeros"), std::string::npos) << r.output;
}

TEST(DataLoss, ACheckpointWhoseLogSizesAreNotLineEndsIsRefused) {
  TempDir d;
  const std::string out = stopped_run(d);
  // what a donor's checkpoint does: the recorded size falls inside a line of this directory's log
  const std::string metrics = read_text(out + "/metrics.jsonl");
  spit(out + "/metrics.jsonl", "{}" + metrics);
  const CommandResult r = run_normtool("run --resume " + out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("metrics.jsonl: the checkpoint records"), std::string::npos) << r.output;
  EXPECT_EQ(read_text(out + "/metrics.jsonl"), "{}" + metrics) << "nothing cut";
  // a log replaced by a directory is named as such (it read "holds 0 bytes")
  spit(out + "/metrics.jsonl", metrics);
  fs::remove(out + "/layers.jsonl");
  fs::create_directory(out + "/layers.jsonl");
  const CommandResult dir = run_normtool("run --resume " + out);
  EXPECT_NE(dir.output.find("layers.jsonl: not a regular file"), std::string::npos) << dir.output;
}

TEST(DataLoss, ResumeOnChangedDataIsRefusedNamingIt) {
  TempDir d;
  fs::create_directories(d.path / "corpus");
  for (int f = 0; f < 3; ++f) {
    std::string text;
    for (int doc = 0; doc < 60; ++doc)
      text += "fortune " + std::to_string(f) + "." + std::to_string(doc) + ": the quick brown fox jumps over it\n%\n";
    spit(d / ("corpus/f" + std::to_string(f)), text);
  }
  const std::string out = stopped_run(d, " --set data.dataset=fortunes --set data.path=" + (d / "corpus"));
  fs::remove(d / "corpus/f1");
  const CommandResult r = run_normtool("run --resume " + out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("written for other data: the dataset fortunes at " + (d / "corpus")), std::string::npos)
      << r.output;
}

TEST(DataLoss, AKilledSweepKeepsItsGridRecordAndARerunOfAnotherGridIsRefused) {
  TempDir d;
  fs::create_directories(d.path);
  const std::string sweep = d / "s";
  ASSERT_EQ(run_normtool("sweep" + four_step_run() + " seed=1,2 --out " + sweep).exit_code, 0);
  // what SIGKILL in the middle leaves: jobs stopped running, and (before the fix) no sweep.json
  for (int i = 0; i < 2; ++i) {
    json s = read_json(sweep + "/" + std::to_string(i) + "/summary.json");
    s["status"] = "running";
    spit(sweep + "/" + std::to_string(i) + "/summary.json", s.dump());
  }
  // the sweep.json written before the first job started
  const json record = read_json(sweep + "/sweep.json");
  EXPECT_EQ(record["grid"][0]["key"], "seed");
  CommandResult r = run_normtool("sweep --status " + sweep);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2 stopped"), std::string::npos) << r.output;
  fs::remove(sweep + "/sweep.json");  // and one killed before it: its jobs are not another grid's to delete
  r = run_normtool("sweep" + four_step_run() + " seed=3,4 --out " + sweep);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no readable sweep.json"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(sweep + "/0/checkpoint.bin"));
}

TEST(DataLoss, ASweepKilledWhileItsFirstJobRunsHasItsGridRecord) {
  TempDir d;
  fs::create_directories(d.path);
  const std::string sweep = d / "s";
  const std::string cmd =
      binary() + " sweep --config " + smoke_config() + " --set train.steps=100000 seed=1 --out " + sweep;
  // the sweep in the background; once its job has written a metric line, SIGKILL (the job dies with it)
  const CommandResult r = run_shell(cmd + " >/dev/null 2>&1 & pid=$!; for i in $(seq 600); do [ -s " + sweep +
                                    "/0/metrics.jsonl ] && break; "
                                    "sleep 0.1; done; kill -9 $pid; wait $pid; echo killed");
  ASSERT_NE(r.output.find("killed"), std::string::npos) << r.output;
  ASSERT_TRUE(fs::exists(sweep + "/0/metrics.jsonl")) << "the job never started";
  const json record = read_json(sweep + "/sweep.json");
  EXPECT_EQ(record["grid"][0]["key"], "seed");
  const CommandResult status = run_normtool("sweep --status " + sweep);
  EXPECT_EQ(status.exit_code, 0) << status.output;
}

TEST(DataLoss, DuplicateSeedsAndGridKeysAreRefused) {
  CommandResult r = run_normtool("reproduce E4 --seeds 1,1,1 --out /nonexistent-never-written");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("seed 1 is given twice"), std::string::npos) << r.output;
  r = run_normtool("reproduce E4 --seeds '' --out /nonexistent-never-written");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--seeds \"\": an empty seed"), std::string::npos) << r.output;
  r = run_normtool("reproduce E4 --seeds 1,2,2000001 --out /nonexistent-never-written");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("expected integers from 0 to 2000000 or ranges a-b with a <= b, got \"2000001\""),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("sweep axis"), std::string::npos) << r.output;
  r = run_normtool("sweep --dry-run" + four_step_run() + " seed=1,2 seed=3,4");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("sweep axis seed: the key is given twice"), std::string::npos) << r.output;
  r = run_normtool("sweep --dry-run" + four_step_run() + " seed=1,2,1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("the value 1 is given twice"), std::string::npos) << r.output;
  // the same value spelled two ways resolves to one config: two labels for one run
  r = run_normtool("sweep --dry-run" + four_step_run() + " seed=1,2,1.0");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("the jobs seed=1 and seed=1.0 resolve to the same config"), std::string::npos) << r.output;
  r = run_normtool("sweep --dry-run" + four_step_run() + " 'model.norm.type=layernorm,\"layernorm\"'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("resolve to the same config"), std::string::npos) << r.output;
  // --set on an axis's key would lose to the axis in every job; an empty last value is no value
  r = run_normtool("sweep --dry-run" + four_step_run() + " seed=1,2 --set seed=3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--set seed=3: the grid's axis seed sets seed in every job"), std::string::npos) << r.output;
  r = run_normtool("sweep --dry-run" + four_step_run() +
                   " model.norm.type=layernorm,rmsnorm --set 'model.norm={\"eps\":1e-6}'");
  EXPECT_EQ(r.exit_code, 2) << r.output;  // an object holding the axis's key loses to it just the same
  EXPECT_NE(r.output.find("the grid's axis model.norm.type sets model.norm.type in every job"), std::string::npos)
      << r.output;
  // the axes are a layer after --set: p is read by the prmsnorm job, superseded in the layernorm one
  r = run_normtool("sweep --dry-run" + four_step_run() + " model.norm.type=layernorm,prmsnorm --set model.norm.p=0.25");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_normtool("sweep --dry-run" + four_step_run() + " train.optimizer=sgd,adam train.momentum=0.5,0.8");
  EXPECT_EQ(r.exit_code, 2) << r.output;  // momentum beside adam in the same layer says nothing
  EXPECT_NE(r.output.find("train.momentum: read only with train.optimizer sgd"), std::string::npos) << r.output;
  r = run_normtool("sweep --dry-run" + four_step_run() + " seed=1,");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("an empty value after the last comma"), std::string::npos) << r.output;
  r = run_normtool("sweep --aggregate /nonexistent seed=1,2");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--aggregate reads a sweep that ran; a grid (seed=1,2) starts one"), std::string::npos)
      << r.output;
}

TEST(DataLoss, APaddedCorpusWithoutATargetIsRefused) {
  TempDir d;
  fs::create_directories(d.path / "corpus");
  spit(d / "corpus/f", "a\n%\nb\n%\nc\n%\nd\n");  // documents of one byte: no next byte to predict
  const CommandResult r = run_normtool("run" + four_step_run() +
                                       " --set data.dataset=fortunes --set data.layout=padded "
                                       "--set data.path=" +
                                       (d / "corpus") + " --out " + (d / "r"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("fortunes at " + (d / "corpus") + ": 0 of the 3 training documents"), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(d / "r"));
}

TEST(DataLoss, NonRegularOrOversizedDataFilesAreRefusedNamingThem) {
  TempDir d;
  fs::create_directories(d.path / "fm");
  const std::string fifo = d / "fm/train-images-idx3-ubyte.gz";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  CommandResult r = run_normtool("run" + four_step_run() +
                                 " --set data.dataset=fashion-mnist --set model.arch=mlp "
                                 "--set data.path=" +
                                 (d / "fm") + " --out " + (d / "r"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(fifo + ": not a regular file"), std::string::npos) << r.output;
  // a header that promises more than the format allows is refused before its data is read
  fs::remove(fifo);
  std::string header = {0, 0, 8, 3, char(0xff), char(0xff), char(0xff), char(0xff), 0, 0, 0, 28, 0, 0, 0, 28};
  gzFile f = gzopen(fifo.c_str(), "wb");
  gzwrite(f, header.data(), unsigned(header.size()));
  gzclose(f);
  r = run_normtool("run" + four_step_run() + " --set data.dataset=fashion-mnist --set model.arch=mlp --set data.path=" +
                   (d / "fm") + " --out " + (d / "r"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(fifo + ": its header promises more than"), std::string::npos) << r.output;
}

TEST(DataLoss, ResumeWithAnEmptyNameIsRefused) {
  TempDir d;
  fs::create_directories(d.path);
  const CommandResult r = run_shell("cd " + d.str() + " && " + binary() + " run --resume ''");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(fs::exists(d / "runs")) << "a new default run was started";
}

TEST(DataLoss, AQuoteInTheRunDirectoryKeepsThePlot) {
  if (run_shell("command -v gnuplot").exit_code != 0) GTEST_SKIP() << "gnuplot is not installed";
  TempDir d;
  fs::create_directories(d.path);
  const std::string out = d / "it's a run";
  const CommandResult r = run_normtool("run" + four_step_run() + " --out \"" + out + "\"");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(out + "/loss.png")) << r.output;
}

TEST(DataLoss, ReproduceOutIsCheckedLikeRunOut) {
  TempDir d;
  fs::create_directories(d.path);
  spit(d / "file", "x");
  CommandResult r = run_normtool("reproduce E4 --out " + (d / "file"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("exists and is not a directory"), std::string::npos) << r.output;
  fs::create_directories(d.path / "notes");
  spit(d / "notes/REPORT.md", "# my own report\n");
  r = run_normtool("reproduce E4 --out " + (d / "notes"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(read_text(d / "notes/REPORT.md"), "# my own report\n");
}

// After an interrupted reproduction (or a new version's texts) the report of the claims that
// ended, from their result.json, running nothing: the same report the reproduction wrote.
TEST(DataLoss, WriteReportRebuildsTheReportFromTheResults) {
  TempDir d;
  ASSERT_EQ(run_normtool("reproduce E4 E5 --out " + (d / "r")).exit_code, 0);
  const std::string report = read_text(d / "r/REPORT.md"), verdicts = read_text(d / "r/verdicts.json");
  fs::remove(d.path / "r/REPORT.md");
  spit(d / "r/verdicts.json", "stale");
  const CommandResult r = run_normtool("reproduce --write-report " + (d / "r"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  CommandResult refused = r;
  EXPECT_NE(r.output.find("(2 claims, none run)"), std::string::npos) << r.output;
  EXPECT_EQ(read_text(d / "r/REPORT.md"), report);
  EXPECT_EQ(read_text(d / "r/verdicts.json"), verdicts);
  EXPECT_TRUE(fs::exists(d.path / "r/REPORT.html"));

  refused = run_normtool("reproduce E4 --write-report " + (d / "r"));  // a report of some claims is not this
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  fs::create_directories(d.path / "empty");
  refused = run_normtool("reproduce --write-report " + (d / "empty"));
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("--write-report " + (d / "empty") + ": no claim's result.json"), std::string::npos)
      << refused.output;
  spit(d / "r/REPORT.md", "# my own report\n");
  refused = run_normtool("reproduce --write-report " + (d / "r"));
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_EQ(read_text(d / "r/REPORT.md"), "# my own report\n");
}

TEST(DataLoss, ResumeIntoADirectoryThatCannotBeWrittenIsExit2) {
  TempDir d;
  const std::string out = stopped_run(d);
  fs::remove(out + "/.reserve");
  fs::create_directories(out + "/.reserve");  // what a read-only mount does to the first write (also as root)
  const CommandResult r = run_normtool("run --resume " + out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--resume " + out + ": cannot write the run directory"), std::string::npos) << r.output;
}

TEST(DataLoss, AHandEditedSummaryIsNamedWithItsKey) {
  TempDir d;
  const std::string out = stopped_run(d);
  json s = read_json(out + "/summary.json");
  s["steps_completed"] = "four";
  spit(out + "/summary.json", s.dump());
  const CommandResult r = run_normtool("run --resume " + out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(out + "/summary.json: \"steps_completed\" is \"four\", expected an integer"),
            std::string::npos)
      << r.output;
}

TEST(DataLoss, InvarianceWithAModelTooLargeIsExit2) {
  const CommandResult r = run_normtool("invariance --config " + smoke_config() +
                                       " --set model.d_model=65536 --set model.d_ff=262144 "
                                       "--set model.n_heads=1 --set model.n_layers=64");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

}  // namespace
}  // namespace nt::test
