// What the run-directory targets (metrics, summary, sweep, result) share: a directory of the
// target's own, made once per process under $TMPDIR (or /tmp) and removed when it exits, and
// the input written into a file there, the same path every execution, for the real reader to
// read. (scripts/fuzz.sh sets TMPDIR to /dev/shm when it is unset: a file rewritten a million
// times costs several times less in memory than on a journaled disk.)
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace nt_fuzz {

inline const std::string* made_dir = nullptr;

inline const std::string& fuzz_dir(const char* target) {
  if (!made_dir) {
    const char* tmp = std::getenv("TMPDIR");
    std::string name = std::string(tmp && *tmp ? tmp : "/tmp") + "/normtool-" + target + "-fuzz-XXXXXX";
    if (!mkdtemp(name.data())) std::abort();
    made_dir = new std::string(name);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(*made_dir, ec);
    });
  }
  return *made_dir;
}

inline void write_input(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  if (!out.flush()) std::abort();
}

}  // namespace nt_fuzz
