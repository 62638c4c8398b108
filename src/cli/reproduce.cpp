// `normtool reproduce`: run each claim's experiment and write the report (REPORT.md,
// verdicts.json, the plots and the runs). Exit status 0 when every claim ran, whatever its
// verdict; 1 when an experiment failed to run; 2 on bad usage.
#include "cli/reproduce.h"

#include <fmt/core.h>

#include <chrono>
#include <ctime>
#include <filesystem>

#include "claims/claim.h"
#include "claims/report.h"

namespace nt::cli {

namespace {

struct ReproduceOptions {
  std::vector<std::string> ids;
  bool quick = false;
  int jobs = 2;
  std::string out;
};

int run(const ReproduceOptions& o) {
  std::vector<const Claim*> chosen;
  for (const Claim& c : all_claims())
    if (o.ids.empty() || std::find(o.ids.begin(), o.ids.end(), c.id) != o.ids.end()) chosen.push_back(&c);
  for (const auto& id : o.ids)
    if (std::none_of(all_claims().begin(), all_claims().end(), [&](const Claim& c) { return c.id == id; })) {
      std::string known;
      for (const Claim& c : all_claims()) known += (known.empty() ? "" : "|") + c.id;
      fmt::print(stderr, "error: unknown claim \"{}\" (expected {})\n", id, known);
      return 2;
    }
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  const std::string out = o.out.empty() ? fmt::format("runs/reproduce-{}", stamp) : o.out;
  std::error_code ec;
  const std::string binary = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  int failed = 0;
  for (const Claim* c : chosen) {
    const auto t0 = std::chrono::steady_clock::now();
    ClaimContext ctx{(std::filesystem::path(out) / (c->id + "-" + c->slug)).string(), binary, o.quick, o.jobs};
    std::filesystem::create_directories(ctx.out);
    ClaimResult r;
    try {
      r = c->run(ctx);
    } catch (const std::exception& e) {
      r = ClaimResult{c->id, c->slug, ClaimVerdict::inconclusive};
      r.ran = false;
      r.measured = fmt::format("the experiment failed to run: {}", e.what());
      ++failed;
    }
    for (auto& p : r.plots) p = (std::filesystem::path(c->id + "-" + c->slug) / p).string();
    save_result(ctx.out, r);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("{:<3} {:<13} {} ({:.1f} s)\n", r.id, to_string(r.verdict), r.measured, s);
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
  sub->callback([o, &exit_code] { exit_code = run(*o); });
}

}  // namespace nt::cli
