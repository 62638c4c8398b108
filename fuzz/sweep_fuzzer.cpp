// libFuzzer target: a sweep's sweep.json as sweep --status, --aggregate and the Slurm follow-up
// read it (sweep/sweep.h: spec_of_directory). Input: the file's bytes, written into a sweep
// directory of the target's own. Properties: a sweep.json that cannot be used is an InputError
// naming the directory or the file, and nothing else (no other exception, crash, sanitizer
// report, hang or huge allocation); an accepted one gives the spec that the file holds: its
// directory, config, fixed overrides, grid (keys and values, in order) and threads per job.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "fuzz_dir.h"
#include "sweep/sweep.h"

namespace {
[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "sweep_fuzzer: %s\n", why.c_str());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = nt_fuzz::fuzz_dir("sweep");
  nt_fuzz::write_input(dir + "/sweep.json", data, size);
  nt::SweepSpec spec;
  try {
    spec = nt::spec_of_directory(dir);
  } catch (const nt::InputError& e) {
    if (std::string(e.what()).find(dir) == std::string::npos)
      fail(std::string("an error that names neither the directory nor the file: ") + e.what());
    return 0;
  } catch (const std::exception& e) {
    fail(std::string("not an InputError: ") + e.what());
  }
  // accepted: the file is JSON (comments allowed), and the spec is what it says
  const nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, false, true);
  if (!doc.is_object()) fail("accepted, and not a JSON object");
  if (spec.out != dir || spec.config != doc["config"] || spec.threads_per_job != doc["threads_per_job"])
    fail("the directory, config or threads_per_job is not the file's");
  if (nlohmann::json(spec.fixed) != doc["fixed"]) fail("the fixed overrides are not the file's");
  const nlohmann::json& grid = doc["grid"];
  if (spec.axes.size() != grid.size()) fail("not the file's number of axes");
  for (std::size_t i = 0; i < spec.axes.size(); ++i)
    if (spec.axes[i].key != grid[i]["key"] || nlohmann::json(spec.axes[i].values) != grid[i]["values"])
      fail("axis " + std::to_string(i) + " is not the file's");
  return 0;
}
