#include "claims/evidence.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fmt/format.h>
#include <mutex>
#include <system_error>
#include <thread>

#include "analysis/seed_band.h"
#include "io/paths.h"

namespace nt {

std::vector<const RunRecord*> select(const std::vector<RunRecord>& runs,
                                     const std::map<std::string, std::string>& where) {
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

Reader field(std::string setting, Where where, std::string name) {
  return [=](const Evidence& ev) { return values_of(ev.of(setting, where), name.c_str()); };
}

Reader per_run(std::string setting, Where where, std::function<double(const RunRecord&)> f) {
  return [=](const Evidence& ev) {
    std::vector<double> v;
    for (const RunRecord* r : ev.of(setting, where)) v.push_back(f(*r));
    return v;
  };
}

namespace {

Reader per_seed(Reader a, Reader b, double (*op)(double, double)) {
  return [=](const Evidence& ev) {
    const auto x = a(ev), y = b(ev);
    std::vector<double> v;
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) v.push_back(op(x[i], y[i]));
    return v;
  };
}

}  // namespace

Reader ratio(Reader num, Reader den) {
  return per_seed(std::move(num), std::move(den), [](double a, double b) { return a / b; });
}

Reader difference(Reader a, Reader b) {
  return per_seed(std::move(a), std::move(b), [](double x, double y) { return x - y; });
}

std::vector<const RunRecord*> Evidence::of(const std::string& setting, const Where& where) const {
  const auto it = runs.find(setting);
  if (it == runs.end()) throw NotRun(setting);
  return select(it->second, where);
}

double summary_number(const RunRecord& r, const std::string& field) {
  const auto it = r.summary.find(field);
  return it != r.summary.end() && it->is_number() ? it->get<double>() : NAN;
}

std::vector<double> values_of(const std::vector<const RunRecord*>& runs, const char* field) {
  std::vector<double> v;
  for (const RunRecord* r : runs) v.push_back(summary_number(*r, field));
  return v;
}

Curve mean_curve(const std::string& title, const std::vector<const RunRecord*>& runs,
                 std::vector<std::pair<int, double>> RunRecord::*series) {
  std::vector<std::map<double, double>> per_seed;
  for (const RunRecord* r : runs) {
    std::map<double, double>& m = per_seed.emplace_back();
    for (const auto& [step, v] : r->*series) m[step] = v;
  }
  return mean_over_seeds(title, per_seed);
}

std::vector<Curve> val_loss_curves(const Evidence& ev, const std::vector<Series>& series) {
  std::vector<Curve> curves;
  for (const Series& s : series) curves.push_back(mean_curve(s.title, ev.of(s.setting, s.where), &RunRecord::val_loss));
  return curves;
}

PlotSpec val_loss_plot(std::string stem, std::string title, std::vector<Series> series, bool zoom_last_half) {
  return {std::move(stem),
          {.title = std::move(title), .ylabel = "validation loss", .zoom_last_half = zoom_last_half},
          [series = std::move(series)](const Evidence& ev) { return val_loss_curves(ev, series); }};
}

void plot_into(const ClaimContext& ctx, const std::string& stem, const PlotStyle& style,
               const std::vector<Curve>& curves, ClaimResult& result) {
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

// ---- postln ----

Reader largest(std::vector<Reader> readers) {
  return [readers = std::move(readers)](const Evidence& ev) {
    std::vector<double> v;
    bool ran = false;
    for (const Reader& r : readers) try {
        const std::vector<double> x = r(ev);
        if (!ran) v = x;
        for (std::size_t i = 0; i < v.size() && i < x.size(); ++i) v[i] = std::max(v[i], x[i]);
        ran = true;
      } catch (const NotRun&) {
      }
    if (!ran) throw NotRun("none of the readers");
    return v;
  };
}

std::string curves_table(const std::string& label, const std::vector<Curve>& curves, const std::string& spec) {
  if (curves.empty()) return "";
  std::string head = fmt::format("| {} |", label), rule = "|---|", rows;
  for (const auto& [x, y] : curves.front().points) head += fmt::format(" {:g} |", x), rule += "---|";
  for (const Curve& c : curves) {
    rows += fmt::format("| {} |", c.title);
    for (const auto& [x, y] : c.points) rows += fmt::format(" {} |", fmt::format(fmt::runtime(spec), y));
    rows += "\n";
  }
  return fmt::format("{}\n{}\n{}", head, rule, rows);
}

// ---- convergence ----

double finite_mean(const std::vector<double>& v, std::size_t from, std::size_t to) {
  double sum = 0;
  int n = 0;
  for (std::size_t t = from; t < std::min(to, v.size()); ++t)
    if (std::isfinite(v[t])) sum += v[t], ++n;
  return n ? sum / n : NAN;
}

double cv_percent(const std::vector<double>& v, std::size_t from) {
  const double mean = finite_mean(v, from, v.size());
  std::vector<double> d2;  // squared deviations
  for (double x : v) d2.push_back((x - mean) * (x - mean));
  return 100 * std::sqrt(finite_mean(d2, from, d2.size())) / mean;
}

Curve mean_of_maps(const std::string& title, const std::vector<const RunRecord*>& runs,
                   const std::function<std::map<int, double>(const RunRecord&)>& f) {
  std::vector<std::map<double, double>> per_seed;
  for (const RunRecord* r : runs) {
    const std::map<int, double> m = f(*r);
    per_seed.emplace_back(m.begin(), m.end());
  }
  return mean_over_seeds(title, per_seed);
}

Where with_norm(const std::string& norm) { return {{"model.norm.type", norm}}; }

std::string short_name(const std::string& norm) {
  return norm == "layernorm" ? "LN" : norm == "rmsnorm" ? "RMS" : norm;
}

MeasureSpec reported(std::string name, Reader read, std::string group, bool headline, int digits) {
  return {.name = std::move(name),
          .criterion = Reported{},
          .read = std::move(read),
          .group = std::move(group),
          .headline = headline,
          .digits = digits};
}

}  // namespace nt
