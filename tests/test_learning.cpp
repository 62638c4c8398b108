// Real data: the datasets as the spec defines them, and a model of each norm learning on
// fortunes (validation loss far below what a unigram model of the bytes achieves).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "config/config.h"
#include "data/dataset.h"
#include "helpers.h"
#include "norms/norms.h"
#include "train/trainer.h"

namespace nt::test {
namespace {

const char* kFortunes = "/usr/share/games/fortunes";

TEST(Data, FortunesSplitAsTheSpecDefinesIt) {
  ASSERT_TRUE(std::filesystem::exists(kFortunes)) << "scripts/setup.sh installs the Debian package 'fortunes'";
  const auto docs = fortunes_documents(kFortunes);
  EXPECT_EQ(docs.size(), 15217u);  // Debian fortunes 1:1.99.1-7.3
  for (const auto& d : docs) {
    ASSERT_FALSE(d.empty());
    EXPECT_NE(d.front(), '\n');
    EXPECT_NE(d.back(), '\n');
  }
  const RunConfig c = load_config("{}", "x.json", {"data.seq_len=64"});
  const auto data = make_lm_dataset(docs, c.data);
  // validation = the last ceil(0.05 n) = 761 documents; packed training rows = stream length - seq_len
  EXPECT_EQ(data->train_rows(), 2483287 - 64);
}

TEST(Data, PaddedRowsMaskTheirPadding) {
  DataConfig c;
  c.seq_len = 8;
  c.layout = Layout::padded;
  c.val_fraction = 0.5;
  const auto data = make_lm_dataset({"abc", "hello world", "xy", "0123456789"}, c);
  Batch b;
  data->val_batch(0, 2, b);  // the validation documents, in order: "xy", "0123456789"
  const std::vector<int32_t> tokens0{'x', 'y', 0, 0, 0, 0, 0, 0}, targets0{'y', 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(std::vector<int32_t>(b.tokens.begin(), b.tokens.begin() + 8), tokens0);
  EXPECT_EQ(std::vector<int32_t>(b.targets.begin(), b.targets.begin() + 8), targets0);
  EXPECT_EQ(std::vector<float>(b.mask.begin(), b.mask.begin() + 8), (std::vector<float>{1, 0, 0, 0, 0, 0, 0, 0}));
  // cut at seq_len + 1 = 9 bytes: every target real
  EXPECT_EQ(std::vector<float>(b.mask.begin() + 8, b.mask.end()), std::vector<float>(8, 1.0f));
  EXPECT_EQ(b.targets[15], '8');
  EXPECT_TRUE(b.padded);
  EXPECT_EQ(b.real_targets(), 9);
}

TEST(Data, FashionMnistAsTheSpecDefinesIt) {
  const char* dir = "/usr/share/datasets/fashion-mnist";
  ASSERT_TRUE(std::filesystem::exists(dir)) << "scripts/setup.sh installs 'dataset-fashion-mnist'";
  const auto d = fashion_mnist(dir);
  EXPECT_EQ(d.train_y.size(), 60000u);
  EXPECT_EQ(d.val_y.size(), 10000u);
  EXPECT_EQ(d.dim, 784);
  const auto [lo, hi] = std::minmax_element(d.train_x.begin(), d.train_x.end());
  EXPECT_EQ(*lo, 0.0f);
  EXPECT_EQ(*hi, 1.0f);
  std::array<int, 10> counts{};
  for (int y : d.val_y) ++counts[y];
  for (int n : counts) EXPECT_EQ(n, 1000);
}

// An IDX pair of `n` images of rows x cols and `labels` labels (plain files: gzip is optional)
void write_idx_pair(const std::filesystem::path& dir, const char* prefix, uint32_t n, uint32_t rows, uint32_t cols,
                    uint32_t labels) {
  auto be = [](std::string& s, uint32_t v) {
    for (int shift : {24, 16, 8, 0}) s += char((v >> shift) & 0xff);
  };
  std::string images, ys;
  for (uint32_t v : {0x803u, n, rows, cols}) be(images, v);
  images.append(std::size_t(n) * rows * cols, '\x7f');
  for (uint32_t v : {0x801u, labels}) be(ys, v);
  ys.append(labels, '\x03');
  std::ofstream(dir / (std::string(prefix) + "-images-idx3-ubyte.gz"), std::ios::binary) << images;
  std::ofstream(dir / (std::string(prefix) + "-labels-idx1-ubyte.gz"), std::ios::binary) << ys;
}

// Images that are not 28 x 28 are named as such (they were "N images of 28x27 but N labels"), and
// so are counts that differ; 784 pixels in another shape are not Fashion-MNIST's either
TEST(Data, FashionMnistImagesAre28By28) {
  TempDir d;
  std::filesystem::create_directories(d.path);
  write_idx_pair(d.path, "t10k", 3, 28, 28, 3);
  auto refused = [&](const std::string& what) {
    try {
      fashion_mnist(d.str());
      ADD_FAILURE() << "accepted";
    } catch (const DataError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("data: " + (d / what), 0), 0u) << e.what();
    }
  };
  write_idx_pair(d.path, "train", 4, 28, 27, 4);
  refused("train-images-idx3-ubyte.gz: images of 28x27, expected 28x28");
  write_idx_pair(d.path, "train", 4, 56, 14, 4);
  refused("train-images-idx3-ubyte.gz: images of 56x14, expected 28x28");
  write_idx_pair(d.path, "train", 4, 28, 28, 5);
  refused("train-*: 4 images but 5 labels");
  write_idx_pair(d.path, "train", 4, 28, 28, 4);
  EXPECT_EQ(fashion_mnist(d.str()).train_y.size(), 4u);
}

TEST(Data, SyntheticSetsDependOnlyOnTheSeed) {
  EXPECT_EQ(synthetic_lm_documents(3), synthetic_lm_documents(3));
  EXPECT_NE(synthetic_lm_documents(3), synthetic_lm_documents(4));
  const auto a = synthetic_classify(5, 0.05), b = synthetic_classify(5, 0.05);
  EXPECT_EQ(a.train_x, b.train_x);
  EXPECT_EQ(a.val_y.size(), 1000u);
  EXPECT_EQ(a.train_y.size(), 19000u);
}

// Cross-entropy of the validation bytes under the training bytes' unigram distribution.
double unigram_validation_loss(const RunConfig& c) {
  auto docs = fortunes_documents(kFortunes);
  const std::size_t n_val = std::size_t(std::ceil(c.data.val_fraction * double(docs.size())));
  std::array<double, 256> counts{};
  double total = 0;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (i + n_val < docs.size())
      for (unsigned char ch : docs[i] + "\n\n") counts[ch] += 1, total += 1;
  }
  double loss = 0, n = 0;
  for (std::size_t i = docs.size() - n_val; i < docs.size(); ++i)
    for (unsigned char ch : docs[i]) loss -= std::log((counts[ch] + 1) / (total + 256)), n += 1;
  return loss / n;
}

class LearnsOnFortunes : public ::testing::TestWithParam<NormType> {};

TEST_P(LearnsOnFortunes, ValidationLossFarBelowUnigram) {
  std::vector<std::string> o{std::string("model.norm.type=") + to_string(GetParam()), "train.steps=300",
                             "train.threads=1", "train.stats_every=0", "train.eval_every=1000"};
  // A norm with a learnable alpha (DyT) stalls near the unigram loss at lm-tiny's N(0, 0.02) init, as
  // the PyTorch peer's does (claim C20's README); with Xavier's init it trains.
  if (norm_desc(GetParam()).alpha) o.push_back("model.init=xavier");
  const RunConfig c = load_config_file(source_dir() + "/configs/lm-tiny.json", o);
  const double unigram = unigram_validation_loss(c);
  EXPECT_GT(unigram, 3.0);  // 3.63 nats with Debian fortunes 1:1.99.1-7.3
  TempDir d;
  Session session(c);
  RunFiles files(d.str());
  Progress progress(c.name, c.train.steps, 100);
  const auto s = train(c, session, files, progress).summary;
  EXPECT_LT(s["final_val_loss"].get<double>(), 0.8 * unigram) << "unigram " << unigram;
}

INSTANTIATE_TEST_SUITE_P(EachNorm, LearnsOnFortunes, ::testing::ValuesIn(all_norm_types()),
                         [](const auto& p) { return std::string(to_string(p.param)); });

// The recurrent LMs (rnn-gru-tiny, rnn-lstm-tiny, LayerNorm) from ln 256 = 5.55 nats at step 0 to
// below 0.8 x unigram in 150 steps (measured: gru 2.60, lstm 2.65 after 100 steps, seed 1).
class RecurrentLearnsOnFortunes : public ::testing::TestWithParam<const char*> {};

TEST_P(RecurrentLearnsOnFortunes, ValidationLossFarBelowUnigram) {
  const RunConfig c = load_config_file(source_dir() + "/configs/rnn-" + GetParam() + "-tiny.json",
                                       {"train.steps=150", "train.stats_every=0", "train.eval_every=1000"});
  const double unigram = unigram_validation_loss(c);
  TempDir d;
  Session session(c);
  RunFiles files(d.str());
  Progress progress(c.name, c.train.steps, 100);
  const auto s = train(c, session, files, progress).summary;
  EXPECT_LT(s["final_val_loss"].get<double>(), 0.8 * unigram) << "unigram " << unigram;
}

INSTANTIATE_TEST_SUITE_P(EachCell, RecurrentLearnsOnFortunes, ::testing::Values("gru", "lstm"));

// RNNSearch (rnnsearch-tiny: German catalog messages back to English, nematus init, seed 1) with
// LayerNorm learns in 150 steps, while without normalization it sits on the unigram plateau the
// PyTorch peer also reports (3.515 at 300 steps). Measured: layernorm 3.00, none 3.52.
TEST(RnnSearchLearnsOnGettext, LayerNormLearnsWhereNoneStalls) {
  auto final_val_loss = [](const char* norm) {
    const RunConfig c = load_config_file(
        source_dir() + "/configs/rnnsearch-tiny.json",
        {std::string("model.norm.type=") + norm, "train.steps=150", "train.stats_every=0", "train.eval_every=1000"});
    TempDir d;
    Session session(c);
    RunFiles files(d.str());
    Progress progress(c.name, c.train.steps, 100);
    return train(c, session, files, progress).summary["final_val_loss"].get<double>();
  };
  EXPECT_LT(final_val_loss("layernorm"), 3.2);
  EXPECT_GT(final_val_loss("none"), 3.4);
}

}  // namespace
}  // namespace nt::test
