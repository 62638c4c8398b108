// Graph: the tape of one forward pass, replayed in reverse by backward().
//
// An op (src/ops, src/norms) computes its output, and when a gradient must flow it stores a
// small context struct in the arena and records {backward function, context} on the tape.
// Backward functions accumulate (+=) into their inputs' gradients, which start at zero.
// Parameters live outside the graph (ParamStore); everything else is arena memory that
// reset() recycles, so a step of fixed shapes allocates nothing after the first one.
#pragma once
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/arena.h"
#include "core/tensor.h"

namespace nt {

template <class T>
class Graph {
 public:
  using BackwardFn = void (*)(const void* context);

  // training: batchnorm uses batch statistics (and updates running ones).
  // grad: record the tape; false for evaluation and pure forward checks.
  explicit Graph(bool training = true, bool grad = true) : training_(training), grad_(grad) {
    tape_.reserve(1024);
  }

  bool training() const { return training_; }
  bool grad_enabled() const { return grad_; }
  void set_mode(bool training, bool grad) {
    training_ = training;
    grad_ = grad;
  }

  // An uninitialised (rows, cols) tensor; with a zeroed gradient buffer when requires_grad.
  Tensor<T> tensor(int rows, int cols, bool requires_grad) {
    Tensor<T> t;
    t.rows = rows;
    t.cols = cols;
    t.data = buffer(t.size());
    if (requires_grad && grad_) {
      t.grad = buffer(t.size());
      std::memset(t.grad, 0, sizeof(T) * t.size());
    }
    return t;
  }

  // A tensor shaped (rows, cols) that needs a gradient iff one of the inputs does.
  template <class... Inputs>
  Tensor<T> output(int rows, int cols, const Inputs&... inputs) {
    return tensor(rows, cols, (inputs.requires_grad() || ...));
  }

  T* buffer(std::size_t n) { return static_cast<T*>(arena_.allocate(sizeof(T) * n)); }

  // Copies an op's context into the arena and puts its backward on the tape.
  template <class Context>
  void record(BackwardFn backward, const Context& context) {
    static_assert(std::is_trivially_copyable_v<Context> && std::is_trivially_destructible_v<Context>);
    void* p = arena_.allocate(sizeof(Context), alignof(Context) < 16 ? 16 : alignof(Context));
    std::memcpy(p, &context, sizeof(Context));
    tape_.push_back({backward, p});
  }

  // Seeds d(loss)/d(loss) = 1 for a (1, 1) loss and runs the tape backwards.
  void backward(Tensor<T> loss) {
    if (loss.grad) loss.grad[0] += T(1);
    for (auto it = tape_.rbegin(); it != tape_.rend(); ++it) it->fn(it->context);
  }

  // Forgets the tape and recycles the arena; tensors from before are invalid afterwards.
  void reset() {
    tape_.clear();
    arena_.reset();
  }

 private:
  struct Entry {
    BackwardFn fn;
    const void* context;
  };
  bool training_;
  bool grad_;
  Arena arena_;
  std::vector<Entry> tape_;
};

}  // namespace nt
