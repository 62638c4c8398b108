// parallel_chunks: [0, n) cut into one contiguous chunk per math thread (starts on 16-element
// boundaries), each handed to f(begin, count) on its own OpenMP thread. For the elementwise
// work of a step (activations, the optimizer); with one thread it is a plain call.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace nt {

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

}  // namespace nt
