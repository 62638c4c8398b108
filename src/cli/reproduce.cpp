// `normtool reproduce`: run each claim's experiment and write the report (REPORT.md, REPORT.html,
// verdicts.json, the plots and the runs). Claims run one after another, so a timing claim (C3) never runs beside
// another experiment. --launcher slurm submits them to Slurm instead and --collect DIR assembles the
// report once they ran. Exit status 0 when every claim ran, whatever its verdict (or was
// submitted); 1 when an experiment failed to run; 2 on bad usage; 75 (--collect) while pending.
#include "cli/reproduce.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fmt/ranges.h>
#include <sstream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>

#include "claims/claim.h"
#include "report/report.h"
#include "report/results_table.h"
#include "claims/runner.h"
#include "config/config.h"
#include "core/errors.h"
#include "io/console.h"
#include "io/files.h"
#include "io/json_file.h"
#include "io/paths.h"
#include "sweep/slurm.h"
#include "sweep/sweep.h"

namespace nt::cli {

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
  std::string collect;             // --collect DIR
};

constexpr int kPending = 75;  // EX_TEMPFAIL: claims still running on Slurm; collect again later

// One claim run here; its result saved unless it is still waiting for Slurm.
struct Outcome {
  ClaimResult result;
  std::vector<std::string> pending;  // its sweeps still queued or running
  bool failed = false;
};

// How the claims run: what reproduce's options say of every claim alike
struct Settings {
  bool quick = false, ablations = false;
  int jobs = 2;
  std::vector<int> seeds;
};

Outcome run_claim(const Claim& c, const std::string& out, const std::string& binary, const Settings& how,
                  const SlurmOptions* slurm) {
  Outcome o;
  const auto t0 = std::chrono::steady_clock::now();
  ClaimContext ctx{(std::filesystem::path(out) / (c.id + "-" + c.slug)).string(), binary, how.quick, how.jobs,
                   how.seeds.empty() ? claim_seeds(c, how.quick) : how.seeds, how.ablations};
  ctx.slurm = slurm;
  ctx.pending = &o.pending;
  make_own_subdirectory(ctx.out);
  try {
    o.result = reproduce_claim(c, ctx);
  } catch (const std::exception& e) {
    o.result = ClaimResult{};
    o.result.ran = false;
    o.result.measured = fmt::format("the experiment failed to run: {}", e.what());
    o.failed = o.pending.empty();  // with sweeps pending, the empty runs explain it
  }
  o.result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (o.pending.empty()) save_result(ctx.out, o.result);
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

// <dir>/reproduce.json, the manifest of a reproduction on Slurm, with every key normtool reads
// checked for its type (an InputError naming the file and the key); null when there is none.
nlohmann::json read_manifest(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "reproduce.json").string();
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) return nullptr;
  const JsonDoc d = read_json_file(path);
  for (const char* k : {"launcher", "claims_job_id"}) d.get_or<std::string>(k, "");
  for (const char* k : {"quick", "ablations"}) d.get_or<bool>(k, false);
  d.get_or<int>("jobs", 1);
  for (const char* k : {"ids", "claims_tasks"})
    if (d.has(k))
      for (const JsonDoc& e : d.get<JsonDoc>(k).elements()) e.as<std::string>();
  if (d.has("seeds"))
    for (const JsonDoc& e : d.get<JsonDoc>("seeds").elements()) e.as<int>();
  if (d.has("slurm")) {
    const JsonDoc s = d.get<JsonDoc>("slurm").expect_object();
    for (const char* k : {"partition", "time"}) s.get_or<std::string>(k, "");
    for (const char* k : {"cpus_per_task", "max_parallel", "signal_lead_s"}) s.get_or<int>(k, 0);
    if (s.has("extra"))
      for (const JsonDoc& e : s.get<JsonDoc>("extra").elements()) e.as<std::string>();
  }
  return d.value();
}

// A new manifest of a reproduction on Slurm: what it runs and how; the claims' job array comes once submitted.
nlohmann::json new_manifest(const std::vector<const Claim*>& chosen, const Settings& how, const SlurmOptions& slurm) {
  std::vector<std::string> ids;
  for (const Claim* c : chosen) ids.push_back(c->id);
  return {{"launcher", "slurm"}, {"ids", ids}, {"seeds", how.seeds}, {"quick", how.quick},
          {"ablations", how.ablations}, {"jobs", how.jobs}, {"slurm", slurm_options_json(slurm)}, {"claims_job_id", ""},
          {"claims_tasks", nlohmann::json::array()}};
}

std::map<std::string, ClaimResult> results_by_id(const std::string& out) {
  std::map<std::string, ClaimResult> done;
  for (auto& [claim, result] : load_results(out)) done[claim->id] = result;
  return done;
}

// How many claims are still pending, and how many failed.
struct Tally {
  int pending = 0, failed = 0;
};

// At --collect, the state of a claim that trains in one process: a task of the claims' job
// array (the manifest's), pending, failed, or done with its result in `done`; printed and counted.
void collect_task(const Claim& c, const nlohmann::json& doc, const std::string& out,
                  std::map<std::string, ClaimResult>& done, Tally& tally) {
  const auto tasks = doc.value("claims_tasks", std::vector<std::string>{});
  const auto it = std::find(tasks.begin(), tasks.end(), std::string(c.id));
  const std::string job_id = doc.value("claims_job_id", "");
  const SlurmTasks slurm_tasks = slurm_task_states(job_id);
  const auto& states = slurm_tasks.states;
  const int task = int(it - tasks.begin());
  if (!states.count(task) && !done.count(c.id))  // read again: the task may have ended since the results were read
    for (auto& [id, result] : results_by_id(out)) done[id] = result;
  if (states.count(task)) {
    fmt::print("{:<3} {:<13} task {} of Slurm job {} is {}\n", c.id, "PENDING", task, job_id, states.at(task));
    ++tally.pending;
  } else if (!slurm_tasks.known && !done.count(c.id)) {
    fmt::print("{:<3} {:<13} task {} of Slurm job {}: squeue is not on this machine's PATH to say whether it still "
               "runs\n", c.id, "PENDING", task, job_id);
    ++tally.pending;
  } else if (done.count(c.id)) {
    fmt::print("{:<3} {:<13} {}\n", c.id, to_string(done[c.id].verdict), done[c.id].measured);
  } else {
    fmt::print("{:<3} {:<13} the Slurm task ended without a result; see {}/logs/claims-{}.log\n", c.id, "FAILED",
               out, task);
    ++tally.failed;
  }
}

// The command line of a task of the claims' job array: this binary reproducing the one claim into `out`.
std::vector<std::string> claim_command(const std::string& binary, const Claim& c, const std::string& out,
                                       const Settings& how) {
  std::vector<std::string> cmd{binary, "reproduce", c.id, "--out", std::filesystem::absolute(out).string(), "--jobs",
                               std::to_string(how.jobs)};
  if (!how.seeds.empty()) cmd.insert(cmd.end(), {"--seeds", fmt::format("{}", fmt::join(how.seeds, ","))});
  if (how.quick) cmd.push_back("--quick");
  if (how.ablations) cmd.push_back("--ablations");
  return cmd;
}

// Submits the claims that train in one process as one job array (a task each), recorded in the manifest.
void submit_claims(const std::vector<std::vector<std::string>>& commands, const std::vector<std::string>& ids,
                   const std::string& out, const Settings& how, const SlurmOptions& slurm, nlohmann::json& doc) {
  namespace fs = std::filesystem;
  make_own_subdirectory((fs::path(out) / "logs").string());
  const std::string script = (fs::path(out) / "claims.sbatch").string();
  write_command_array(script, "claims", commands, slurm, how.jobs, (fs::path(out) / "logs").string());
  const std::string id = submit_sbatch(script);
  doc["claims_job_id"] = id;
  doc["claims_tasks"] = ids;
  for (std::size_t i = 0; i < ids.size(); ++i)
    fmt::print("{:<3} {:<13} task {} of Slurm job {} ({})\n", ids[i], "SUBMITTED", i, id, script);
}

// The claims of a reproduction on Slurm, submitted (reproduce --launcher slurm) or collected
// (--collect): exact claims here; claims that train in one process as one job array (a task
// each); sweep claims' sweeps as job arrays. Returns 0 when every claim has its result (or, on
// submission, was submitted), 75 while some are pending at --collect, 1 when one failed.
int on_slurm(const std::vector<const Claim*>& chosen, const std::string& out, const Settings& how,
             const SlurmOptions& slurm, bool collecting) {
  const std::string binary = self_executable();
  nlohmann::json doc = collecting ? read_manifest(out) : new_manifest(chosen, how, slurm);
  std::map<std::string, ClaimResult> done = results_by_id(out);
  Tally tally;
  std::vector<std::vector<std::string>> commands;
  std::vector<std::string> in_process;
  for (const Claim* c : chosen) {
    if (c->exact || sweeps(*c)) {
      if (c->exact && done.count(c->id)) continue;
      const Outcome o = run_claim(*c, out, binary, how, c->exact ? nullptr : &slurm);
      print_outcome(*c, o);
      tally.pending += !o.pending.empty();
      tally.failed += o.failed;
    } else if (collecting) {  // a task of the claims' array
      collect_task(*c, doc, out, done, tally);
    } else {
      commands.push_back(claim_command(binary, *c, out, how));
      in_process.push_back(c->id);
    }
  }
  if (!commands.empty()) {
    submit_claims(commands, in_process, out, how, slurm, doc);
    tally.pending += int(in_process.size());
  }
  write_file_atomically((std::filesystem::path(out) / "reproduce.json").string(), doc.dump(2) + "\n");
  write_report(out, load_results(out));
  if (tally.pending) {
    fmt::print("report so far: {}/REPORT.md; {} claim(s) pending on Slurm: collect with normtool reproduce "
               "--collect {}\n", out, tally.pending, out);
    return collecting ? kPending : 0;
  }
  fmt::print("report: {}/REPORT.md\n", out);
  return tally.failed ? 1 : 0;
}

// --out: a directory that is new, empty or a reproduction's (its REPORT.md is normtool's, or
// there is none); anything else is refused before a claim runs, as `run` refuses a used --out.
void check_report_dir(const std::string& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(out, ec)) return;
  if (!fs::is_directory(out, ec))
    throw UsageError(fmt::format("--out {}: exists and is not a directory (choose another --out)", out));
  const fs::path report = fs::path(out) / "REPORT.md";
  if (!fs::exists(fs::symlink_status(report, ec))) return;
  const bool ours = fs::is_regular_file(fs::symlink_status(report, ec)) &&
                    read_file(report.string(), kMaxLogBytes).rfind("# normtool:", 0) == 0;
  if (!ours)
    throw UsageError(fmt::format("--out {}: holds a REPORT.md that is not a normtool report; choose another --out "
                                 "(or remove it)", out));
}

// --seeds; empty when not given (each claim's own)
std::vector<int> parse_seeds(const std::optional<std::string>& given) {
  if (!given) return {};
  const std::string& text = *given;
  if (text.empty()) throw UsageError("--seeds: an empty list (expected integers >= 0 such as 1,2,3)");
  std::vector<int> seeds;
  std::stringstream list(text);
  for (std::string v; std::getline(list, v, ',');) {
    std::size_t used = 0;
    int s = -1;
    try {
      s = std::stoi(v, &used);
    } catch (const std::exception&) {
    }
    if (v.empty() || used != v.size() || s < 0)
      throw UsageError(fmt::format("--seeds \"{}\": expected integers >= 0, got \"{}\"", text, v));
    if (std::find(seeds.begin(), seeds.end(), s) != seeds.end())  // a repeated seed is no new evidence
      throw UsageError(fmt::format("--seeds \"{}\": seed {} is given twice", text, s));
    seeds.push_back(s);
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

// --collect DIR: the report of a reproduce --launcher slurm there, with the claims and settings of its manifest.
int collect(const std::string& dir) {
  const nlohmann::json doc = read_manifest(dir);
  if (!doc.is_object() || doc.value("launcher", "") != "slurm")
    throw UsageError(fmt::format("--collect {}: no reproduce.json of a reproduce --launcher slurm there", dir));
  std::vector<const Claim*> claims;
  for (const std::string& id : doc.value("ids", std::vector<std::string>{}))
    if (const Claim* c = find_claim(id)) claims.push_back(c);
  // a manifest from before --ablations: that binary ran them
  const Settings how{doc.value("quick", false), doc.value("ablations", true), doc.value("jobs", 2),
                     doc.value("seeds", std::vector<int>{1, 2, 3})};
  const SlurmOptions slurm = slurm_options_of(doc.value("slurm", nlohmann::json::object()));
  check_slurm_options(slurm);  // before any claim runs
  return on_slurm(claims, dir, how, slurm, /*collecting=*/true);
}

// The claims run here, one after another, then the report.
int run_here(const std::vector<const Claim*>& chosen, const std::string& out, const Settings& how) {
  int failed = 0;
  WorkProgress progress("reproduce", "claims", int(chosen.size()));
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    progress.update(int(i), "running " + std::string(chosen[i]->id));
    const Outcome r = run_claim(*chosen[i], out, self_executable(), how, nullptr);
    progress.clear();
    print_outcome(*chosen[i], r);
    failed += r.failed;
  }
  progress.update(int(chosen.size()));
  progress.finish();
  write_report(out, load_results(out));  // this run's claims and any earlier ones in the directory
  fmt::print("report: {}/REPORT.md\n", out);
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
  const std::vector<const Claim*> chosen = choose_claims(o.ids);
  if (!o.collect.empty()) return collect(o.collect);
  const Settings how{o.quick, o.ablations, o.jobs, parse_seeds(o.seeds)};
  const std::string out = o.out.empty() ? "runs/reproduce-" + timestamp() : o.out;
  check_report_dir(out);
  if (o.launcher == "slurm") {  // the site options and paths go into #SBATCH lines: checked before any claim runs
    check_slurm_options(o.slurm);
    check_slurm_path("--out", out);
  }
  make_output_directory(out, "--out " + out);
  if (o.launcher == "slurm") return on_slurm(chosen, out, how, o.slurm, /*collecting=*/false);
  return run_here(chosen, out, how);
}

}  // namespace

void setup_reproduce(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ReproduceOptions>();
  CLI::App* sub = app.add_subcommand("reproduce", "Rerun the claims' experiments and write a report with verdicts");
  sub->add_option("ids", o->ids,
                  "claims to run (E1 ... C21), or a group: core (the seed papers' claims, E1-E8, C1-C13, P1, "
                  "within the local budget) or extra (C14 on); default all");
  sub->add_flag("--quick", o->quick, "shrunken settings (minutes, not tens of minutes)");
  sub->add_flag("--ablations", o->ablations,
                "also the settings kept beside the papers' as ablations (the decoder-only transformer, other inits, "
                "the MLP); every verdict is decided without them");
  sub->add_option("-j,--jobs", o->jobs, "parallel training runs")->capture_default_str()->check(CLI::Range(1, 64));
  sub->add_option("-o,--out", o->out, "report directory (default runs/reproduce-<YYYYmmdd-HHMMSS>)");
  sub->add_option("--seeds", o->seeds,
                  "the training claims' seeds, at least 3, looked at in this order (default: each claim's own list, "
                  "in quick mode its first look)");
  sub->add_flag("--list", o->list, "list the claims and where their experiments are, and exit");
  sub->add_flag("--sync-readmes", o->sync_readmes,
                "rewrite the generated header of every experiments/*/README.md and the generated part of "
                "docs/claims.md from the claim registry, and exit");
  sub->add_option("--launcher", o->launcher,
                  "local: here; slurm: the training claims' sweeps as Slurm job arrays, the claims that train in "
                  "one process as one array (then --collect)")
      ->capture_default_str()->check(CLI::IsMember({"local", "slurm"}));
  sub->add_option("--collect", o->collect,
                  "assemble the report of a reproduce --launcher slurm in this directory (submitting what is not yet); "
                  "exit 75 while claims are pending");
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
