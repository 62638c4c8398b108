// `normtool sweep`: expand a grid of overrides, run it (resumably) as parallel processes or as a
// Slurm job array (--launcher slurm), and aggregate over seeds; --status and --aggregate read a
// sweep directory wherever its jobs ran. Exit status: 0 when every job completed or diverged (a
// result), or the array was submitted; 1 when a job failed; 2 on bad usage or a bad config; 75
// (--aggregate) when jobs are still pending or running; 130 when interrupted.
#include "cli/sweep.h"
#include "cli/directory_option.h"

#include <fmt/core.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "core/errors.h"
#include "io/console.h"
#include "io/files.h"
#include "io/paths.h"
#include "io/run_files.h"
#include "io/table_format.h"
#include "sweep/slurm.h"
#include "sweep/sweep.h"
#include "train/memory.h"

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
  std::string launcher = "local";  // local | slurm | print
  SlurmOptions slurm;
  std::string status, aggregate;  // --status DIR, --aggregate DIR
  std::string format = "text";    // what --aggregate prints: text (markdown), csv or json
};

int show_status(const std::string& dir) {
  std::string job_id;
  const std::vector<SweepJob> jobs = sweep_status(dir, &job_id);
  fmt::print("sweep {}: {} jobs{}\n", dir, jobs.size(), job_id.empty() ? "" : ", Slurm job " + job_id);
  std::map<std::string, int> counts;
  for (const SweepJob& j : jobs) {
    ++counts[j.status];
    const nlohmann::json s = read_summary(j.dir);
    std::string detail;
    if (s.is_object() && s.contains("steps_completed")) {
      detail = fmt::format("step {}", s["steps_completed"].get<int>());
      if (s.contains("final_val_loss") && s["final_val_loss"].is_number())
        detail += fmt::format(", val loss {:.4f}", s["final_val_loss"].get<double>());
    }
    fmt::print("#{:<3} {:<44} {:<11} {}\n", j.index, j.label(), j.status, detail);
  }
  std::string line;
  for (const auto& [status, n] : counts) line += fmt::format("{}{} {}", line.empty() ? "" : ", ", n, status);
  fmt::print("{}\n", line);
  if (counts.count("unknown"))
    fmt::print(
        "squeue is not on this machine's PATH: whether Slurm job {} still runs the jobs shown unknown cannot be "
        "told; ask where Slurm's commands are\n",
        job_id);
  return 0;
}

int write_aggregate(const std::string& dir, const std::string& format) {
  const std::vector<SweepJob> jobs = sweep_status(dir);
  int unfinished = 0;
  for (const SweepJob& j : jobs)
    unfinished += j.status == "running" || j.status == "pending" || j.status == "unknown" || j.status == "not run";
  if (unfinished) {
    eprint("sweep {}: {} of {} jobs are not finished (normtool sweep --status {}); aggregate.md not written\n",
           printable(dir), unfinished, jobs.size(), printable(dir));
    return 75;  // EX_TEMPFAIL: try again later
  }
  write_aggregate(dir, jobs);
  if (format == "text") {
    fmt::print("{}sweep: {} jobs -> {}/aggregate.md\n", aggregate_table(jobs), jobs.size(), dir);
  } else {
    fmt::print("{}", format_table(aggregate_rows(jobs), format));
    eprint("sweep: {} jobs -> {}/aggregate.md, aggregate.csv\n", jobs.size(), printable(dir));
  }
  int failed = 0;
  for (const SweepJob& j : jobs) failed += j.status != "completed" && j.status != "diverged";
  return failed ? 1 : 0;
}

// Options that would be ignored beside others: errors naming them
void check_options(const SweepOptions& o) {
  if (!o.status.empty() && !o.aggregate.empty())
    throw UsageError("sweep: --status and --aggregate each read one directory; give one of them");
  if ((!o.status.empty() || !o.aggregate.empty()) && !o.axes.empty())
    throw UsageError(fmt::format("sweep: --{} reads a sweep that ran; a grid ({}) starts one: give one of them",
                                 o.status.empty() ? "aggregate" : "status", o.axes.front()));
  for (const std::string& set : o.sets)  // an axis's value would win over it in every job: it would say nothing
    for (const std::string& a : o.axes)
      if (const std::string key = set.substr(0, set.find('=')), axis = a.substr(0, a.find('='));
          key == axis || axis.starts_with(key + ".") || key.starts_with(axis + "."))
        throw UsageError(
            fmt::format("--set {}: the grid's axis {} sets {} in every job; give one of them", set, axis, axis));
}

int run(const SweepOptions& o) {
  check_options(o);
  if (!o.status.empty()) return show_status(o.status);
  if (!o.aggregate.empty()) return write_aggregate(o.aggregate, o.format);
  if (o.axes.empty()) throw UsageError("sweep: give the grid (key.path=v1,v2 ...), or --status DIR / --aggregate DIR");
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
      check_memory(resolved_config(j), std::min<int>(spec.jobs, int(jobs.size())));
    } catch (const InputError& e) {
      throw UsageError(fmt::format("job #{} ({}): {}", j.index, j.label(), e.what()));
    }
  }
  if (o.dry_run) {
    for (const SweepJob& j : jobs) fmt::print("#{} : {}\n", j.index, j.label());
    return 0;
  }
  if (o.launcher != "local") {
    const SlurmSubmission s = submit_sweep(spec, o.slurm, self_executable(), o.launcher == "slurm");
    if (s.to_run == 0) {
      fmt::print("sweep: every one of the {} jobs is done; nothing to submit (normtool sweep --aggregate {})\n",
                 s.jobs.size(), spec.out);
      return 0;
    }
    if (o.launcher == "print") {
      fmt::print("sweep: {} of {} jobs in {} (not submitted; sbatch it yourself)\n", s.to_run, s.jobs.size(), s.script);
      return 0;
    }
    fmt::print(
        "sweep: {} of {} jobs submitted as Slurm job array {} ({}); follow with normtool sweep --status {}, "
        "then normtool sweep --aggregate {}\n",
        s.to_run, s.jobs.size(), s.job_id, s.script, spec.out, spec.out);
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
  sub->add_option("axes", o->axes, "grid axes: key.path=v1,v2,... (the last varies fastest)");
  sub->add_option("-s,--set", o->sets, "an override for every job")->allow_extra_args(false);
  sub->add_option("-j,--jobs", o->jobs, "parallel processes")->capture_default_str()->check(CLI::Range(1, 64));
  sub->add_option("--threads", o->threads, "math threads per job (train.threads)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  sub->add_option("-o,--out", o->out, "sweep directory (default runs/sweep-<YYYYmmdd-HHMMSS>)")
      ->check(non_empty_directory);
  sub->add_flag("--dry-run", o->dry_run, "list the jobs and exit");
  sub->add_flag("--force", o->force,
                "run in a directory that holds another grid's sweep: jobs whose config differs are run again");
  sub->add_option("--launcher", o->launcher,
                  "local: processes here; slurm: a job array submitted with sbatch; print: write sweep.sbatch only")
      ->capture_default_str()
      ->check(CLI::IsMember({"local", "slurm", "print"}));
  sub->add_option("--partition", o->slurm.partition, "Slurm: the partition (sbatch --partition)");
  sub->add_option("--time", o->slurm.time, "Slurm: each task's time limit (sbatch --time), e.g. 02:00:00");
  sub->add_option("--cpus-per-task", o->slurm.cpus_per_task, "Slurm: CPUs per task (default: --threads)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--max-parallel", o->slurm.max_parallel, "Slurm: at most this many tasks at once (the array's %K)")
      ->check(CLI::Range(1, 100000));
  sub->add_option("--signal-lead", o->slurm.signal_lead_s,
                  "Slurm: SIGTERM this many seconds before the time limit, to checkpoint and requeue")
      ->capture_default_str()
      ->check(CLI::Range(10, 65535));
  sub->add_option("--sbatch-arg", o->slurm.extra,
                  "Slurm: a further sbatch argument, e.g. --sbatch-arg=--account=ml "
                  "(repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--status", o->status, "show each job's state in this sweep directory, and exit")
      ->check(non_empty_directory);
  sub->add_option("--aggregate", o->aggregate,
                  "write aggregate.md and aggregate.csv of this sweep directory once its jobs are done")
      ->check(non_empty_directory);
  sub->add_option("-f,--format", o->format, "what --aggregate prints: text (the markdown table), csv or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "csv", "json"}));
  sub->callback([o, &exit_code] { exit_code = run(*o); });
}

}  // namespace nt::cli
