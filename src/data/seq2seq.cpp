// Seq2seq over bytes: (source, target) pairs -> train/validation split -> padded batches.
//
// Split: validation holds the pairs whose 64-bit FNV-1a hash of the source, mod 1000, is below
// 1000 * val_fraction; training the rest (both keep the pairs' sorted order).
// Batches (data/dataset.h, Batch): training rows are pairs drawn with replacement; validation
// batch i holds pairs [i B, (i+1) B) of the validation split. Each batch is right-padded with
// byte 0 to its longest source (S) and its longest target + 1 (T).
//
// synthetic-seq2seq (docs/usage.md, "Seq2seq datasets"): Rng(seed, 104) draws a permutation pi of the letters a..z
// (Fisher-Yates, i from 25 down to 1 swapping with below(i + 1)), then 12,000 sources, each of
// length 1 + below(min(24, max_len)) with letters a + below(26); target = the source reversed,
// each letter mapped through pi. Deduplicated by source (the first wins) and sorted like
// gettext-de. A model that learns it must both reverse the order and learn the letter map.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "data/dataset.h"

namespace nt {

uint64_t fnv1a64(std::string_view bytes, uint64_t h) {
  for (unsigned char ch : bytes) h = (h ^ ch) * 0x100000001b3ull;
  return h;
}

bool is_validation_pair(std::string_view src, double val_fraction) {
  return double(fnv1a64(src) % 1000) < 1000.0 * val_fraction;
}

std::vector<Seq2SeqPair> synthetic_seq2seq_pairs(uint64_t seed, int max_len) {
  Rng rng(seed, 104);
  char pi[26];
  for (int i = 0; i < 26; ++i) pi[i] = char('a' + i);
  for (int i = 25; i > 0; --i) std::swap(pi[i], pi[rng.below(uint64_t(i) + 1)]);
  const int longest = std::min(24, max_len);
  std::map<std::string, std::string> pairs;
  for (int n = 0; n < 12000; ++n) {
    const int len = 1 + int(rng.below(uint64_t(longest)));
    std::string src(std::size_t(len), 'a'), tgt(std::size_t(len), 'a');
    for (char& ch : src) ch = char('a' + rng.below(26));
    for (int j = 0; j < len; ++j) tgt[j] = pi[src[len - 1 - j] - 'a'];
    pairs.emplace(std::move(src), std::move(tgt));
  }
  std::vector<Seq2SeqPair> out;
  for (auto& [s, t] : pairs) out.push_back({s, t});
  return out;
}

namespace {

class Seq2SeqDataset final : public Dataset {
 public:
  Seq2SeqDataset(std::vector<Seq2SeqPair> pairs, const DataConfig& c, std::vector<std::string> sources) {
    CorpusFingerprint& f = fingerprint_;
    f.hash = 0xcbf29ce484222325ull;
    double src_bytes = 0, tgt_bytes = 0;
    for (Seq2SeqPair& p : pairs) {
      f.hash = fnv1a64("\x1e", fnv1a64(p.tgt, fnv1a64("\x1f", fnv1a64(p.src, f.hash))));
      src_bytes += double(p.src.size());
      tgt_bytes += double(p.tgt.size());
      (is_validation_pair(p.src, c.val_fraction) ? val_ : train_).push_back(std::move(p));
    }
    f.train_pairs = int64_t(train_.size());
    f.val_pairs = int64_t(val_.size());
    f.sources = std::move(sources);
    if (!pairs.empty()) f.mean_source_bytes = src_bytes / double(pairs.size());
    if (!pairs.empty()) f.mean_target_bytes = tgt_bytes / double(pairs.size());
    if (train_.empty() || val_.empty())
      throw DataError(
          fmt::format("{}: {} training and {} validation pairs; both splits need one (data.val_fraction "
                      "= {})",
                      data_source(c), train_.size(), val_.size(), c.val_fraction));
  }

  bool is_lm() const override { return false; }
  bool is_seq2seq() const override { return true; }
  const CorpusFingerprint* fingerprint() const override { return &fingerprint_; }
  uint64_t data_hash() const override { return fingerprint_.hash; }  // the checkpoint refuses a resume on other pairs
  int input_dim() const override { return kByteVocabulary; }
  int classes() const override { return kByteVocabulary; }
  int64_t train_rows() const override { return int64_t(train_.size()); }
  int64_t val_rows() const override { return int64_t(val_.size()); }

  void train_batch(Rng& rng, int B, Batch& out) const override {
    rows_.resize(std::size_t(B));
    for (auto& r : rows_) r = &train_[rng.below(train_.size())];
    fill(rows_, out);
  }

  void val_batch(int index, int B, Batch& out) const override {
    rows_.resize(std::size_t(B));
    for (int b = 0; b < B; ++b) rows_[b] = &val_.at(std::size_t(index) * B + b);
    fill(rows_, out);
  }

 private:
  std::vector<Seq2SeqPair> train_, val_;
  CorpusFingerprint fingerprint_;
  // the pairs of the batch being built: per thread, as sessions on several threads may share one
  // dataset; sized once
  static inline thread_local std::vector<const Seq2SeqPair*> rows_;

  static void fill(const std::vector<const Seq2SeqPair*>& rows_, Batch& out) {
    const int B = int(rows_.size());
    int S = 1, T = 1;
    for (const Seq2SeqPair* p : rows_) S = std::max(S, int(p->src.size())), T = std::max(T, int(p->tgt.size()) + 1);
    out.B = B, out.S = S, out.T = T;
    out.padded = true;
    out.src.assign(std::size_t(B) * S, kPad);
    out.src_mask.assign(std::size_t(B) * S, 0.0f);
    out.tokens.assign(std::size_t(B) * T, kPad);
    out.targets.assign(std::size_t(B) * T, kPad);
    out.mask.assign(std::size_t(B) * T, 0.0f);
    for (int b = 0; b < B; ++b) {
      const std::string& s = rows_[b]->src;
      const std::string& y = rows_[b]->tgt;
      for (std::size_t j = 0; j < s.size(); ++j) {
        out.src[std::size_t(b) * S + j] = uint8_t(s[j]);
        out.src_mask[std::size_t(b) * S + j] = 1.0f;
      }
      int32_t* tokens = out.tokens.data() + std::size_t(b) * T;
      int32_t* targets = out.targets.data() + std::size_t(b) * T;
      tokens[0] = kBos;
      for (std::size_t t = 0; t < y.size(); ++t) tokens[t + 1] = targets[t] = uint8_t(y[t]);
      targets[y.size()] = kEos;
      std::fill_n(out.mask.data() + std::size_t(b) * T, y.size() + 1, 1.0f);
    }
  }
};

}  // namespace

std::unique_ptr<Dataset> make_seq2seq_dataset(std::vector<Seq2SeqPair> pairs, const DataConfig& config,
                                              std::vector<std::string> sources) {
  return std::make_unique<Seq2SeqDataset>(std::move(pairs), config, std::move(sources));
}

}  // namespace nt
