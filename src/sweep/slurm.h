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
#include <map>
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
void write_command_array(const std::string& path, const std::string& name, const std::vector<std::vector<std::string>>& commands,
                         const SlurmOptions& options, int cpus, const std::string& log_dir);

// sbatch --parsable <script>; returns the job id. A runtime_error with sbatch's message when it fails.
std::string submit_sbatch(const std::string& script);

// The Slurm state of each task of array job `job_id` still known to squeue (PENDING, RUNNING,
// REQUEUED, ...), by task index; empty when squeue is absent or knows none ("Invalid job id": the
// job has ended). Any other failure of squeue is asked again (4 attempts, 6 s), then a
// TryAgainError (exit 75): a controller that does not answer says nothing about the tasks, and reading it
// as "ended" would report running tasks as failed and submit their sweeps again.
std::map<int, std::string> slurm_task_states(const std::string& job_id);

// 'text' quoted for sh.
std::string shell_quote(const std::string& text);
// `text` as one word of a generated bash script: 'text' quoted for sh, or $'...' (bash) with
// \xNN for control characters, so that a script line is always one whole command.
std::string script_word(const std::string& text);

}  // namespace nt
