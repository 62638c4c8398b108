// Datasets, exactly as ../shared/spec/interfaces.md defines them, behind one interface the
// trainer draws batches from. Language modelling rows are byte sequences (vocabulary 256);
// classification rows are feature vectors with a label.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/aligned.h"
#include "core/rng.h"

namespace nt {

// One batch, reused from step to step (its vectors are sized once).
struct Batch {
  int B = 0;                      // rows
  int T = 1;                      // positions per row (lm); 1 for classification
  std::vector<int32_t> tokens;    // lm (B*T): input bytes
  std::vector<int32_t> targets;   // lm (B*T): next bytes;  classification (B): labels
  std::vector<float> mask;        // (B*T): 1 where the target counts, 0 on padding
  AlignedVector<float> x;         // classification (B, D)
  bool padded = false;            // some mask entries are 0
  int64_t real_targets() const;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual bool is_lm() const = 0;
  virtual int input_dim() const = 0;  // lm: vocabulary (256); classification: features
  virtual int classes() const = 0;    // lm: 256
  virtual int64_t train_rows() const = 0;
  virtual int64_t val_rows() const = 0;
  // Rows drawn with replacement from the training split.
  virtual void train_batch(Rng& rng, int B, Batch& out) const = 0;
  // Rows [index*B, (index+1)*B) of the validation split, in its fixed order.
  virtual void val_batch(int index, int B, Batch& out) const = 0;
};

// Reads or generates the configured dataset; a missing or corrupt file is a DataError that
// names the file and the Debian package providing it.
std::unique_ptr<Dataset> make_dataset(const RunConfig& config);

// A missing or corrupt data file, or data that cannot serve the config: bad input (exit 2).
class DataError : public InputError {
 public:
  explicit DataError(const std::string& what) : InputError("data: " + what) {}
};

// The pieces, for tests and for the README's documentation of the synthetic sets.
std::vector<std::string> fortunes_documents(const std::string& dir);
std::vector<std::string> synthetic_lm_documents(uint64_t seed);
std::unique_ptr<Dataset> make_lm_dataset(std::vector<std::string> docs, const DataConfig& config);

struct ClassificationData {
  int dim = 0, classes = 0;
  std::vector<float> train_x, val_x;  // (rows, dim)
  std::vector<int32_t> train_y, val_y;
};
ClassificationData fashion_mnist(const std::string& dir);
ClassificationData synthetic_classify(uint64_t seed, double val_fraction);
std::unique_ptr<Dataset> make_classification_dataset(ClassificationData data);

}  // namespace nt
