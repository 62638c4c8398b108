#include "claims/evidence.h"

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <mutex>
#include <sstream>
#include <system_error>
#include <thread>

#include "io/paths.h"
#include "sweep/sweep.h"

namespace nt {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

RunRecord record_of(const SweepJob& j) {
  RunRecord r;
  r.dir = j.dir;
  for (const auto& [k, v] : j.overrides) r.overrides[k] = v;
  std::ifstream s(fs::path(j.dir) / "summary.json");
  r.summary = json::parse(s);
  std::ifstream m(fs::path(j.dir) / "metrics.jsonl");
  for (std::string line; std::getline(m, line);) {
    const json l = json::parse(line);
    if (!l["loss"].is_number()) continue;
    const int step = l["step"];
    if (l["split"] == "val") {
      r.val_loss.emplace_back(step, l["loss"].get<double>());
      if (l.contains("acc")) r.val_acc.emplace_back(step, l["acc"].get<double>());
    } else {
      r.train_loss.emplace_back(step, l["loss"].get<double>());
    }
  }
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

}  // namespace

std::vector<std::vector<RunRecord>> sweep_runs(const ClaimContext& ctx, const std::vector<SweepRequest>& sweeps) {
  std::vector<SweepSpec> specs;
  for (const SweepRequest& q : sweeps) {
    SweepSpec spec;
    spec.config = q.config;
    spec.fixed = q.fixed;
    for (const auto& a : q.axes) spec.axes.push_back(parse_axis(a));
    spec.out = (fs::path(ctx.out) / q.name).string();
    spec.jobs = ctx.jobs;
    spec.replace_grid = true;  // a rerun with other seeds reuses the runs whose config matches
    specs.push_back(std::move(spec));
  }
  std::vector<std::vector<RunRecord>> runs(specs.size());
  std::vector<SweepSpec> local;  // run here, in one pool
  std::vector<std::size_t> index;
  for (std::size_t s = 0; s < specs.size(); ++s) {
    if (ctx.slurm && !done_on_slurm(ctx, specs[s])) {
      for (const SweepJob& j : expand(specs[s])) {  // queued: empty records, the claim's result means nothing yet
        RunRecord r{j.dir, {}, json::object(), {}, {}, {}};
        for (const auto& [k, v] : j.overrides) r.overrides[k] = v;
        runs[s].push_back(std::move(r));
      }
      continue;
    }
    local.push_back(specs[s]);
    index.push_back(s);
  }
  if (local.empty()) return runs;
  const auto done = run_sweeps(local, ctx.jobs, ctx.binary, /*quiet=*/true);
  for (std::size_t k = 0; k < local.size(); ++k)
    for (const SweepJob& j : done[k]) {
      if (j.status != "completed" && j.status != "diverged")
        throw std::runtime_error(fmt::format("{}: job #{} ({}) {}; see {}/logs/{}.log", sweeps[index[k]].name, j.index,
                                             j.label(), j.status, local[k].out, j.index));
      runs[index[k]].push_back(record_of(j));
    }
  return runs;
}

std::vector<RunRecord> sweep_runs(const ClaimContext& ctx, const std::string& name, const std::string& config,
                                  const std::vector<std::string>& fixed, const std::vector<std::string>& axes) {
  return sweep_runs(ctx, {SweepRequest{name, config, fixed, axes}}).front();
}

std::vector<const RunRecord*> select(const std::vector<RunRecord>& runs, const std::map<std::string, std::string>& where) {
  std::vector<const RunRecord*> out;
  for (const RunRecord& r : runs) {
    bool ok = true;
    for (const auto& [k, v] : where) ok &= r.overrides.count(k) && r.overrides.at(k) == v;
    if (ok) out.push_back(&r);
  }
  std::stable_sort(out.begin(), out.end(), [](const RunRecord* a, const RunRecord* b) {
    return a->overrides.count("seed") && b->overrides.count("seed") && a->seed() < b->seed();
  });
  return out;
}

std::vector<double> values_of(const std::vector<const RunRecord*>& runs, const char* field) {
  std::vector<double> v;
  for (const RunRecord* r : runs)
    v.push_back(r->summary.contains(field) && r->summary[field].is_number() ? r->summary[field].get<double>() : NAN);
  return v;
}

Curve mean_curve(const std::string& title, const std::vector<const RunRecord*>& runs,
                 std::vector<std::pair<int, double>> RunRecord::*series) {
  Curve c{title, {}, {}};
  if (runs.empty()) return c;
  for (const auto& [step, v0] : runs.front()->*series) {
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    int n = 0;
    for (const RunRecord* r : runs)
      for (const auto& [s, v] : r->*series)
        if (s == step) sum += v, lo = std::min(lo, v), hi = std::max(hi, v), ++n;
    if (n != int(runs.size())) continue;  // a step not every run reached (one diverged)
    c.points.emplace_back(step, sum / n);
    c.band.emplace_back(lo, hi);
  }
  return c;
}

double mean_of(const std::vector<const RunRecord*>& runs, const char* field) {
  double sum = 0;
  int n = 0;
  for (const RunRecord* r : runs)
    if (r->summary.contains(field) && r->summary[field].is_number()) sum += r->summary[field].get<double>(), ++n;
  return n ? sum / n : NAN;
}

std::map<std::pair<int, std::string>, PositionStats> last_stats(const std::string& dir) {
  std::ifstream in(fs::path(dir) / "stats.csv");
  std::string line;
  std::getline(in, line);  // header
  struct Row {
    int step, layer, position;
    std::string site;
    double mean, std;
  };
  std::vector<Row> rows;
  int last = -1;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string f[6];
    for (auto& x : f) std::getline(ss, x, ',');
    rows.push_back({std::stoi(f[0]), std::stoi(f[1]), std::stoi(f[3]), f[2], std::stod(f[4]), std::stod(f[5])});
    last = std::max(last, rows.back().step);
  }
  std::map<std::pair<int, std::string>, PositionStats> out;
  for (const Row& r : rows)
    if (r.step == last) {
      auto& v = out[{r.layer, r.site}];
      if (int(v.std.size()) <= r.position) v.mean.resize(r.position + 1, NAN), v.std.resize(r.position + 1, NAN);
      v.mean[r.position] = r.mean;
      v.std[r.position] = r.std;
    }
  return out;
}

std::map<std::pair<int, std::string>, PositionRanges> ranges_at(const std::string& dir, int step) {
  std::ifstream in(fs::path(dir) / "ranges.csv");
  if (!in) throw std::runtime_error(fmt::format("{}/ranges.csv: cannot read it", dir));
  std::string line;
  std::getline(in, line);  // header
  std::vector<std::pair<int, std::string>> rows;  // (step, line)
  int last = -1;
  while (std::getline(in, line)) {
    const int s = std::stoi(line.substr(0, line.find(',')));
    rows.emplace_back(s, line);
    last = std::max(last, s);
  }
  const int wanted = step < 0 ? last : step;
  std::map<std::pair<int, std::string>, PositionRanges> out;
  for (const auto& [s, text] : rows) {
    if (s != wanted) continue;
    std::stringstream ss(text);
    std::string f[8];
    for (auto& x : f) std::getline(ss, x, ',');
    PositionRanges& v = out[{std::stoi(f[1]), f[2]}];
    const std::size_t t = std::stoul(f[3]);
    for (auto* column : {&v.max_abs, &v.fp16_outside, &v.int8_snr_db, &v.int8_tensor_snr_db})
      if (column->size() <= t) column->resize(t + 1, NAN);
    v.max_abs[t] = std::stod(f[4]);
    v.fp16_outside[t] = std::stod(f[5]);
    v.int8_snr_db[t] = std::stod(f[6]);
    v.int8_tensor_snr_db[t] = std::stod(f[7]);
  }
  return out;
}

void plot_into(const ClaimContext& ctx, const std::string& stem, const PlotStyle& style, const std::vector<Curve>& curves,
               ClaimResult& result) {
  const std::string note = plot_curves(ctx.out, stem, style, curves);
  if (note.empty()) result.plots.push_back(stem + ".png");
  else result.details += note + "\n";
}

RunConfig session_config(const std::string& file, std::vector<std::string> overrides) {
  overrides.push_back("train.threads=1");
  return load_config_file(config_path(file), overrides);
}

void parallel_tasks(int jobs, int n, const std::function<void(int)>& task) {
  std::atomic<int> next{0};
  std::exception_ptr failed;
  std::mutex lock;
  auto work = [&] {
    for (int i; (i = next++) < n;) {
      try {
        task(i);
      } catch (...) {
        std::lock_guard<std::mutex> hold(lock);
        if (!failed) failed = std::current_exception();
        next = n;  // no new tasks
      }
    }
  };
  std::vector<std::thread> threads;
  try {
    for (int t = 1; t < std::min(jobs, n); ++t) threads.emplace_back(work);
  } catch (const std::system_error&) {  // no more threads to be had: the ones started and this one do the work
  }
  work();
  for (std::thread& t : threads) t.join();
  if (failed) std::rethrow_exception(failed);
}

}  // namespace nt
