// The reference in docs/ is generated from the code (docs/config.md from the config's field
// table, docs/claims.md's claims from the registry): these tests fail when the two drift, and
// name the command that regenerates them.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "claims/claim.h"
#include "report/report.h"
#include "report/results_table.h"
#include "config/config.h"
#include "helpers.h"

namespace nt {
namespace {

std::string read_source(const std::string& relative) {
  std::ifstream in(test::source_dir() + "/" + relative);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Docs, ConfigMdIsWhatTheFieldTableSays) {
  EXPECT_EQ(read_source("docs/config.md"), config_reference())
      << "docs/config.md is out of date: run `build/normtool config > docs/config.md`";
}

TEST(Docs, NormtoolConfigPrintsDocsConfigMd) {
  const auto r = test::run_normtool("config");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, read_source("docs/config.md"));
}

TEST(Docs, EveryConfigKeyHasATypeADefaultAndAMeaning) {
  const auto keys = config_keys();
  ASSERT_GE(keys.size(), 40u);
  for (const ConfigKey& k : keys) {
    EXPECT_FALSE(k.type.empty()) << k.path;
    EXPECT_FALSE(k.default_value.empty()) << k.path;
    EXPECT_GE(k.meaning.size(), 10u) << k.path << ": add .means(\"...\") to its line of config.cpp's field table";
  }
  // a key as the table renders it: type, range, default
  const std::string md = config_reference();
  EXPECT_NE(md.find("| `data.seq_len` | integer | >= 1 and <= 4096 | `64` |"), std::string::npos);
  EXPECT_NE(md.find("| `model.norm.type` | one of | `none`, "), std::string::npos);
}

TEST(Docs, ClaimsMdHoldsEveryClaimOfTheRegistry) {
  const std::string doc = read_source("docs/claims.md");
  EXPECT_NE(doc.find(claims_reference()), std::string::npos)
      << "docs/claims.md is out of date: run `build/normtool reproduce --sync-readmes`";
  for (const Claim& c : all_claims()) {
    EXPECT_GE(std::string(c.why).size(), 40u) << c.id << ": its registry row needs the why of its criterion";
    EXPECT_NE(doc.find(std::string("### ") + c.id + ": " + c.title), std::string::npos) << c.id;
  }
}

// The README opens with the committed report's verdicts, one line a claim, as the reproduction
// writes them from reports/verdicts.json: a README table that is not that file's is stale.
TEST(Docs, ReadmeShowsTheCommittedVerdicts) {
  const nlohmann::json verdicts = nlohmann::json::parse(read_source("reports/verdicts.json"));
  const std::string table = results_table(verdicts, "reports/REPORT.md");
  const std::string readme = read_source("README.md");
  EXPECT_NE(readme.find(table), std::string::npos)
      << "README.md's results are stale: run `build/normtool reproduce --sync-readmes`";
  EXPECT_LT(readme.find(table), 2000u) << "the results come first, after the two commands";
  for (const auto& v : verdicts) {
    const std::string row = "| [" + v["id"].get<std::string>() + "](reports/REPORT.md#";
    EXPECT_NE(table.find(row), std::string::npos) << v["id"];
    EXPECT_NE(table.find("**" + v["verdict"].get<std::string>() + "**"), std::string::npos);
    // the figure and its criterion, the measure's name left to the report
    if (const std::string value = v.value("value", ""); !value.empty()) {
      EXPECT_NE(table.find("| " + value.substr(0, value.find(": ")) + " |\n"), std::string::npos) << v["id"];
    }
  }
  EXPECT_EQ(with_results_table("no markers\n", table), "no markers\n");
  // a report without some claims of the registry names them after the table, with the command
  const std::string partial = results_table(nlohmann::json::array({verdicts[0]}), "reports/REPORT.md");
  EXPECT_NE(partial.find("Not in this report yet: E2, E3, "), std::string::npos) << partial;
  EXPECT_NE(partial.find("`normtool reproduce E2 E3 "), std::string::npos) << partial;
}

TEST(Docs, ClaimsReferenceReplacesOnlyItsPart) {
  const std::string ref = claims_reference();
  const std::string doc = "# Claims\n\nby hand\n\n" + ref + "\nafter\n";
  EXPECT_EQ(with_claims_reference(doc), doc);
  const std::string stale =
      "# Claims\n\nby hand\n\n" + ref.substr(0, 120) + "old text\n<!-- end of the generated claims -->\n\nafter\n";
  EXPECT_EQ(with_claims_reference(stale), "# Claims\n\nby hand\n\n" + ref + "\nafter\n");
}

}  // namespace
}  // namespace nt
