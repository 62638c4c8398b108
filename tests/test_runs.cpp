// `normtool runs` (the run directories under a folder as a table, CSV or JSON) and `normtool
// compare` on a sweep directory (labels by differing keys, the mean over seeds with a 95% t band),
// on a sweep of 2 norms x 2 seeds; and the pieces they are made of (io/run_index.h, io/table_format.h).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "helpers.h"
#include "io/run_index.h"
#include "io/table_format.h"

namespace nt::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// <root>/ln-rms: model.norm.type=layernorm,rmsnorm x seed=1,2, 12 steps of the smoke mlp.
std::string make_sweep(const TempDir& root) {
  const std::string out = root / "ln-rms";
  const auto r = run_normtool("sweep --config " + source_dir() +
                              "/configs/smoke/mlp-layernorm.json model.norm.type=layernorm,rmsnorm seed=1,2 "
                              "--set train.steps=12 --set train.eval_every=6 --jobs 2 --out " +
                              out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return out;
}

// stdout only (a command's notes on stderr dropped)
CommandResult stdout_of(const std::string& args) { return run_shell("{ " + binary() + " " + args + " 2>/dev/null; }"); }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(RunIndex, NaturalOrderShortKeysAndCsvQuoting) {
  EXPECT_TRUE(natural_less("sw/2", "sw/10"));
  EXPECT_FALSE(natural_less("sw/10", "sw/2"));
  EXPECT_TRUE(natural_less("a", "b"));
  const std::vector<std::string> all{"model.norm.type", "train.optimizer.type", "seed", "model.norm.eps"};
  EXPECT_EQ(short_key("model.norm.type", all), "norm.type");
  EXPECT_EQ(short_key("model.norm.eps", all), "eps");
  EXPECT_EQ(short_key("seed", all), "seed");
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\"\nbye"), "\"say \"\"hi\"\"\nbye\"");
}

TEST(RunsCli, ListsASweepAsCsvJsonAndTable) {
  TempDir root;
  const std::string sweep = make_sweep(root);
  const auto csv = stdout_of("runs " + root.str() + " --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  const auto lines = lines_of(csv.output);
  ASSERT_EQ(lines.size(), 5u) << csv.output;
  EXPECT_EQ(lines[0], "path,status,steps_done,steps_total,final_train_loss,final_val_loss,model.norm.type,seed");
  for (int i = 0; i < 4; ++i) {
    const json s = read_json(sweep + "/" + std::to_string(i) + "/summary.json");
    std::vector<std::string> f;
    std::istringstream row(lines[i + 1]);
    for (std::string cell; std::getline(row, cell, ',');) f.push_back(cell);
    ASSERT_EQ(f.size(), 8u) << lines[i + 1];
    EXPECT_EQ(f[0], "ln-rms/" + std::to_string(i));
    EXPECT_EQ(f[1], "completed");
    EXPECT_EQ(f[2], "12");
    EXPECT_EQ(f[3], "12");
    EXPECT_EQ(std::stod(f[4]), s["final_train_loss"].get<double>());  // shortest round-trip: exact
    EXPECT_EQ(std::stod(f[5]), s["final_val_loss"].get<double>());
    EXPECT_EQ(f[6], i < 2 ? "layernorm" : "rmsnorm");
    EXPECT_EQ(f[7], i % 2 ? "2" : "1");
  }
  const auto js = stdout_of("runs " + root.str() + " --format json");
  const json j = json::parse(js.output);
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[3]["model.norm.type"], "rmsnorm");
  EXPECT_EQ(j[3]["seed"], 2);
  EXPECT_EQ(j[2]["final_val_loss"], read_json(sweep + "/2/summary.json")["final_val_loss"]);
  const auto table = stdout_of("runs " + root.str() + " --format table");
  const auto t = lines_of(table.output);
  ASSERT_EQ(t.size(), 5u) << table.output;
  EXPECT_EQ(t[0].find("status"), t[4].find("completed")) << table.output;  // aligned columns
  EXPECT_NE(t[4].find("ln-rms/3"), std::string::npos);
  EXPECT_NE(t[4].find("rmsnorm"), std::string::npos);
}

TEST(RunsCli, QuotesAHostileValueFollowsNoLinkAndRefusesAMissingDirectory) {
  TempDir root, outside;
  const std::string sweep = make_sweep(root);
  // a copy of run 0 whose data.path holds a comma, quotes and a newline
  fs::copy(sweep + "/0", root / "odd", fs::copy_options::recursive);
  json c = read_json(root / "odd/config.json");
  c["data"]["path"] = "a,\"b\"\nc";
  std::ofstream(root / "odd/config.json") << c.dump();
  fs::create_directories(outside.path);
  fs::copy(sweep + "/1", outside / "elsewhere", fs::copy_options::recursive);
  fs::create_directory_symlink(outside / "elsewhere", root / "link");
  const auto r = stdout_of("runs " + root.str() + " --format csv");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("\"a,\"\"b\"\"\nc\""), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("link"), std::string::npos) << r.output;
  const auto j = json::parse(stdout_of("runs " + root.str() + " --format json").output);
  ASSERT_EQ(j.size(), 5u);  // the four jobs and odd, never the run behind the link
  EXPECT_EQ(j[4]["path"], "odd");
  EXPECT_EQ(j[4]["data.path"], "a,\"b\"\nc");
  const auto missing = run_normtool("runs " + (root / "nowhere"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find(root / "nowhere"), std::string::npos) << missing.output;
}

TEST(CompareCli, ASweepByGridPointWithAStudentTBand) {
  TempDir root;
  const std::string sweep = make_sweep(root);
  const auto r = stdout_of("compare " + sweep + " --format json --out " + (root / "c"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = json::parse(r.output);
  ASSERT_EQ(j["runs"].size(), 4u);
  EXPECT_EQ(j["runs"][0]["label"], "type=layernorm seed=1");
  EXPECT_EQ(j["runs"][3]["label"], "type=rmsnorm seed=2");
  ASSERT_EQ(j["groups"].size(), 2u);
  EXPECT_EQ(j["band"], "band: 95% t interval over 2 seeds");
  for (int g = 0; g < 2; ++g) {
    const json& p = j["groups"][g];
    EXPECT_EQ(p["grid_point"], g ? "type=rmsnorm" : "type=layernorm");
    EXPECT_EQ(p["seeds"], 2);
    EXPECT_EQ(p["val_step"], 12);
    const double a = read_json(sweep + "/" + std::to_string(2 * g) + "/summary.json")["final_val_loss"];
    const double b = read_json(sweep + "/" + std::to_string(2 * g + 1) + "/summary.json")["final_val_loss"];
    const double mean = (a + b) / 2, sd = std::abs(a - b) / std::sqrt(2.0);
    const double half = 12.706204736174698 * sd / std::sqrt(2.0);  // t_{0.975, 1 df}
    EXPECT_NEAR(p["val_mean"].get<double>(), mean, 1e-12);
    EXPECT_NEAR(p["val_lo"].get<double>(), mean - half, 1e-9);
    EXPECT_NEAR(p["val_hi"].get<double>(), mean + half, 1e-9);
    EXPECT_GT(half, 1e-6);  // the seeds differ: a band of width zero would pass the checks above
  }
  const std::string md = read_text(root / "c/compare.md");
  EXPECT_NE(md.find("band: 95% t interval over 2 seeds"), std::string::npos) << md;
  const std::string tsv = read_text(root / "c/loss.tsv");
  EXPECT_NE(tsv.find("type=rmsnorm (mean of 2)"), std::string::npos);
  EXPECT_NE(tsv.find("type=layernorm seed=2"), std::string::npos);
  const auto csv = lines_of(stdout_of("compare " + sweep + " --format csv --out " + (root / "c")).output);
  ASSERT_EQ(csv.size(), 3u);
  EXPECT_EQ(csv[0], "grid_point,seeds,train_step,train_mean,train_lo,train_hi,val_step,val_mean,val_lo,val_hi");
}

TEST(SweepAggregate, WritesACsvFileAndPrintsCsvOrJson) {
  TempDir root;
  const std::string sweep = make_sweep(root);
  const auto file = lines_of(read_text(sweep + "/aggregate.csv"));
  ASSERT_EQ(file.size(), 3u);
  EXPECT_EQ(file[0].rfind("grid_point,runs,done,final_train_loss_mean,final_train_loss_sd,final_val_loss_mean,", 0),
            0u);
  EXPECT_EQ(file[1].rfind("model.norm.type=layernorm,2,2,", 0), 0u) << file[1];
  const auto csv = stdout_of("sweep --aggregate " + sweep + " --format csv");
  ASSERT_EQ(csv.exit_code, 0);
  EXPECT_EQ(csv.output, read_text(sweep + "/aggregate.csv"));
  const json j = json::parse(stdout_of("sweep --aggregate " + sweep + " --format json").output);
  ASSERT_EQ(j.size(), 2u);
  const double a = read_json(sweep + "/2/summary.json")["final_val_loss"];
  const double b = read_json(sweep + "/3/summary.json")["final_val_loss"];
  EXPECT_EQ(j[1]["grid_point"], "model.norm.type=rmsnorm");
  EXPECT_NEAR(j[1]["final_val_loss_mean"].get<double>(), (a + b) / 2, 1e-12);
  EXPECT_NEAR(j[1]["final_val_loss_sd"].get<double>(), std::abs(a - b) / std::sqrt(2.0), 1e-12);
  // a run that stopped has no final loss: its last, of another step, is left out, not averaged in
  json stopped = read_json(sweep + "/3/summary.json");
  stopped["status"] = "interrupted", stopped["final_val_loss"] = 99.0;
  std::ofstream(sweep + "/3/summary.json") << stopped.dump();
  const json partial = json::parse(stdout_of("sweep --aggregate " + sweep + " --format json").output);
  EXPECT_EQ(partial[1]["runs"], 2);
  EXPECT_EQ(partial[1]["done"], 1);
  EXPECT_NEAR(partial[1]["final_val_loss_mean"].get<double>(), a, 1e-12);
  EXPECT_TRUE(partial[1]["final_val_loss_sd"].is_null()) << partial[1];
}

TEST(CompareCli, RunsAreLabelledByTheKeysInWhichTheyDiffer) {
  TempDir root;
  const std::string sweep = make_sweep(root);
  const auto r = run_normtool("compare " + sweep + "/0 " + sweep + "/3 --out " + (root / "c"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("| 0 | layernorm | 1 | completed | 12 |"), std::string::npos) << r.output;  // the table
  const std::string tsv = read_text(root / "c/loss.tsv");                                             // the curves
  EXPECT_NE(tsv.find("# train loss: type=layernorm seed=1\n"), std::string::npos) << tsv;
  EXPECT_NE(tsv.find("# validation loss: type=rmsnorm seed=2\n"), std::string::npos) << tsv;
  EXPECT_EQ(tsv.find("loss: 0\n"), std::string::npos) << tsv;  // never the folder's name
}

}  // namespace
}  // namespace nt::test
