// The jobs of sweeps as child processes: each a `normtool run` (or `run --resume`) launched as a
// slot is granted (sweep/slots.h), its output in its log, dying with the sweep; a SIGINT or SIGTERM
// to the sweep stops the launching and is passed on to the jobs, which are waited for.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "sweep/sweep.h"

namespace nt {

// While one lives, SIGINT and SIGTERM are caught (stop_requested() says one came); then the
// handlers before the first come back. Every run_queue holds one, and so does a reproduction for
// its whole length: a signal between two of its sweeps is not lost, and never kills it mid-claim.
class StopOnSignals {
 public:
  StopOnSignals();
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;
};
bool stop_requested();
int running_jobs();  // the jobs of this process's sweeps running now (each a child process)

// A job left to run: sweep and job index, whether it resumes its checkpoint, its estimated work.
struct Pending {
  int sweep, job;
  bool resume;
  double work;
};

// Runs the queue in its order, a job per slot granted, setting each job's status as it ends
// (running while it runs; then its summary's; else failed, or stopped when a signal came) and
// calling job_ended(its sweep). A signal, or slots stopped by another sweep's, stops the launching
// and the slots and reaches the running jobs (SIGTERM: they checkpoint), which are waited for. Only
// these jobs' processes are waited for: other threads may run sweeps (a reproduction's claims) and
// other children (gnuplot) at the same time.
void run_queue(const std::vector<SweepSpec>& specs, std::vector<std::vector<SweepJob>>& jobs,
               const std::vector<Pending>& queue, SlotShare share, const std::string& binary, bool quiet,
               const std::function<void(int sweep)>& job_ended);

}  // namespace nt
