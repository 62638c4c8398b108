#include "core/openblas.h"

#include <dlfcn.h>
#include <omp.h>
#include <sys/resource.h>

#include <atomic>

namespace nt {

namespace {
std::atomic<const OpenBlas*> g_loaded{nullptr};

const OpenBlas* load() {
#ifdef NORMTOOL_OPENBLAS_LIBRARY
  for (const int resource : {RLIMIT_AS, RLIMIT_DATA}) {  // ulimit -v, ulimit -d: either makes its mmap fail
    rlimit limit{};
    if (getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        limit.rlim_cur < kOpenBlasMinAddressSpace)
      return nullptr;
  }
  void* h = dlopen(NORMTOOL_OPENBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!h) return nullptr;
  static OpenBlas o;
  o.sgemm = reinterpret_cast<decltype(o.sgemm)>(dlsym(h, "cblas_sgemm"));
  o.dgemm = reinterpret_cast<decltype(o.dgemm)>(dlsym(h, "cblas_dgemm"));
  o.set_num_threads = reinterpret_cast<decltype(o.set_num_threads)>(dlsym(h, "openblas_set_num_threads"));
  o.get_corename = reinterpret_cast<decltype(o.get_corename)>(dlsym(h, "openblas_get_corename"));
  if (!o.sgemm || !o.dgemm || !o.set_num_threads || !o.get_corename) return nullptr;
  o.set_num_threads(omp_get_max_threads());
  return &o;
#else
  return nullptr;
#endif
}
}  // namespace

const OpenBlas* openblas() {
  static const OpenBlas* lib = [] {
    const OpenBlas* o = load();
    g_loaded = o;
    return o;
  }();
  return lib;
}

void openblas_set_threads_if_loaded(int threads) {
  if (const OpenBlas* o = g_loaded.load()) o->set_num_threads(threads);
}

}  // namespace nt
