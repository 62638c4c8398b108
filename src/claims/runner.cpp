#include "claims/runner.h"

#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <set>

#include "claims/evidence.h"
#include "core/errors.h"
#include "io/json_file.h"
#include "io/paths.h"
#include "io/run_files.h"
#include "sweep/slots.h"
#include "sweep/sweep.h"

namespace nt {

namespace fs = std::filesystem;

namespace {

bool runs_here(const Setting& s, const ClaimContext& ctx) { return s.group.empty() || ctx.ablations; }

// The overrides of a setting's every job: its own, then the quick mode's; in quick mode a fifth of
// the validation batches (ClaimContext::eval_batches).
std::vector<std::string> overrides_of(const Setting& s, const ClaimContext& ctx) {
  std::vector<std::string> o = s.overrides;
  if (ctx.quick) o.insert(o.end(), s.quick.begin(), s.quick.end());
  const std::string eval = "train.eval_batches=";
  for (std::string& kv : o)
    if (kv.starts_with(eval)) kv = eval + std::to_string(ctx.eval_batches(std::stoi(kv.substr(eval.size()))));
  return o;
}

std::string out_of(const Setting& s, const ClaimContext& ctx) {
  return s.shared.empty() ? (fs::path(ctx.out) / s.name).string()
                          : (fs::path(ctx.out).parent_path() / s.shared / s.name).string();
}

// A setting's jobs over `seeds` ("seed=1,2,3") and its own axes, into `out`
SweepSpec spec_of(const Setting& s, const ClaimContext& ctx, const std::string& seeds, std::string out) {
  SweepSpec spec;
  spec.config = config_path(s.config);
  spec.fixed = overrides_of(s, ctx);
  spec.axes.push_back(parse_axis(seeds));
  for (const std::string& a : ctx.quick && !s.quick_axes.empty() ? s.quick_axes : s.axes)
    spec.axes.push_back(parse_axis(a));
  spec.out = std::move(out);
  spec.jobs = ctx.jobs;
  spec.replace_grid = true;  // a rerun with other seeds reuses the runs whose config matches
  return spec;
}

// Sessions measured in this process, kept across the looks: setting name and job label -> record
using SessionCache = std::map<std::string, RunRecord>;

std::vector<RunRecord> session_runs(const Setting& s, const ClaimContext& ctx, SessionCache& cache) {
  SweepSpec spec = spec_of(s, ctx, ctx.seeds_axis(), out_of(s, ctx));
  spec.fixed.push_back("train.threads=1");
  const std::vector<SweepJob> jobs = expand(spec);
  std::vector<RunRecord> runs(jobs.size());
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto it = cache.find(s.name + " " + jobs[i].label());
    if (it != cache.end())
      runs[i] = it->second;
    else
      todo.push_back(i);
  }
  parallel_tasks(ctx.jobs, int(todo.size()), [&](int k) {
    const SlotHold slot(ctx.slots, ctx.priority, 1);
    if (!slot.granted()) throw std::runtime_error("stopped before its runs ended (SIGINT or SIGTERM)");
    const SweepJob& j = jobs[todo[std::size_t(k)]];
    RunRecord& r = runs[todo[std::size_t(k)]];
    for (const auto& [key, v] : j.overrides) r.overrides[key] = v;
    r.summary = s.session(resolved_config(j), ctx);
  });
  for (std::size_t i : todo) cache[s.name + " " + jobs[i].label()] = runs[i];
  return runs;
}

RunRecord record_of(const SweepJob& j) {
  RunRecord r{j.dir, {}, read_json_file((fs::path(j.dir) / "summary.json").string()).value(), {}};
  for (const auto& [k, v] : j.overrides) r.overrides[k] = v;
  r.val_loss = read_loss_curves(j.dir).val_loss;
  return r;
}

// On Slurm: submits the sweep unless it is done or already queued (noted in ctx.pending); true
// when it is done, to be read back.
bool done_on_slurm(const ClaimContext& ctx, const SweepSpec& spec) {
  std::vector<SweepJob> jobs = expand(spec);
  bool done = true;
  for (SweepJob& j : jobs) done &= plan_job(j) == JobPlan::keep;
  if (done) return true;
  std::string job_id;
  std::vector<SweepJob> state =
      fs::exists(fs::path(spec.out) / "sweep.json") ? sweep_status(spec.out, &job_id) : std::vector<SweepJob>{};
  bool queued = false;
  for (const SweepJob& j : state) queued |= j.status == "pending" || j.status == "running" || j.status == "unknown";
  if (!queued) job_id = submit_sweep(spec, *ctx.slurm, ctx.binary).job_id;
  ctx.pending->push_back(fmt::format("{} (Slurm job {})", spec.out, job_id));
  return false;
}

// A swept setting's runs: a sweep per seed, <dir>/seed-<s>, so that every look, and every claim
// sharing the setting on any list of seeds, finds each seed's runs where an earlier one left them.
// The sweeps of all the settings run (resumable) with all their jobs in one pool of ctx.jobs
// processes, or on the reproduction's slots (sweep/sweep.h: run_sweeps). Throws when a job failed.
void sweep_settings(const std::vector<const Setting*>& settings, const ClaimContext& ctx, Evidence& ev) {
  std::vector<const Setting*> of;  // each sweep's setting
  std::vector<SweepSpec> local;    // run here, in one pool
  for (const Setting* s : settings)
    for (int seed : ctx.seeds) {
      SweepSpec spec = spec_of(*s, ctx, fmt::format("seed={}", seed),
                               (fs::path(out_of(*s, ctx)) / fmt::format("seed-{}", seed)).string());
      if (ctx.slurm && !done_on_slurm(ctx, spec)) {
        for (const SweepJob& j : expand(spec)) {  // queued: empty records, the claim's result means nothing yet
          RunRecord& r = ev.runs[s->name].emplace_back(RunRecord{j.dir, {}, nlohmann::json::object(), {}});
          for (const auto& [k, v] : j.overrides) r.overrides[k] = v;
        }
        continue;
      }
      of.push_back(s);
      local.push_back(std::move(spec));
    }
  if (local.empty()) return;
  const auto done = run_sweeps(local, ctx.jobs, ctx.binary, /*quiet=*/true, {ctx.slots, ctx.priority});
  for (std::size_t k = 0; k < local.size(); ++k)
    for (const SweepJob& j : done[k]) {
      if (j.status != "completed" && j.status != "diverged")
        throw std::runtime_error(fmt::format("{}: job #{} ({}) {}; see {}/logs/{}.log", of[k]->name, j.index, j.label(),
                                             j.status, local[k].out, j.index));
      ev.runs[of[k]->name].push_back(record_of(j));
    }
}

Evidence gather(const Claim& c, const ClaimContext& ctx, SessionCache& cache) {
  Evidence ev{&ctx, ctx.seeds, {}};
  std::vector<const Setting*> swept;
  for (const Setting& s : c.settings) {
    if (!runs_here(s, ctx)) continue;
    if (s.session)
      ev.runs[s.name] = session_runs(s, ctx, cache);
    else
      swept.push_back(&s);
  }
  sweep_settings(swept, ctx, ev);
  return ev;
}

// The measures of one look, the verdict and the one-line result
ClaimResult judge(const Claim& c, const Evidence& ev, const Rules& rules, double confidence) {
  ClaimResult r;
  r.seeds = ev.seeds;
  r.look = int(ev.seeds.size());
  r.rules = rules.name;
  std::vector<std::string> line, unmet;
  for (const MeasureSpec& m : c.measures) {
    std::vector<double> values;
    try {
      values = m.read(ev);
    } catch (const NotRun&) {
      continue;  // an ablation not run
    }
    r.measures.push_back(measure(m, values, rules, confidence));
    const Measure& x = r.measures.back();
    if ((x.group.empty() && decides(m.criterion)) || m.headline)
      line.push_back(fmt::format("{} {}", m.name, show(x.interval, m.digits)));
    if (m.precondition && x.verdict != ClaimVerdict::pass) unmet.push_back(fmt::format("{} {}", m.name, x.criterion));
  }
  r.verdict = c.report ? ClaimVerdict::report : verdict_of(r.measures);
  if (!unmet.empty() && !c.report) {
    r.verdict = ClaimVerdict::inconclusive;
    r.reason = fmt::format("precondition not met: {}", fmt::join(unmet, "; "));
  }
  r.measured = fmt::format("{}", fmt::join(line, "; "));
  return r;
}

void draw(const Claim& c, const Evidence& ev, ClaimResult& r) {
  for (const PlotSpec& p : c.plots) {
    std::vector<Curve> curves;
    try {
      curves = p.curves(ev);
    } catch (const NotRun&) {
      continue;
    }
    if (!curves.empty()) plot_into(*ev.ctx, p.stem, p.style, curves, r);
  }
  if (c.details) r.details += c.details(ev);
  const ClaimContext& ctx = *ev.ctx;
  std::set<std::string> left_out;
  for (const Setting& s : c.settings)
    if (!runs_here(s, ctx) && left_out.insert(s.group).second) r.ablations_not_run.push_back(s.group);
  if (ctx.quick) {
    std::vector<std::string> quick;
    for (const Setting& s : c.settings)
      if (runs_here(s, ctx) && (!s.quick.empty() || !s.quick_axes.empty()))
        quick.push_back(fmt::format("{}: {}", s.name, fmt::join(s.quick_axes.empty() ? s.quick : s.quick_axes, ", ")));
    r.setting = quick.empty() ? "quick: the claim's own shrunken measurement (its method says how)"
                              : fmt::format("quick: {}", fmt::join(quick, "; "));
  }
}

}  // namespace

Measure measure(const MeasureSpec& m, const std::vector<double>& values, const Rules& rules, double confidence) {
  const Scale scale = rules.log_ratios ? m.scale : Scale::linear;
  const int sides = rules.one_sided && m.confidence == 0 ? nt::sides(m.criterion) : 2;
  if (m.confidence > 0) confidence = m.confidence;
  const Estimate e = estimate(values, scale, confidence, sides);
  Measure x{m.name, values, {}, e.interval, text(m.criterion), decide(m.criterion, e.interval), m.group};
  x.scale = to_string(scale), x.confidence = confidence, x.sides = sides, x.precondition = m.precondition;
  return x;
}

Measure measure_of(std::string name, const std::vector<double>& values, const Criterion& criterion, std::string group,
                   Scale scale) {
  return measure({.name = std::move(name), .criterion = criterion, .group = std::move(group), .scale = scale}, values,
                 rules_v2(), 0.95);
}

void check_settings(const Claim& c, const ClaimContext& ctx) {
  for (const Setting& s : c.settings) {
    if (!runs_here(s, ctx)) continue;
    try {  // one seed stands for every seed: a seed changes no other key
      for (const SweepJob& j : expand(spec_of(s, ctx, "seed=1", out_of(s, ctx))))
        if (!j.config) throw InputError(fmt::format("the run {}: {}", j.label(), j.config_error));
    } catch (const InputError& e) {
      throw InputError(fmt::format("claim {}, setting {} (configs/{}): {}", c.id, s.name, s.config, e.what()));
    }
  }
}

std::vector<int> claim_seeds(const Claim& c, bool quick, const Rules& rules) {
  std::vector<int> seeds = c.seeds;
  if (quick) seeds.resize(std::size_t(looks_for(rules, int(seeds.size())).front()));
  return seeds;
}

ClaimResult reproduce_claim(const Claim& c, const ClaimContext& ctx) {
  if (c.run) {  // in this thread: one slot, or every slot for a timing
    const SlotHold slots(ctx.slots, ctx.priority, c.alone && ctx.slots ? ctx.slots->size() : 1);
    if (!slots.granted()) throw std::runtime_error("stopped before it ran (SIGINT or SIGTERM)");
    ClaimContext own = ctx;
    own.slots = nullptr;  // held already
    return c.run(own);
  }
  const std::vector<int> looks = looks_for(ctx.rules, int(ctx.seeds.size()));
  const double confidence = look_confidence(ctx.rules, int(ctx.seeds.size()));
  SessionCache cache;
  for (int n : looks) {
    ClaimContext at = ctx;
    at.seeds.resize(std::size_t(n));
    const Evidence ev = gather(c, at, cache);
    if (ctx.pending && !ctx.pending->empty()) return {};  // on Slurm, still running: the result means nothing yet
    // judging reads and evaluates runs (checkpoints, plots): machine time, on a slot like a run's
    const SlotHold judging(ctx.slots, ctx.priority, 1);
    if (!judging.granted()) throw std::runtime_error("stopped before it was judged (SIGINT or SIGTERM)");
    ClaimResult r = judge(c, ev, ctx.rules, confidence);
    if (r.verdict == ClaimVerdict::pass || r.verdict == ClaimVerdict::fail || n == looks.back()) {
      draw(c, ev, r);
      return r;
    }
  }
  return {};  // not reached: the last look returns
}

}  // namespace nt
