// `normtool reproduce`: run each claim's experiment and write the report (REPORT.md,
// verdicts.json, the plots and the runs). Claims run one after another, so a timing claim (C3)
// never runs beside another experiment. Exit status 0 when every claim ran, whatever its
// verdict; 1 when an experiment failed to run; 2 on bad usage.
#include "cli/reproduce.h"

#include <fmt/core.h>

#include <chrono>
#include <filesystem>

#include "claims/claim.h"
#include "claims/report.h"
#include "config/config.h"
#include "core/errors.h"
#include "io/paths.h"
#include "sweep/sweep.h"

namespace nt::cli {

namespace {

struct ReproduceOptions {
  std::vector<std::string> ids;
  bool quick = false;
  int jobs = 2;
  std::string out;
  std::string seeds = "1,2,3";
  bool sync_readmes = false;
  bool list = false;
};

std::vector<int> parse_seeds(const std::string& text) {
  std::vector<int> seeds;
  for (const std::string& v : parse_axis("seed=" + text).values) {
    std::size_t used = 0;
    int s = -1;
    try {
      s = std::stoi(v, &used);
    } catch (const std::exception&) {
    }
    if (used != v.size() || s < 0) throw UsageError(fmt::format("--seeds: expected integers >= 0, got \"{}\"", v));
    seeds.push_back(s);
  }
  if (seeds.size() < 3) throw UsageError(fmt::format("--seeds: a verdict needs at least 3 seeds, got \"{}\"", text));
  return seeds;
}

int run(const ReproduceOptions& o) {
  if (o.list) {
    fmt::print("claims (setups in {}/experiments):\n", data_dir());
    for (const Claim& c : all_claims()) fmt::print("  {:<4} {}\n", c.id, c.title);
    return 0;
  }
  if (o.sync_readmes) {
    const std::string dir = data_dir() + "/experiments";
    for (const std::string& f : sync_readmes(dir)) fmt::print("updated {}\n", f);
    return 0;
  }
  std::vector<const Claim*> chosen;
  for (const auto& id : o.ids) {
    const Claim* c = find_claim(id);
    if (!c) {
      std::vector<const char*> known;
      for (const Claim& k : all_claims()) known.push_back(k.id);
      throw UsageError(fmt::format("unknown claim \"{}\" (expected {})", id, join_names(known)));
    }
    chosen.push_back(c);
  }
  if (o.ids.empty())
    for (const Claim& c : all_claims()) chosen.push_back(&c);
  const std::vector<int> seeds = parse_seeds(o.seeds);
  const std::string out = o.out.empty() ? "runs/reproduce-" + timestamp() : o.out;
  int failed = 0;
  for (const Claim* c : chosen) {
    const auto t0 = std::chrono::steady_clock::now();
    ClaimContext ctx{(std::filesystem::path(out) / (std::string(c->id) + "-" + c->slug)).string(), self_executable(),
                     o.quick, o.jobs, seeds};
    std::filesystem::create_directories(ctx.out);
    ClaimResult r;
    try {
      r = c->run(ctx);
    } catch (const std::exception& e) {
      r = ClaimResult{};
      r.ran = false;
      r.measured = fmt::format("the experiment failed to run: {}", e.what());
      ++failed;
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    save_result(ctx.out, r);
    fmt::print("{:<3} {:<13} {} ({:.1f} s)\n", c->id, to_string(r.verdict), r.measured, r.seconds);
    std::fflush(stdout);
  }
  write_report(out, load_results(out));  // this run's claims and any earlier ones in the directory
  fmt::print("report: {}/REPORT.md\n", out);
  return failed ? 1 : 0;
}

}  // namespace

void setup_reproduce(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ReproduceOptions>();
  CLI::App* sub = app.add_subcommand("reproduce", "Rerun the claims' experiments and write a report with verdicts");
  sub->add_option("ids", o->ids, "claims to run (E1 ... C11); default all");
  sub->add_flag("--quick", o->quick, "shrunken settings (minutes, not tens of minutes)");
  sub->add_option("-j,--jobs", o->jobs, "parallel training runs")->capture_default_str()->check(CLI::Range(1, 64));
  sub->add_option("-o,--out", o->out, "report directory (default runs/reproduce-<YYYYmmdd-HHMMSS>)");
  sub->add_option("--seeds", o->seeds, "the training claims' seeds, at least 3")->capture_default_str();
  sub->add_flag("--list", o->list, "list the claims and where their experiments are, and exit");
  sub->add_flag("--sync-readmes", o->sync_readmes,
                "rewrite the generated header of every experiments/*/README.md from the claim registry, and exit");
  sub->callback([o, &exit_code] { exit_code = run(*o); });
}

}  // namespace nt::cli
