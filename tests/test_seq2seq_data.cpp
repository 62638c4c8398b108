// The seq2seq data: the .mo reader (hostile files included), gettext-de's pair rules, split and
// corpus hash against figures an independent Python reading computed (scripts/gettext_fixture.py,
// tests/golden/gettext_fixture.json), the padding of a batch, and synthetic-seq2seq.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <set>

#include "config/config.h"
#include "config/gettext_catalogs.h"
#include "data/dataset.h"
#include "helpers.h"

namespace nt {
namespace {

const std::string kFixture = test::golden_dir() + "/gettext";

nlohmann::json expected() { return test::read_json(test::golden_dir() + "/gettext_fixture.json"); }

DataConfig fixture_config() {
  DataConfig d;
  d.dataset = DatasetKind::gettext_de;
  d.max_len = 24;
  d.val_fraction = 0.3;
  return d;
}

TEST(GettextDe, PairsSplitAndHashMatchAnIndependentReading) {
  const nlohmann::json e = expected();
  std::vector<std::string> read;
  auto pairs = gettext_pairs(kFixture, {"beta", "alpha"}, 24, &read);  // file-name order, whatever the list's
  ASSERT_EQ(read.size(), 2u);
  EXPECT_NE(read[0].find("alpha.mo"), std::string::npos);
  ASSERT_EQ(pairs.size(), e["pairs"].get<std::size_t>());  // 31
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    EXPECT_EQ(pairs[i].src, e["sources"][i].get<std::string>()) << i;
    EXPECT_EQ(pairs[i].tgt, e["targets"][i].get<std::string>()) << i;
  }
  // dedup: alpha is read first, so its "Open" wins over beta's; beta's first "Zoom" over its second
  auto find = [&](const std::string& s) {
    for (const auto& p : pairs)
      if (p.src == s) return p.tgt;
    return std::string("<absent>");
  };
  EXPECT_EQ(find("Open"),
            "\xc3\x96"
            "ffnen");
  EXPECT_EQ(find("Zoom"),
            "Vergr\xc3\xb6\xc3\x9f"
            "ern");
  for (const char* skipped : {"Name", "%d files", "Downloads", "OK", "Format", "one file", "Untranslated", "Short",
                              "Tab\there", "line one\nline two", "Del\x7f", "Size: 100%"})
    EXPECT_EQ(find(skipped), "<absent>") << skipped;

  auto data = make_seq2seq_dataset(std::move(pairs), fixture_config(), read);
  ASSERT_TRUE(data->is_seq2seq());
  EXPECT_FALSE(data->is_lm());
  const CorpusFingerprint* f = data->fingerprint();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->train_pairs, e["train_pairs"].get<int64_t>());  // 23
  EXPECT_EQ(f->val_pairs, e["val_pairs"].get<int64_t>());      // 8
  EXPECT_EQ(fmt::format("{:016x}", f->hash), e["corpus_fnv1a64"].get<std::string>());
  // the validation pairs, in their sorted order
  Batch b;
  const int V = int(f->val_pairs);
  data->val_batch(0, V, b);
  for (int i = 0; i < V; ++i) {
    const std::string want = e["validation"][i].get<std::string>();
    for (int j = 0; j < b.S; ++j) {
      const int32_t byte = j < int(want.size()) ? int32_t(uint8_t(want[j])) : 0;
      ASSERT_EQ(b.src[std::size_t(i) * b.S + j], byte) << "validation pair " << i << " byte " << j;
    }
  }
}

TEST(GettextDe, MaxLenChangesThePairCount) {
  // a looser limit keeps the two long entries the fixture's 24 bytes refuse
  EXPECT_EQ(gettext_pairs(kFixture, {"alpha", "beta"}, 24).size(), 31u);
  EXPECT_EQ(gettext_pairs(kFixture, {"alpha", "beta"}, 64).size(), 33u);
  EXPECT_EQ(gettext_pairs(kFixture, {"alpha", "beta"}, 4).size(), 2u);  // No -> Nein, Yes -> Ja
}

TEST(GettextDe, PairRules) {
  EXPECT_TRUE(gettext_pair_ok("Open",
                              "\xc3\x96"
                              "ffnen",
                              48));
  EXPECT_FALSE(gettext_pair_ok("", "x", 48));  // the header
  EXPECT_FALSE(
      gettext_pair_ok("a\x04"
                      "b",
                      "c", 48));                                        // a context
  EXPECT_FALSE(gettext_pair_ok(std::string_view("a\0b", 3), "c", 48));  // plural forms
  EXPECT_FALSE(gettext_pair_ok("a", "", 48));
  EXPECT_FALSE(gettext_pair_ok("same", "same", 48));
  EXPECT_FALSE(gettext_pair_ok("50%", "50 Prozent", 48));
  EXPECT_FALSE(gettext_pair_ok("a\nb", "c", 48));
  EXPECT_FALSE(gettext_pair_ok("abcde", "x", 4));
  EXPECT_FALSE(gettext_pair_ok("x", "abcde", 4));
  EXPECT_TRUE(gettext_pair_ok("abcd", "wxyz", 4));
}

TEST(GettextDe, SplitRuleIsTheFnvHashOfTheSource) {
  // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (the published test vector); mod 1000 = 340
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("a") % 1000, 0xaf63dc4c8601ec8cull % 1000);
  const uint64_t r = fnv1a64("a") % 1000;
  EXPECT_TRUE(is_validation_pair("a", double(r + 1) / 1000.0));
  EXPECT_FALSE(is_validation_pair("a", double(r) / 1000.0));
}

TEST(Seq2SeqBatch, PadsWithBosEosAndMasks) {
  std::vector<Seq2SeqPair> pairs;
  for (const char* s : {"ab", "abcd", "x", "hello", "q", "zz", "yes", "no", "k", "mm", "uvw", "rst"})
    pairs.push_back({s, std::string(s) + "!"});
  std::sort(pairs.begin(), pairs.end(),
            [](const auto& x, const auto& y) { return x.src < y.src; });  // as the readers give them
  DataConfig d;
  d.dataset = DatasetKind::synthetic_seq2seq;
  d.val_fraction = 0.5;
  auto data = make_seq2seq_dataset(pairs, d);
  Batch b;
  data->val_batch(0, 2, b);
  // the first two validation pairs in sorted order
  std::vector<std::string> val;
  for (const auto& p : pairs)
    if (is_validation_pair(p.src, 0.5)) val.push_back(p.src);
  std::sort(val.begin(), val.end());
  ASSERT_GE(val.size(), 2u);
  const int S = int(std::max(val[0].size(), val[1].size())), T = int(std::max(val[0].size(), val[1].size())) + 2;
  ASSERT_EQ(b.B, 2);
  ASSERT_EQ(b.S, S);
  ASSERT_EQ(b.T, T);  // target = source + "!", plus EOS
  EXPECT_TRUE(b.padded);
  for (int r = 0; r < 2; ++r) {
    const std::string& s = val[r];
    const std::string y = s + "!";
    for (int j = 0; j < S; ++j) {
      EXPECT_EQ(b.src[r * S + j], j < int(s.size()) ? int32_t(uint8_t(s[j])) : kPad);
      EXPECT_EQ(b.src_mask[r * S + j], j < int(s.size()) ? 1.0f : 0.0f);
    }
    EXPECT_EQ(b.tokens[r * T], kBos);
    for (int t = 0; t < T; ++t) {
      const int32_t want_target = t < int(y.size()) ? int32_t(uint8_t(y[t])) : t == int(y.size()) ? kEos : kPad;
      EXPECT_EQ(b.targets[r * T + t], want_target) << r << " " << t;
      EXPECT_EQ(b.mask[r * T + t], t <= int(y.size()) ? 1.0f : 0.0f);
      if (t > 0) {
        EXPECT_EQ(b.tokens[r * T + t], t - 1 < int(y.size()) ? int32_t(uint8_t(y[t - 1])) : kPad);
      }
    }
  }
  EXPECT_EQ(b.real_targets(), int64_t(val[0].size() + val[1].size() + 4));
}

TEST(SyntheticSeq2seq, ReversedThroughOneLetterMapSeededAndSorted) {
  const auto a = synthetic_seq2seq_pairs(1, 48), b = synthetic_seq2seq_pairs(1, 48), c = synthetic_seq2seq_pairs(2, 48);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i].src, b[i].src);
  bool differ = a.size() != c.size();
  for (std::size_t i = 0; i < std::min(a.size(), c.size()) && !differ; ++i) differ = a[i].tgt != c[i].tgt;
  EXPECT_TRUE(differ) << "another seed, other pairs";
  EXPECT_GT(a.size(), 11000u);  // 12,000 draws, few duplicates among the long ones
  EXPECT_LE(a.size(), 12000u);
  char map[26] = {};
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (i) {
      ASSERT_LT(a[i - 1].src, a[i].src);
    }
    const std::string& s = a[i].src;
    ASSERT_GE(s.size(), 1u);
    ASSERT_LE(s.size(), 24u);
    ASSERT_EQ(a[i].tgt.size(), s.size());
    for (std::size_t j = 0; j < s.size(); ++j) {
      const char in = s[s.size() - 1 - j], out = a[i].tgt[j];
      if (!map[in - 'a']) map[in - 'a'] = out;
      ASSERT_EQ(map[in - 'a'], out) << "one letter map throughout";
    }
  }
  std::set<char> image(map, map + 26);
  EXPECT_EQ(image.size(), 26u);  // a permutation
  EXPECT_LE(synthetic_seq2seq_pairs(1, 5).back().src.size(), 5u);
}

// Hostile catalogs: every one is a DataError naming the file, never a crash or a read past the end.
class HostileMo : public ::testing::Test {
 protected:
  test::TempDir dir;
  void SetUp() override { std::filesystem::create_directories(dir.path); }
  std::string write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir / name, std::ios::binary) << bytes;
    return dir / name;
  }
  static std::string header(uint32_t n, uint32_t o, uint32_t t) {
    uint32_t w[7] = {0x950412de, 0, n, o, t, 0, 0};
    return std::string(reinterpret_cast<const char*>(w), sizeof w);
  }
  void expect_refused(const std::string& path, const std::string& why) {
    try {
      read_mo(path);
      ADD_FAILURE() << "accepted " << path;
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
};

TEST_F(HostileMo, RefusedWithTheFileNamed) {
  expect_refused(write("short.mo", "\xde\x12\x04\x95"), "shorter than the 20-byte header");
  expect_refused(write("magic.mo", std::string(28, 'x')), "magic");
  expect_refused(write("count.mo", header(0x10000000, 28, 28)), "runs past the end");
  expect_refused(write("table.mo", header(1, 0xfffffff0u, 28)), "runs past the end");
  // one entry whose string claims 4 GB at offset 28
  std::string s = header(1, 28, 36);
  const uint32_t entry[4] = {0xffffffffu, 28, 1, 28};
  s.append(reinterpret_cast<const char*>(entry), sizeof entry);
  expect_refused(write("string.mo", s), "runs past the end");
  std::string rev = header(0, 28, 28);
  rev[6] = 2;  // revision 0x20000
  expect_refused(write("revision.mo", rev), "revision");
  ASSERT_EQ(::mkfifo((dir / "fifo.mo").c_str(), 0600), 0);
  expect_refused(dir / "fifo.mo", "not a regular file");  // would block forever if opened for reading
  std::filesystem::create_directory(dir / "folder.mo");
  expect_refused(dir / "folder.mo", "not a regular file");
  // a valid empty catalog reads as no entries
  EXPECT_TRUE(read_mo(write("empty.mo", header(0, 28, 28))).empty());
}

TEST_F(HostileMo, MissingCatalogNamesTheFileAndThePackage) {
  try {
    gettext_pairs(dir.str(), {"coreutils"}, 48);
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(dir / "coreutils.mo"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'coreutils'"), std::string::npos) << e.what();
  }
  try {
    gettext_pairs(dir.str(), {"no-such-thing"}, 48);
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-thing.mo"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no known Debian package"), std::string::npos) << e.what();
  }
}

TEST(GettextDe, DefaultCatalogsEachHaveAPackageAndSenselessConfigsAreRefused) {
  for (const std::string& stem : default_gettext_catalogs())
    EXPECT_FALSE(gettext_catalog_package(stem).empty()) << stem;
  auto problems = [](const std::string& text) {
    try {
      load_config(text, "t.json", {});
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(
      problems(R"({"data": {"dataset": "gettext-de"}})").find("model.arch: transformer needs a language-modelling"),
      std::string::npos);
  EXPECT_NE(problems(R"({"data": {"dataset": "synthetic-seq2seq"}, "model": {"arch": "mlp"}})").find("model.arch"),
            std::string::npos);
  EXPECT_NE(problems(R"({"data": {"catalogs": ["bash"]}})").find("data.catalogs: only gettext-de"), std::string::npos);
  EXPECT_NE(problems(R"({"data": {"catalogs": ["../etc/passwd"]}})").find("data.catalogs: expected catalog names"),
            std::string::npos);
  EXPECT_NE(problems(R"({"data": {"catalogs": []}})").find("data.catalogs: expected null or a list"),
            std::string::npos);
  EXPECT_NE(problems(R"({"data": {"max_len": 0}})").find("data.max_len"), std::string::npos);
}

}  // namespace
}  // namespace nt
