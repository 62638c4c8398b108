#include "sweep/sweep.h"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "config/config.h"
#include "core/errors.h"
#include "io/console.h"
#include "io/files.h"
#include "io/json_file.h"
#include "io/run_files.h"
#include "sweep/processes.h"
#include "sweep/slots.h"
#include "sweep/slurm.h"
#include "train/checkpoint.h"
#include "model/shape.h"
#include "train/memory.h"

namespace nt {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string status_of(const fs::path& dir) {
  const json s = read_summary(dir.string());
  return s.is_object() ? s.value("status", "") : "";
}

// The part of sweep.json that says which grid a directory holds.
json grid_of(const json& sweep) {
  return {{"config", sweep.value("config", json())},
          {"fixed", sweep.value("fixed", json())},
          {"grid", sweep.value("grid", json())},
          {"threads_per_job", sweep.value("threads_per_job", json())}};
}

// Whether the job's directory holds a run of exactly this job's config.
bool of_this_config(const SweepJob& job) {
  const auto text = read_file_if_present((fs::path(job.dir) / "config.json").string(), kMaxDocumentBytes);
  if (!job.config || !text) return false;
  try {
    return parse_json(*text, job.dir + "/config.json") == config_to_json(*job.config);
  } catch (const InputError&) {  // not JSON, or nested too deep: not this config's run
    return false;
  }
}

// A result (completed or diverged) of this job's config.
bool reusable(const SweepJob& job, const std::string& status) {
  return (status == "completed" || status == "diverged") && of_this_config(job);
}

// A checkpoint of this job's config that a run can resume.
bool resumable(const SweepJob& job) { return has_checkpoint(job.dir) && of_this_config(job); }

}  // namespace

namespace {

// The sweep directory, created and locked, and checked to hold this grid (or none).
std::unique_ptr<DirectoryLock> claim_directory(const SweepSpec& spec, const std::vector<SweepJob>& jobs) {
  const fs::path out(spec.out);
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw UsageError(fmt::format("--out {}: cannot create the sweep directory: {}", spec.out, ec.message()));
  make_own_subdirectory((out / "logs").string());
  auto lock = std::make_unique<DirectoryLock>(out.string(), "--out " + spec.out);
  const json before = read_sweep_json(out.string());
  if (!before.is_object() && !spec.replace_grid)  // job directories without the record of their grid
    for (const auto& entry : fs::directory_iterator(out, ec)) {
      const std::string name = entry.path().filename().string();
      if (name != ".lock" && name != "logs")
        throw UsageError(
            fmt::format("--out {}: holds {} but no readable sweep.json, so not a sweep of this grid; "
                        "choose another --out, or pass --force to rerun every job there",
                        spec.out, name));
    }
  if (before.is_object() && grid_of(before) != grid_of(sweep_json(spec, jobs)) && !spec.replace_grid)
    throw UsageError(
        fmt::format("--out {}: holds a sweep of another grid or config (its sweep.json); choose another "
                    "--out, or pass --force to rerun every job whose config differs",
                    spec.out));
  if (before.is_object() && before.value("launcher", "") == "slurm") {
    const std::string job_id = before.value("slurm_job_id", "");
    const SlurmTasks active = slurm_task_states(job_id);
    if (!active.states.empty())
      throw UsageError(
          fmt::format("--out {}: Slurm job {} of this sweep still has {} task(s) queued or running; wait "
                      "for it (normtool sweep --status {}), or scancel it",
                      spec.out, job_id, active.states.size(), spec.out));
    for (const SweepJob& j : jobs)  // a job without a final result may still be Slurm's to run
      if (const std::string s = status_of(j.dir); !active.known && s != "completed" && s != "diverged" && s != "failed")
        throw UsageError(
            fmt::format("--out {}: squeue is not on this machine's PATH, so whether Slurm job {} of this "
                        "sweep still runs job #{} cannot be told; run this where Slurm's commands are",
                        spec.out, job_id, j.index));
  }
  return lock;
}

// A job directory in which a normtool works now (`run --resume` by hand, say) is neither removed
// nor run again: the sweep is refused before it touches any.
void refuse_busy_jobs(const std::vector<SweepSpec>& specs, const std::vector<std::vector<SweepJob>>& jobs) {
  for (std::size_t s = 0; s < specs.size(); ++s)
    for (const SweepJob& j : jobs[s])
      if (j.status != "completed" && j.status != "diverged" && DirectoryLock::held(j.dir))
        throw UsageError(
            fmt::format("--out {}: job #{} ({}) is in use by another normtool (its {}/.lock is held); "
                        "wait for it",
                        specs[s].out, j.index, j.label(), j.dir));
}

}  // namespace

JobPlan plan_job(SweepJob& job) {
  // a job's directory is the sweep's own: a link is removed (never followed), and so is a file,
  // a FIFO or a device where the directory should be; the job runs again
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(job.dir, ec);
  if (fs::exists(st) && !fs::is_directory(st)) {
    fs::remove(job.dir, ec);
    return JobPlan::fresh;
  }
  const std::string status = status_of(job.dir);
  if (reusable(job, status)) {
    job.status = status;
    return JobPlan::keep;
  }
  return resumable(job) ? JobPlan::resume : JobPlan::fresh;
}

namespace {

// A job's work relative to another's, to start the longest first: its multiply-adds (training
// steps 3x a forward, evaluation batches 1x) plus the bytes each step moves through the
// parameters and the activations (train/memory.h), which is what a small batch's step costs.
double work_of(const RunConfig& c) {
  const double forward_flops = model_shape(c).forward_flops;  // per row
  const MemoryEstimate e = estimate_memory(c);
  const double steps = double(c.train.steps), evals = std::floor(steps / double(c.train.eval_every)) + 1;
  const double step = 3 * forward_flops * double(c.train.batch_size) + 2 * double(e.params + e.activations);
  return steps * step + evals * double(c.train.eval_batches) * forward_flops * double(c.train.batch_size);
}

}  // namespace

std::vector<SweepJob> run_sweep(const SweepSpec& spec, const std::string& binary, bool quiet) {
  return run_sweeps({spec}, spec.jobs, binary, quiet).front();
}

namespace {

void write_sweep_json(const std::string& dir, const json& doc) {
  write_file_atomically((fs::path(dir) / "sweep.json").string(), doc.dump(2) + "\n");
}

// Plans every job: a finished one is kept, the others are queued, the most work first (a stable
// sort: equal jobs in grid order). A half-done job, or another config's, starts over: its
// directory is removed, once no job is found busy.
std::vector<Pending> plan_jobs(const std::vector<SweepSpec>& specs, std::vector<std::vector<SweepJob>>& jobs,
                               bool quiet) {
  std::vector<Pending> queue;
  std::vector<std::pair<int, int>> fresh;
  for (std::size_t s = 0; s < specs.size(); ++s)
    for (SweepJob& j : jobs[s]) {
      const JobPlan plan = plan_job(j);
      if (plan == JobPlan::keep) {
        if (!quiet) eprint("#{} : {} -> {} (already)\n", j.index, j.label(), j.status);
        continue;
      }
      if (plan == JobPlan::fresh) fresh.emplace_back(int(s), j.index);
      j.status = "pending";
      queue.push_back({int(s), j.index, plan == JobPlan::resume, work_of(resolved_config(j))});
    }
  refuse_busy_jobs(specs, jobs);
  std::error_code ec;
  for (const auto& [s, index] : fresh) fs::remove_all(jobs[s][index].dir, ec);
  std::stable_sort(queue.begin(), queue.end(), [](const Pending& a, const Pending& b) { return a.work > b.work; });
  return queue;
}

// Sweeps of this process in one directory take turns (the flock of <out>/.lock refuses a second
// one, which is right between processes): the claims of a reproduction that share runs wait for
// each other, and the later one finds the jobs done. Held in the order of the paths, so two
// sweeps over several directories never wait for each other both.
class DirectoryTurns {
 public:
  explicit DirectoryTurns(const std::vector<SweepSpec>& specs) {
    std::set<std::string> dirs;
    for (const SweepSpec& spec : specs) dirs.insert(fs::weakly_canonical(fs::absolute(spec.out)).string());
    for (const std::string& dir : dirs) held_.emplace_back(mutex_of(dir));
  }

 private:
  static std::mutex& mutex_of(const std::string& dir) {
    static std::mutex lock;
    static std::map<std::string, std::mutex> turns;  // nodes stay where they are
    std::lock_guard<std::mutex> hold(lock);
    return turns[dir];
  }
  std::vector<std::unique_lock<std::mutex>> held_;
};

}  // namespace

std::vector<std::vector<SweepJob>> run_sweeps(const std::vector<SweepSpec>& specs, int parallel,
                                              const std::string& binary, bool quiet, SlotShare share) {
  Slots own(parallel);
  if (!share.slots) share.slots = &own;
  const DirectoryTurns turns(specs);
  std::vector<std::vector<SweepJob>> jobs;
  std::vector<std::unique_ptr<DirectoryLock>> locks;
  for (const SweepSpec& spec : specs) {
    jobs.push_back(expand(spec));
    locks.push_back(claim_directory(spec, jobs.back()));
  }
  const std::vector<Pending> queue = plan_jobs(specs, jobs, quiet);
  // the grid's record before the first job starts, kept current as jobs end: a sweep killed at
  // any moment leaves a sweep.json that --status and a rerun read
  for (std::size_t s = 0; s < specs.size(); ++s) write_sweep_json(specs[s].out, sweep_json(specs[s], jobs[s]));
  run_queue(specs, jobs, queue, share, binary, quiet,
            [&](int s) { write_sweep_json(specs[s].out, sweep_json(specs[s], jobs[s])); });
  for (std::size_t s = 0; s < specs.size(); ++s) {
    for (SweepJob& j : jobs[s])
      if (j.status.empty() || j.status == "pending") j.status = "not run";
    write_sweep_json(specs[s].out, sweep_json(specs[s], jobs[s]));
    write_aggregate_files(specs[s].out, jobs[s]);
  }
  return jobs;
}

SlurmSubmission submit_sweep(const SweepSpec& spec, const SlurmOptions& options, const std::string& binary,
                             bool submit) {
  check_slurm_options(options);  // before the directory is touched
  check_slurm_path("--out", spec.out);
  SlurmSubmission s;
  s.jobs = expand(spec);
  const auto lock = claim_directory(spec, s.jobs);
  std::vector<SweepJob> to_run;
  {
    std::vector<std::vector<SweepJob>> all{s.jobs};
    refuse_busy_jobs({spec}, all);
  }
  for (SweepJob& j : s.jobs) {
    const JobPlan plan = plan_job(j);
    if (plan == JobPlan::keep) continue;
    if (plan == JobPlan::fresh) {
      std::error_code ec;
      fs::remove_all(j.dir, ec);
    }
    j.status = plan == JobPlan::resume ? "pending (resumes)" : "pending";
    to_run.push_back(j);
  }
  json doc = sweep_json(spec, s.jobs);
  doc["launcher"] = "slurm";
  if (!to_run.empty()) {
    s.script = write_sbatch(spec, to_run, options, binary);
    doc["sbatch"] = s.script;
    if (submit) s.job_id = submit_sbatch(s.script);
    doc["slurm_job_id"] = s.job_id;
  }
  s.to_run = int(to_run.size());
  write_sweep_json(spec.out, doc);
  return s;
}

void write_aggregate(const std::string& dir, const std::vector<SweepJob>& jobs) {
  json doc = read_sweep_json(dir);
  if (doc.is_object() && doc["jobs"].is_array())
    for (json& j : doc["jobs"])
      if (j.value("index", -1) >= 0 && j.value("index", -1) < int(jobs.size()))
        j["status"] = jobs[j["index"].get<int>()].status;
  write_sweep_json(dir, doc);
  write_aggregate_files(dir, jobs);
}

std::vector<SweepJob> sweep_status(const std::string& dir, std::string* slurm_job_id) {
  const SweepSpec spec = spec_of_directory(dir);
  const json doc = read_sweep_json(dir);
  const std::string job_id = doc.value("slurm_job_id", "");
  if (slurm_job_id) *slurm_job_id = job_id;
  const SlurmTasks slurm = slurm_task_states(job_id);
  std::vector<SweepJob> jobs = expand(spec);
  for (SweepJob& j : jobs) {
    const std::string recorded = status_of(j.dir);
    const auto it = slurm.states.find(j.index);
    const std::string state = it == slurm.states.end() ? "" : it->second;
    if (state == "RUNNING" || state == "COMPLETING")
      j.status = "running";
    else if (!state.empty())
      j.status = "pending";  // PENDING, REQUEUED, CONFIGURING, ...
    // no squeue here: a task without a final result may be queued, running or requeued (interrupted)
    else if (!slurm.known && recorded != "completed" && recorded != "diverged" && recorded != "failed")
      j.status = "unknown";
    else if (!recorded.empty())
      j.status = recorded == "running" ? "stopped" : recorded;
    else
      j.status = doc.value("launcher", "") == "slurm" && !job_id.empty() ? "failed" : "not run";
  }
  return jobs;
}

}  // namespace nt
