// aggregate.md's table: a sweep's results, mean ± std over seeds per grid point.
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/run_files.h"
#include "sweep/sweep.h"

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

}  // namespace

std::string aggregate_table(const std::vector<SweepJob>& jobs) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<json>> groups;
  for (const SweepJob& j : jobs) {
    const std::string g = j.group_label();
    if (!groups.count(g)) order.push_back(g);
    groups[g].push_back(read_summary(j.dir));  // an InputError naming a hand-edited file
  }
  bool classification = false;
  for (const auto& [g, summaries] : groups)
    for (const auto& s : summaries) classification |= s.is_object() && s.contains("final_val_acc");
  std::string t =
      classification
          ? "| grid point | runs | final train loss | final val loss | final val acc | steps/s | diverged |\n"
            "| --- | --- | --- | --- | --- | --- | --- |\n"
          : "| grid point | runs | final train loss | final val loss | steps/s | diverged |\n"
            "| --- | --- | --- | --- | --- | --- |\n";
  for (const std::string& g : order) {
    std::vector<double> train, val, acc, speed;
    int done = 0, diverged = 0;
    for (const json& s : groups[g]) {
      if (!s.is_object()) continue;
      auto num = [&](const char* k) { return s.contains(k) && s[k].is_number() ? s[k].get<double>() : NAN; };
      done += s.value("status", "") == "completed" || s.value("status", "") == "diverged";
      diverged += s.value("diverged", false);
      train.push_back(num("final_train_loss"));
      val.push_back(num("final_val_loss"));
      acc.push_back(num("final_val_acc"));
      speed.push_back(num("steps_per_s"));
    }
    t += fmt::format("| {} | {}/{} | {} | {} | ", g, done, groups[g].size(), show(stat_of(train)), show(stat_of(val)));
    if (classification) t += show(stat_of(acc)) + " | ";
    t += fmt::format("{} | {} |\n", show(stat_of(speed), 1), diverged);
  }
  return t;
}

}  // namespace nt
