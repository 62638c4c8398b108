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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = nt_fuzz::fuzz_dir("sweep");
  nt_fuzz::write_input(dir + "/sweep.json", data, size);
  const auto read = nt_fuzz::read_or_refuse("sweep", dir, [&] { return nt::spec_of_directory(dir); });
  if (!read) return 0;
  const nt::SweepSpec& spec = *read;
  // accepted: the file is JSON (comments allowed), and the spec is what it says
  const nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, false, true);
  if (!doc.is_object()) nt_fuzz::fail("sweep", "accepted, and not a JSON object");
  if (spec.out != dir || spec.config != doc["config"] || spec.threads_per_job != doc["threads_per_job"])
    nt_fuzz::fail("sweep", "the directory, config or threads_per_job is not the file's");
  if (nlohmann::json(spec.fixed) != doc["fixed"]) nt_fuzz::fail("sweep", "the fixed overrides are not the file's");
  const nlohmann::json& grid = doc["grid"];
  if (spec.axes.size() != grid.size()) nt_fuzz::fail("sweep", "not the file's number of axes");
  for (std::size_t i = 0; i < spec.axes.size(); ++i)
    if (spec.axes[i].key != grid[i]["key"] || nlohmann::json(spec.axes[i].values) != grid[i]["values"])
      nt_fuzz::fail("sweep", "axis " + std::to_string(i) + " is not the file's");
  return 0;
}
