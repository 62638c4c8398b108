#include "core/machine.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

namespace nt {

namespace {

// The first number of a file ("max" and missing files give -1).
int64_t read_number(const char* path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return -1;
  try {
    return std::stoll(word);
  } catch (const std::exception&) {
    return -1;
  }
}

int64_t mem_available() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      int64_t kib = 0;
      if (fields >> kib) return kib * 1024;
    }
  return -1;
}

}  // namespace

int cpu_cores() { return std::max(1, int(sysconf(_SC_NPROCESSORS_ONLN))); }

int64_t available_memory() {
  int64_t room = std::numeric_limits<int64_t>::max();
  if (const int64_t m = mem_available(); m >= 0) room = m;
  const int64_t limit = read_number("/sys/fs/cgroup/memory.max"), used = read_number("/sys/fs/cgroup/memory.current");
  if (limit >= 0 && used >= 0) room = std::min(room, std::max<int64_t>(0, limit - used));
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    int64_t mapped = 0;  // what the process has mapped already: /proc/self/statm's first field, in pages
    if (std::ifstream statm("/proc/self/statm"); statm >> mapped) mapped *= sysconf(_SC_PAGESIZE);
    room = std::min(room, std::max<int64_t>(0, int64_t(as.rlim_cur) - mapped));
  }
  return room;
}

}  // namespace nt
