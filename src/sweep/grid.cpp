// A sweep's grid: axes parsed from the command line, expanded into jobs in a fixed order (the first
// axis outermost), each with its overrides, its directory and its resolved config.
#include <filesystem>
#include <map>
#include <fmt/format.h>
#include <memory>
#include <sstream>

#include "config/config.h"
#include "core/errors.h"
#include "sweep/sweep.h"

namespace nt {

namespace fs = std::filesystem;

std::string SweepJob::label() const {
  std::string s;
  for (const auto& [k, v] : overrides) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

std::string SweepJob::group_label() const {
  std::string s;
  for (const auto& [k, v] : overrides)
    if (k != "seed") s += (s.empty() ? "" : " ") + k + "=" + v;
  return s.empty() ? "(all)" : s;
}

SweepAxis parse_axis(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError(fmt::format("sweep axis \"{}\": expected key.path=v1,v2,...", text));
  SweepAxis a{text.substr(0, eq), {}};
  std::stringstream ss(text.substr(eq + 1));
  for (std::string v; std::getline(ss, v, ',');) {
    if (v.empty()) throw UsageError(fmt::format("sweep axis \"{}\": an empty value", text));
    a.values.push_back(v);
  }
  if (text.back() == ',') throw UsageError(fmt::format("sweep axis \"{}\": an empty value after the last comma", text));
  return a;
}

std::vector<std::string> job_fixed(const SweepSpec& spec) {
  std::vector<std::string> o{fmt::format("train.threads={}", spec.threads_per_job)};
  o.insert(o.end(), spec.fixed.begin(), spec.fixed.end());
  return o;
}

std::vector<std::string> job_axes(const SweepJob& job) {
  std::vector<std::string> o;
  for (const auto& [k, v] : job.overrides) o.push_back(k + "=" + v);
  return o;
}

std::vector<std::string> job_run_args(const SweepSpec& spec, const SweepJob& job) {
  std::vector<std::string> args;
  if (!spec.config.empty()) args.insert(args.end(), {"--config", spec.config});
  for (const std::string& o : job_fixed(spec)) args.push_back(o);
  for (const std::string& o : job_axes(job)) args.insert(args.end(), {"--set", o});
  return args;
}

std::vector<SweepJob> expand(const SweepSpec& spec) {
  double count = 1;  // as a double: a 30^6 grid must not overflow before it is refused
  std::string sizes;
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {  // a key or value given twice would duplicate and mislabel jobs
    const SweepAxis& axis = spec.axes[a];
    for (std::size_t b = 0; b < a; ++b)
      if (spec.axes[b].key == axis.key)
        throw UsageError(fmt::format("sweep axis {}: the key is given twice; give its values once ({}=v1,v2,...)",
                                     axis.key, axis.key));
    for (std::size_t i = 0; i < axis.values.size(); ++i)
      for (std::size_t k = 0; k < i; ++k)
        if (axis.values[k] == axis.values[i])
          throw UsageError(fmt::format("sweep axis {}: the value {} is given twice", axis.key, axis.values[i]));
  }
  for (const SweepAxis& axis : spec.axes) {
    count *= double(axis.values.size());
    sizes += (sizes.empty() ? "" : " x ") + std::to_string(axis.values.size());
  }
  if (count > double(kMaxSweepJobs))
    throw UsageError(fmt::format("the grid has {} = {:.0f} jobs, more than {}: split it into several sweeps", sizes,
                                 count, kMaxSweepJobs));
  std::vector<SweepJob> jobs(1);
  for (const SweepAxis& axis : spec.axes) {  // the first axis outermost, the last varying fastest
    std::vector<SweepJob> next;
    for (const SweepJob& j : jobs)
      for (const std::string& v : axis.values) {
        SweepJob k = j;
        k.overrides.emplace_back(axis.key, v);
        next.push_back(std::move(k));
      }
    jobs = std::move(next);
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].index = int(i);
    jobs[i].dir = (fs::path(spec.out) / std::to_string(i)).string();
    try {  // derived once, here: checking, planning, ordering and comparing read it
      ConfigInputs in{{}, job_fixed(spec), job_axes(jobs[i])};  // as job_run_args gives them to `run`
      if (!spec.config.empty()) in.files.push_back(spec.config);
      jobs[i].config = std::make_shared<const RunConfig>(load_configs(in));
    } catch (const InputError& e) {
      jobs[i].config_error = e.what();
    }
  }
  // Two values spelled apart that resolve alike (seed=1,1.0; "layernorm" quoted) would run one config
  // twice under two labels and fake an interval
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (!jobs[i].config) continue;
    nlohmann::json j = config_to_json(*jobs[i].config);
    const auto [at, fresh] = seen.emplace(j.dump(), i);
    if (!fresh)
      throw UsageError(fmt::format("sweep: the jobs {} and {} resolve to the same config; give each value once",
                                   jobs[at->second].label(), jobs[i].label()));
  }
  return jobs;
}

const RunConfig& resolved_config(const SweepJob& job) {
  if (!job.config) throw InputError(job.config_error);
  return *job.config;
}

}  // namespace nt
