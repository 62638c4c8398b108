// `normtool sweep`: expand a grid of overrides, run it (resumably) as parallel processes,
// and print the aggregate over seeds. Exit status: 0 when every job completed or diverged
// (a result), 1 when a job failed, 2 on bad usage or a bad config, 130 when interrupted.
#include "cli/sweep.h"

#include <fmt/core.h>
#include <unistd.h>

#include "config/config.h"
#include "io/paths.h"
#include "train/memory.h"
#include "sweep/sweep.h"

namespace nt::cli {

namespace {

struct SweepOptions {
  std::string config;
  std::vector<std::string> axes;  // key=v1,v2
  std::vector<std::string> sets;  // --set key=value for every job
  std::string out;
  int jobs = 2;
  int threads = 1;
  bool dry_run = false;
  bool force = false;
};

int run(const SweepOptions& o) {
  SweepSpec spec;
  spec.config = find_config(o.config);
  spec.fixed = o.sets;
  spec.jobs = o.jobs;
  spec.threads_per_job = o.threads;
  spec.replace_grid = o.force;
  for (const auto& a : o.axes) spec.axes.push_back(parse_axis(a));
  spec.out = o.out.empty() ? "runs/sweep-" + timestamp() : o.out;
  const auto jobs = expand(spec);
  // Every job's config must be valid, and the parallel jobs must fit in memory, before anything runs.
  for (const SweepJob& j : jobs) {
    try {
      check_memory(load_config_file(spec.config, job_overrides(spec, j)), std::min<int>(spec.jobs, int(jobs.size())));
    } catch (const InputError& e) {
      throw UsageError(fmt::format("job #{} ({}): {}", j.index, j.label(), e.what()));
    }
  }
  if (o.dry_run) {
    for (const SweepJob& j : jobs) fmt::print("#{} : {}\n", j.index, j.label());
    return 0;
  }
  const auto done = run_sweep(spec, self_executable());
  fmt::print("{}", aggregate_table(done));
  fmt::print("sweep: {} jobs -> {} (sweep.json, aggregate.md)\n", done.size(), spec.out);
  int failed = 0, stopped = 0;
  for (const auto& j : done) {
    failed += j.status == "failed";
    stopped += j.status == "interrupted" || j.status == "not run";
  }
  return stopped ? 130 : failed ? 1 : 0;
}

}  // namespace

void setup_sweep(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* sub = app.add_subcommand("sweep", "Run a grid of configs (resumable), aggregated over seeds");
  sub->add_option("-c,--config", o->config, "the base JSON config");
  sub->add_option("axes", o->axes, "grid axes: key.path=v1,v2,... (the last varies fastest)")->required();
  sub->add_option("-s,--set", o->sets, "an override for every job")->allow_extra_args(false);
  sub->add_option("-j,--jobs", o->jobs, "parallel processes")->capture_default_str()->check(CLI::Range(1, 64));
  sub->add_option("--threads", o->threads, "math threads per job (train.threads)")->capture_default_str()->check(CLI::Range(1, 64));
  sub->add_option("-o,--out", o->out, "sweep directory (default runs/sweep-<YYYYmmdd-HHMMSS>)");
  sub->add_flag("--dry-run", o->dry_run, "list the jobs and exit");
  sub->add_flag("--force", o->force,
                "run in a directory that holds another grid's sweep: jobs whose config differs are run again");
  sub->callback([o, &exit_code] { exit_code = run(*o); });
}

}  // namespace nt::cli
