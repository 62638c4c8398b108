// The sweep directory's record, sweep.json: written by the sweep (sweep_json), read back by a
// rerun, --status and --aggregate (read_sweep_json, spec_of_directory).
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "io/json_file.h"
#include "sweep/sweep.h"

namespace nt {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Read as io/json_file.h reads (a FIFO or a device is refused, the size bounded), every key
// checked here so that a hand edit is an InputError, never a library exception later.
json read_sweep_json(const std::string& dir) {
  const std::string path = (fs::path(dir) / "sweep.json").string();
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return nullptr;
  const JsonDoc d = read_json_file(path);
  for (const char* k : {"config", "launcher", "slurm_job_id", "sbatch"}) d.get_or<std::string>(k, "");
  for (const char* k : {"threads_per_job", "parallel_jobs"}) d.get_or<int>(k, 0);
  if (d.has("fixed"))
    for (const JsonDoc& e : d.get<JsonDoc>("fixed").elements()) e.as<std::string>();
  if (d.has("grid"))
    for (const JsonDoc& a : d.get<JsonDoc>("grid").elements()) {
      a.get<std::string>("key");
      for (const JsonDoc& v : a.get<JsonDoc>("values").elements()) v.as<std::string>();
    }
  if (d.has("jobs"))
    for (const JsonDoc& j : d.get<JsonDoc>("jobs").elements()) {
      j.get<int>("index");
      j.get_or<std::string>("status", "");
    }
  return d.value();
}

SweepSpec spec_of_directory(const std::string& dir) {
  const json doc = read_sweep_json(dir);
  if (!doc.is_object() || !doc.contains("grid"))
    throw UsageError(fmt::format("{}: no sweep.json there: not a sweep directory", dir));
  const JsonDoc d(doc, (fs::path(dir) / "sweep.json").string());  // its types checked by read_sweep_json
  SweepSpec spec;
  spec.out = dir;
  spec.config = d.get<std::string>("config");
  for (const JsonDoc& e : d.get<JsonDoc>("fixed").elements()) spec.fixed.push_back(e.as<std::string>());
  for (const JsonDoc& a : d.get<JsonDoc>("grid").elements()) {
    spec.axes.push_back({a.get<std::string>("key"), {}});
    for (const JsonDoc& v : a.get<JsonDoc>("values").elements()) spec.axes.back().values.push_back(v.as<std::string>());
  }
  spec.threads_per_job = d.get<int>("threads_per_job");
  spec.jobs = d.get_or<int>("parallel_jobs", 1);
  return spec;
}

json sweep_json(const SweepSpec& spec, const std::vector<SweepJob>& jobs) {
  json grid = json::array();
  for (const auto& a : spec.axes) grid.push_back({{"key", a.key}, {"values", a.values}});
  json list = json::array();
  for (const auto& j : jobs) {
    json o = json::object();
    for (const auto& [k, v] : j.overrides) o[k] = v;
    list.push_back({{"index", j.index}, {"overrides", o}, {"dir", j.dir}, {"status", j.status}});
  }
  return {{"config", spec.config}, {"fixed", spec.fixed},        {"grid", grid},
          {"jobs", list},          {"parallel_jobs", spec.jobs}, {"threads_per_job", spec.threads_per_job}};
}

}  // namespace nt
