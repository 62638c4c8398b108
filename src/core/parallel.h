// parallel_chunks: [0, n) cut into one contiguous chunk per math thread (starts on 16-element
// boundaries), each handed to f(begin, count) on its own OpenMP thread. For the elementwise
// work of a step (activations, the optimizer); with one thread, or under 4096 elements, it is a
// plain call.
//
// The sums (parallel_sum, and the sums over rows of row_blocks) are cut where the thread count
// does not move the cuts, each piece summed in order and the pieces added in order: the same
// bits at any thread count (train.parallel ops promises it). Cut per thread, a sum would round
// differently at each thread count.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace nt {

// The math threads for a row-wise op over `elements` values: all of them from 16384 values up,
// else one. An OpenMP team for a few rows costs more than the rows (a GRU step's norms over one
// batch of states), and on a loaded machine its waits grow by orders of magnitude.
inline int threads_for(int64_t elements) { return elements >= 16384 ? omp_get_max_threads() : 1; }

template <class F>
void parallel_chunks(int64_t n, F&& f) {
  const int threads = omp_get_max_threads();
  if (threads <= 1 || n < 4096) {
    f(int64_t(0), n);
    return;
  }
  const int64_t chunk = ((n + threads - 1) / threads + 15) / 16 * 16;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int t = 0; t < threads; ++t) {
    const int64_t begin = std::min(n, int64_t(t) * chunk);
    f(begin, std::min(n, begin + chunk) - begin);
  }
}

// The sum of f(begin, count) over [0, n) cut into at most 64 chunks whose sizes are multiples of
// 4096 set by n alone, the chunks split over the math threads, their values added in chunk order.
template <class F>
double parallel_sum(int64_t n, F&& f) {
  constexpr int64_t kMaxChunks = 64, kQuantum = 4096;
  const int64_t size = std::max(kQuantum, ((n + kMaxChunks - 1) / kMaxChunks + kQuantum - 1) / kQuantum * kQuantum);
  const int chunks = int((std::max<int64_t>(n, 1) + size - 1) / size);
  double partial[kMaxChunks] = {};
#pragma omp parallel for schedule(static) num_threads(std::min(omp_get_max_threads(), chunks))
  for (int c = 0; c < chunks; ++c) {
    const int64_t begin = c * size;
    partial[c] = f(begin, std::min(n, begin + size) - begin);
  }
  double sum = 0;
  for (int c = 0; c < chunks; ++c) sum += partial[c];
  return sum;
}

// A sum over the N rows of an op of N x C values (a bias's gradient, a norm's gains'): the rows
// cut into row_blocks(N, C) blocks of consecutive rows, block b the rows [begin, end) of
// for_row_blocks's f(b, begin, end), which sums them in row order into the block's own partial;
// add_blocks then adds the partials in block order. Under 16384 values one block on one thread;
// from there 24 blocks (or N), which 2, 3, 4, 6, 8 and 12 threads share evenly.
inline int row_blocks(int64_t N, int64_t C) { return N * C < 16384 ? 1 : int(std::min<int64_t>(N, 24)); }

template <class F>
void for_row_blocks(int N, int blocks, F&& f) {
#pragma omp parallel for schedule(static) num_threads(blocks > 1 ? std::min(omp_get_max_threads(), blocks) : 1)
  for (int b = 0; b < blocks; ++b) f(b, int(int64_t(N) * b / blocks), int(int64_t(N) * (b + 1) / blocks));
}

// partial[0, width) += partial[b stride, b stride + width) for b = 1 .. blocks - 1, in that order.
template <class T>
void add_blocks(T* partial, int blocks, int64_t stride, int64_t width) {
  for (int b = 1; b < blocks; ++b) {
    const T* from = partial + b * stride;
    for (int64_t j = 0; j < width; ++j) partial[j] += from[j];
  }
}

}  // namespace nt
