// `normtool compare` and `normtool runs` on run directories written by hand, each shaped as a
// hostile tester shaped it: a run given twice or copied (a seed counted twice), a grid point of one
// seed, a config rewritten by jq (0.0 as 0), a directory that cannot be read, a killed run, values
// holding control bytes or a '|', and the messages of a bad argument.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "helpers.h"

namespace nt::test {
namespace by_hand {

namespace fs = std::filesystem;
using json = nlohmann::json;

// A run directory as normtool writes one, by hand: config.json (seed, train.lr, train.steps 10),
// summary.json (completed at step 10), and metrics.jsonl with a train and a val loss at steps 0
// and 10, the last ones `loss` (train) and `loss` + 0.5 (val).
void write_run(const std::string& dir, int seed, double lr, double loss) {
  fs::create_directories(dir);
  const json config = {{"name", "hand"}, {"seed", seed}, {"train", {{"lr", lr}, {"steps", 10}}}};
  std::ofstream(fs::path(dir) / "config.json") << config.dump(2);
  const json summary = {
      {"status", "completed"}, {"steps_completed", 10}, {"final_train_loss", loss}, {"final_val_loss", loss + 0.5}};
  std::ofstream(fs::path(dir) / "summary.json") << summary.dump(2);
  std::ofstream m(fs::path(dir) / "metrics.jsonl");
  m << json{{"step", 0}, {"split", "train"}, {"loss", loss + 1}}.dump() << "\n"
    << json{{"step", 0}, {"split", "val"}, {"loss", loss + 1.5}}.dump() << "\n"
    << json{{"step", 10}, {"split", "train"}, {"loss", loss}}.dump() << "\n"
    << json{{"step", 10}, {"split", "val"}, {"loss", loss + 0.5}}.dump() << "\n";
}

// stdout alone (the notes on stderr dropped)
CommandResult product_of(const std::string& args) {
  return run_shell("{ " + binary() + " " + args + " 2>/dev/null; }");
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(CompareInputs, ARunGivenTwiceOrCopiedIsRefusedNotCountedAsAnotherSeed) {
  TempDir d;
  write_run(d / "g/1", 1, 0.001, 4.0);
  write_run(d / "g/2", 2, 0.001, 5.0);
  const CommandResult twice = run_normtool("compare " + (d / "g") + " " + (d / "g") + " --out " + (d / "c"));
  EXPECT_EQ(twice.exit_code, 2) << twice.output;
  EXPECT_TRUE(has(twice.output, "error: " + (d / "g/1") + ": the same run directory given twice")) << twice.output;
  const CommandResult linked = run_normtool("compare " + (d / "g/1") + " " + (d / "g/./1") + " --out " + (d / "c"));
  EXPECT_EQ(linked.exit_code, 2) << linked.output;
  EXPECT_TRUE(has(linked.output, "given twice (as " + (d / "g/1") + " too)")) << linked.output;
  fs::copy(d / "g/1", d / "g/1-copy", fs::copy_options::recursive);
  const CommandResult copied = run_normtool("compare " + (d / "g") + " --out " + (d / "c"));
  EXPECT_EQ(copied.exit_code, 2) << copied.output;
  EXPECT_TRUE(has(copied.output, "error: " + (d / "g/1") + " and " + (d / "g/1-copy") +
                                     ": two runs of grid point \"all runs\" with seed 1: an interval over them would "
                                     "count seed 1 twice"))
      << copied.output;
  EXPECT_FALSE(fs::exists(d / "c"));  // refused before anything is written
  fs::remove_all(d / "g/1-copy");
  const CommandResult ok = product_of("compare " + (d / "g") + " --format csv --out " + (d / "c"));
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_TRUE(has(ok.output, "\nall runs,2,10,4.5,")) << ok.output;
}

TEST(CompareInputs, AGridPointOfOneSeedHasNoIntervalAndNoBand) {
  TempDir d;
  write_run(d / "g/1", 1, 0.001, 4.0);
  write_run(d / "g/2", 2, 0.001, 5.0);
  write_run(d / "g/3", 1, 0.01, 3.0);
  const CommandResult csv = product_of("compare " + (d / "g") + " --format csv --out " + (d / "c"));
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_TRUE(has(csv.output, "\nlr=0.01,1,10,3.0,,,10,3.5,,\n")) << csv.output;  // no lo, no hi: not the mean twice
  const CommandResult js = product_of("compare " + (d / "g") + " --format json --out " + (d / "c"));
  const json groups = json::parse(js.output)["groups"];
  ASSERT_EQ(groups.size(), 2u) << js.output;
  const double half = 12.706204736174698 * std::sqrt(0.5) / std::sqrt(2.0);  // t_{0.975, 1} sd / sqrt(n)
  EXPECT_NEAR(groups[0]["train_lo"].get<double>(), 4.5 - half, 1e-9);
  EXPECT_NEAR(groups[0]["val_hi"].get<double>(), 5.0 + half, 1e-9);
  EXPECT_TRUE(groups[1]["train_lo"].is_null() && groups[1]["train_hi"].is_null()) << groups[1];
  EXPECT_TRUE(groups[1]["val_lo"].is_null() && groups[1]["val_hi"].is_null()) << groups[1];
  EXPECT_EQ(groups[1]["val_mean"], 3.5);
  const std::string md = read_text(d / "c/compare.md");
  EXPECT_TRUE(has(md, "| lr=0.01 | 1 | 3.0000 [-] (step 10) | 3.5000 [-] (step 10) |")) << md;
  const std::string tsv = read_text(d / "c/loss.tsv");  // the mean of one seed: x and y, no band's low and high
  EXPECT_TRUE(has(tsv, "# train loss: lr=0.01 (mean of 1)\n0\t4\n10\t3\n")) << tsv;
  EXPECT_TRUE(has(tsv, "# train loss: lr=0.001 (mean of 2)\n0\t5.5\t")) << tsv;
  fs::remove_all(d / "g/2");
  const json one = json::parse(product_of("compare " + (d / "g") + " --format json --out " + (d / "c")).output);
  EXPECT_EQ(one["band"], "no band: one seed per grid point");
}

TEST(CompareInputs, NumbersAreComparedByValueSoAConfigRewrittenByJqIsTheSame) {
  TempDir d;
  write_run(d / "g/1", 1, 0.001, 4.0);
  write_run(d / "g/2", 2, 0.001, 5.0);
  for (const std::string run : {"g/1/", "g/2/"}) {  // 0.0 and 10000.0 as normtool writes them, 0 and 10000 as jq
    json c = read_json(d / (run + "config.json"));
    c["model"] = run == "g/1/" ? json{{"eps", 0.0}, {"base", 10000.0}} : json{{"eps", 0}, {"base", 10000}};
    std::ofstream(d / (run + "config.json")) << c.dump();
  }
  ASSERT_TRUE(has(read_text(d / "g/1/config.json"), "\"base\":10000.0,\"eps\":0.0}"));
  ASSERT_TRUE(has(read_text(d / "g/2/config.json"), "\"base\":10000,\"eps\":0}"));
  const CommandResult runs = product_of("runs " + (d / "g") + " --format csv");
  ASSERT_EQ(runs.exit_code, 0) << runs.output;
  EXPECT_EQ(runs.output.substr(0, runs.output.find('\n')),
            "path,status,steps_done,steps_total,final_train_loss,final_val_loss,seed");
  const CommandResult csv = product_of("compare " + (d / "g") + " --format csv --out " + (d / "c"));
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_TRUE(has(csv.output, "\nall runs,2,10,4.5,")) << csv.output;  // one grid point of two seeds, not two of one
  const std::string md = read_text(d / "c/compare.md");
  EXPECT_TRUE(has(md, "| run | seed | status |")) << md;
  const json j = json::parse(
      product_of("compare " + (d / "g/1") + " " + (d / "g/2") + " --format json --out " + (d / "c2")).output);
  EXPECT_EQ(j["runs"][0].size(), 9u) << j;  // run, label, seed, then the six figures: no model.eps, no model.base
}

// How to run normtool as someone a directory's permissions stop: as root (whom they do not stop),
// through setpriv as nobody; "" when this user is not root; nullopt when root cannot drop its
// privileges here (no setpriv, or nobody cannot reach the build or list `runs`).
std::optional<std::string> unprivileged(const std::string& runs) {
  if (::geteuid() != 0) return "";
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  if (run_shell(as_nobody + binary() + " runs " + runs + " >/dev/null").exit_code != 0) return std::nullopt;
  return as_nobody;
}

TEST(RunsInputs, ADirectoryThatCannotBeReadIsANoteOrAnErrorNamingIt) {
  TempDir d;
  write_run(d / "p/a", 1, 0.001, 4.0);
  write_run(d / "p/sub/b", 2, 0.001, 5.0);
  fs::permissions(d.path, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  const std::optional<std::string> as = unprivileged(d / "p");
  if (!as) GTEST_SKIP() << "running as root, and setpriv cannot run normtool as nobody: permissions stop no one";
  fs::permissions(d / "p/sub", fs::perms::owner_all);  // no one but its owner (and root) may list it
  const CommandResult r = run_shell(*as + binary() + " runs " + (d / "p") + " --format csv");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "note: " + (d / "p/sub") +
                                ": cannot read the directory (Permission denied); the runs "
                                "under it, if any, are not listed\n"))
      << r.output;
  EXPECT_TRUE(has(r.output, "\na,completed,10,10,4.0,4.5\n")) << r.output;
  const CommandResult top = run_shell(*as + binary() + " runs " + (d / "p/sub"));
  EXPECT_EQ(top.exit_code, 2) << top.output;
  EXPECT_EQ(top.output, "error: " + (d / "p/sub") + ": cannot read the directory: Permission denied\n");
  const CommandResult swept = run_shell(*as + binary() + " compare " + (d / "p/sub") + " --out " + (d / "p/c"));
  EXPECT_EQ(swept.exit_code, 2) << swept.output;
  EXPECT_TRUE(has(swept.output, "error: " + (d / "p/sub") + ": cannot read the directory: Permission denied\n"))
      << swept.output;
  fs::permissions(d / "p/sub", fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
}

TEST(RunsInputs, AFileOrAnEmptyNameIsNotCalledMissing) {
  TempDir d;
  write_run(d / "a", 1, 0.001, 4.0);
  const std::string file = d / "a/summary.json";
  EXPECT_EQ(run_normtool("runs " + file).output, "error: " + file + ": not a directory\n");
  EXPECT_EQ(run_normtool("runs ''").output, "error: DIR \"\": an empty directory name\n");
  EXPECT_EQ(run_normtool("runs " + (d / "none")).output, "error: " + (d / "none") + ": no such directory\n");
  const CommandResult c = run_normtool("compare " + file + " --out " + (d / "c"));
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_EQ(c.output, "error: " + file + ": not a directory (give a run or sweep directory)\n");
  EXPECT_EQ(run_normtool("compare '' --out " + (d / "c")).output, "error: RUN_DIR \"\": an empty directory name\n");
  const CommandResult out = run_shell("cd " + d.str() + " && " + binary() + " compare a -o ''");
  EXPECT_EQ(out.exit_code, 2);  // as run -o '': not the default directory
  EXPECT_TRUE(has(out.output, "--out: an empty directory name")) << out.output;
  EXPECT_FALSE(fs::exists(d / "runs"));
}

// The default output directories runs/<name>-<YYYYmmdd-HHMMSS> of the coming `seconds` seconds,
// each made already and holding a file, as an earlier command of the same second leaves it.
std::vector<std::string> take_default_names(const TempDir& d, const std::string& name, int seconds) {
  std::vector<std::string> taken;
  const std::time_t now = std::time(nullptr);
  for (std::time_t t = now; t < now + seconds; ++t) {
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&t));
    taken.push_back(d / ("runs/" + name + "-" + stamp));
    fs::create_directories(taken.back());
    std::ofstream(taken.back() + "/compare.md") << "an earlier command's\n";
  }
  return taken;
}

TEST(CompareInputs, TwoCommandsInOneSecondGetTwoDefaultDirectories) {
  TempDir d;
  write_run(d / "g/1", 1, 0.001, 4.0);
  const std::vector<std::string> taken = take_default_names(d, "compare", 20);
  const CommandResult c = run_shell("cd " + d.str() + " && " + binary() + " compare g/1");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  std::size_t fresh = 0;
  for (const std::string& dir : taken) {
    EXPECT_EQ(read_text(dir + "/compare.md"), "an earlier command's\n") << dir;  // never written over
    if (fs::exists(dir + "-2/compare.md") && has(c.output, "-> runs/" + fs::path(dir).filename().string() + "-2 ("))
      ++fresh;
  }
  EXPECT_EQ(fresh, 1u) << c.output;
  // a run of that second: -2 too, where it failed naming a directory no one gave
  const CommandResult name = run_normtool("run" + four_step_run() + " --print-config");
  const std::string run_name = json::parse(name.output)["name"];
  const std::vector<std::string> runs = take_default_names(d, run_name, 60);
  const CommandResult r = run_shell("cd " + d.str() + " && " + binary() + " run" + four_step_run());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::size_t made = 0;
  for (const std::string& dir : runs) made += fs::exists(dir + "-2/summary.json") && !fs::exists(dir + "/summary.json");
  EXPECT_EQ(made, 1u) << r.output;
  // three at once: three directories, whatever their seconds
  const CommandResult three = run_shell("cd " + d.str() + " && rm -rf runs && for i in 1 2 3; do " + binary() +
                                        " compare g/1 >/dev/null 2>&1 & done; wait");
  ASSERT_EQ(three.exit_code, 0) << three.output;
  std::size_t written = 0;
  for (const auto& entry : fs::directory_iterator(d / "runs")) written += fs::exists(entry.path() / "compare.md");
  EXPECT_EQ(written, 3u);
}

TEST(CompareInputs, AKilledRunIsStoppedInEveryFormatAsRunsSaysIt) {
  TempDir d;
  write_run(d / "kk", 1, 0.001, 4.0);
  json s = read_json(d / "kk/summary.json");  // what SIGKILL leaves: "running", and no process holding .lock
  s["status"] = "running";
  std::ofstream(d / "kk/summary.json") << s.dump();
  const CommandResult text = product_of("compare " + (d / "kk") + " --out " + (d / "c"));
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_TRUE(has(text.output, "| kk | stopped | 10 | 4.0000 | 4.5000 | - | - |\n")) << text.output;
  EXPECT_TRUE(has(read_text(d / "c/compare.md"), "| kk | stopped | 10 |"));
  const json j = json::parse(product_of("compare " + (d / "kk") + " --format json --out " + (d / "c")).output);
  EXPECT_EQ(j["runs"][0]["status"], "stopped");
  EXPECT_TRUE(has(product_of("runs " + (d / "kk") + " --format csv").output, "\n.,stopped,10,10,"));
}

TEST(RunsInputs, ConfigValuesAreShownInFullAsCompareShowsThem) {
  TempDir d;
  write_run(d / "g/1", 1, 1e-5, 4.0);
  write_run(d / "g/2", 1, 3e-5, 4.25);
  write_run(d / "g/3", 1, 0.00012, 4.125);
  const std::vector<std::string> rows = [&] {
    std::vector<std::string> out;
    std::istringstream in(product_of("runs " + (d / "g") + " --format table").output);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }();
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], "path  status     steps_done  steps_total  final_train_loss  final_val_loss  train.lr");
  EXPECT_EQ(rows[1], "1     completed  10          10           4.0000            4.5000          1e-05");
  EXPECT_EQ(rows[2], "2     completed  10          10           4.2500            4.7500          3e-05");
  EXPECT_EQ(rows[3], "3     completed  10          10           4.1250            4.6250          0.00012");
  const CommandResult c = product_of("compare " + (d / "g/1") + " " + (d / "g/3") + " --out " + (d / "c"));
  EXPECT_TRUE(has(c.output, "| 1 | 1e-05 | completed |") && has(c.output, "| 3 | 0.00012 | completed |")) << c.output;
}

TEST(CompareInputs, ControlBytesAndBarsInValuesAreEscapedAndAnUnknownStatusIsRefused) {
  TempDir d;
  write_run(d / "a", 1, 0.001, 4.0);
  write_run(d / "b", 2, 0.001, 5.0);
  json c = read_json(d / "a/config.json");
  c["data"] = {{"path", "x|y\nz\x1b[31m"}};
  c["we|ird"] = 1;
  std::ofstream(d / "a/config.json") << c.dump();
  const CommandResult r = product_of("compare " + (d / "a") + " " + (d / "b") + " --out " + (d / "c"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "| run | data.path | seed | we\\|ird | status |")) << r.output;
  EXPECT_TRUE(has(r.output, "\n| a | x\\|y\\x0az\\x1b[31m | 1 | 1 | completed | 10 |")) << r.output;
  EXPECT_TRUE(has(read_text(d / "c/compare.md"), "\n| a | x\\|y\\x0az\\x1b[31m | 1 | 1 | completed | 10 |"));
  EXPECT_FALSE(has(r.output, "\x1b"));
  json s = read_json(d / "b/summary.json");
  s["status"] = "weird\x1b[31m";
  std::ofstream(d / "b/summary.json") << s.dump();
  const std::string why =
      "\"status\" is \"weird\\u001b[31m\", expected running, completed, diverged, interrupted or "
      "failed\n";
  const CommandResult refused = run_normtool("compare " + (d / "b") + " --out " + (d / "c2"));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(refused.output, "error: " + (d / "b/summary.json") + ": " + why);
  const CommandResult listed = run_normtool("runs " + d.str() + " --format csv");
  EXPECT_EQ(listed.exit_code, 0);
  EXPECT_TRUE(has(listed.output, "note: " + (d / "b/summary.json") + ": " + why)) << listed.output;
  EXPECT_TRUE(has(listed.output, "\nb,unreadable,")) << listed.output;
}

TEST(RunsInputs, AWrongTypedStepsIsANoteAndAnUnreadableRunAddsNoColumns) {
  TempDir d;
  write_run(d / "g/1", 1, 0.001, 4.0);
  write_run(d / "g/2", 2, 0.001, 5.0);
  write_run(d / "g/3", 3, 0.001, 6.0);
  json c = read_json(d / "g/3/config.json");
  c["train"]["steps"] = "abc";
  std::ofstream(d / "g/3/config.json") << c.dump();
  const CommandResult r = run_normtool("runs " + (d / "g") + " --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "note: " + (d / "g/3/config.json") + ": \"train.steps\" is \"abc\", expected an integer\n"))
      << r.output;
  EXPECT_TRUE(has(r.output,
                  "path,status,steps_done,steps_total,final_train_loss,final_val_loss,seed\n1,completed,"
                  "10,10,4.0,4.5,1\n2,completed,10,10,5.0,5.5,2\n3,unreadable,,,,,\n"))
      << r.output;
}

TEST(CompareInputs, OneRunAndOneGridPointAreSingular) {
  TempDir d;
  write_run(d / "g/1", 1, 0.001, 4.0);
  const CommandResult one = run_normtool("compare " + (d / "g/1") + " --out " + (d / "c"));
  EXPECT_TRUE(has(one.output, "\ncompare: 1 run -> " + (d / "c") + " (")) << one.output;
  write_run(d / "g/2", 2, 0.001, 5.0);
  const CommandResult point = run_normtool("compare " + (d / "g") + " --out " + (d / "c"));
  EXPECT_TRUE(has(point.output, "\ncompare: 2 runs in 1 grid point -> " + (d / "c") + " (")) << point.output;
}

}  // namespace by_hand
}  // namespace nt::test
