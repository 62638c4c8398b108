// What the run-directory targets (metrics, summary, sweep, result) share: a directory of the
// target's own, made once per process under $TMPDIR (or /tmp) and removed when it exits, and
// the input written into a file there, the same path every execution, for the real reader to
// read. (scripts/fuzz.sh sets TMPDIR to /dev/shm when it is unset: a file rewritten a million
// times costs several times less in memory than on a journaled disk.)
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "core/errors.h"

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

// A finding: said on stderr, then abort (libFuzzer keeps the input).
[[noreturn]] inline void fail(const char* target, const std::string& why) {
  std::fprintf(stderr, "%s_fuzzer: %s\n", target, why.c_str());
  std::abort();
}

// What `read()` returns, or nullopt when it refused the input with an InputError whose message
// holds `names` (the file or the directory); any other exception is a finding.
template <class Read>
auto read_or_refuse(const char* target, const std::string& names, Read read) -> std::optional<decltype(read())> {
  try {
    return read();
  } catch (const nt::InputError& e) {
    if (std::string(e.what()).find(names) == std::string::npos)
      fail(target, std::string("an error that does not name ") + names + ": " + e.what());
    return std::nullopt;
  } catch (const std::exception& e) {
    fail(target, std::string("not an InputError: ") + e.what());
  }
}

}  // namespace nt_fuzz
