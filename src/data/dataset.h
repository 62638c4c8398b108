// Datasets, exactly as docs/data.md defines them, behind one interface the
// trainer draws batches from. Language modelling rows are byte sequences (vocabulary 256);
// classification rows are feature vectors with a label; seq2seq rows are (source, target) byte
// pairs (gettext-de, synthetic-seq2seq: data/seq2seq.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "core/aligned.h"
#include "core/rng.h"

namespace nt {

// Byte ids with a meaning of their own in seq2seq rows (and the masked LM): real text never
// holds them (the pair rules refuse control bytes).
inline constexpr int32_t kPad = 0, kMask = 1, kBos = 2, kEos = 3;

// One batch, reused from step to step (its vectors are sized once).
//
// seq2seq (Dataset::is_seq2seq()): row b holds one pair (source s, target y), right-padded with
//   byte 0 to the longest source (S) and the longest target + 1 (T) of the batch:
//     src      (B*S)  s, then 0                       src_mask (B*S)  1 on s, 0 on padding
//     tokens   (B*T)  BOS (2), y, then 0              the decoder's input (teacher forcing)
//     targets  (B*T)  y, EOS (3), then 0              mask     (B*T)  1 on y and EOS, 0 after
//   An encoder reads src (its padding left out through src_mask); a decoder reads tokens and
//   predicts targets; the loss and the statistics count the positions where mask is 1.
struct Batch {
  int B = 0;                      // rows
  int T = 1;                      // positions per row (lm, seq2seq target side); 1 for classification
  std::vector<int32_t> tokens;    // lm (B*T): input bytes;  seq2seq (B*T): BOS + target
  std::vector<int32_t> targets;   // lm (B*T): next bytes;  seq2seq (B*T): target + EOS;  classification (B): labels
  std::vector<float> mask;        // (B*T): 1 where the target counts, 0 on padding
  std::vector<float> token_mask;  // encoder (B*T): 1 on real tokens (attention keys, statistics), 0 on padding;
                                  // empty when every token is real (mask: 1 on the chosen positions only)
  AlignedVector<float> x;         // classification (B, D)
  bool padded = false;            // some mask entries are 0 (always set for seq2seq)
  int S = 0;                      // seq2seq: source positions per row
  std::vector<int32_t> src;       // seq2seq (B*S): source bytes
  std::vector<float> src_mask;    // seq2seq (B*S): 1 on real source bytes, 0 on padding
  int64_t real_targets() const;
  // Rows [first, first + count) into `out` (its vectors reused), T and S kept: a shard of the
  // batch for a data-parallel step (train/shards.h).
  void copy_rows(int first, int count, Batch& out) const;
  // the real tokens (norm statistics, attention keys): token_mask where set, else mask on padded
  // rows; nullptr when every token is real
  const float* real_tokens() const { return !token_mask.empty() ? token_mask.data() : padded ? mask.data() : nullptr; }
};

// What a seq2seq corpus was built from, for summary.json ("data"): two machines with the same
// hash trained on the same pairs. hash = FNV-1a 64 over the pairs in their sorted order, each
// fed as source bytes, 0x1f, target bytes, 0x1e.
struct CorpusFingerprint {
  int64_t train_pairs = 0, val_pairs = 0;
  uint64_t hash = 0;
  std::vector<std::string> sources;  // gettext-de: the catalog files read, in reading order
  double mean_source_bytes = 0, mean_target_bytes = 0;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual bool is_lm() const = 0;
  virtual bool is_seq2seq() const { return false; }  // Batch's src fields are filled (is_lm() false)
  // seq2seq: what the corpus was built from; nullptr for the other datasets.
  virtual const CorpusFingerprint* fingerprint() const { return nullptr; }
  virtual int input_dim() const = 0;  // lm, seq2seq: vocabulary (kByteVocabulary); classification: features
  virtual int classes() const = 0;    // lm, seq2seq: the vocabulary
  // lines carry "acc": the share of counted targets predicted right (classification, seq2seq, masked LM)
  virtual bool reports_accuracy() const { return !is_lm(); }
  virtual int64_t train_rows() const = 0;
  virtual int64_t val_rows() const = 0;
  // Rows drawn with replacement from the training split.
  virtual void train_batch(Rng& rng, int B, Batch& out) const = 0;
  // Rows [index*B, (index+1)*B) of the validation split, in its fixed order.
  virtual void val_batch(int index, int B, Batch& out) const = 0;
  // The probability that a training row, as train_batch draws it, holds no counted target once
  // each of its targets is left out independently with probability `drop` (a masked LM asks its
  // rows with drop = 1 - mask_prob); a batch of B rows holds none with this to the power B. 0 for
  // the classification and seq2seq sets: each of their rows holds a target, and nothing masks them.
  virtual double train_row_without_target(double /*drop*/) const { return 0; }
  // A hash of every row of both splits: a checkpoint records it, and a resume on changed data is
  // refused (train/checkpoint.h). 0: not known (the data is not checked).
  virtual uint64_t data_hash() const { return 0; }
};

// A dataset's sizes, known from the config alone (before any file is read): what the model is
// built for and what the memory estimate counts. The readers below produce data of these sizes.
inline constexpr int kByteVocabulary = 256;  // fortunes, synthetic-lm, gettext-de, synthetic-seq2seq
inline constexpr int kFashionMnistPixels = 784, kFashionMnistClasses = 10;  // 28 x 28 images
inline constexpr int kSyntheticClassifyDim = 64, kSyntheticClassifyClasses = 10;
struct DataSizes {
  int inputs;     // lm: the vocabulary; classification: the features
  int outputs;    // lm: the vocabulary; classification: the classes
  int64_t bytes;  // about what the dataset takes in memory
};
DataSizes data_sizes(const DataConfig& config);

// A 64-bit hash of `bytes` (FNV-1a over 8-byte words), continuing from `hash`: the fingerprints'.
uint64_t fnv1a_bytes(const void* bytes, std::size_t n, uint64_t hash = 0xcbf29ce484222325ull);

// Reads or generates the configured dataset; a missing or corrupt file is a DataError that
// names the file and the Debian package providing it. A DataError too when a training batch of
// train.batch_size rows holds no target with probability kMaxBatchWithoutTarget or more, naming
// the corpus and its figures.
std::unique_ptr<Dataset> make_dataset(const RunConfig& config);
// The data in messages: "fortunes", or "fortunes at <data.path>"
std::string data_source(const DataConfig& config);

// A missing or corrupt data file, or data that cannot serve the config: bad input (exit 2).
class DataError : public InputError {
 public:
  explicit DataError(const std::string& what) : InputError("data: " + what) {}
};

// The pieces, for tests and for the README's documentation of the synthetic sets.
std::vector<std::string> fortunes_documents(const std::string& dir);
std::vector<std::string> synthetic_lm_documents(uint64_t seed);
// shift false: rows of seq_len bytes, targets = tokens, mask = the real bytes (a masked LM's rows)
std::unique_ptr<Dataset> make_lm_dataset(std::vector<std::string> docs, const DataConfig& config, bool shift = true);
// BERT's masking over the unshifted rows of `rows` (data/masked_lm.cpp); `seed` masks the validation rows
std::unique_ptr<Dataset> make_masked_lm_dataset(std::unique_ptr<Dataset> rows, double mask_prob, uint64_t seed);

// Seq2seq (data/gettext.cpp, data/seq2seq.cpp).
struct Seq2SeqPair {
  std::string src, tgt;
};
// The (msgid, msgstr) entries of a GNU .mo catalog, in its order. A DataError names the file when
// it is missing, not a regular file, larger than kMaxMoBytes, or not a well-formed catalog (bad
// magic, a table or string outside the file).
inline constexpr int64_t kMaxMoBytes = int64_t(64) << 20;
std::vector<Seq2SeqPair> read_mo(const std::string& path);
// gettext-de's pair rules over the catalogs <dir>/<stem>.mo: pairs deduplicated by source (the
// first in file-name order, then entry order) and sorted by source bytes. `read` receives the
// files in reading order.
std::vector<Seq2SeqPair> gettext_pairs(const std::string& dir, const std::vector<std::string>& catalogs, int max_len,
                                       std::vector<std::string>* read = nullptr);
// Whether an entry (msgid, msgstr) is a pair under gettext-de's rules.
bool gettext_pair_ok(std::string_view msgid, std::string_view msgstr, int max_len);
std::vector<Seq2SeqPair> synthetic_seq2seq_pairs(uint64_t seed, int max_len);
uint64_t fnv1a64(std::string_view bytes, uint64_t h = 0xcbf29ce484222325ull);
// The split: validation holds the pairs whose fnv1a64(source) % 1000 < 1000 * val_fraction.
bool is_validation_pair(std::string_view src, double val_fraction);
std::unique_ptr<Dataset> make_seq2seq_dataset(std::vector<Seq2SeqPair> pairs, const DataConfig& config,
                                              std::vector<std::string> sources = {});

struct ClassificationData {
  std::string source;  // for messages: "fashion-mnist at <dir>"
  int dim = 0, classes = 0;
  std::vector<float> train_x, val_x;  // (rows, dim)
  std::vector<int32_t> train_y, val_y;
};
ClassificationData fashion_mnist(const std::string& dir);
// One IDX file of fashion-mnist (magic 0x803 images, 0x801 labels; gzip-compressed or plain): its
// data, `dims` from its header. Only a regular file, and never more bytes than its header promises.
std::vector<uint8_t> read_idx(const std::string& path, uint32_t magic, std::vector<uint32_t>& dims);
ClassificationData synthetic_classify(uint64_t seed, double val_fraction);
std::unique_ptr<Dataset> make_classification_dataset(ClassificationData data);

}  // namespace nt
