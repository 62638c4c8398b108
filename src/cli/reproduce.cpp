// `normtool reproduce`: run each claim's experiment and write the report (REPORT.md, REPORT.html,
// verdicts.json, the plots and the runs). Claims run side by side on --jobs slots, and a timing claim (C3)
// with the machine to itself. --launcher slurm submits them to Slurm instead and --collect DIR assembles the
// report once they ran. Exit status 0 when every claim ran, whatever its verdict (or was
// submitted); 1 when an experiment failed to run; 2 on bad usage; 75 (--collect) while pending;
// 130 when a SIGINT or SIGTERM stopped it (stop_here).
#include "cli/reproduce.h"
#include "cli/directory_option.h"
#include "cli/reproduce_claims.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <future>
#include <thread>
#include <fmt/ranges.h>
#include <sstream>
#include <optional>
#include <nlohmann/json.hpp>

#include "claims/claim.h"
#include "report/report.h"
#include "report/results_table.h"
#include "claims/runner.h"
#include "config/config.h"
#include "core/errors.h"
#include "core/read_file.h"
#include "io/console.h"
#include "io/files.h"
#include "io/paths.h"
#include "sweep/processes.h"
#include "sweep/slots.h"
#include "sweep/slurm.h"

namespace nt::cli {

Outcome run_claim(const Claim& c, const std::string& out, const std::string& binary, const Settings& how,
                  const SlurmOptions* slurm, Slots* slots, int priority) {
  Outcome o;
  const auto t0 = std::chrono::steady_clock::now();
  ClaimContext ctx{(std::filesystem::path(out) / dir_name(c)).string(),       binary,       how.quick, how.jobs,
                   how.seeds.empty() ? claim_seeds(c, how.quick) : how.seeds, how.ablations};
  ctx.slurm = slurm;
  ctx.pending = &o.pending;
  ctx.slots = slots;
  ctx.priority = priority;
  make_own_subdirectory(ctx.out);
  try {
    o.result = reproduce_claim(c, ctx);
  } catch (const std::exception& e) {
    o.result = ClaimResult{};
    o.result.ran = false;
    o.result.measured = fmt::format("the experiment failed to run: {}", e.what());
    if (how.quick) o.result.setting = "quick: failed before its setting ran";  // the report stays a QUICK one
    o.failed = o.pending.empty();  // with sweeps pending, the empty runs explain it
  }
  o.result.seconds = slots ? slots->busy_seconds(priority) / slots->size()
                           : std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const bool stopped = !o.result.ran && slots && slots->stopped();  // a result from before stays
  if (o.pending.empty() && !stopped) save_result(ctx.out, o.result);
  return o;
}

void print_outcome(const Claim& c, const Outcome& o) {
  if (!o.pending.empty())
    fmt::print("{:<3} {:<13} {} sweep(s) on Slurm: {}\n", c.id, "PENDING", o.pending.size(),
               fmt::join(o.pending, ", "));
  else
    fmt::print("{:<3} {:<13} {} ({:.1f} s)\n", c.id, to_string(o.result.verdict), o.result.measured, o.result.seconds);
  std::fflush(stdout);
}

namespace {

struct ReproduceOptions {
  std::vector<std::string> ids;
  bool quick = false;
  bool ablations = false;
  int jobs = 2;
  std::string out;
  std::optional<std::string> seeds;  // none: each claim's own
  bool sync_readmes = false;
  bool list = false;
  std::string launcher = "local";  // local | slurm
  SlurmOptions slurm;
  std::string collect;       // --collect DIR
  std::string write_report;  // --write-report DIR
};

// --out: a directory that is new, empty or a reproduction's (its REPORT.md is normtool's, or
// there is none); anything else is refused before a claim runs, as `run` refuses a used --out.
void check_report_dir(const std::string& out, const std::string& flag = "--out") {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(out, ec)) return;
  if (!fs::is_directory(out, ec))
    throw UsageError(fmt::format("{} {}: exists and is not a directory (choose another)", flag, out));
  const fs::path report = fs::path(out) / "REPORT.md";
  if (!fs::exists(fs::symlink_status(report, ec))) return;
  if (!fs::is_regular_file(fs::symlink_status(report, ec)))  // a link would be written through
    throw UsageError(
        fmt::format("{} {}: its REPORT.md is a symbolic link or not a regular file; choose another "
                    "directory (or remove it)",
                    flag, out));
  if (read_file(report.string(), kMaxLogBytes).rfind("# normtool:", 0) != 0)
    throw UsageError(fmt::format(
        "{} {}: holds a REPORT.md that is not a normtool report; choose another (or remove it)", flag, out));
}

// --seeds; empty when not given (each claim's own)
// C7 and C16 draw their inits from seeds 1000 s + k: within a config's seed range up to this
constexpr int kMaxSeed = 2000000;
constexpr std::size_t kMaxSeeds = 1000;  // a claim's runs over more would not end

// A seed of --seeds: an integer from 0 to kMaxSeed, or -1 when `v` is not one
int seed_of(const std::string& v) {
  std::size_t used = 0;
  int s = -1;
  try {
    s = std::stoi(v, &used);
  } catch (const std::exception&) {
  }
  return v.empty() || used != v.size() || !std::isdigit(static_cast<unsigned char>(v[0])) || s > kMaxSeed ? -1 : s;
}

// --seeds "1,2,3" or "11-30" (both ends included), or both: "1-3,7"
std::vector<int> parse_seeds(const std::optional<std::string>& given) {
  if (!given) return {};
  const std::string& text = *given;
  std::vector<int> seeds;
  std::stringstream list(text + ",");  // so that a last empty seed ("1,2,") is one
  for (std::string v; std::getline(list, v, ',');) {
    if (v.empty())
      throw UsageError(fmt::format(
          "--seeds \"{}\": an empty seed (expected integers from 0 to {} such as 1,2,3 or 11-30)", text, kMaxSeed));
    const std::size_t dash = v.find('-', 1);
    const int first = seed_of(v.substr(0, dash)),
              last = dash == std::string::npos ? first : seed_of(v.substr(dash + 1));
    if (first < 0 || last < first)
      throw UsageError(fmt::format(
          "--seeds \"{}\": expected integers from 0 to {} or ranges a-b with a <= b, got \"{}\"", text, kMaxSeed, v));
    if (seeds.size() + std::size_t(last - first) + 1 > kMaxSeeds)
      throw UsageError(fmt::format("--seeds \"{}\": more than {} seeds", text, kMaxSeeds));
    for (int s = first; s <= last; ++s) {
      if (std::find(seeds.begin(), seeds.end(), s) != seeds.end())  // a repeated seed is no new evidence
        throw UsageError(fmt::format("--seeds \"{}\": seed {} is given twice", text, s));
      seeds.push_back(s);
    }
  }
  if (seeds.size() < 3) throw UsageError(fmt::format("--seeds: a verdict needs at least 3 seeds, got \"{}\"", text));
  return seeds;
}

// --sync-readmes: the generated parts of experiments/*/README.md and docs/claims.md, rewritten from the registry.
int sync_docs() {
  const std::string dir = data_dir() + "/experiments";
  for (const std::string& f : sync_readmes(dir)) fmt::print("updated {}\n", f);
  const std::string doc = data_dir() + "/docs/claims.md";
  const std::string now = read_file(doc, kMaxDocumentBytes);
  if (const std::string want = with_claims_reference(now); want != now) {
    write_file_atomically(doc, want);
    fmt::print("updated {}\n", doc);
  }
  // in a source tree (docs/ beside reports/ and the README), the README's results from reports/
  if (sync_results_table(source_reports_dir(data_dir() + "/docs"))) fmt::print("updated README.md\n");
  return 0;
}

// --write-report DIR: the report of the claims already in DIR, from their result.json, with this
// version's texts; runs nothing.
int rewrite_report(const std::string& dir) {
  check_report_dir(dir, "--write-report");
  const auto results = load_results(dir);
  if (results.empty())
    throw UsageError(
        fmt::format("--write-report {}: no claim's result.json there (a directory of normtool reproduce)", dir));
  write_report(dir, results);
  fmt::print("report: {}/REPORT.md ({} claims, none run)\n", dir, results.size());
  return 0;
}

// A SIGINT or SIGTERM to a reproduction: no slot is granted any more, the sweeps pass it on to
// their jobs, which checkpoint, and once they have ended the process exits 130. The claims that
// ended before are saved; those still running (in-process sessions too) are left, their earlier
// results and the report as they were: the same command again resumes.
[[noreturn]] void stop_here(Slots& slots, const std::string& out) {
  slots.stop();
  while (running_jobs() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  eprint(
      "\nreproduce: interrupted; the runs in progress checkpointed and the claims that ended are saved: run the "
      "same command again to resume, or normtool reproduce --write-report {} for their report now\n",
      printable(out));
  std::fflush(stdout);
  std::_Exit(130);
}

// The claims run here side by side, each in a thread, every training run on one of --jobs slots
// granted in the claims' order (sweep/slots.h): a core that one claim leaves idle (the last odd
// run of a look, a run extended alone) goes to the claims after it, and a timing claim (C3) waits
// for the machine to itself. Printed in their order as they end, then the report.
int run_here(const std::vector<const Claim*>& chosen, const std::string& out, const Settings& how) {
  const StopOnSignals signals;  // from here to the end: a SIGINT or SIGTERM stops every claim (stop_here)
  int failed = 0;
  const auto t0 = std::chrono::steady_clock::now();
  Slots slots(how.jobs);
  const std::string binary = self_executable();
  std::vector<std::future<Outcome>> outcomes;
  for (std::size_t i = 0; i < chosen.size(); ++i)
    outcomes.push_back(std::async(std::launch::async,
                                  [&, i] { return run_claim(*chosen[i], out, binary, how, nullptr, &slots, int(i)); }));
  WorkProgress progress("reproduce", "claims", int(chosen.size()));
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    progress.update(int(i), "running " + std::string(chosen[i]->id));
    while (outcomes[i].wait_for(std::chrono::milliseconds(100)) != std::future_status::ready)
      if (stop_requested()) stop_here(slots, out);
    Outcome r;
    try {
      r = outcomes[i].get();
    } catch (...) {  // e.g. a claim's directory refused: the others stop (their runs interrupted)
      slots.stop();
      throw;
    }
    progress.clear();
    print_outcome(*chosen[i], r);
    failed += r.failed;
  }
  progress.update(int(chosen.size()));
  progress.finish();
  write_report(out, load_results(out));  // this run's claims and any earlier ones in the directory
  fmt::print("report: {}/REPORT.md ({} claims in {:.0f} s at --jobs {})\n", out, chosen.size(),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), how.jobs);
  return failed ? 1 : 0;
}

int run(const ReproduceOptions& o) {
  if (o.list) {
    fmt::print("claims (setups in {}/experiments):\n", data_dir());
    for (const char* group : {"core", "extra"}) {
      fmt::print("{}\n", group == std::string("core") ? "core: the seed papers' claims (`reproduce core`)"
                                                      : "extra: the notes' open claims and the literature after "
                                                        "the seed papers (`reproduce extra`)");
      for (const Claim* c : claims_named(group)) fmt::print("  {:<4} {}\n", c->id, c->title);
    }
    return 0;
  }
  if (o.sync_readmes) return sync_docs();
  if (!o.write_report.empty()) return rewrite_report(o.write_report);
  const std::vector<const Claim*> chosen = choose_claims(o.ids);
  if (!o.collect.empty()) return collect(o.collect);
  const Settings how{o.quick, o.ablations, o.jobs, parse_seeds(o.seeds)};
  for (const Claim* c : chosen) {  // a setting broken in this mode fails now, not when its claim's turn comes
    ClaimContext ctx;
    ctx.quick = how.quick, ctx.ablations = how.ablations;
    check_settings(*c, ctx);
    setup_text(*c);  // and so does the report's description of every setting, written after the runs
  }
  const std::string out = o.out.empty() ? "runs/reproduce-" + timestamp() : o.out;
  check_report_dir(out);
  if (o.launcher == "slurm") {  // the site options and paths go into #SBATCH lines: checked before any claim runs
    check_slurm_options(o.slurm);
    check_slurm_path("--out", out);
  }
  make_output_directory(out, "--out " + out);
  try {  // an earlier claim's result.json that cannot be used fails now, not after the runs
    load_results(out, chosen);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{} (rerun that claim into this directory, or remove its directory)", e.what()));
  }
  if (o.launcher == "slurm") return on_slurm(chosen, out, how, o.slurm, /*collecting=*/false);
  return run_here(chosen, out, how);
}

}  // namespace

void setup_reproduce(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ReproduceOptions>();
  CLI::App* sub = app.add_subcommand("reproduce", "Rerun the claims' experiments and write a report with verdicts");
  sub->add_option("ids", o->ids,
                  "claims to run (E1 ... C21), or a group: core (the seed papers' claims, E1-E8, C1-C13, P1, "
                  "the ones the local time budget is for) or extra (C14 on); default all");
  sub->add_flag("--quick", o->quick, "shrunken settings (minutes, not tens of minutes)");
  sub->add_flag("--ablations", o->ablations,
                "also the settings kept beside the papers' as ablations (the decoder-only transformer, other inits, "
                "the MLP); every verdict is decided without them");
  sub->add_option("-j,--jobs", o->jobs, "parallel training runs")->capture_default_str()->check(CLI::Range(1, 64));
  sub->add_option("-o,--out", o->out, "report directory (default runs/reproduce-<YYYYmmdd-HHMMSS>)")
      ->check(non_empty_directory);
  sub->add_option("--seeds", o->seeds,
                  "the training claims' seeds, at least 3, looked at in this order: 1,2,3 or 11-30 (default: each "
                  "claim's own list, in quick mode its first look)");
  sub->add_flag("--list", o->list, "list the claims and where their experiments are, and exit");
  sub->add_flag("--sync-readmes", o->sync_readmes,
                "rewrite the generated header of every experiments/*/README.md and the generated part of "
                "docs/claims.md from the claim registry, and exit");
  sub->add_option("--launcher", o->launcher,
                  "local: here; slurm: the training claims' sweeps as Slurm job arrays, the claims that train in "
                  "one process as one array (then --collect)")
      ->capture_default_str()
      ->check(CLI::IsMember({"local", "slurm"}));
  sub->add_option("--collect", o->collect,
                  "assemble the report of a reproduce --launcher slurm in this directory (submitting what is not yet); "
                  "exit 75 while claims are pending")
      ->check(non_empty_directory);
  sub->add_option("--write-report", o->write_report,
                  "write the report of the claims already in this directory again (REPORT.md, REPORT.html, "
                  "verdicts.json) from their result.json, with this version's texts, and exit; runs nothing")
      ->check(non_empty_directory)
      ->excludes("--collect")
      ->excludes("ids");  // it reports every claim there; naming some would run nothing either
  sub->add_option("--partition", o->slurm.partition, "Slurm: the partition");
  sub->add_option("--time", o->slurm.time, "Slurm: each task's time limit, e.g. 04:00:00");
  sub->add_option("--cpus-per-task", o->slurm.cpus_per_task, "Slurm: CPUs per task")->check(CLI::Range(1, 1024));
  sub->add_option("--max-parallel", o->slurm.max_parallel, "Slurm: at most this many tasks of an array at once")
      ->check(CLI::Range(1, 100000));
  sub->add_option("--sbatch-arg", o->slurm.extra, "Slurm: a further sbatch argument (repeatable)")
      ->allow_extra_args(false);
  sub->callback([o, &exit_code] { exit_code = run(*o); });
}

}  // namespace nt::cli
