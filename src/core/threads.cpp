#include "core/threads.h"

#include "core/machine.h"

#include <Eigen/Core>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#ifdef NORMTOOL_OPENBLAS
extern "C" void openblas_set_num_threads(int);
extern "C" char* openblas_get_corename(void);
#endif

namespace nt {

bool tune_math_environment() {
  bool changed = false;
  if (!std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "active", 1);
    changed = true;
  }
#ifdef NORMTOOL_OPENBLAS
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  if (!std::getenv("OPENBLAS_CORETYPE") && avx512 && !openblas_runs_avx512()) {
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
    changed = true;
  }
#endif
  return changed;
}

#ifdef NORMTOOL_OPENBLAS
const char* openblas_core() { return openblas_get_corename(); }
bool openblas_runs_avx512() {
  const std::string core = openblas_get_corename();
  return core == "SkylakeX" || core == "Cooperlake" || core == "SapphireRapids";
}
#endif

int max_math_threads() { return 4 * cpu_cores(); }

int set_math_threads(int threads) {
  const int n = threads > 0 ? std::min(threads, max_math_threads()) : cpu_cores();
  omp_set_num_threads(n);
  Eigen::setNbThreads(n);
#ifdef NORMTOOL_OPENBLAS
  openblas_set_num_threads(n);
#endif
  return n;
}

}  // namespace nt
