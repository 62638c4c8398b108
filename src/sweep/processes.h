// The jobs of sweeps as child processes: each a `normtool run` (or `run --resume`) launched as a
// slot is granted (sweep/slots.h), its output in its log, dying with the sweep; a SIGINT or SIGTERM
// to the sweep stops the launching and is passed on to the jobs, which are waited for.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "sweep/sweep.h"

namespace nt {

// A job left to run: sweep and job index, whether it resumes its checkpoint, its estimated work.
struct Pending {
  int sweep, job;
  bool resume;
  double work;
};

// Runs the queue in its order, a job per slot granted, setting each job's status as it ends
// (running while it runs; then its summary's, or failed) and calling job_ended(its sweep). Only
// these jobs' processes are waited for: other threads may run sweeps (a reproduction's claims) and
// other children (gnuplot) at the same time.
void run_queue(const std::vector<SweepSpec>& specs, std::vector<std::vector<SweepJob>>& jobs,
               const std::vector<Pending>& queue, SlotShare share, const std::string& binary, bool quiet,
               const std::function<void(int sweep)>& job_ended);

}  // namespace nt
