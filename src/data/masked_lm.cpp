// BERT's masked language model over byte rows (model.arch encoder; the contract's masking):
//   rows: the LM dataset's without shift, tokens = targets = the row's bytes, real = its real bytes
//   each real position is chosen with probability mask_prob; a chosen position's input becomes
//   byte 1 (MASK) with probability 0.8, a uniformly random byte with 0.1, and stays with 0.1
//   loss and accuracy: the chosen positions only (mask = chosen, always a weighted loss)
// Draws, per position in row order: u (chosen: u < mask_prob, real positions only), then for a
// chosen one v (v < 0.8 MASK, v < 0.9 random) and, for a random byte, the byte. Training rows are
// masked from the run's generator (the one that draws the rows); validation batch i from its own
// generator Rng(seed, 103 + i), so that every evaluation sees the same masks.
#include "data/dataset.h"

namespace nt {

namespace {

constexpr int32_t kMaskByte = 1;

class MaskedLmDataset final : public Dataset {
 public:
  MaskedLmDataset(std::unique_ptr<Dataset> rows, double p, uint64_t seed)
      : rows_(std::move(rows)), p_(p), seed_(seed) {}

  bool is_lm() const override { return true; }
  bool reports_accuracy() const override { return true; }
  uint64_t data_hash() const override { return rows_->data_hash(); }
  int input_dim() const override { return rows_->input_dim(); }
  int classes() const override { return rows_->classes(); }
  int64_t train_rows() const override { return rows_->train_rows(); }
  int64_t val_rows() const override { return rows_->val_rows(); }
  // a real position is a target when chosen (p) and not dropped
  double train_row_without_target(double drop) const override {
    return rows_->train_row_without_target(1 - p_ * (1 - drop));
  }

  void train_batch(Rng& rng, int B, Batch& out) const override {
    rows_->train_batch(rng, B, out);
    mask(rng, out);
  }
  void val_batch(int index, int B, Batch& out) const override {
    rows_->val_batch(index, B, out);
    Rng rng(seed_, 103 + uint64_t(index));
    mask(rng, out);
  }

 private:
  std::unique_ptr<Dataset> rows_;
  double p_;
  uint64_t seed_;

  // out: tokens = targets = the row, mask = its real bytes -> tokens corrupted, mask = chosen,
  // token_mask = the real bytes
  void mask(Rng& rng, Batch& out) const {
    const bool padding = out.padded;
    if (padding)
      out.token_mask = out.mask;
    else
      out.token_mask.assign(out.tokens.size(), 1.0f);
    for (std::size_t i = 0; i < out.tokens.size(); ++i) {
      const bool real = !padding || out.mask[i] != 0.0f;
      const bool chosen = real && rng.uniform() < p_;
      out.mask[i] = chosen ? 1.0f : 0.0f;
      if (!chosen) continue;
      const double v = rng.uniform();
      if (v < 0.8)
        out.tokens[i] = kMaskByte;
      else if (v < 0.9)
        out.tokens[i] = int32_t(rng.below(256));
    }
    out.padded = true;  // the loss counts the chosen positions only
  }
};

}  // namespace

std::unique_ptr<Dataset> make_masked_lm_dataset(std::unique_ptr<Dataset> rows, double mask_prob, uint64_t seed) {
  return std::make_unique<MaskedLmDataset>(std::move(rows), mask_prob, seed);
}

}  // namespace nt
