// REPORT.html and a run's index.html in headless Chromium (issue #41): each page renders its
// tables and its pictures, with no console message. The pages and their screenshots stay in the
// build tree (build/tests/pages/: report/REPORT.html, report.png, run/index.html, run.png) to look at.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "browser.h"
#include "claims/claim.h"
#include "report/report.h"
#include "helpers.h"
#include "io/html.h"
#include "png.h"

namespace nt::test {
namespace {

namespace fs = std::filesystem;

const fs::path kPages = fs::path(output_dir()) / "pages";

bool near(Rgb a, Rgb b) { return std::abs(a.r - b.r) <= 2 && std::abs(a.g - b.g) <= 2 && std::abs(a.b - b.b) <= 2; }
bool white(Rgb p) { return p.r > 245 && p.g > 245 && p.b > 245; }

// Whether `screen` shows `picture` at its own size: the picture's busiest row is looked for at
// every place, and where it is found every 5th pixel of the whole picture must match (within 2).
bool shows(const Picture& screen, const Picture& picture) {
  int row = 0, most = -1;
  for (int y = 0; y < picture.height; ++y) {
    int inked = 0;
    for (int x = 0; x < picture.width; ++x) inked += !white(picture.at(x, y));
    if (inked > most) most = inked, row = y;
  }
  const auto matches = [&](int ox, int oy, int step, int y0, int y1) {
    for (int y = y0; y < y1; y += step)
      for (int x = 0; x < picture.width; x += step)
        if (!near(screen.at(ox + x, oy + y), picture.at(x, y))) return false;
    return true;
  };
  for (int oy = 0; oy + picture.height <= screen.height; ++oy)
    for (int ox = 0; ox + picture.width <= screen.width; ++ox)
      if (matches(ox, oy, 1, row, row + 1) && matches(ox, oy, 5, 0, picture.height)) return true;
  return false;
}

// The share of the screenshot that is not the page's white: text, rules, pictures
double inked(const Picture& screen) {
  std::size_t n = 0;
  for (Rgb p : screen.pixels) n += !white(p);
  return double(n) / double(screen.pixels.size());
}

// A picture no page shows by chance: red to blue from left to right, in green stripes
Picture test_picture() {
  Picture p{240, 120, {}};
  for (int y = 0; y < p.height; ++y)
    for (int x = 0; x < p.width; ++x)
      p.pixels.push_back({uint8_t(255 - x), uint8_t(y % 20 < 10 ? 40 : 160), uint8_t(x)});
  return p;
}

Picture screenshot_of(const fs::path& file) {
  const Picture p = decode_png(read_text(file.string()));
  EXPECT_EQ(p.width, 1200) << file << ": not a 1200x2000 PNG";
  EXPECT_EQ(p.height, 2000) << file;
  return p;
}

// A report of two claims: E1 (FAIL, with a plot: its section comes first, within the screenshot)
// and C8 (PASS, quick, with a measure and details),
// every text holding < > & and quotes, written as `reproduce` writes one.
fs::path write_test_report(const std::string& png) {
  const fs::path dir = kPages / "report";
  fs::remove_all(dir);
  const Claim *e1 = find_claim("E1"), *c8 = find_claim("C8");
  ClaimResult a, b;
  a.verdict = ClaimVerdict::fail;
  a.measured = "12 of 42 cells <agree> & \"disagree\", max |ratio - 1| = 2";  // a | inside the table's cell
  a.plots = {"val-loss.png"};
  b.verdict = ClaimVerdict::pass;
  b.measured = "Post-LN without / with warm-up: 1.31 ['quick']";
  b.seeds = {1, 2, 3}, b.look = 3, b.setting = "quick: 40 steps <shrunk>";
  b.measures = {measure_of("Post-LN loss <no warm-up> / warm-up", {1.30, 1.31, 1.32}, AtLeast{1.2})};
  b.details = "| run | <loss> |\n|---|---|\n| a&b | 1.5 |\n\n<script>alert(1)</script> [x](javascript:void)\n";
  for (const auto& [claim, result] : {std::pair{e1, a}, std::pair{c8, b}}) {
    const fs::path claim_dir = dir / (claim->id + "-" + claim->slug);
    fs::create_directories(claim_dir);
    save_result(claim_dir.string(), result);
  }
  std::ofstream(dir / (e1->id + "-" + e1->slug) / "val-loss.png", std::ios::binary) << png;
  write_report(dir.string(), load_results(dir.string()));
  return dir / "REPORT.html";
}

TEST(HtmlReport, ChromiumRendersTheVerdictTableTheSectionsAndThePictures) {
  ASSERT_FALSE(chromium_binary().empty()) << kInstallChromium;
  const Picture picture = test_picture();
  const std::string png = encode_png(picture);
  const fs::path page = write_test_report(png);
  const std::string html = read_text(page.string());
  EXPECT_NE(html.find("<title>normtool: the claims about normalization, reproduced (QUICK"), std::string::npos);
  EXPECT_NE(html.find("(PARTIAL: 2 of"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos) << "a text of the data became an element";
  EXPECT_EQ(html.find("javascript:"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("<img src=\"data:image/png;base64," + base64(png) + "\""), std::string::npos);

  const BrowserView view = open_in_chromium(page.string(), (kPages / "report.png").string());
  ASSERT_EQ(view.exit_code, 0) << view.log;
  EXPECT_TRUE(view.console().empty()) << view.log;
  for (const char* row :
       {"<td><a href=\"#E1-invariance-table\">E1</a>", "<td><a href=\"#C8-post-ln-needs-warmup\">C8</a>",
        "<strong class=\"FAIL\">FAIL</strong>", "<strong class=\"PASS\">PASS</strong>",
        "<td>Post-LN loss &lt;no warm-up&gt; / warm-up</td>",
        "<td>12 of 42 cells &lt;agree&gt; &amp; \"disagree\", max |ratio - 1| = 2</td>", "<td>a&amp;b</td>",
        "<a id=\"C8-post-ln-needs-warmup\"></a>", "<img src=\"data:image/png;base64,iVBOR"})
    EXPECT_NE(view.dom.find(row), std::string::npos) << row << "\n" << view.dom;
  const Picture screen = screenshot_of(kPages / "report.png");
  EXPECT_GT(inked(screen), 0.02) << "a blank page";
  EXPECT_TRUE(shows(screen, picture)) << "the plot is not on the screenshot";
}

TEST(HtmlReport, ChromiumRendersAFinishedRunsPage) {
  ASSERT_FALSE(chromium_binary().empty()) << kInstallChromium;
  const fs::path run = kPages / "run";
  fs::remove_all(run);
  const CommandResult r = run_normtool("run --config " + source_dir() +
                                       "/configs/smoke/lm-layernorm-pre.json --set train.steps=4 --set "
                                       "train.eval_every=2 --set train.stats_every=2 --out " +
                                       run.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* p : {"loss.png", "stats.png", "layers.png", "ranges.png"})
    ASSERT_TRUE(fs::is_regular_file(run / p)) << p << " (gnuplot-nox draws it: scripts/setup.sh installs it)\n"
                                              << r.output;
  const BrowserView view = open_in_chromium((run / "index.html").string(), (kPages / "run.png").string());
  ASSERT_EQ(view.exit_code, 0) << view.log;
  EXPECT_TRUE(view.console().empty()) << view.log;
  EXPECT_EQ(view.dom.find("http-equiv"), std::string::npos) << "a finished run's page reloads";
  for (const char* element : {"<h1>smoke-lm-layernorm-pre</h1>", "<strong class=\"completed\">completed</strong>",
                              "<td>4 of 4</td>", "<code>train.steps</code>", "<img src=\"loss.png\"",
                              "<img src=\"stats.png\"", "<img src=\"layers.png\"", "<img src=\"ranges.png\""})
    EXPECT_NE(view.dom.find(element), std::string::npos) << element << "\n" << view.dom;
  const Picture screen = screenshot_of(kPages / "run.png");
  EXPECT_GT(inked(screen), 0.02) << "a blank page";
  const Picture loss = decode_png(read_text((run / "loss.png").string()));
  ASSERT_GT(loss.width, 0) << "loss.png: not an 8-bit RGB PNG";
  EXPECT_TRUE(shows(screen, loss)) << "loss.png is not on the screenshot";
}

// The checks above can fail: a script error is a console message, and a picture that is not on
// the page is not found on its screenshot.
TEST(HtmlReport, ChromiumChecksCatchAScriptErrorAndAMissingPicture) {
  ASSERT_FALSE(chromium_binary().empty()) << kInstallChromium;
  fs::create_directories(kPages);
  const fs::path page = kPages / "broken.html";
  std::ofstream(page) << html_page("broken", "<h1>no picture here</h1>\n<script>not_defined();</script>\n");
  const BrowserView view = open_in_chromium(page.string(), (kPages / "broken.png").string());
  ASSERT_EQ(view.exit_code, 0) << view.log;
  ASSERT_EQ(view.console().size(), 1u) << view.log;
  EXPECT_NE(view.console()[0].find("Uncaught ReferenceError"), std::string::npos) << view.console()[0];
  EXPECT_FALSE(shows(screenshot_of(kPages / "broken.png"), test_picture()));
}

}  // namespace
}  // namespace nt::test
