#include "core/arena.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace nt {

Arena::Arena(std::size_t initial_bytes) { add_chunk(initial_bytes); }

void Arena::add_chunk(std::size_t bytes) {
  Chunk c;
  c.memory = std::unique_ptr<std::byte[]>(new std::byte[bytes]);  // not zeroed: pages untouched stay unmapped
  c.size = bytes;
  chunks_.push_back(std::move(c));
  offset_ = 0;
}

void* Arena::allocate(std::size_t bytes, std::size_t align) {
  Chunk* c = &chunks_.back();
  auto base = reinterpret_cast<std::uintptr_t>(c->memory.get());
  std::size_t start = (base + offset_ + align - 1) / align * align - base;
  if (start + bytes > c->size) {
    add_chunk(std::max(bytes + align, 2 * c->size));
    c = &chunks_.back();
    base = reinterpret_cast<std::uintptr_t>(c->memory.get());
    start = (base + align - 1) / align * align - base;
  }
  offset_ = start + bytes;
  used_ += bytes + align;  // counts alignment slack, so a merged chunk always fits the step
  return c->memory.get() + start;
}

void Arena::reset() {
  peak_ = std::max(peak_, used_);
  if (chunks_.size() > 1) {  // merge: one block that holds the largest step seen so far
    chunks_.clear();
    add_chunk(peak_ + peak_ / 8);
  }
  offset_ = 0;
  used_ = 0;
}

void Arena::poison() {
  for (Chunk& c : chunks_) std::memset(c.memory.get(), 0xFF, c.size);
}

}  // namespace nt
