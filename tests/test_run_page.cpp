// A run's index.html (io/run_page.h): what it shows, every text escaped, and the reload that a
// running run's page has and that every ending (completed, diverged, interrupted) takes away.
// The page in a browser: tests/test_html_report.cpp.
#include <gtest/gtest.h>

#include <filesystem>

#include "config/config.h"
#include "helpers.h"
#include "io/run_page.h"

namespace nt::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kReload = "<meta http-equiv=\"refresh\" content=\"10\">";

TEST(RunPage, ShowsTheFiguresEscapedAndReloadsOnlyWhileRunning) {
  const json running = {{"name", "<b>x</b> & 'y'"}, {"status", "running"},       {"steps_completed", 40},
                        {"final_train_loss", 2.5},  {"final_val_loss", nullptr}, {"best_val_loss", 2.75}};
  RunPageConfig config;
  config.steps = 200;
  config.changes = {{"train.lr", "0.003"}, {"model.norm.type", "<rmsnorm>"}};
  const std::string page = run_page(running, config, {"loss.png"});
  EXPECT_NE(page.find(kReload), std::string::npos) << page;
  EXPECT_NE(page.find("<h1>&lt;b&gt;x&lt;/b&gt; &amp; &#39;y&#39;</h1>"), std::string::npos) << page;
  EXPECT_EQ(page.find("<b>"), std::string::npos);
  EXPECT_NE(page.find("<td>40 of 200</td>"), std::string::npos) << page;
  EXPECT_NE(page.find("<td>2.5000</td>"), std::string::npos) << page;  // train loss
  EXPECT_NE(page.find("<th>validation loss (latest)</th><td>-</td>"), std::string::npos) << page;
  EXPECT_NE(page.find("<code>&lt;rmsnorm&gt;</code>"), std::string::npos) << page;
  EXPECT_NE(page.find("<img src=\"loss.png\""), std::string::npos) << page;

  json failed = running;
  failed["status"] = "failed";
  failed["error"] = "runs/x/metrics.jsonl: cannot write: <No space left on device>";
  const std::string ended = run_page(failed, config, {});
  EXPECT_EQ(ended.find("http-equiv"), std::string::npos) << ended;
  EXPECT_NE(ended.find("<strong class=\"failed\">failed</strong>"), std::string::npos) << ended;
  EXPECT_NE(ended.find("&lt;No space left on device&gt;"), std::string::npos) << ended;
  EXPECT_EQ(ended.find("<img"), std::string::npos);
}

TEST(RunPage, ConfigChangesAreTheKeysThatDifferFromTheDefaults) {
  RunConfig c;
  c.name = "other-name";  // the title, not a change
  c.train.steps = 321;
  c.train.lr = 0.125;
  const RunPageConfig page = run_page_config(config_to_json(c));
  EXPECT_EQ(page.steps, 321);
  const std::vector<std::pair<std::string, std::string>> want = {{"train.lr", "0.125"}, {"train.steps", "321"}};
  EXPECT_EQ(page.changes, want);
  EXPECT_TRUE(run_page_config(config_to_json(RunConfig{})).changes.empty());
}

std::string page_of(const TempDir& d) { return read_text(d / "index.html"); }

// A run's page while it trains reloads; its last write, at every ending, does not.
TEST(RunPage, EveryEndingDropsTheReload) {
  TempDir completed, diverged, interrupted;
  ASSERT_EQ(run_normtool("run " + kTinyModel + "--set train.steps=3 --out " + completed.str()).exit_code, 0);
  EXPECT_EQ(page_of(completed).find("http-equiv"), std::string::npos);
  EXPECT_NE(page_of(completed).find(">completed</strong>"), std::string::npos) << page_of(completed);

  const auto r = run_normtool(
      "run --set data.dataset=synthetic-classify --set model.arch=mlp --set model.norm.type=none "
      "--set train.optimizer=sgd --set train.lr=1e4 --set model.init_std=1 --set train.threads=1 --out " +
      diverged.str());
  ASSERT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(page_of(diverged).find("http-equiv"), std::string::npos);
  EXPECT_NE(page_of(diverged).find(">diverged</strong>"), std::string::npos) << page_of(diverged);

  // the page as it stood while the run trained is copied before the interrupt
  const std::string out = interrupted.str();
  const auto stopped = run_normtool("run " + kTinyModel + "--set train.steps=1000000 --out " + out + " & pid=$!; " +
                                    "for i in $(seq 600); do grep -q running " + out + "/index.html 2>/dev/null && " +
                                    "break; sleep 0.1; done; cp " + out + "/index.html " + out + "-live.html; " +
                                    "kill -INT $pid; wait $pid");
  EXPECT_EQ(stopped.exit_code, 130) << stopped.output;
  const std::string live = read_text(out + "-live.html");
  fs::remove(out + "-live.html");
  EXPECT_NE(live.find(kReload), std::string::npos) << live;
  EXPECT_NE(live.find(">running</strong>"), std::string::npos) << live;
  EXPECT_EQ(page_of(interrupted).find("http-equiv"), std::string::npos);
  EXPECT_NE(page_of(interrupted).find(">interrupted</strong>"), std::string::npos) << page_of(interrupted);
}

// While the run trains its pictures are redrawn (here at every evaluation: train.pictures_every_s 0),
// and the page shows them then, not only when the run ends: the live page, copied before the
// interrupt, shows loss.png and stats.png, both PNG files by then.
TEST(RunPage, ShowsThePicturesWhileTheRunTrains) {
  if (run_shell("command -v gnuplot").exit_code != 0) GTEST_SKIP() << "gnuplot is not installed";
  TempDir d;
  const std::string out = d.str(), live = out + "-live";
  const auto stopped = run_normtool(
      "run " + kTinyModel + "--set train.steps=1000000 --set train.eval_every=20 --set train.stats_every=20 " +
      "--set train.pictures_every_s=0 --out " + out + " & pid=$!; for i in $(seq 600); do grep -q running " + out +
      "/index.html 2>/dev/null && grep -q 'src=\"stats.png\"' " + out + "/index.html && break; sleep 0.1; done; " +
      "mkdir " + live + "; cp " + out + "/index.html " + out + "/loss.png " + out + "/stats.png " + live + "; " +
      "kill -INT $pid; wait $pid");
  EXPECT_EQ(stopped.exit_code, 130) << stopped.output;
  const std::string page = read_text(live + "/index.html");
  EXPECT_NE(page.find(">running</strong>"), std::string::npos) << page;
  EXPECT_NE(page.find(kReload), std::string::npos) << page;
  for (const char* png : {"loss.png", "stats.png"}) {
    EXPECT_NE(page.find(std::string("<img src=\"") + png + "\""), std::string::npos) << page;
    EXPECT_EQ(read_text(live + "/" + png).substr(1, 3), "PNG") << png;
  }
  fs::remove_all(live);
}

}  // namespace
}  // namespace nt::test
