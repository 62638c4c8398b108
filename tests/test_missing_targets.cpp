// Batches without a counted target (issue 39, item 6): a padded row of one byte has none, and a
// masked LM may choose no position. Such a batch never becomes a loss of 0 or the divergence
// baseline: data and configs on which it is as likely as not are refused (exit 2, naming the key
// or the corpus and the figures), the training stream draws another in place of one that happens
// by chance and counts it (summary.json "batches_without_target"), and an evaluation that would
// read no target is refused before step 0.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "data/dataset.h"
#include "helpers.h"

namespace nt::test {
namespace {

std::string config_problem(const std::vector<std::string>& overrides) {
  try {
    load_config("{}", "x.json", overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// A fortunes folder of one file holding `docs`.
void write_fortunes(const std::string& dir, const std::vector<std::string>& docs) {
  std::filesystem::create_directories(dir);
  std::ofstream out(dir + "/f", std::ios::binary);
  for (std::size_t i = 0; i < docs.size(); ++i) out << (i ? "\n%\n" : "") << docs[i];
}

std::vector<std::string> repeated(const std::string& doc, int n) { return std::vector<std::string>(std::size_t(n), doc); }

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// (1 - p)^(B T) is the probability that a packed batch holds no chosen position.
TEST(MissingTargets, AMaskProbThatLikelyChoosesNothingIsRefused) {
  const std::string none = config_problem({"model.arch=encoder", "data.dataset=synthetic-lm", "data.mask_prob=1e-9"});
  EXPECT_NE(none.find("data.mask_prob"), std::string::npos) << none;
  EXPECT_NE(none.find("16 x 64 = 1024"), std::string::npos) << none;  // the default batch and seq_len
  // 0.98^8 = 0.85
  const std::string rare = config_problem({"model.arch=encoder", "data.dataset=synthetic-lm", "data.mask_prob=0.02",
                                           "data.seq_len=4", "train.batch_size=2"});
  EXPECT_NE(rare.find("(1 - 0.02)^8 = 0.851"), std::string::npos) << rare;
  // 0.85^12 = 0.14: the golden encoder's sizes stay accepted; 0.5^1 = 1/2 is refused
  EXPECT_EQ(config_problem({"model.arch=encoder", "data.dataset=synthetic-lm", "data.seq_len=6", "train.batch_size=2"}),
            "");
  EXPECT_NE(config_problem({"model.arch=encoder", "data.dataset=synthetic-lm", "data.mask_prob=0.5", "data.seq_len=1",
                            "train.batch_size=1"}),
            "");
  // mask_prob is the encoder's: another arch ignores it
  EXPECT_EQ(config_problem({"data.dataset=synthetic-lm", "data.mask_prob=1e-9"}), "");
}

// 2 of the 200 training documents have a target: a batch of 4 holds none with probability 0.99^4.
TEST(MissingTargets, APaddedCorpusWhoseBatchesLikelyHoldNoTargetIsRefused) {
  TempDir tmp;
  const std::string dir = tmp.str() + "/fortunes";
  write_fortunes(dir, joined(joined(repeated("a", 198), repeated("hello", 2)), repeated("validation", 20)));
  const std::vector<std::string> o{"data.dataset=fortunes", "data.path=" + dir, "data.layout=padded",
                                   "data.seq_len=16", "data.val_fraction=0.0909", "train.batch_size=4"};
  try {
    make_dataset(load_config("{}", "x.json", o));
    ADD_FAILURE() << "accepted";
  } catch (const DataError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("fortunes at " + dir), std::string::npos) << what;
    EXPECT_NE(what.find("2 of the 200 training documents"), std::string::npos) << what;
    EXPECT_NE(what.find("train.batch_size = 4"), std::string::npos) << what;
    EXPECT_NE(what.find("probability 0.96"), std::string::npos) << what;  // 0.99^4 = 0.9606
  }
  // half of them: 0.5^4 = 0.06, accepted (and the packed layout has a target in every row)
  write_fortunes(dir, joined(joined(repeated("a", 100), repeated("hello", 100)), repeated("validation", 20)));
  EXPECT_NO_THROW(make_dataset(load_config("{}", "x.json", o)));
}

// An encoder on documents of one byte: the config's bound (every position real) holds, the corpus
// does not: a row holds no chosen position with probability 0.99.
TEST(MissingTargets, AMaskedLmOnShortPaddedRowsIsRefused) {
  TempDir tmp;
  const std::string dir = tmp.str() + "/fortunes";
  write_fortunes(dir, repeated("a", 100));
  const RunConfig c = load_config("{}", "x.json", {"model.arch=encoder", "data.dataset=fortunes", "data.path=" + dir,
                                                   "data.layout=padded", "data.mask_prob=0.01", "train.batch_size=8"});
  try {
    make_dataset(c);
    ADD_FAILURE() << "accepted";
  } catch (const DataError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("data.mask_prob = 0.01"), std::string::npos) << what;
    EXPECT_NE(what.find("probability 0.923"), std::string::npos) << what;  // 0.99^8
  }
}

}  // namespace
}  // namespace nt::test
