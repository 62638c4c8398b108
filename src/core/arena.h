// Arena: a bump allocator for the activations, gradients and op contexts of one step.
//
// reset() rewinds it. The first step may spill into extra chunks; the next reset() merges
// them into one block big enough for the whole step, so from the second step on a training
// step allocates nothing on the heap (Train.NoHeapAllocationInsideATrainingStep in tests/test_train.cpp
// counts).
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

namespace nt {

class Arena {
 public:
  explicit Arena(std::size_t initial_bytes = 1 << 20);
  void* allocate(std::size_t bytes, std::size_t align = 64);
  void reset();
  // Fills all of its memory with 0xFF bytes (NaN as float or double), so that a test sees any
  // buffer read before it is written.
  void poison();

 private:
  struct Chunk {
    std::unique_ptr<std::byte[]> memory;
    std::size_t size = 0;
  };
  std::vector<Chunk> chunks_;
  std::size_t offset_ = 0;   // into chunks_.back()
  std::size_t used_ = 0;     // bytes handed out since the last reset
  std::size_t peak_ = 0;     // most bytes handed out between two resets
  void add_chunk(std::size_t bytes);
};

}  // namespace nt
