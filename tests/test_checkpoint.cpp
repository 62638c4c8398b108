// Checkpoints and exact resume (train/checkpoint.h, `normtool run --resume`): a run stopped by
// SIGTERM, SIGINT or SIGKILL and resumed writes, at one thread, the same metrics.jsonl,
// layers.jsonl and stats.csv as the run that never stopped (timing fields aside), with no line
// duplicated or missing; a checkpoint that does not fit is refused with exit 2 naming why.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "config/config.h"
#include "helpers.h"
#include "train/checkpoint.h"
#include "train/session.h"

extern char** environ;

namespace nt::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int count_lines(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

// The logs of a run without their timing fields: what must be identical across a stop.
struct Logs {
  std::vector<json> metrics, layers;
  std::string stats;
};
Logs logs_of(const std::string& dir) {
  Logs l{read_jsonl(dir + "/metrics.jsonl"), read_jsonl(dir + "/layers.jsonl"),
         read_bytes(dir + "/stats.csv") + read_bytes(dir + "/ranges.csv")};
  for (json& m : l.metrics) m.erase("step_ms"), m.erase("elapsed_s");
  return l;
}
void expect_same_logs(const std::string& a, const std::string& b) {
  const Logs la = logs_of(a), lb = logs_of(b);
  ASSERT_EQ(la.metrics.size(), lb.metrics.size());
  for (std::size_t i = 0; i < la.metrics.size(); ++i) EXPECT_EQ(la.metrics[i], lb.metrics[i]) << "metrics line " << i;
  ASSERT_EQ(la.layers.size(), lb.layers.size());
  for (std::size_t i = 0; i < la.layers.size(); ++i) EXPECT_EQ(la.layers[i], lb.layers[i]) << "layers line " << i;
  EXPECT_EQ(la.stats.size(), lb.stats.size());
  EXPECT_TRUE(la.stats == lb.stats) << "stats.csv or ranges.csv differs";
  const json sa = read_json(a + "/summary.json"), sb = read_json(b + "/summary.json");
  for (const char* k : {"status", "steps_completed", "final_train_loss", "final_val_loss", "best_val_loss"})
    EXPECT_EQ(sa[k], sb[k]) << k;
}

// The run's arguments: a BatchNorm transformer on padded sequences (running statistics, masks)
// with AdamW, a cosine schedule and clipping, statistics every 20 steps, a checkpoint every 100.
std::vector<std::string> run_args(const std::string& out, const std::string& extra_config = "") {
  std::vector<std::string> a{binary(), "run", "--config", source_dir() + "/configs/smoke/lm-batchnorm-padded.json"};
  for (const char* o :
       {"train.steps=1200", "train.threads=1", "train.log_every=7", "train.eval_every=50", "train.stats_every=20",
        "train.checkpoint_every=100", "train.optimizer=adamw", "train.weight_decay=0.01", "train.schedule=cosine",
        "train.warmup_steps=30", "train.grad_clip=1.0"})
    a.push_back(o);
  if (!extra_config.empty()) a.push_back(extra_config);
  a.insert(a.end(), {"--out", out});
  return a;
}

pid_t spawn(const std::vector<std::string>& args, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Starts the run into `out`, sends `sig` once `ready()` holds, and returns the exit code.
template <class Ready>
int stop_run(const std::vector<std::string>& args, const std::string& log, int sig, Ready ready) {
  const pid_t pid = spawn(args, log);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!ready() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, sig);
  return wait_exit(pid);
}

CommandResult resume(const std::string& dir) { return run_normtool("run --resume " + dir); }

// One uninterrupted reference run, shared by the stop tests.
class Resume : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    fs::create_directories(dir_->path);
    const int code = wait_exit(spawn(run_args(*dir_ / "reference"), *dir_ / "reference.log"));
    ASSERT_EQ(code, 0) << read_bytes(*dir_ / "reference.log");
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string reference() { return *dir_ / "reference"; }
  static TempDir* dir_;
  TempDir tmp_;
  void SetUp() override { fs::create_directories(tmp_.path); }
};
TempDir* Resume::dir_ = nullptr;

// SIGTERM (a scheduler's preemption) and SIGINT in the middle of the run: a checkpoint at the
// stop, status interrupted, exit 130; resumed, the logs equal the reference's.
void stop_and_resume(const std::string& out, const std::string& log, int sig, const std::string& reference) {
  const int code = stop_run(run_args(out), log, sig, [&] { return count_lines(out + "/metrics.jsonl") >= 40; });
  ASSERT_EQ(code, 130) << read_bytes(log);
  const json s = read_json(out + "/summary.json");
  EXPECT_EQ(s["status"], "interrupted");
  const int stopped_at = s["steps_completed"];
  EXPECT_GT(stopped_at, 100);
  EXPECT_LT(stopped_at, 1200);
  EXPECT_EQ(s["checkpoint"]["step"], stopped_at) << "the stop writes a checkpoint of where it stopped";
  const CommandResult r = resume(out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("resuming at step " + std::to_string(stopped_at)), std::string::npos) << r.output;
  expect_same_logs(reference, out);
  EXPECT_EQ(read_json(out + "/summary.json")["resumes"], 1);
}

TEST_F(Resume, StoppedBySigtermResumesToTheSameLogs) {
  stop_and_resume(tmp_ / "run", tmp_ / "log", SIGTERM, reference());
}

TEST_F(Resume, StoppedBySigintResumesToTheSameLogs) {
  stop_and_resume(tmp_ / "run", tmp_ / "log", SIGINT, reference());
}

// SIGKILL leaves no chance to checkpoint: the resume starts from the last periodic checkpoint
// and cuts off the log lines written after it.
TEST_F(Resume, KilledBySigkillResumesFromTheLastCheckpoint) {
  const std::string out = tmp_ / "run";
  const int code = stop_run(run_args(out), tmp_ / "log", SIGKILL, [&] {
    std::error_code ec;  // past the checkpoint of step 300, between two checkpoints
    return fs::exists(out + "/checkpoint.bin", ec) && count_lines(out + "/metrics.jsonl") >= 50;
  });
  ASSERT_EQ(code, 128 + SIGKILL);
  const json s = read_json(out + "/summary.json");
  EXPECT_EQ(s["status"], "running") << "what a killed run leaves";
  const int lines_before = count_lines(out + "/metrics.jsonl");
  const CommandResult r = resume(out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto at = r.output.find("resuming at step ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const int resumed_at = std::stoi(r.output.substr(at + 17));
  EXPECT_EQ(resumed_at % 100, 0) << "a periodic checkpoint";
  EXPECT_GE(lines_before, 50);
  expect_same_logs(reference(), out);
}

TEST_F(Resume, AStoppedRunStoppedAgainStillResumesExactly) {
  const std::string out = tmp_ / "run";
  ASSERT_EQ(stop_run(run_args(out), tmp_ / "log1", SIGTERM, [&] { return count_lines(out + "/metrics.jsonl") >= 30; }),
            130);
  std::vector<std::string> again{binary(), "run", "--resume", out};
  ASSERT_EQ(stop_run(again, tmp_ / "log2", SIGTERM, [&] { return count_lines(out + "/metrics.jsonl") >= 90; }), 130);
  const CommandResult r = resume(out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_same_logs(reference(), out);
  EXPECT_EQ(read_json(out + "/summary.json")["resumes"], 2);
}

TEST_F(Resume, ACompletedRunSaysSoAndIsLeftAlone) {
  const std::string before = read_bytes(reference() + "/metrics.jsonl");
  const CommandResult r = resume(reference());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("already completed after 1200 steps"), std::string::npos) << r.output;
  EXPECT_EQ(read_bytes(reference() + "/metrics.jsonl"), before);
}

// A copy of an interrupted run, to tamper with.
std::string interrupted_copy(const TempDir& tmp) {
  const std::string out = tmp / "run";
  EXPECT_EQ(stop_run(run_args(out), tmp / "log", SIGTERM, [&] { return count_lines(out + "/metrics.jsonl") >= 20; }),
            130);
  return out;
}

TEST_F(Resume, ACheckpointOfAnotherConfigIsRefusedNamingTheKey) {
  const std::string out = interrupted_copy(tmp_);
  json config = read_json(out + "/config.json");
  config["train"]["lr"] = 0.001;
  std::ofstream(out + "/config.json") << config.dump(2);
  const std::string metrics = read_bytes(out + "/metrics.jsonl");
  const CommandResult r = resume(out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("another config: train.lr (checkpoint 0.003, config 0.001)"), std::string::npos) << r.output;
  EXPECT_EQ(read_bytes(out + "/metrics.jsonl"), metrics) << "nothing cut before the checkpoint is accepted";
}

TEST_F(Resume, AnotherFormatVersionOrACorruptCheckpointIsRefused) {
  const std::string out = interrupted_copy(tmp_);
  const std::string path = out + "/checkpoint.bin";
  const std::string good = read_bytes(path);
  std::string other = good;
  other[8] = char(kCheckpointFormat + 1);  // the version follows the 8-byte magic
  std::ofstream(path, std::ios::binary) << other;
  CommandResult r = resume(out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("checkpoint format version " + std::to_string(kCheckpointFormat + 1) +
                          ", this normtool reads version " + std::to_string(kCheckpointFormat)),
            std::string::npos)
      << r.output;

  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x10;
  std::ofstream(path, std::ios::binary) << flipped;
  r = resume(out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("corrupt (its CRC-32 does not match"), std::string::npos) << r.output;

  std::ofstream(path, std::ios::binary) << good.substr(0, good.size() / 3);
  r = resume(out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("checkpoint.bin: corrupt"), std::string::npos) << r.output;

  std::ofstream(path, std::ios::binary) << "{\"not\": \"a checkpoint\"}";
  r = resume(out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("not a normtool checkpoint"), std::string::npos) << r.output;

  std::ofstream(path, std::ios::binary) << good;  // and the good one still resumes
  r = resume(out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_same_logs(reference(), out);
}

TEST_F(Resume, LogsShorterThanTheCheckpointRecordsAreRefused) {
  const std::string out = interrupted_copy(tmp_);
  fs::resize_file(out + "/stats.csv", 100);
  const CommandResult r = resume(out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("stats.csv: holds 100 bytes where the checkpoint records"), std::string::npos) << r.output;
}

TEST(ResumeUsage, WithoutACheckpointOrWithOverridesItIsRefused) {
  TempDir d;
  CommandResult r = run_normtool("run --resume " + (d / "nothing"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no such run directory"), std::string::npos) << r.output;

  // a run killed before any checkpoint (every = 0 writes one only when the run stops itself)
  const std::string out = d / "run";
  fs::create_directories(out);
  std::ofstream(out + "/config.json") << "{}";
  std::ofstream(out + "/summary.json") << R"({"status": "running", "steps_completed": 3})";
  r = run_normtool("run --resume " + out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no checkpoint.bin there: the run stopped before its first checkpoint"), std::string::npos)
      << r.output;

  r = run_normtool("run --resume " + out + " --config configs/lm-tiny.json");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("takes no --config, --out or overrides"), std::string::npos) << r.output;
  r = run_normtool("run --resume " + out + " train.lr=0.1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

// In process: a session saved after 40 steps and loaded into a fresh one continues bit for bit
// (parameters, Adam moments, BatchNorm running statistics, the data stream, fp16's loss scale),
// for the transformer, the mlp, a recurrent LM and RNNSearch (a seq2seq stream, clipping).
TEST(SessionState, SavedAndLoadedContinuesBitForBit) {
  struct Case {
    const char* config;
    std::vector<std::string> overrides;
  };
  for (const Case& k :
       {Case{"configs/smoke/lm-batchnorm-pre.json", {}}, Case{"configs/smoke/mlp-batchnorm.json", {}},
        // large weights: the loss scale backs off in the first steps, the checkpoint carries it
        Case{"configs/smoke/lm-layernorm-pre.json", {"train.precision=fp16", "model.init_std=1.0"}},
        Case{"configs/smoke/rnn-gru-layernorm.json", {}}, Case{"configs/smoke/rnnsearch-rmsnorm.json", {}}}) {
    SCOPED_TRACE(k.config);
    std::vector<std::string> overrides = k.overrides;
    overrides.push_back("train.threads=1");
    const RunConfig c = load_config_file(source_dir() + "/" + k.config, overrides);
    Session a(c);
    for (int i = 0; i < 40; ++i) a.step();
    ByteWriter w;
    a.save_state(w);
    Session b(c);
    ByteReader r(w.bytes());
    b.load_state(r);
    EXPECT_EQ(r.remaining(), 0u);
    EXPECT_EQ(b.steps_done(), 40);
    EXPECT_EQ(b.loss_scaler().scale(), a.loss_scaler().scale());
    for (int i = 0; i < 20; ++i) {
      const StepResult ra = a.step(), rb = b.step();
      ASSERT_EQ(ra.loss, rb.loss) << "step " << 40 + i;
    }
    EXPECT_EQ(std::memcmp(a.params().data(), b.params().data(), a.params().numel() * sizeof(float)), 0);
    EXPECT_EQ(a.evaluate().loss, b.evaluate().loss) << "the running statistics";
  }
}

// The logits of a pass are those forward() scores: as many arg-max hits as it counts correct, in
// eval mode (BatchNorm's running statistics) and in train mode (the batch's), which differ.
TEST(SessionState, LogitsAreTheForwardPassesOwnInBothModes) {
  const RunConfig c = load_config_file(source_dir() + "/configs/smoke/mlp-batchnorm.json", {"train.threads=1"});
  Session s(c);
  for (int i = 0; i < 20; ++i) s.step();
  Batch batch;
  s.data().val_batch(0, 8, batch);
  std::vector<float> by_mode[2];
  for (bool training : {false, true}) {
    const std::vector<float> logits = s.logits(batch, training);
    ASSERT_EQ(logits.size() % 8, 0u);
    const std::size_t classes = logits.size() / 8;
    int64_t hits = 0;
    for (std::size_t n = 0; n < 8; ++n) {
      const auto row = logits.begin() + std::ptrdiff_t(n * classes);
      hits += std::max_element(row, row + std::ptrdiff_t(classes)) - row == batch.targets[n];
    }
    EXPECT_EQ(hits, s.forward(batch, training).correct);
    by_mode[training] = logits;
  }
  EXPECT_NE(by_mode[0], by_mode[1]);
}

TEST(SessionState, AStreamOfAnotherShapeIsRejected) {
  const RunConfig c = load_config_file("", {"data.dataset=synthetic-lm", "train.threads=1"});
  const RunConfig wider = load_config_file("", {"data.dataset=synthetic-lm", "train.threads=1", "model.d_model=32"});
  Session a(c), b(wider);
  ByteWriter w;
  a.save_state(w);
  ByteReader r(w.bytes());
  EXPECT_THROW(b.load_state(r), std::length_error);
}

}  // namespace
}  // namespace nt::test
