// AlignedVector: a std::vector whose storage starts on a 64-byte boundary. Eigen's kernels
// take different paths (and so round differently) for differently aligned starts; aligning
// every buffer that reaches a kernel keeps runs bit-for-bit reproducible.
#pragma once
#include <cstdlib>
#include <new>
#include <vector>

namespace nt {

template <class T, std::size_t Align = 64>
struct AlignedAllocator {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = AlignedAllocator<U, Align>;
  };
  AlignedAllocator() = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U, Align>&) {}
  T* allocate(std::size_t n) {
    const std::size_t bytes = (n * sizeof(T) + Align - 1) / Align * Align;
    if (void* p = std::aligned_alloc(Align, bytes ? bytes : Align)) return static_cast<T*>(p);
    throw std::bad_alloc();
  }
  void deallocate(T* p, std::size_t) { std::free(p); }
  template <class U>
  bool operator==(const AlignedAllocator<U, Align>&) const { return true; }
};

template <class T>
using AlignedVector = std::vector<T, AlignedAllocator<T>>;

}  // namespace nt
