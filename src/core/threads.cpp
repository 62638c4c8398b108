#include "core/threads.h"

#include <Eigen/Core>
#include <omp.h>

#ifdef NORMTOOL_OPENBLAS
extern "C" void openblas_set_num_threads(int);
#endif

namespace nt {

int set_math_threads(int threads) {
  const int n = threads > 0 ? threads : omp_get_num_procs();
  omp_set_num_threads(n);
  Eigen::setNbThreads(n);
#ifdef NORMTOOL_OPENBLAS
  openblas_set_num_threads(n);
#endif
  return n;
}

}  // namespace nt
