// Evidence for the training claims: sweeps of runs into the claim's directory read back (a run's
// files by io/run_files.h), values per seed, curves averaged over seeds with the seeds' band,
// plots; and configs for in-process sessions.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "claims/claim.h"
#include "config/config.h"
#include "io/plot.h"
#include "io/run_files.h"  // last_stats, ranges_at: the tables of a run

namespace nt {

// The runs whose overrides match all of `where` (key -> value), in the order of their seeds.
std::vector<const RunRecord*> select(const std::vector<RunRecord>& runs,
                                     const std::map<std::string, std::string>& where);

// Readers of a claim's measures (claim.h), per seed in the order of the evidence's seeds: a
// summary field of a setting's runs, any function of each run, and per-seed arithmetic.
Reader field(std::string setting, Where where, std::string name);
Reader per_run(std::string setting, Where where, std::function<double(const RunRecord&)> f);
Reader ratio(Reader num, Reader den);
Reader difference(Reader a, Reader b);

double summary_number(const RunRecord& r, const std::string& field);  // NaN where absent or not a number
// A summary field of each run (NaN where absent), in the runs' order
std::vector<double> values_of(const std::vector<const RunRecord*>& runs, const char* field);

// Mean over runs at each step every run has, with its 95% interval as the band (analysis/seed_band.h).
Curve mean_curve(const std::string& title, const std::vector<const RunRecord*>& runs,
                 std::vector<std::pair<int, double>> RunRecord::*series);

// A curve of a validation-loss plot: the runs of `setting` that match `where`, titled `title`
struct Series {
  std::string title, setting;
  Where where = {};
};
// Each series' mean validation loss over the seeds (mean_curve), in order; NotRun when a setting did not run
std::vector<Curve> val_loss_curves(const Evidence& ev, const std::vector<Series>& series);
// A plot of those curves, "validation loss" against the step
PlotSpec val_loss_plot(std::string stem, std::string title, std::vector<Series> series, bool zoom_last_half = false);

// Draws the plot into the claim's directory and records it in result.plots; when it cannot be
// drawn (no gnuplot), the note goes to result.details instead.
void plot_into(const ClaimContext& ctx, const std::string& stem, const PlotStyle& style,
               const std::vector<Curve>& curves, ClaimResult& result);

// A config from configs/ with overrides, for a session inside this process: one math thread.
RunConfig session_config(const std::string& file, std::vector<std::string> overrides);

// task(0) ... task(n - 1) on `jobs` threads of this process (reproduce --jobs), for claims that
// train in-process: each task a session of its own at one math thread, its result kept by its
// index, so that the figures do not depend on `jobs`. The first exception is rethrown after
// every task has stopped.
void parallel_tasks(int jobs, int n, const std::function<void(int)>& task);

// ---- postln ----

// Per seed, the largest value of the readers that ran (NotRun when none did)
Reader largest(std::vector<Reader> readers);

// Curves as a markdown table, a curve a row (its title under `label`), a column per x of the first
// curve, each value in `spec` ("{:.3g}")
std::string curves_table(const std::string& label, const std::vector<Curve>& curves, const std::string& spec);

// ---- convergence ----

// The mean of the finite values of v[from, to), NaN when none; their coefficient of variation in %
// (the population std over the mean) over v[from, end)
double finite_mean(const std::vector<double>& v, std::size_t from, std::size_t to);
double cv_percent(const std::vector<double>& v, std::size_t from);

// The mean over seeds (analysis/seed_band.h) of a map x -> value read from each run
Curve mean_of_maps(const std::string& title, const std::vector<const RunRecord*>& runs,
                   const std::function<std::map<int, double>(const RunRecord&)>& f);

// The runs with model.norm.type `norm`
Where with_norm(const std::string& norm);
// A norm in the measures' names: LN, RMS; any other by its own name
std::string short_name(const std::string& norm);
// A measure reported beside the deciding ones, in `group`: it decides nothing
MeasureSpec reported(std::string name, Reader read, std::string group, bool headline = false, int digits = 3);

}  // namespace nt
