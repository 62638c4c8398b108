// libFuzzer target: a run's metrics.jsonl as compare, sweeps and claims read it
// (io/run_files.h: read_losses). Input: the file's bytes, written into a run directory of the
// target's own. Properties: a file that cannot be used is an InputError naming the file, and
// nothing else (no other exception, crash, sanitizer report, hang or huge allocation); of an
// accepted one, each point comes from a whole line (no more points than newlines), its loss is
// a finite number and its accuracy a finite number or NaN (none recorded).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "core/errors.h"
#include "fuzz_dir.h"
#include "io/run_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = nt_fuzz::fuzz_dir("metrics");
  nt_fuzz::write_input(dir + "/metrics.jsonl", data, size);
  const auto read = nt_fuzz::read_or_refuse("metrics", dir + "/metrics.jsonl", [&] { return nt::read_losses(dir); });
  if (!read) return 0;
  const std::vector<nt::LossPoint>& points = *read;
  std::size_t lines = 0;
  for (size_t i = 0; i < size; ++i) lines += data[i] == '\n';
  if (points.size() > lines) std::abort();
  for (const nt::LossPoint& p : points)
    if (!std::isfinite(p.loss) || std::isinf(p.acc)) std::abort();
  return 0;
}
