// Graph: the tape of one forward pass, replayed in reverse by backward().
//
// An op (src/ops, src/norms) computes its output, and when a gradient must flow it stores a
// small context struct in the arena and records {backward function, context, the gradients the
// backward writes} on the tape. Parameters live outside the graph (ParamStore); everything else
// is arena memory that reset() recycles, so a step of fixed shapes allocates nothing after the
// first one.
//
// Gradients written on first use. The gradient buffers of the graph's own tensors are not
// zeroed: the first backward node to reach one (the tensor's last consumer in forward order)
// writes it (=), and the nodes after it add (+=). A node learns which of its gradients it writes
// first from `first`: bit i is set for the i-th pointer of its record()'s list; when the same
// buffer appears twice in one list, only its first appearance is set, so a node must write its
// gradients in the order it lists them. Gradients the graph does not own (parameters, a caller's
// leaves) are always added to. An output nobody consumes is zeroed before backward() runs,
// unless its gradient was seeded with seed().
#pragma once
#include <cstdint>
#include <algorithm>
#include <bit>
#include <cstring>
#include <initializer_list>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/arena.h"
#include "core/tensor.h"

namespace nt {

// Whether a backward node writes its i-th listed gradient first (=) or adds to it (+=).
inline bool writes_first(unsigned first, int i) { return (first >> i) & 1u; }

template <class T>
class Graph {
 public:
  using BackwardFn = void (*)(const void* context, unsigned first);

  // training: batchnorm uses batch statistics (and updates running ones).
  // grad: record the tape; false for evaluation and pure forward checks.
  explicit Graph(bool training = true, bool grad = true) : training_(training), grad_(grad) {
    tape_.reserve(1024);
    grads_.reserve(1024);
    memos_.reserve(64);
  }

  bool training() const { return training_; }
  void set_mode(bool training, bool grad) {
    training_ = training;
    grad_ = grad;
  }

  // An uninitialised (rows, cols) tensor, with a gradient buffer (written on first use) when
  // requires_grad.
  Tensor<T> tensor(int rows, int cols, bool requires_grad) {
    Tensor<T> t;
    t.rows = rows;
    t.cols = cols;
    t.data = buffer(t.size());
    if (requires_grad && grad_) {
      t.grad = buffer(t.size());
      add_gradient(t.grad, t.size());
    }
    return t;
  }

  // A tensor shaped (rows, cols) that needs a gradient iff one of the inputs does.
  template <class... Inputs>
  Tensor<T> output(int rows, int cols, const Inputs&... inputs) {
    return tensor(rows, cols, (inputs.requires_grad() || ...));
  }

  T* buffer(std::size_t n) { return static_cast<T*>(arena_.allocate(sizeof(T) * n)); }

  // A copy of an op's n indices (a caller's array, rows of a batch) that lives as long as the tape.
  const int* keep(const int* p, std::size_t n) {
    int* copy = static_cast<int*>(arena_.allocate(sizeof(int) * (n ? n : 1)));
    std::copy_n(p, n, copy);
    return copy;
  }

  // A buffer of n entries the graph keeps for (key, tag) as long as the tape, tag saying what of
  // key's it holds (its kind and shape): what an op's calls in one pass share (a recurrence's weight
  // prepared once for every step's product). fresh: just made.
  T* memo(const void* key, uint64_t tag, std::size_t n, bool& fresh) {
    for (const Memo& m : memos_)
      if (m.key == key && m.tag == tag && m.n == n) return fresh = false, m.data;
    fresh = true;
    memos_.push_back({key, tag, n, buffer(n)});
    return memos_.back().data;
  }

  // Copies an op's context into the arena and puts its backward on the tape; `writes` lists the
  // gradient buffers the backward writes, in the order it writes them (nullptr for none).
  template <class Context>
  void record(BackwardFn backward_fn, const Context& context, std::initializer_list<T*> writes) {
    static_assert(std::is_trivially_copyable_v<Context> && std::is_trivially_destructible_v<Context>);
    void* p = arena_.allocate(sizeof(Context), alignof(Context) < 16 ? 16 : alignof(Context));
    std::memcpy(p, &context, sizeof(Context));
    const int entry = int(tape_.size());
    tape_.push_back({backward_fn, p});
    int i = 0;
    for (T* w : writes) {
      if (Gradient* s = find(w); s && s->writer != entry) s->writer = entry, s->slot = i;
      ++i;
    }
  }

  // Zeroes the gradient of an output nobody consumes and returns it for the caller to fill:
  // backward() then starts from it.
  T* seed(Tensor<T> y) {
    if (Gradient* s = find(y.grad)) s->seeded = true;
    if (y.grad) std::memset(y.grad, 0, sizeof(T) * y.size());
    return y.grad;
  }

  // Seeds d(loss)/d(loss) = 1 (or loss_scale: fp16's loss scaling, train/loss_scale.h) for a (1, 1)
  // loss (or starts from the seed()ed outputs when the loss is empty) and runs the tape backwards.
  void backward(Tensor<T> loss, T loss_scale = T(1)) {
    if (loss.grad) seed(loss)[0] = loss_scale;
    first_.assign(tape_.size(), 0u);
    for (const Gradient& s : grads_) {
      if (s.writer >= 0) first_[s.writer] |= 1u << s.slot;
      else if (!s.seeded) std::memset(s.ptr, 0, sizeof(T) * s.size);  // its producer reads zeros
    }
    for (int e = int(tape_.size()) - 1; e >= 0; --e) tape_[e].fn(tape_[e].context, first_[e]);
  }

  // Tests: every buffer of the graph becomes NaN (core/arena.h), so that a gradient a backward
  // should have written first but added to, or left unwritten, shows.
  void poison() { arena_.poison(); }

  // Forgets the tape and recycles the arena; tensors from before are invalid afterwards.
  void reset() {
    tape_.clear();
    grads_.clear();
    memos_.clear();
    std::fill(index_.begin(), index_.end(), -1);
    arena_.reset();
  }

 private:
  struct Entry {
    BackwardFn fn;
    const void* context;
  };
  struct Gradient {
    T* ptr;
    int64_t size;
    int writer = -1;  // the tape entry that writes it first (its last consumer), -1: none yet
    int slot = 0;     // its position in that entry's list
    bool seeded = false;
  };
  struct Memo {
    const void* key;
    uint64_t tag;
    std::size_t n;
    T* data;
  };

  // grads_ indexed by buffer address: open addressing in index_ (a power of two, at least twice
  // the gradients of a step, grown in the first steps only).
  static std::size_t hash(const void* p) {
    return std::size_t(((reinterpret_cast<std::uintptr_t>(p) >> 6) * 0x9E3779B97F4A7C15ull) >> 32);
  }
  void add_gradient(T* ptr, int64_t size) {
    grads_.push_back({ptr, size});
    if (2 * grads_.size() > index_.size()) {
      index_.assign(std::bit_ceil(std::max<std::size_t>(1024, 4 * grads_.size())), -1);
      for (std::size_t k = 0; k < grads_.size(); ++k) place(int(k));
    } else {
      place(int(grads_.size()) - 1);
    }
  }
  void place(int k) {
    const std::size_t mask = index_.size() - 1;
    std::size_t h = hash(grads_[k].ptr) & mask;
    while (index_[h] >= 0) h = (h + 1) & mask;
    index_[h] = k;
  }
  Gradient* find(const T* ptr) {
    if (!ptr || index_.empty()) return nullptr;
    const std::size_t mask = index_.size() - 1;
    for (std::size_t h = hash(ptr) & mask; index_[h] >= 0; h = (h + 1) & mask)
      if (grads_[index_[h]].ptr == ptr) return &grads_[index_[h]];
    return nullptr;
  }

  bool training_;
  bool grad_;
  Arena arena_;
  std::vector<Entry> tape_;
  std::vector<Gradient> grads_;
  std::vector<int> index_;
  std::vector<unsigned> first_;
  std::vector<Memo> memos_;
};

}  // namespace nt
