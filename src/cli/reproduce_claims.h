// What `normtool reproduce` shares between running the claims here (cli/reproduce.cpp) and on
// Slurm (cli/reproduce_slurm.cpp): one claim's experiment and its printed line.
#pragma once
#include <string>
#include <vector>

#include "claims/claim.h"

namespace nt {
class Slots;
struct SlurmOptions;
}  // namespace nt

namespace nt::cli {

// One claim run here; its result saved unless it is still waiting for Slurm.
struct Outcome {
  ClaimResult result;
  std::vector<std::string> pending;  // its sweeps still queued or running
  bool failed = false;
};

// How the claims run: what reproduce's options say of every claim alike
struct Settings {
  bool quick = false, ablations = false;
  int jobs = 2;
  std::vector<int> seeds;
};

// A claim's experiment into <out>/<id>-<slug>; with `slots` (run here beside the others), its time
// is its share of the machine: the slot-seconds its runs held over the slots there are, what it
// takes run alone with its slots busy. Else the wall time. Its result is saved unless pending.
Outcome run_claim(const Claim& c, const std::string& out, const std::string& binary, const Settings& how,
                  const SlurmOptions* slurm, Slots* slots = nullptr, int priority = 0);
void print_outcome(const Claim& c, const Outcome& o);

// The claims of a reproduction on Slurm, submitted (reproduce --launcher slurm) or collected
// (--collect): exact claims here; claims that train in one process as one job array (a task
// each); sweep claims' sweeps as job arrays. Returns 0 when every claim has its result (or, on
// submission, was submitted), 75 while some are pending at --collect, 1 when one failed.
int on_slurm(const std::vector<const Claim*>& chosen, const std::string& out, const Settings& how,
             const SlurmOptions& slurm, bool collecting);
// --collect DIR: the report of a reproduce --launcher slurm there, with the claims and settings of its manifest.
int collect(const std::string& dir);

}  // namespace nt::cli
