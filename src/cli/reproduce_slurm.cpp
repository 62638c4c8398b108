// `normtool reproduce --launcher slurm` and `--collect`: the claims as Slurm job arrays, and
// their report assembled once they ran.
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/reproduce_claims.h"
#include "core/errors.h"
#include "io/files.h"
#include "io/json_file.h"
#include "io/paths.h"
#include "report/report.h"
#include "sweep/slurm.h"

namespace nt::cli {

namespace {

constexpr int kPending = 75;  // EX_TEMPFAIL: claims still running on Slurm; collect again later

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

}  // namespace

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

}  // namespace nt::cli
