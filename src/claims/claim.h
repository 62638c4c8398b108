// A claim about normalization (docs/claims.md) as data: what it runs (settings: a config of
// configs/ with overrides, and the axes swept), what it measures (named measures, each a reader
// from the runs to one value per seed and a typed criterion), and what it draws. The runner
// (claims/runner.h) owns the rest: the seeds and their looks, the statistics, the verdict and the
// one-line result. The registry's criterion text and setup paragraph are generated from the same
// values (criterion_text, setup_text), so the text and the number cannot disagree.
//
// A claim that cannot be said as data (the exact claims, C3's timings) keeps a function, `run`,
// with its criterion and setup in words.
#pragma once
#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "claims/criterion.h"
#include "claims/statistics.h"
#include "io/plot.h"
#include "sweep/slurm.h"

namespace nt {

struct RunConfig;
class Slots;

struct ClaimContext {
  std::string out;         // this claim's directory inside the report directory
  std::string binary;      // the normtool executable, for the runs
  bool quick = false;      // shrunken settings
  int jobs = 2;            // parallel training runs
  std::vector<int> seeds;  // the training claims' seeds, in the order they are looked at
  // Also the settings kept beside the papers' as ablations (reproduce --ablations). Without them
  // every verdict is still decided: the ablations' measures decide nothing.
  bool ablations = false;
  Rules rules = default_rules();   // the statistics of the verdicts
  std::string seeds_axis() const;  // the sweep axis "seed=1,2,3"
  // A run's validation batches: `full`, or a fifth of them in quick mode (which only shows that
  // the claim runs: evaluation was a third of its time)
  int eval_batches(int full) const { return quick ? std::max(1, full / 5) : full; }
  // On Slurm (reproduce --launcher slurm): each sweep not done yet is submitted as a job array
  // (or left to the array already queued) and named in *pending, and its runs come back empty;
  // the claim's result then means nothing until a later `reproduce --collect` finds every sweep done.
  const SlurmOptions* slurm = nullptr;
  std::vector<std::string>* pending = nullptr;
  // Run by a reproduction beside other claims: every training run (a sweep's process, an
  // in-process session) and every look's judging holds one of these slots, asked for at this
  // priority (the claim's place in the reproduction's order: earlier first). Null: ctx.jobs of its own.
  Slots* slots = nullptr;
  int priority = 0;
};

// One run of a setting: a `normtool run` of a sweep read back (metrics.jsonl, summary.json), or
// an in-process session's measurements (summary holds them; dir is empty).
struct RunRecord {
  std::string dir;
  std::map<std::string, std::string> overrides;  // the sweep job's axes, seed included
  nlohmann::json summary;
  std::vector<std::pair<int, double>> val_loss;  // (step, value)
  int seed() const { return std::stoi(overrides.at("seed")); }
};
using Where = std::map<std::string, std::string>;  // override key -> value a run must have

// What a claim runs: the runs of each setting over the seeds of one look, by setting name.
struct Evidence {
  const ClaimContext* ctx = nullptr;
  std::vector<int> seeds;
  std::map<std::string, std::vector<RunRecord>> runs;
  // The runs of `setting` matching `where`, in the order of their seeds; NotRun when the setting
  // did not run (an ablation without --ablations).
  std::vector<const RunRecord*> of(const std::string& setting, const Where& where = {}) const;
};
struct NotRun : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One config with overrides, over axes and the seeds: a sweep of `normtool run`, or, with a
// session, a function run in this process per job (one math thread each, `reproduce --jobs` at once).
struct Setting {
  std::string name = {};                    // its runs: <claim dir>/<name>, or <report dir>/<shared>/<name>
  std::string config = {};                  // a file of configs/
  std::vector<std::string> overrides = {};  // key=value, for every job
  std::vector<std::string> quick = {};      // key=value, after `overrides` in quick mode
  std::vector<std::string> axes = {};       // key=v1,v2,...; the runner adds the seeds
  std::string group = {};                   // "": the claim's own setting; else an ablation (--ablations)
  std::string shared = {};                  // "": the claim's own runs; else a directory the claims share
  std::function<nlohmann::json(const RunConfig&, const ClaimContext&)> session = {};  // in-process: what it measured
  std::vector<std::string> quick_axes = {};  // in quick mode, these axes instead (when given)
};

// A measure: a value per seed read from the evidence, and the criterion it is held to. Measures
// without a group decide the verdict; those with a group are reported beside them; preconditions
// must PASS for a verdict to be given at all (else INCONCLUSIVE, with the reason).
using Reader = std::function<std::vector<double>(const Evidence&)>;
struct MeasureSpec {
  std::string name = {};
  Criterion criterion = {};
  Reader read = {};
  std::string group = {};       // "": decides; else e.g. "ablation: model.init normal"
  Scale scale = Scale::linear;  // log: a ratio of positive quantities (used under rules_v2)
  bool precondition = false;
  bool headline = false;  // named in the one-line result although it does not decide
  int digits = 3;         // in the one-line result
  double confidence = 0;  // 0: the look's (statistics.h); else this two-sided level, e.g. TOST's 0.90
};

struct PlotSpec {
  std::string stem = {};
  PlotStyle style = {};
  std::function<std::vector<Curve>(const Evidence&)> curves = {};
};

// One quantity of a claim as measured: a value per seed (or per timing round), its interval and
// the verdict of its criterion.
struct Measure {
  std::string name;                 // e.g. "Post-LN loss, no warm-up / warm-up 500"
  std::vector<double> values;       // one per seed, in the order of ClaimResult::seeds, or per label
  std::vector<std::string> labels;  // empty: the seeds; else e.g. "round 1", "round 2", ...
  Interval interval;
  std::string criterion;  // e.g. ">= 1.2"
  ClaimVerdict verdict = ClaimVerdict::inconclusive;
  std::string group;             // "" decides the verdict; else e.g. "ablation: model.init normal"
  std::string scale = "linear";  // of the interval: linear or log
  double confidence = 0.95;
  int sides = 2;
  bool precondition = false;
};
// A measure's values held to its criterion as `rules` read a look at `confidence` (the measure's
// own when it gives one): its interval and verdict.
Measure measure(const MeasureSpec& m, const std::vector<double>& values, const Rules& rules, double confidence);
// A measure of a claim with a function: that, under the rules of statistics.h at 95% for one look:
// one-sided for a one-sided criterion, on the log scale for a ratio.
Measure measure_of(std::string name, const std::vector<double>& values, const Criterion& criterion,
                   std::string group = "", Scale scale = Scale::linear);
// The verdict of the deciding measures together: all PASS -> PASS, one FAIL -> FAIL, else INCONCLUSIVE.
ClaimVerdict verdict_of(const std::vector<Measure>& measures);

struct ClaimResult {
  ClaimVerdict verdict = ClaimVerdict::inconclusive;
  std::string measured;                        // the figures the verdict rests on, one line
  std::string reason;                          // why INCONCLUSIVE, when a precondition was not met
  std::vector<int> seeds;                      // training claims: the seeds the measures are over
  int look = 0;                                // training claims: the look the verdict stopped at (its seed count)
  std::string rules;                           // training claims: the statistics' rules (statistics.h)
  std::string setting;                         // training claims: what was run, when the quick mode shrank it
  std::vector<Measure> measures;               // training claims
  std::vector<std::string> plots;              // file names inside the claim's directory
  std::string details;                         // markdown: tables, notes, the runs used
  bool ran = true;                             // false when the experiment itself failed to run
  std::vector<std::string> ablations_not_run;  // the ablations left out (no --ablations), named
  double seconds = 0;                          // wall time of the experiment
};

struct Claim {
  std::string id = {};      // "E1", "C8"
  std::string slug = {};    // "post-ln-needs-warmup": experiments/<id>-<slug>/
  std::string title = {};   // the claim, one line
  std::string source = {};  // the source and its own figures
  std::string why = {};     // why the criterion is what it is (docs/claims.md)
  // A training claim as data
  std::vector<Setting> settings = {};
  std::vector<MeasureSpec> measures = {};
  std::vector<PlotSpec> plots = {};
  std::string method = {};  // what is measured from the runs, beyond what the configs say (one paragraph)
  std::function<std::string(const Evidence&)> details = {};  // tables beside the measures; may be empty
  bool report = false;  // a side-by-side report with no criterion (P1): its verdict is REPORT
  // The seeds, fixed before the claim runs and looked at in that order (statistics.h; reproduce
  // --seeds replaces them). Fewer than 10 only with the reason in seeds_why. By default 11-20: a
  // criterion revised after a committed report is decided on seeds no report has used (from 11 up).
  std::vector<int> seeds = {11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  std::string seeds_why = {};
  // A claim that cannot be said as data: its function, its criterion and setup in words
  ClaimResult (*run)(const ClaimContext&) = nullptr;
  std::string criterion = {}, setup = {};
  bool exact = false;  // computed directly, no training and no seeds
  bool alone = false;  // measures time: its function runs with every slot of the reproduction held
  // The seed papers' claims as first listed (E1-E8, C1-C13, P1), `reproduce core`, which the local
  // time budget is for (docs/claims.md, "The budget"); the rest, `reproduce extra` (the notes' open
  // claims, C14 on, and those of the literature after the seed papers), run beside them or on Slurm.
  bool core = true;
};

// The criterion in words: `criterion` for a claim with a function, else its deciding measures'.
std::string criterion_text(const Claim& c);
// The setup paragraph: `setup` for a claim with a function, else each setting's resolved config
// described, with the quick mode's changes and the method.
std::string setup_text(const Claim& c);
// Its runs are sweeps of `normtool run` (on a cluster, Slurm job arrays)
bool sweeps(const Claim& c);

// Every claim, in the order of docs/claims.md.
const std::vector<Claim>& all_claims();
const Claim* find_claim(const std::string& id);  // nullptr when unknown
// The claims an id names: one claim, or a group ("core", "extra"); empty when it names none.
std::vector<const Claim*> claims_named(const std::string& id);
// The claims the ids name, in their order, each once; every claim when there is none. UsageError
// (core/errors.h) naming an id that names none.
std::vector<const Claim*> choose_claims(const std::vector<std::string>& ids);

}  // namespace nt
