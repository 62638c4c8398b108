// Sweeps as Slurm job arrays: one array task per grid job that is not done yet, each running
// exactly the `normtool run` a local sweep would run (run --resume when the job's directory holds
// a checkpoint). The script, <out>/sweep.sbatch:
//
//   #SBATCH --array=0,2,3%K  --cpus-per-task=C  --requeue  --signal=B:TERM@S  --open-mode=append
//   #SBATCH --output=<out>/logs/%a.log  [--partition=P]  [--time=T]  [extra arguments]
//   case $SLURM_ARRAY_TASK_ID in 0) args=(...) ;; ... esac
//   checkpoint there -> normtool run --resume <out>/<task>, else a fresh normtool run --out <out>/<task>
//
// The batch shell forwards SIGTERM (sent S seconds before the time limit, or by a preemption) to
// normtool, which checkpoints and exits 130; the shell then requeues the task, which resumes from
// that checkpoint. A task requeued by the scheduler itself (scontrol requeue, a node failure)
// resumes the same way.
#pragma once
#include <chrono>
#include <cstddef>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "sweep/sweep.h"

namespace nt {

struct SlurmOptions {
  std::string partition;            // --partition; "" = the cluster's default
  std::string time;                 // --time, e.g. "02:00:00"; "" = the partition's default
  int cpus_per_task = 0;            // 0 = the sweep's threads per job
  int max_parallel = 0;             // the array's %K; 0 = no limit
  int signal_lead_s = 120;          // SIGTERM this many seconds before the time limit
  std::vector<std::string> extra;   // further sbatch arguments, one #SBATCH line each
};
// The options as JSON (a reproduction's manifest, reproduce.json) and back; a key missing is its default.
nlohmann::json slurm_options_json(const SlurmOptions& s);
SlurmOptions slurm_options_of(const nlohmann::json& j);

// The site options and the working directory as they go into #SBATCH lines: a UsageError naming
// the option when one holds a newline or another control character (it would end sbatch's
// directives and run the rest as a command). Every user string in the script body is quoted for
// the shell; nothing of the grid goes into a comment.
void check_slurm_options(const SlurmOptions& options);
// A path for an #SBATCH line (--out, a log directory): also no blank, quote, backslash or %.
void check_slurm_path(const std::string& what, const std::string& path);

// Writes <out>/sweep.sbatch for `jobs` (those to run) and returns its path.
std::string write_sbatch(const SweepSpec& spec, const std::vector<SweepJob>& jobs, const SlurmOptions& options,
                         const std::string& binary);

// A job array whose task i runs commands[i] (argv, absolute paths), logs in <log_dir>/<name>-%a.log:
// the reproduction's claims that train inside one process. Written to `path`.
void write_command_array(const std::string& path, const std::string& name,
                         const std::vector<std::vector<std::string>>& commands, const SlurmOptions& options, int cpus,
                         const std::string& log_dir);

// Each Slurm command runs without a shell (sweep/command.h), and is stopped (its process group killed) when
// it takes longer than its time-out or prints more than kSlurmOutputCap (stdout and stderr
// together): a TryAgainError (exit 75) naming the command and the limit. sbatch waits on a busy
// controller longer than squeue, which only reads. docs/usage.md ("On a cluster: Slurm") lists them.
inline constexpr std::chrono::seconds kSbatchTimeout{60};
inline constexpr std::chrono::seconds kSqueueTimeout{30};
inline constexpr std::size_t kSlurmOutputCap = std::size_t(1) << 20;  // 1 MiB

// sbatch --parsable <script>; returns the job as sbatch printed it: "<id>" or, on a cluster of a
// federation, "<id>;<cluster>" (both kept: squeue is asked on that cluster). A runtime_error with
// sbatch's message when it fails or prints anything else; a TryAgainError when it does not finish
// within `limit` (it may have submitted the job before it was stopped).
std::string submit_sbatch(const std::string& script, std::chrono::milliseconds limit = kSbatchTimeout);

// What squeue says of the tasks of one array job.
struct SlurmTasks {
  // false: squeue is not on this machine's PATH, so nothing can be told of the tasks: a task
  // without a result may still be queued or running, and is neither failed nor ended
  bool known = true;
  std::map<int, std::string> states;  // the tasks squeue still lists, by index: PENDING, RUNNING, REQUEUED, ...
};

// The tasks of array job `job` (as submit_sbatch returned it) still known to squeue; none when
// `job` is empty or squeue no longer knows the job ("Invalid job id": every task has ended). Any
// other failure of squeue is asked again (4 attempts, 6 s), then a TryAgainError (exit 75): a
// controller that does not answer says nothing about the tasks, and reading it as "ended" would
// report running tasks as failed and submit their sweeps again. So is an answer that cannot be
// read (a task index that is no number, a time-out, too much output). A `job` that is not one
// sbatch prints is an InputError.
SlurmTasks slurm_task_states(const std::string& job, std::chrono::milliseconds limit = kSqueueTimeout);

// 'text' quoted for sh.
std::string shell_quote(const std::string& text);
// `text` as one word of a generated bash script: 'text' quoted for sh, or $'...' (bash) with
// \xNN for control characters, so that a script line is always one whole command.
std::string script_word(const std::string& text);

}  // namespace nt
