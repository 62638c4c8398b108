// A claim's result.json: written by save_result as the claim ends, read back by load_results with
// every key and type checked (io/json_file.h) and the result checked against itself, since a user
// may have edited it: a report is only ever the rendering of results that could have been measured.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <set>

#include "claims/statistics.h"
#include "io/files.h"
#include "io/json_file.h"
#include "report/report.h"

namespace nt {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string dir_name(const Claim& c) { return c.id + "-" + c.slug; }

namespace {
json to_json(const Interval& i) { return {{"n", i.n}, {"mean", i.mean}, {"sd", i.sd}, {"lo", i.lo}, {"hi", i.hi}}; }
json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
}  // namespace

void save_result(const std::string& claim_dir, const ClaimResult& r) {
  json measures = json::array();
  for (const Measure& m : r.measures) {
    json values = json::array();
    for (double v : m.values) values.push_back(number(v));
    json interval = to_json(m.interval);
    interval.update({{"scale", m.scale}, {"confidence", m.confidence}, {"sides", m.sides}});
    measures.push_back({{"name", m.name},
                        {"values", values},
                        {"labels", m.labels},
                        {"interval", interval},
                        {"criterion", m.criterion},
                        {"verdict", to_string(m.verdict)},
                        {"group", m.group},
                        {"precondition", m.precondition}});
  }
  const json j = {{"verdict", to_string(r.verdict)},
                  {"measured", r.measured},
                  {"seeds", r.seeds},
                  {"look", r.look},
                  {"rules", r.rules},
                  {"reason", r.reason},
                  {"setting", r.setting},
                  {"measures", measures},
                  {"plots", r.plots},
                  {"details", r.details},
                  {"ran", r.ran},
                  {"seconds", r.seconds},
                  {"ablations_not_run", r.ablations_not_run}};
  write_file_atomically((fs::path(claim_dir) / "result.json").string(), j.dump(2) + "\n");
}

namespace {

std::vector<std::string> strings(const JsonDoc& list) {
  std::vector<std::string> out;
  for (const JsonDoc& e : list.elements()) out.push_back(e.as<std::string>());
  return out;
}

ClaimVerdict verdict_of(const JsonDoc& j, std::string_view key) {
  const std::string v = j.get<std::string>(key);
  for (ClaimVerdict x : {ClaimVerdict::pass, ClaimVerdict::fail, ClaimVerdict::inconclusive, ClaimVerdict::report})
    if (v == to_string(x)) return x;
  j.fail(fmt::format("{}: is \"{}\", expected PASS, FAIL, INCONCLUSIVE or REPORT", key, v));
}

// <claim dir>/result.json as save_result wrote it; an InputError naming the file and the key when
// an edit left a key missing or of another type. A number may be null (save_result's NaN).
ClaimResult read_result(const JsonDoc& j) {
  ClaimResult r;
  r.verdict = verdict_of(j, "verdict");
  r.measured = j.get<std::string>("measured"), r.details = j.get<std::string>("details");
  r.ran = j.get<bool>("ran"), r.seconds = j.get_or<double>("seconds", NAN);
  for (const JsonDoc& s : j.get<JsonDoc>("seeds").elements()) r.seeds.push_back(s.as<int>());
  r.setting = j.get<std::string>("setting");
  r.look = j.get_or<int>("look", int(r.seeds.size()));
  r.rules = j.get_or<std::string>("rules", ""), r.reason = j.get_or<std::string>("reason", "");
  r.plots = strings(j.get<JsonDoc>("plots"));
  if (j.has("ablations_not_run")) r.ablations_not_run = strings(j.get<JsonDoc>("ablations_not_run"));
  for (const JsonDoc& m : j.get<JsonDoc>("measures").elements()) {
    const JsonDoc i = m.get<JsonDoc>("interval");
    Measure x{m.get<std::string>("name"),
              {},
              strings(m.get<JsonDoc>("labels")),
              Interval{i.get<int>("n"), i.get_or<double>("mean", NAN), i.get_or<double>("sd", NAN),
                       i.get_or<double>("lo", NAN), i.get_or<double>("hi", NAN)},
              m.get<std::string>("criterion"),
              verdict_of(m, "verdict"),
              m.get<std::string>("group"),
              i.get_or<std::string>("scale", "linear"),
              i.get_or<double>("confidence", 0.95),
              i.get_or<int>("sides", 2),
              m.get_or<bool>("precondition", false)};
    for (const JsonDoc& v : m.get<JsonDoc>("values").elements())
      x.values.push_back(v.value().is_null() ? NAN : v.as<double>());
    r.measures.push_back(std::move(x));
  }
  return r;
}

// A measure of a result.json as its claim's runner wrote it: a known kind of interval, its values one
// per seed (or label; none where the measure is not defined), and its interval the one they give
void check_measure(const JsonDoc& m, const Measure& x, std::size_t seeds) {
  const std::size_t expected = x.labels.empty() ? seeds : x.labels.size();
  if (!x.values.empty() && x.values.size() != expected)
    m.fail(fmt::format("values: {} of them, expected {} (one per {})", x.values.size(), expected,
                       x.labels.empty() ? "seed" : "label"));
  if ((x.scale != "linear" && x.scale != "log") || (x.sides != 1 && x.sides != 2) ||
      !(x.confidence > 0 && x.confidence < 1))
    m.fail(
        fmt::format("interval: scale \"{}\", sides {}, confidence {}: expected linear or log, 1 or 2, and "
                    "within (0, 1)",
                    x.scale, x.sides, x.confidence));
  if (x.interval.n != int(x.values.size()))
    m.fail(fmt::format("interval: n is {}, but there are {} values", x.interval.n, x.values.size()));
  if (x.values.empty()) return;
  const Interval e = estimate(x.values, x.scale == "log" ? Scale::log : Scale::linear, x.confidence, x.sides).interval;
  auto near = [](double a, double b) {
    return std::isnan(a) ? std::isnan(b) : std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)) || a == b;
  };
  if (!near(x.interval.mean, e.mean) || !near(x.interval.lo, e.lo) || !near(x.interval.hi, e.hi))
    m.fail(fmt::format("interval: {} [{}, {}] does not follow from the values, which give {} [{}, {}]", x.interval.mean,
                       x.interval.lo, x.interval.hi, e.mean, e.lo, e.hi));
}

// A result.json edited by hand into one that contradicts itself is refused, as a file that cannot be
// used: its seeds each once, every measure as check_measure reads it, and a training claim's verdict
// its measures' (claims/runner.cpp: an unmet precondition INCONCLUSIVE, else verdict_of)
void check_result(const Claim& c, const JsonDoc& j, const ClaimResult& r) {
  if (std::set<int>(r.seeds.begin(), r.seeds.end()).size() != r.seeds.size()) j.fail("seeds: a seed given twice");
  const auto measures = j.get<JsonDoc>("measures").elements();
  for (std::size_t i = 0; i < measures.size(); ++i) {
    const Measure& x = r.measures[i];
    check_measure(measures[i], x, r.seeds.size());
    // held to this version's criterion of that name (a result of an older criterion is read as it is)
    for (const MeasureSpec& spec : c.measures)
      if (spec.name == x.name && spec.group == x.group && text(spec.criterion) == x.criterion &&
          decide(spec.criterion, x.interval) != x.verdict)
        measures[i].fail(fmt::format("verdict: is {}, but its interval {} gives {} for {}", to_string(x.verdict),
                                     show(x.interval, 4), to_string(decide(spec.criterion, x.interval)), x.criterion));
  }
  ClaimVerdict expected = c.report ? ClaimVerdict::report : verdict_of(r.measures);
  for (const Measure& m : r.measures)
    if (m.precondition && m.verdict != ClaimVerdict::pass && !c.report) expected = ClaimVerdict::inconclusive;
  if (!r.ran) expected = ClaimVerdict::inconclusive;
  if ((!c.run || !r.ran) && r.verdict != expected)
    j.fail(fmt::format("verdict: is {}, but {} {}", to_string(r.verdict),
                       r.ran ? "its measures give" : "a claim that failed to run (ran: false) is",
                       to_string(expected)));
}

}  // namespace

std::vector<std::pair<const Claim*, ClaimResult>> load_results(const std::string& report_dir,
                                                               const std::vector<const Claim*>& skip) {
  std::vector<std::pair<const Claim*, ClaimResult>> results;
  for (const Claim& c : all_claims()) {
    if (std::find(skip.begin(), skip.end(), &c) != skip.end()) continue;
    const std::string path = (fs::path(report_dir) / dir_name(c) / "result.json").string();
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(path, ec))) continue;  // this claim did not run here
    const JsonDoc j = read_json_file(path);
    if (!j.has("measures")) continue;  // an older version's result: run the claim again
    ClaimResult r = read_result(j);
    check_result(c, j, r);
    results.emplace_back(&c, std::move(r));
  }
  return results;
}

}  // namespace nt
