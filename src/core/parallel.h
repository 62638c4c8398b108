// parallel_chunks: [0, n) cut into one contiguous chunk per math thread (starts on 16-element
// boundaries), each handed to f(begin, count) on its own OpenMP thread. For the elementwise
// work of a step (activations, the optimizer); with one thread, or under 4096 elements, it is a
// plain call. parallel_sum adds up a value per chunk.
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

// The sum of f(begin, count) over the chunks of parallel_chunks, added in chunk order: the same
// result on every run with the same thread count.
template <class F>
double parallel_sum(int64_t n, F&& f) {
  double partial[256] = {};
  const int64_t chunks = std::min(omp_get_max_threads(), 256);
  const int64_t size = n < 4096 || chunks <= 1 ? std::max<int64_t>(n, 1) : ((n + chunks - 1) / chunks + 15) / 16 * 16;
  parallel_chunks(n, [&](int64_t begin, int64_t count) { partial[begin / size] = f(begin, count); });
  double sum = 0;
  for (double p : partial) sum += p;
  return sum;
}

}  // namespace nt
