// The claim registry: complete metadata, one experiment README per claim whose header is the
// registry's (regenerate with `normtool reproduce --sync-readmes`).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "claims/claim.h"
#include "claims/report.h"

namespace nt::test {
namespace {

TEST(Claims, RegistryHasEveryFieldOnce) {
  std::set<std::string> ids, slugs;
  for (const Claim& c : all_claims()) {
    SCOPED_TRACE(c.id);
    EXPECT_TRUE(ids.insert(c.id).second);
    EXPECT_TRUE(slugs.insert(c.slug).second);
    for (const char* field : {c.title, c.criterion, c.source, c.setup}) EXPECT_GT(std::string(field).size(), 10u);
    EXPECT_EQ(c.exact, c.id[0] == 'E');
    EXPECT_NE(c.run, nullptr);
    EXPECT_EQ(find_claim(c.id), &c);
  }
  EXPECT_EQ(find_claim("X9"), nullptr);
}

TEST(Claims, ExperimentReadmesStartWithTheRegistryHeader) {
  for (const Claim& c : all_claims()) {
    const auto path = std::filesystem::path(NORMTOOL_SOURCE_DIR) / "experiments" / (std::string(c.id) + "-" + c.slug) /
                      "README.md";
    std::ifstream in(path);
    ASSERT_TRUE(in) << path;
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(with_readme_header(c, text.str()), text.str())
        << path << " is out of date: run `normtool reproduce --sync-readmes`";
  }
}

TEST(Claims, ReadmeHeaderIsReplacedNotStacked) {
  const Claim& c = all_claims().front();
  const std::string once = with_readme_header(c, "Hand-written text.\n");
  EXPECT_EQ(with_readme_header(c, once), once);
  EXPECT_NE(once.find(c.criterion), std::string::npos);
  EXPECT_NE(once.find("Hand-written text."), std::string::npos);
}

}  // namespace
}  // namespace nt::test
