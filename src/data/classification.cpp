// Classification rows: feature vectors with a label; training rows drawn with replacement,
// validation rows in their fixed order.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "config/arch.h"
#include "config/gettext_catalogs.h"
#include "data/dataset.h"

namespace nt {

namespace {

class ClassificationDataset final : public Dataset {
 public:
  explicit ClassificationDataset(ClassificationData d) : d_(std::move(d)) {
    if (d_.train_y.empty() || d_.val_y.empty())
      throw DataError(fmt::format("{}: the {} split is empty",
                                  d_.source.empty() ? "the classification data" : d_.source,
                                  d_.train_y.empty() ? "training" : "validation"));
    for (const auto* x : {&d_.train_x, &d_.val_x})
      fingerprint_ = fnv1a_bytes(x->data(), x->size() * sizeof(float), fingerprint_);
    for (const auto* y : {&d_.train_y, &d_.val_y})
      fingerprint_ = fnv1a_bytes(y->data(), y->size() * sizeof(int32_t), fingerprint_);
  }
  uint64_t data_hash() const override { return fingerprint_; }
  bool is_lm() const override { return false; }
  int input_dim() const override { return d_.dim; }
  int classes() const override { return d_.classes; }
  int64_t train_rows() const override { return int64_t(d_.train_y.size()); }
  int64_t val_rows() const override { return int64_t(d_.val_y.size()); }

  void train_batch(Rng& rng, int B, Batch& out) const override {
    shape(out, B);
    for (int b = 0; b < B; ++b) put_row(out, b, d_.train_x, d_.train_y, int64_t(rng.below(d_.train_y.size())));
  }
  void val_batch(int index, int B, Batch& out) const override {
    shape(out, B);
    for (int b = 0; b < B; ++b) put_row(out, b, d_.val_x, d_.val_y, int64_t(index) * B + b);
  }

 private:
  ClassificationData d_;
  uint64_t fingerprint_ = 0xcbf29ce484222325ull;

  void shape(Batch& out, int B) const {
    out.B = B;
    out.T = 1;
    out.x.resize(std::size_t(B) * d_.dim);
    out.targets.resize(B);
    out.mask.assign(B, 1.0f);
    out.padded = false;
  }
  void put_row(Batch& out, int b, const std::vector<float>& x, const std::vector<int32_t>& y, int64_t row) const {
    std::copy_n(x.begin() + row * d_.dim, d_.dim, out.x.begin() + int64_t(b) * d_.dim);
    out.targets[b] = y.at(row);
  }
};

// A training batch of train.batch_size rows, drawn independently, holds no target with probability
// q = (a row's)^B: refused at kMaxBatchWithoutTarget or more.
void check_training_targets(const Dataset& data, const RunConfig& c) {
  const int B = c.train.batch_size;
  const double row = data.train_row_without_target(0), q = std::pow(row, B);
  if (q < kMaxBatchWithoutTarget) return;
  const std::string source = data_source(c.data);
  if (c.model.arch == Arch::encoder)
    throw DataError(fmt::format(
        "{}: with data.mask_prob = {} a training row (data.layout = {}, data.seq_len = {}) "
        "holds no chosen position with probability {:.3g}, so a batch of train.batch_size = {} "
        "rows holds none with probability {:.3g}, {} or more: raise data.mask_prob or "
        "train.batch_size",
        source, c.data.mask_prob, to_string(c.data.layout), c.data.seq_len, row, B, q, kMaxBatchWithoutTarget));
  const int64_t n = data.train_rows(), without = std::llround(row * double(n));  // padded: a row a document
  throw DataError(
      fmt::format("{}: {} of the {} training documents have 2 bytes or more (a target), so with "
                  "data.layout = padded a batch of train.batch_size = {} documents holds no target with "
                  "probability {:.3g}, {} or more: use data.layout = packed, or documents of 2 bytes or more",
                  source, n - without, n, B, q, kMaxBatchWithoutTarget));
}

}  // namespace

std::unique_ptr<Dataset> make_classification_dataset(ClassificationData data) {
  return std::make_unique<ClassificationDataset>(std::move(data));
}

DataSizes data_sizes(const DataConfig& c) {
  switch (c.dataset) {
    case DatasetKind::fortunes:
    case DatasetKind::synthetic_lm:
      return {kByteVocabulary, kByteVocabulary, int64_t(8) << 20};
    case DatasetKind::fashion_mnist:
      return {kFashionMnistPixels, kFashionMnistClasses, int64_t(220) << 20};
    case DatasetKind::synthetic_classify:
      return {kSyntheticClassifyDim, kSyntheticClassifyClasses, int64_t(8) << 20};
    case DatasetKind::gettext_de:
    case DatasetKind::synthetic_seq2seq:
      return {kByteVocabulary, kByteVocabulary, int64_t(8) << 20};
  }
  throw std::logic_error("data_sizes: unknown dataset");
}

std::string data_source(const DataConfig& c) {
  return fmt::format("{}{}", to_string(c.dataset), c.path.empty() ? "" : " at " + c.path);
}

std::unique_ptr<Dataset> make_dataset(const RunConfig& c) {
  const std::string& path = c.data.path;
  // a masked LM (encoder): BERT's masking over the rows unshifted (data/masked_lm.cpp)
  auto lm = [&](std::vector<std::string> docs) {
    std::unique_ptr<Dataset> data =
        arch_desc(c.model.arch).task != Task::masked_lm
            ? make_lm_dataset(std::move(docs), c.data)
            : make_masked_lm_dataset(make_lm_dataset(std::move(docs), c.data, /*shift=*/false), c.data.mask_prob,
                                     uint64_t(c.seed));
    check_training_targets(*data, c);
    return data;
  };
  switch (c.data.dataset) {
    case DatasetKind::fortunes:
      return lm(fortunes_documents(path.empty() ? "/usr/share/games/fortunes" : path));
    case DatasetKind::synthetic_lm:
      return lm(synthetic_lm_documents(uint64_t(c.seed)));
    case DatasetKind::fashion_mnist:
      return make_classification_dataset(fashion_mnist(path.empty() ? "/usr/share/datasets/fashion-mnist" : path));
    case DatasetKind::synthetic_classify:
      return make_classification_dataset(synthetic_classify(uint64_t(c.seed), c.data.val_fraction));
    case DatasetKind::gettext_de: {
      std::vector<std::string> read;
      auto pairs =
          gettext_pairs(path.empty() ? "/usr/share/locale/de/LC_MESSAGES" : path,
                        c.data.catalogs ? *c.data.catalogs : default_gettext_catalogs(), c.data.max_len, &read);
      return make_seq2seq_dataset(std::move(pairs), c.data, std::move(read));
    }
    case DatasetKind::synthetic_seq2seq:
      return make_seq2seq_dataset(synthetic_seq2seq_pairs(uint64_t(c.seed), c.data.max_len), c.data);
  }
  throw DataError("unknown dataset");
}

}  // namespace nt
