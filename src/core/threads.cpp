#include "core/threads.h"

#include "core/machine.h"
#include "core/openblas.h"

#include <Eigen/Core>
#include <omp.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <string>


namespace nt {

bool tune_math_environment() {
  bool changed = false;
  if (!std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "active", 1);
    if (!std::getenv("GOMP_SPINCOUNT")) setenv("GOMP_SPINCOUNT", "3M", 1);
    changed = true;
  }
#ifdef NORMTOOL_OPENBLAS
  // Set without asking OpenBLAS (which would load it: core/openblas.h); it takes every AVX-512
  // CPU's SGEMM and DGEMM kernels from the SkylakeX family anyway.
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  if (!std::getenv("OPENBLAS_CORETYPE") && avx512) {
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
    changed = true;
  }
#endif
  return changed;
}

const char* openblas_core() {
  const OpenBlas* o = openblas();
  return o ? o->get_corename() : "none";
}
bool openblas_runs_avx512() {
  const std::string core = openblas_core();
  return core == "SkylakeX" || core == "Cooperlake" || core == "SapphireRapids";
}

int max_math_threads() { return 4 * cpu_cores(); }

void flush_subnormals() {
#if defined(__x86_64__)
  // MXCSR is per thread; a thread the pool starts later copies its creator's (the kernel copies
  // the FPU state on clone), so setting the pool's present threads (this one among them) covers all
#pragma omp parallel
  _mm_setcsr(_mm_getcsr() | _MM_FLUSH_ZERO_ON | _MM_DENORMALS_ZERO_ON);
#endif
}

int math_threads_for(int threads) { return threads > 0 ? std::min(threads, max_math_threads()) : cpu_cores(); }

int set_math_threads(int threads) {
  const int n = math_threads_for(threads);
  omp_set_num_threads(n);
  flush_subnormals();
  Eigen::setNbThreads(1);  // core/gemm.cpp splits Eigen's products itself, where the thread count moves no cut
  openblas_set_threads_if_loaded(n);
  return n;
}

}  // namespace nt
