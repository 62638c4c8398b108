// ParamStore: every parameter of a model in one flat buffer, with its gradient in a second
// one of the same layout (llm.c style). Zeroing gradients is one memset, the optimizer and
// the global gradient norm are single loops, and each parameter is a named Tensor view.
//
// Two phases: add() declares parameters (name, layer, shape), finalize() allocates. The
// views returned by tensor() stay valid for the store's lifetime.
#pragma once
#include <string>
#include <vector>

#include "core/aligned.h"
#include "core/tensor.h"

namespace nt {

template <class T>
class ParamStore {
 public:
  struct Info {
    std::string name;  // e.g. "attn.q.weight"
    int layer = 0;     // block / hidden-layer index (spec: layers.jsonl)
    int rows = 0, cols = 0;
    std::size_t offset = 0;
    std::size_t size() const { return std::size_t(rows) * cols; }
  };

  // Returns the parameter's id. Each parameter starts on a 64-byte boundary, unless `follow`
  // puts it right after the previous one, so that several form one matrix (q, k, v: one product).
  int add(std::string name, int layer, int rows, int cols, bool follow = false);
  void finalize();

  Tensor<T> tensor(int id);
  // Parameters first, first + 1, ... laid out one after the other (added with follow), seen as one
  // (rows, cols) matrix.
  Tensor<T> joined(int first, int count, int rows, int cols);
  const Info& info(int id) const { return infos_[id]; }
  int count() const { return int(infos_.size()); }
  std::size_t numel() const { return data_.size(); }  // the buffer's length, alignment padding included
  std::size_t parameter_count() const {                // the model's parameters, without the padding
    std::size_t n = 0;
    for (const Info& i : infos_) n += i.size();
    return n;
  }

  T* data() { return data_.data(); }
  T* grad() { return grad_.data(); }
  const T* data() const { return data_.data(); }
  const T* grad() const { return grad_.data(); }
  void zero_grad();

 private:
  std::vector<Info> infos_;
  AlignedVector<T> data_, grad_;
  bool finalized_ = false;
};

}  // namespace nt
