// Sweeps: a grid of config overrides expanded in a fixed order, run as parallel `normtool run`
// processes (one math thread each), resumable, and aggregated over seeds.
//
//   grid  key=v1,v2 other=a,b seed=1,2,3  ->  jobs in order, the last key varying fastest:
//         #0 : key=v1 other=a seed=1,  #1 : key=v1 other=a seed=2, ...
//   out   <out>/<job>/ (a run directory each), <out>/logs/<job>.log, <out>/sweep.json,
//         <out>/aggregate.md and aggregate.csv
// A job whose summary.json says completed or diverged, and whose config.json is the config the
// grid gives it, is a result and is not run again; any other job directory (interrupted,
// failed, running but dead, half-written, another grid's) is removed and run again.
//
// One sweep at a time in a directory: <out>/.lock is held (flock) while it runs, and a second
// sweep there is refused. A directory holding another grid's sweep.json is refused unless
// replace_grid. A grid beyond kMaxSweepJobs jobs is refused. The jobs die with the sweep
// (PR_SET_PDEATHSIG), and a SIGINT or SIGTERM to the sweep reaches them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace nt {

struct RunConfig;
struct Table;
struct SlurmOptions;
class Slots;

struct SweepAxis {
  std::string key;
  std::vector<std::string> values;  // as typed; parsed like any override
};

struct SweepJob {
  int index = 0;
  std::vector<std::pair<std::string, std::string>> overrides;  // (key, value), grid order
  std::string dir;
  std::string status;  // completed, diverged, interrupted, failed, skipped-... after running
  // The job's resolved config (the base file, job_fixed, then job_axes), derived once by expand; null
  // when the overrides make it invalid, and config_error then says why.
  std::shared_ptr<const RunConfig> config;
  std::string config_error;
  std::string label() const;        // "key=v1 other=a seed=1"
  std::string group_label() const;  // the same without seed: one grid point
};

inline constexpr int64_t kMaxSweepJobs = 10000;

struct SweepSpec {
  std::string config;              // the base config file ("" = defaults)
  std::vector<std::string> fixed;  // overrides for every job (key=value)
  std::vector<SweepAxis> axes;
  std::string out;
  int jobs = 1;               // parallel processes
  int threads_per_job = 1;    // train.threads for each job unless fixed sets it
  bool replace_grid = false;  // run in a directory that holds another grid's sweep
};

// "key=v1,v2" -> axis; throws std::invalid_argument naming the bad argument.
SweepAxis parse_axis(const std::string& text);

// The jobs of the grid, in order, each with its resolved config; a UsageError beyond kMaxSweepJobs.
std::vector<SweepJob> expand(const SweepSpec& spec);
// A job's resolved config, or the InputError that says why its overrides make it invalid.
const RunConfig& resolved_config(const SweepJob& job);

// What a job's config is made of: train.threads and the fixed overrides, then, a later layer, its
// axes' values (so that a fixed key the job does not read, p beside a grid of norms, is superseded
// by the axis that decides it: config/unread_keys.cpp).
std::vector<std::string> job_fixed(const SweepSpec& spec);
std::vector<std::string> job_axes(const SweepJob& job);
// `normtool run`'s arguments for it, before --out: --config, the fixed ones as positional overrides,
// the axes as --set.
std::vector<std::string> job_run_args(const SweepSpec& spec, const SweepJob& job);

// Runs the jobs not done yet (binary: the normtool executable); returns them with their status.
// Stops launching on SIGINT and returns what ran.
std::vector<SweepJob> run_sweep(const SweepSpec& spec, const std::string& binary, bool quiet = false);

// Where a sweep's jobs get their slots (sweep/slots.h): `parallel` of their own when `slots` is
// null, else a pool shared with other sweeps and runs (a reproduction's claims), at `priority`.
struct SlotShare {
  Slots* slots = nullptr;
  int priority = 0;
};

// The jobs of several sweeps (each in its own directory, locked, with its sweep.json) in one pool
// of `parallel` processes, so that no core waits for the end of one sweep before the next starts.
// The jobs start in order of their estimated work, the most first: a long job started last would
// keep one core busy while the others idle. Returns each sweep's jobs, in the order of `specs`.
// Threads may run sweeps at once: in a directory another thread's sweep holds, this one waits
// for it to end (and then finds its jobs done).
std::vector<std::vector<SweepJob>> run_sweeps(const std::vector<SweepSpec>& specs, int parallel,
                                              const std::string& binary, bool quiet = false, SlotShare share = {});

// What a sweep does with a job: keep its result (completed or diverged, of this config), resume
// it from its checkpoint (of this config), or run it afresh (its directory removed first). plan_job
// sets the kept job's status.
enum class JobPlan { keep, resume, fresh };
JobPlan plan_job(SweepJob& job);

// The jobs not done yet as one Slurm job array (sweep/slurm.h): <out>/sweep.sbatch, submitted
// with sbatch unless !submit (--launcher print); sweep.json records the launcher and the job id.
struct SlurmSubmission {
  std::vector<SweepJob> jobs;  // every job of the grid
  int to_run = 0;              // the array's tasks; 0: every job was done, nothing submitted
  std::string script, job_id;
};
SlurmSubmission submit_sweep(const SweepSpec& spec, const SlurmOptions& options, const std::string& binary,
                             bool submit = true);

// <dir>/sweep.json, null when there is none; every key normtool reads checked for its type (an
// InputError naming the file and the key; sweep/sweep_record.cpp).
nlohmann::json read_sweep_json(const std::string& dir);
// The sweep in `dir` as its sweep.json describes it (a UsageError when there is none).
SweepSpec spec_of_directory(const std::string& dir);
// Each job's state: completed, diverged, failed, interrupted, stopped (its process died), from
// its run directory; running or pending from Slurm while the array has the task; unknown when
// squeue is not on this machine and the job has no final result (it may still be Slurm's); not run.
std::vector<SweepJob> sweep_status(const std::string& dir, std::string* slurm_job_id = nullptr);
// Records the jobs' statuses in <dir>/sweep.json and writes the aggregate files (all atomically).
void write_aggregate(const std::string& dir, const std::vector<SweepJob>& jobs);

// Mean +- std over seeds per grid point, as a markdown table, and as rows (io/table_format.h;
// the sd null for one seed); and the sweep.json document.
std::string aggregate_table(const std::vector<SweepJob>& jobs);
Table aggregate_rows(const std::vector<SweepJob>& jobs);
// <dir>/aggregate.md (the table and sweep.png's link) and aggregate.csv (the rows), atomically.
void write_aggregate_files(const std::string& dir, const std::vector<SweepJob>& jobs);
nlohmann::json sweep_json(const SweepSpec& spec, const std::vector<SweepJob>& jobs);

}  // namespace nt
