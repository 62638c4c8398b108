// A claim about normalization (docs/claims.md) as an experiment. Its metadata (title, criterion, source,
// setup) is written once, in registry.cpp; the report's rows and the headers of the experiment
// READMEs are generated from it (report.h). Its run function measures and returns a verdict
// with the evidence: for a training claim, each quantity per seed with its 95% interval.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "analysis/stats.h"
#include "sweep/slurm.h"

namespace nt {

struct ClaimContext {
  std::string out;         // this claim's directory inside the report directory
  std::string binary;      // the normtool executable, for the runs
  bool quick = false;      // shrunken settings
  int jobs = 2;            // parallel training runs
  std::vector<int> seeds;  // the training claims' seeds
  // Also the settings kept beside the papers' as ablations (reproduce --ablations). Without them
  // every verdict is still decided: the ablations' measures have a group and decide nothing.
  bool ablations = false;
  std::string seeds_axis() const;  // the sweep axis "seed=1,2,3"
  // A run's validation batches: `full`, or a fifth of them in quick mode (which only shows that
  // the claim runs: evaluation was a third of its time)
  int eval_batches(int full) const { return quick ? std::max(1, full / 5) : full; }
  // On Slurm (reproduce --launcher slurm): each sweep not done yet is submitted as a job array
  // (or left to the array already queued) and named in *pending, and its runs come back empty;
  // the claim's result then means nothing until a later `reproduce --collect` finds every sweep done.
  const SlurmOptions* slurm = nullptr;
  std::vector<std::string>* pending = nullptr;
};

// One quantity of a training claim: a value per seed (or per timing round), the mean with its
// 95% interval, and the condition it must meet. Measures of the claim's own setting decide its
// verdict; measures with a group (an ablation, another regime) are reported beside them.
struct Measure {
  std::string name;                 // e.g. "Post-LN loss, no warm-up / warm-up 500"
  std::vector<double> values;       // one per seed, in the order of ClaimResult::seeds, or per label
  std::vector<std::string> labels;  // empty: the seeds; else e.g. "round 1", "round 2", ...
  Interval interval;
  std::string criterion;            // e.g. ">= 1.2"
  ClaimVerdict verdict = ClaimVerdict::inconclusive;
  std::string group;                // "" decides the verdict; else e.g. "ablation: model.init normal"
};
Measure measure_at_least(std::string name, const std::vector<double>& values, double threshold);
Measure measure_at_most(std::string name, const std::vector<double>& values, double threshold);
Measure measure_within(std::string name, const std::vector<double>& values, double lo, double hi);
// PASS when the interval excludes 0; never FAIL (no interval proves a value is exactly 0).
Measure measure_nonzero(std::string name, const std::vector<double>& values);
Measure in_group(Measure m, std::string group);  // the same measure, reported under `group`
// A quantity shown with its interval and no criterion (criterion "-"), under `group`.
Measure measure_reported(std::string name, const std::vector<double>& values, std::string group);
// The verdict of the measures without a group, together (all_of).
ClaimVerdict verdict_of(const std::vector<Measure>& measures);

struct ClaimResult {
  ClaimVerdict verdict = ClaimVerdict::inconclusive;
  std::string measured;              // the figures the verdict rests on, one line
  std::vector<int> seeds;            // training claims: the seeds the measures are over
  std::string setting;               // training claims: what was run, when the quick mode shrank it
  std::vector<Measure> measures;     // training claims
  std::vector<std::string> plots;    // file names inside the claim's directory
  std::string details;               // markdown: tables, notes, the runs used
  bool ran = true;                   // false when the experiment itself failed to run
  std::vector<std::string> ablations_not_run;  // the ablations left out (no --ablations), named
  double seconds = 0;                // wall time of the experiment
};

struct Claim {
  const char* id;         // "E1", "C8"
  const char* slug;       // "post-ln-needs-warmup": experiments/<id>-<slug>/
  const char* title;      // the claim, one line
  const char* criterion;  // the pass criterion (a change from the source's, with the reason, in the README)
  const char* source;     // the source and its own figures
  const char* setup;      // the experiment at this scale, one paragraph
  bool exact;             // computed directly (no training, no seeds)
  bool sweeps;            // its runs are sweeps of `normtool run` (on a cluster, Slurm job arrays)
  ClaimResult (*run)(const ClaimContext&);
  const char* why = "";  // why the criterion is what it is (docs/claims.md); last, after the function
};

// Every claim, in the order of docs/claims.md.
const std::vector<Claim>& all_claims();
const Claim* find_claim(const std::string& id);  // nullptr when unknown

}  // namespace nt
