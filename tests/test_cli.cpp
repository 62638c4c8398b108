// The normtool binary as a user meets it: exit codes (0 ok, 1 failed or diverged, 2 bad
// usage, config or data, 130 interrupted), one-line errors that name the problem, and the
// files of a run.
#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "config/config.h"
#include "helpers.h"

namespace nt::test {
namespace {

TEST(Cli, VersionAndHelp) {
  EXPECT_EQ(run_normtool("--version").output.rfind("normtool 0.1.0 (commit ", 0), 0u);
  const auto help = run_normtool("run --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("--print-config"), std::string::npos);
}

TEST(Cli, UnknownOptionIsAUsageError) {
  const auto r = run_normtool("run --sed x=1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--sed"), std::string::npos) << r.output;
}

TEST(Cli, BadConfigExits2WithOneLinePerProblem) {
  TempDir d;
  const auto r = run_normtool("run " + kTinyModel + "model.norm.type=lyernorm --set train.lr=-1 --out " + d.str());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("model.norm.type: expected one of " + join_names(norm_type_names()) +
                          ", got \"lyernorm\" (override)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("train.lr: expected a number >= 0, got -1 (--set)"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(d.path)) << "nothing is written before the config is valid";
}

TEST(Cli, MissingConfigFileExits2) {
  const auto r = run_normtool("run --config /nonexistent/x.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output,
            "error: config is invalid: /nonexistent/x.json: cannot read the config file: No such file or directory\n");
}

TEST(Cli, MissingDataNamesTheFileAndThePackage) {
  TempDir d;
  auto r = run_normtool("run --set data.path=/nonexistent --out " + d.str());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output,
            "error: data: /nonexistent: no fortunes folder here (install the Debian package 'fortunes', or set "
            "data.path)\n");
  r = run_normtool("run --set data.dataset=fashion-mnist --set model.arch=mlp --set data.path=/tmp --out " + d.str());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("/tmp/train-images-idx3-ubyte.gz: missing (install the Debian package "
                          "'dataset-fashion-mnist'"),
            std::string::npos)
      << r.output;
}

// The binary copied where no configs/ lies beside it, and NORMTOOL_DATA_DIR naming a folder without
// them: every command that reads the data directory says where it looked, exit 2 (it was 1).
TEST(Cli, NoDataDirectoryIsExit2NamingThePlacesTried) {
  TempDir d;
  std::filesystem::create_directories(d / "bin");
  std::filesystem::copy_file(binary(), d / "bin/normtool");
  for (const std::string& args :
       std::vector<std::string>{"reproduce --list", "reproduce --quick E1 --out " + (d / "r"), "presets"}) {
    const auto r = run_shell("NORMTOOL_DATA_DIR=" + (d / "nowhere") + " " + (d / "bin/normtool") + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find("normtool's data (configs/, experiments/) is in none of: " + (d / "nowhere") + ", " +
                            (d / "bin/share/normtool") + ", " + (d / "share/normtool") + " (set NORMTOOL_DATA_DIR)"),
              std::string::npos)
        << args << ": " << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(d / "r")) << "nothing is written before the data directory is found";
}

TEST(Cli, CorruptDataFileIsNamed) {
  TempDir d;
  std::filesystem::create_directories(d.path);
  std::ofstream(d / "train-images-idx3-ubyte.gz") << "not gzip at all";
  const auto r = run_normtool("run --set data.dataset=fashion-mnist --set model.arch=mlp --set data.path=" + d.str());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find(d / "train-images-idx3-ubyte.gz"), std::string::npos) << r.output;
}

TEST(Cli, PrintConfigShowsTheResolvedConfig) {
  const auto r = run_normtool("run --print-config model.norm.type=deepnorm model.n_layers=12");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["model"]["norm"]["placement"], "post");
  EXPECT_NEAR(j["model"]["norm"]["alpha"].get<double>(), 2.2134, 1e-4);
  EXPECT_EQ(j["name"], "run");
}

TEST(Cli, RunWritesItsDirectoryAndNeverOverwritesIt) {
  TempDir d;
  const auto r = run_normtool("run " + kTinyModel + "--set train.steps=5 --out " + d.str());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* f : {"config.json", "metrics.jsonl", "layers.jsonl", "stats.csv", "summary.json"})
    EXPECT_TRUE(std::filesystem::exists(d / f)) << f;
  EXPECT_NE(r.output.find("completed after 5 steps"), std::string::npos) << r.output;
  const auto again = run_normtool("run " + kTinyModel + "--set train.steps=5 --out " + d.str());
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.output.find("already exists"), std::string::npos) << again.output;
}

TEST(Cli, DivergedRunExits1WithItsFiles) {
  TempDir d;
  const auto r = run_normtool(
      "run --set data.dataset=synthetic-classify --set model.arch=mlp --set model.norm.type=none "
      "--set train.optimizer=sgd --set train.lr=1e4 --set model.init_std=1 --set train.threads=1 --out " +
      d.str());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(read_json(d / "summary.json")["status"], "diverged");
}

TEST(Cli, InterruptWritesTheSummaryAndExits130) {
  TempDir d;
  // SIGINT after one second, to a run that would take far longer.
  const auto r = run_normtool("run " + kTinyModel + "--set train.steps=1000000 --out " + d.str() +
                              " & pid=$!; sleep 1; "
                              "kill -INT $pid; wait $pid");
  EXPECT_EQ(r.exit_code, 130) << r.output;
  const auto s = read_json(d / "summary.json");
  EXPECT_EQ(s["status"], "interrupted");
  EXPECT_GT(s["steps_completed"].get<int>(), 0);
  for (const auto& line : read_jsonl(d / "metrics.jsonl")) EXPECT_TRUE(line.contains("loss"));
}

}  // namespace
}  // namespace nt::test
