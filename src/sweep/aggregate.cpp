// aggregate.md's table: a sweep's results, mean ± std over seeds per grid point; the same as rows
// (aggregate.csv, sweep --aggregate --format csv|json).
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/run_files.h"
#include "io/files.h"
#include "io/table_format.h"
#include "sweep/sweep.h"
#include "sweep/sweep_plot.h"

namespace nt {

using json = nlohmann::json;

namespace {

struct Stat {
  double mean = NAN, std = NAN;
  int n = 0;
};

Stat stat_of(const std::vector<double>& v) {
  Stat s;
  for (double x : v)
    if (std::isfinite(x)) ++s.n;
  if (s.n == 0) return s;
  s.mean = 0;
  for (double x : v)
    if (std::isfinite(x)) s.mean += x / s.n;
  double var = 0;
  for (double x : v)
    if (std::isfinite(x)) var += (x - s.mean) * (x - s.mean);
  s.std = s.n > 1 ? std::sqrt(var / (s.n - 1)) : 0.0;
  return s;
}

std::string show(const Stat& s, int digits = 4) {
  if (s.n == 0) return "n/a";
  return s.n > 1 ? fmt::format("{:.{}f} ± {:.{}f}", s.mean, digits, s.std, digits)
                 : fmt::format("{:.{}f}", s.mean, digits);
}

// One grid point's figures: the jobs' summaries over seeds.
struct Point {
  std::string label;
  std::size_t runs = 0;
  int done = 0, diverged = 0;
  Stat train, val, acc, speed;
};

std::vector<Point> points_of(const std::vector<SweepJob>& jobs, bool& classification) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<json>> groups;
  for (const SweepJob& j : jobs) {
    const std::string g = j.group_label();
    if (!groups.count(g)) order.push_back(g);
    groups[g].push_back(read_summary(j.dir));  // an InputError naming a hand-edited file
  }
  classification = false;
  std::vector<Point> points;
  for (const std::string& g : order) {
    Point p;
    p.label = g;
    p.runs = groups[g].size();
    std::vector<double> train, val, acc, speed;
    for (const json& s : groups[g]) {
      if (!s.is_object()) continue;
      auto num = [&](const char* k) { return s.contains(k) && s[k].is_number() ? s[k].get<double>() : NAN; };
      classification |= s.contains("final_val_acc");
      // a run stopped (interrupted, failed) has no final loss: its last is of another step
      if (s.value("status", "") != "completed" && s.value("status", "") != "diverged") continue;
      ++p.done;
      p.diverged += s.value("diverged", false);
      train.push_back(num("final_train_loss"));
      val.push_back(num("final_val_loss"));
      acc.push_back(num("final_val_acc"));
      speed.push_back(num("steps_per_s"));
    }
    p.train = stat_of(train), p.val = stat_of(val), p.acc = stat_of(acc), p.speed = stat_of(speed);
    points.push_back(std::move(p));
  }
  return points;
}

json mean_of(const Stat& s) { return s.n ? json(s.mean) : json(); }
json sd_of(const Stat& s) { return s.n > 1 ? json(s.std) : json(); }

}  // namespace

std::string aggregate_table(const std::vector<SweepJob>& jobs) {
  bool classification = false;
  const std::vector<Point> points = points_of(jobs, classification);
  std::string t =
      classification
          ? "| grid point | runs | final train loss | final val loss | final val acc | steps/s | diverged |\n"
            "| --- | --- | --- | --- | --- | --- | --- |\n"
          : "| grid point | runs | final train loss | final val loss | steps/s | diverged |\n"
            "| --- | --- | --- | --- | --- | --- |\n";
  for (const Point& p : points) {
    t += fmt::format("| {} | {}/{} | {} | {} | ", p.label, p.done, p.runs, show(p.train), show(p.val));
    if (classification) t += show(p.acc) + " | ";
    t += fmt::format("{} | {} |\n", show(p.speed, 1), p.diverged);
  }
  return t;
}

Table aggregate_rows(const std::vector<SweepJob>& jobs) {
  bool classification = false;
  Table t{
      {"grid_point", "runs", "done", "final_train_loss_mean", "final_train_loss_sd", "final_val_loss_mean",
       "final_val_loss_sd", "final_val_acc_mean", "final_val_acc_sd", "steps_per_s_mean", "steps_per_s_sd", "diverged"},
      {}};
  for (const Point& p : points_of(jobs, classification))
    t.rows.push_back({p.label, p.runs, p.done, mean_of(p.train), sd_of(p.train), mean_of(p.val), sd_of(p.val),
                      mean_of(p.acc), sd_of(p.acc), mean_of(p.speed), sd_of(p.speed), p.diverged});
  return t;
}

void write_aggregate_files(const std::string& dir, const std::vector<SweepJob>& jobs) {
  const std::filesystem::path d(dir);
  write_file_atomically((d / "aggregate.md").string(), aggregate_table(jobs) + sweep_picture(dir, jobs));
  write_file_atomically((d / "aggregate.csv").string(), table_csv(aggregate_rows(jobs)));
}

}  // namespace nt
