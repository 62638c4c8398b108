// Language modelling over bytes: documents -> train/validation split -> rows.
//
// Validation = the last ceil(val_fraction * n) documents, training = the rest.
//   packed  the documents of a split joined by "\n\n" into one stream; training rows are
//           windows of seq_len + 1 bytes at uniformly random offsets; validation row i is
//           bytes [i L, (i+1) L) of the validation stream, L = seq_len + 1.
//   padded  one document a row, cut at seq_len + 1 bytes, right-padded with byte 0; the
//           target at position t counts when t + 1 < the row's real length. Training rows
//           are documents drawn with replacement; validation rows the first documents.
// Row r of length L gives tokens = bytes [0, L-1) and targets = bytes [1, L).
// Without shift (a masked LM's rows, data/masked_lm.cpp): L = seq_len wherever seq_len + 1 stands
// above, tokens = targets = bytes [0, L), mask = 1 on the row's real bytes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>

#include "data/dataset.h"

namespace nt {

uint64_t fnv1a_bytes(const void* bytes, std::size_t n, uint64_t hash) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  std::size_t i = 0;
  for (uint64_t word; i + 8 <= n; i += 8) {  // eight bytes a step: fashion-mnist's 190 MB in tens of ms
    std::memcpy(&word, p + i, 8);
    hash = (hash ^ word) * 0x100000001b3ull;
    hash ^= hash >> 29;
  }
  for (; i < n; ++i) hash = (hash ^ p[i]) * 0x100000001b3ull;
  return hash;
}

namespace {

class LmDataset final : public Dataset {
 public:
  LmDataset(std::vector<std::string> docs, const DataConfig& c, bool shift)
      : T_(c.seq_len), L_(c.seq_len + shift), shift_(shift), layout_(c.layout) {
    const std::string source = data_source(c);
    if (docs.size() < 2)
      throw DataError(
          fmt::format("{}: the corpus has {} document(s), fewer than the 2 a training and a validation "
                      "split need",
                      source, docs.size()));
    for (const std::string& d : docs) fingerprint_ = fnv1a_bytes(d.data(), d.size() + 1, fingerprint_);  // with its NUL
    const std::size_t n_val = std::size_t(std::ceil(c.val_fraction * double(docs.size())));
    if (n_val >= docs.size())
      throw DataError(
          fmt::format("{}: data.val_fraction = {} takes all {} documents for validation; the training "
                      "split is empty",
                      source, c.val_fraction, docs.size()));
    const std::size_t n_train = docs.size() - n_val;
    train_docs_.assign(docs.begin(), docs.begin() + n_train);
    val_docs_.assign(docs.begin() + n_train, docs.end());
    if (layout_ == Layout::packed) {
      train_stream_ = join(train_docs_);
      val_stream_ = join(val_docs_);
      if (int64_t(train_stream_.size()) <= L_)
        throw DataError(fmt::format("{}: the training text ({} bytes) is shorter than one row of {} = {}", source,
                                    train_stream_.size(), shift_ ? "seq_len + 1" : "seq_len", L_));
    }  // padded: make_dataset refuses a training split whose batches likely hold no target, the
       // session an evaluation that reads none
  }

  bool is_lm() const override { return true; }
  uint64_t data_hash() const override { return fingerprint_; }
  int input_dim() const override { return kByteVocabulary; }
  int classes() const override { return kByteVocabulary; }
  int64_t train_rows() const override {
    return layout_ == Layout::packed ? int64_t(train_stream_.size()) - L_ + 1 : int64_t(train_docs_.size());
  }
  int64_t val_rows() const override {
    return layout_ == Layout::packed ? int64_t(val_stream_.size()) / L_ : int64_t(val_docs_.size());
  }
  // A row of len real bytes counts max(0, len - shift) targets; a packed row T.
  double train_row_without_target(double drop) const override {
    if (layout_ == Layout::packed) return std::pow(drop, T_);
    double sum = 0;
    for (const std::string& d : train_docs_)
      sum += std::pow(drop, std::max(0, int(std::min<std::size_t>(d.size(), L_)) - int(shift_)));
    return sum / double(train_docs_.size());
  }

  void train_batch(Rng& rng, int B, Batch& out) const override {
    shape(out, B);
    for (int b = 0; b < B; ++b) {
      if (layout_ == Layout::packed) {
        const uint64_t offset = rng.below(train_stream_.size() - L_ + 1);
        put_row(out, b, train_stream_.data() + offset, L_);
      } else {
        const std::string& d = train_docs_[rng.below(train_docs_.size())];
        put_row(out, b, d.data(), int(std::min<std::size_t>(d.size(), L_)));
      }
    }
    out.padded = layout_ == Layout::padded;
  }

  void val_batch(int index, int B, Batch& out) const override {
    shape(out, B);
    for (int b = 0; b < B; ++b) {
      const int64_t row = int64_t(index) * B + b;
      if (layout_ == Layout::packed) {
        put_row(out, b, val_stream_.data() + row * L_, L_);
      } else {
        const std::string& d = val_docs_.at(row);
        put_row(out, b, d.data(), int(std::min<std::size_t>(d.size(), L_)));
      }
    }
    out.padded = layout_ == Layout::padded;
  }

 private:
  int T_, L_;  // positions, bytes per row
  bool shift_;
  Layout layout_;
  std::vector<std::string> train_docs_, val_docs_;
  std::string train_stream_, val_stream_;
  uint64_t fingerprint_ = 0xcbf29ce484222325ull;

  static std::string join(const std::vector<std::string>& docs) {
    std::string s;
    for (std::size_t i = 0; i < docs.size(); ++i) s += (i ? "\n\n" : "") + docs[i];
    return s;
  }

  void shape(Batch& out, int B) const {
    out.B = B;
    out.T = T_;
    out.tokens.resize(std::size_t(B) * T_);
    out.targets.resize(std::size_t(B) * T_);
    out.mask.resize(std::size_t(B) * T_);
  }

  // bytes[0, len) of one row, right-padded with 0 to L.
  void put_row(Batch& out, int b, const char* bytes, int len) const {
    const int s = shift_;
    for (int t = 0; t < T_; ++t) {
      const int64_t i = int64_t(b) * T_ + t;
      out.tokens[i] = t < len ? uint8_t(bytes[t]) : 0;
      out.targets[i] = t + s < len ? uint8_t(bytes[t + s]) : 0;
      out.mask[i] = t + s < len ? 1.0f : 0.0f;
    }
  }
};

}  // namespace

std::unique_ptr<Dataset> make_lm_dataset(std::vector<std::string> docs, const DataConfig& config, bool shift) {
  return std::make_unique<LmDataset>(std::move(docs), config, shift);
}

}  // namespace nt
