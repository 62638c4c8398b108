// libFuzzer target: the gettext .mo reader (data/gettext.cpp: read_mo). Input: a catalog's bytes,
// written to a file of the target's own. Properties: a catalog that cannot be used is a
// DataError naming the file and nothing else; no crash, no sanitizer report, no read outside
// the file (every table and string offset is bounds-checked).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "data/dataset.h"

namespace {
const std::string& path() {
  static const std::string* p = [] {
    char name[] = "/tmp/normtool-mo-fuzz-XXXXXX";
    const int fd = mkstemp(name);
    if (fd < 0) std::abort();
    close(fd);
    return new std::string(name);
  }();
  return *p;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    std::ofstream out(path(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  }
  try {
    for (const nt::Seq2SeqPair& p : nt::read_mo(path()))
      if (p.src.size() > size || p.tgt.size() > size) std::abort();  // nothing from outside the file
  } catch (const nt::DataError& e) {
    if (std::string(e.what()).find(path()) == std::string::npos) std::abort();
  }
  return 0;
}
