// OpenBLAS, loaded on first use (dlopen) rather than linked: its start-up reserves buffers of
// 128 MiB, and when the address space is limited (`ulimit -v` of 300 MB or so) it retries that
// forever, before main(), so that normtool hung without a word. Loaded lazily, it is never
// loaded for what normtool's own kernel computes (every float product on an AVX2 or AVX-512 CPU),
// and under an address-space or data limit (ulimit -v, ulimit -d) below kOpenBlasMinAddressSpace
// it is not loaded at all: the
// products it would have run go to Eigen's kernels (core/gemm.h), slower, with the same results
// to rounding. summary.json's gemm_kernels says which ran.
#pragma once
#include <cstdint>

namespace nt {

inline constexpr uint64_t kOpenBlasMinAddressSpace = uint64_t(2) << 30;

// The functions normtool calls, bound from the library.
struct OpenBlas {
  void (*sgemm)(int order, int ta, int tb, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                int ldb, float beta, float* C, int ldc);
  void (*dgemm)(int order, int ta, int tb, int M, int N, int K, double alpha, const double* A, int lda, const double* B,
                int ldb, double beta, double* C, int ldc);
  void (*set_num_threads)(int);
  char* (*get_corename)();
};
// CBLAS's constants (cblas.h): the order and the transposes.
inline constexpr int kCblasRowMajor = 101, kCblasNoTrans = 111, kCblasTrans = 112;

// The library, loaded and bound on the first call (its threads set to OpenMP's count then);
// nullptr when the build has none, it cannot be loaded, or the address space is limited.
const OpenBlas* openblas();
// Sets OpenBLAS's thread count when it is loaded; loads nothing.
void openblas_set_threads_if_loaded(int threads);

}  // namespace nt
