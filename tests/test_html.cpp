// The HTML pieces (io/html.h, io/markdown_html.h): escaping, base64, the report's markdown as
// HTML, and pictures inlined only when they are PNG files of normtool's own.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "helpers.h"
#include "io/html.h"
#include "io/markdown_html.h"
#include "png.h"

namespace nt::test {
namespace {

namespace fs = std::filesystem;

std::string md(const std::string& text) {
  return markdown_to_html(text, [](const std::string& src) { return "pic:" + src; });
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST(Html, EscapesTheFiveCharacters) {
  EXPECT_EQ(html_escape("a<b>&\"c'd"), "a&lt;b&gt;&amp;&quot;c&#39;d");
  EXPECT_EQ(html_escape("plain text, 1.5e-3"), "plain text, 1.5e-3");
}

TEST(Html, Base64MatchesRfc4648) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, coded] : vectors) EXPECT_EQ(base64(plain), coded) << plain;
  EXPECT_EQ(base64(std::string("\xff\xfe\x00", 3)), "//4A");
}

TEST(Html, PagesReloadOnlyWhenAskedAndEscapeTheirTitle) {
  const std::string still = html_page("a <b>", "<p>x</p>\n"), live = html_page("t", "", 7);
  EXPECT_NE(still.find("<title>a &lt;b&gt;</title>"), std::string::npos) << still;
  EXPECT_EQ(still.find("http-equiv"), std::string::npos);
  EXPECT_NE(live.find("<meta http-equiv=\"refresh\" content=\"7\">"), std::string::npos) << live;
  for (const std::string& page : {still, live}) {  // self-contained: nothing fetched from elsewhere
    EXPECT_EQ(page.find("<link"), std::string::npos);
    EXPECT_EQ(page.find("<script"), std::string::npos);
    EXPECT_EQ(page.find("url("), std::string::npos);
  }
}

TEST(Html, MarkdownTablesBecomeTables) {
  EXPECT_EQ(md("| a | b \\| c |\n|---|:--:|\n| **1** | `x<y` |\n| [E1](#E1-x) | 2 |\n"),
            "<table>\n<thead><tr><th>a</th><th>b | c</th></tr>\n</thead>\n<tbody>\n"
            "<tr><td><strong>1</strong></td><td><code>x&lt;y</code></td></tr>\n"
            "<tr><td><a href=\"#E1-x\">E1</a></td><td>2</td></tr>\n</tbody></table>\n");
  // rows without a |---| line: a table without a header
  EXPECT_EQ(md("| a |\n| b |\n"), "<table>\n<tbody>\n<tr><td>a</td></tr>\n<tr><td>b</td></tr>\n</tbody></table>\n");
}

TEST(Html, MarkdownBlocks) {
  EXPECT_EQ(md("# T (QUICK)\n\npara one\nline two\n\n- item **b**\n  continued\n- two\n\n## S\n"),
            "<h1>T (QUICK)</h1>\n<p>para one\nline two</p>\n<ul>\n<li>item <strong>b</strong>\ncontinued</li>\n"
            "<li>two</li>\n</ul>\n<h2>S</h2>\n");
  EXPECT_EQ(md("```\nx < y && **not bold**\n```\nafter\n"),
            "<pre><code>x &lt; y &amp;&amp; **not bold**\n</code></pre>\n<p>after</p>\n");
  EXPECT_EQ(md("<a id=\"C8-post-ln-needs-warmup\"></a>\n"), "<a id=\"C8-post-ln-needs-warmup\"></a>\n");
  EXPECT_EQ(md("![C8](C8-x/val-loss.png)\n"), "<p><img src=\"pic:C8-x/val-loss.png\" alt=\"C8\"></p>\n");
}

// Text from a claim, a result.json or a run name can hold anything: it shows as written and adds
// no element, no attribute and no script link.
TEST(Html, MarkdownEscapesEveryTextAndKeepsOnlySafeLinks) {
  const std::string out =
      md("<script>alert(1)</script> & \"q\" 'a'\n\n<a id=\"x\" onclick=\"y\"></a>\n\n"
         "[run](javascript:void) [d](data:text/html,x) [p](//evil.example/x) [ok](../docs/claims.md) "
         "[web](https://example.org/a?b=1&c=2) ![\"><script>](x.png)\n");
  EXPECT_EQ(out.find("<script"), std::string::npos) << out;
  EXPECT_EQ(out.find("onclick=\""), std::string::npos) << out;
  EXPECT_NE(out.find("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot; &#39;a&#39;"), std::string::npos);
  for (const char* gone : {"javascript:", "href=\"data:", "href=\"//"})
    EXPECT_EQ(out.find(gone), std::string::npos) << gone;
  EXPECT_NE(out.find("<a href=\"../docs/claims.md\">ok</a>"), std::string::npos) << out;
  EXPECT_NE(out.find("<a href=\"https://example.org/a?b=1&amp;c=2\">web</a>"), std::string::npos) << out;
  EXPECT_NE(out.find("alt=\"&quot;&gt;&lt;script&gt;\""), std::string::npos) << out;
  // the shown text of a refused link stays; a picture the source does not give is marked missing
  EXPECT_NE(out.find(">run "), std::string::npos) << out;
  EXPECT_NE(markdown_to_html("![a](b.png)", [](const std::string&) { return ""; }).find("(picture missing: b.png)"),
            std::string::npos);
  // a million brackets: text, in linear time, not a million nested calls
  std::string deep(1'000'000, '[');
  deep.append("x](y)").append(1'000'000, '*');
  for (int i = 0; i < 100'000; ++i) deep += "[a](";
  EXPECT_GT(md(deep).size(), deep.size());
}

TEST(Html, OnlyAPngFileOfItsOwnIsInlined) {
  TempDir d;
  fs::create_directories(d.path);
  Picture p{2, 1, {{255, 0, 0}, {0, 0, 255}}};
  const std::string png = encode_png(p);
  std::ofstream(d / "a.png", std::ios::binary) << png;
  std::ofstream(d / "secret.png", std::ios::binary) << "not a picture\n";
  fs::create_symlink(d / "a.png", d / "link.png");
  EXPECT_EQ(png_data_uri(d / "a.png"), "data:image/png;base64," + base64(png));
  EXPECT_EQ(decode_png(png).pixels, p.pixels);  // the test's own PNG reader, on the writer's output
  for (const char* refused : {"secret.png", "link.png", "missing.png", "."})
    EXPECT_EQ(png_data_uri(d / refused), "") << refused;
}

// The committed report converts whole: one <table> per table, every section's anchor, and no
// markdown left over outside code
TEST(Html, TheCommittedReportConverts) {
  const std::string text = read_text(source_dir() + "/reports/REPORT.md");
  ASSERT_FALSE(text.empty());
  const std::string out = md(text);
  std::size_t tables = 0, anchors = 0, pictures = 0;
  std::istringstream lines(text);
  bool in_table = false, in_code = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("```")) in_code = !in_code;
    if (in_code) continue;
    tables += line.starts_with("|") && !in_table;
    in_table = line.starts_with("|");
    anchors += line.starts_with("<a id=");
    pictures += line.starts_with("![");
  }
  EXPECT_GT(tables, 20u);
  EXPECT_EQ(count(out, "<table>"), tables);
  EXPECT_EQ(count(out, "<a id=\""), anchors);
  EXPECT_EQ(count(out, "<img src=\"pic:"), pictures);
  std::string outside_code;  // the HTML without its <code> elements (a <pre> holds one)
  for (std::size_t at = 0; at < out.size();) {
    const auto open = out.find("<code>", at);
    outside_code += out.substr(at, open == std::string::npos ? std::string::npos : open - at);
    at = open == std::string::npos ? out.size() : out.find("</code>", open) + 7;
  }
  EXPECT_EQ(outside_code.find("**"), std::string::npos);
  EXPECT_EQ(outside_code.find('`'), std::string::npos);
  EXPECT_EQ(outside_code.find("]("), std::string::npos);
}

}  // namespace
}  // namespace nt::test
