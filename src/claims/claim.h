// A claim of ../shared/claims.md as an experiment. Its metadata (title, criterion, source,
// setup) is written once, in registry.cpp; the report's rows and the headers of the experiment
// READMEs are generated from it (report.h). Its run function measures and returns a verdict
// with the evidence: for a training claim, each quantity per seed with its 95% interval.
#pragma once
#include <string>
#include <vector>

#include "analysis/stats.h"

namespace nt {

struct ClaimContext {
  std::string out;         // this claim's directory inside the report directory
  std::string binary;      // the normtool executable, for the runs
  bool quick = false;      // shrunken settings
  int jobs = 2;            // parallel training runs
  std::vector<int> seeds;  // the training claims' seeds
  std::string seeds_axis() const;  // the sweep axis "seed=1,2,3"
};

// One quantity a training claim's verdict rests on: a value per seed, the mean with its 95%
// interval, and the condition it must meet.
struct Measure {
  std::string name;             // e.g. "Post-LN loss without / with warm-up"
  std::vector<double> values;   // one per seed, in the order of ClaimResult::seeds
  Interval interval;
  std::string criterion;        // e.g. ">= 1.2"
  ClaimVerdict verdict = ClaimVerdict::inconclusive;
};
Measure measure_at_least(std::string name, const std::vector<double>& per_seed, double threshold);
Measure measure_at_most(std::string name, const std::vector<double>& per_seed, double threshold);
// All measures' verdicts together (all_of).
ClaimVerdict verdict_of(const std::vector<Measure>& measures);

struct ClaimResult {
  ClaimVerdict verdict = ClaimVerdict::inconclusive;
  std::string measured;              // the figures the verdict rests on, one line
  std::vector<int> seeds;            // training claims: the seeds the measures are over
  std::vector<Measure> measures;     // training claims
  std::vector<std::string> plots;    // file names inside the claim's directory
  std::string details;               // markdown: tables, notes, the runs used
  bool ran = true;                   // false when the experiment itself failed to run
  double seconds = 0;                // wall time of the experiment
};

struct Claim {
  const char* id;         // "E1", "C8"
  const char* slug;       // "post-ln-needs-warmup": experiments/<id>-<slug>/
  const char* title;      // the claim, one line
  const char* criterion;  // the pass criterion, as claims.md states it (or changed, with the reason in the README)
  const char* source;     // the source and its own figures
  const char* setup;      // the experiment at this scale, one paragraph
  bool exact;             // computed directly (no training, no seeds)
  ClaimResult (*run)(const ClaimContext&);
};

// Every claim, in the order of claims.md.
const std::vector<Claim>& all_claims();
const Claim* find_claim(const std::string& id);  // nullptr when unknown

}  // namespace nt
