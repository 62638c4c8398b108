// normtool: wires the subcommands (src/cli/, one file each) and maps errors to exit codes, here
// and nowhere else: 0 success; 1 a run that failed or diverged, or an error of normtool's own;
// 2 bad input (usage, config, data: an InputError or a command-line parse error).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <unistd.h>

#include <cstdlib>
#include <exception>

#include "cli/invariance.h"
#include "cli/reproduce.h"
#include "cli/run.h"
#include "cli/sweep.h"
#include "core/errors.h"

int main(int argc, char** argv) {
  // A training step is hundreds of short parallel regions: OpenMP threads that fall asleep between
  // them wake too late (two threads measured 1.3-1.8x one thread from run to run; spinning, 1.8x
  // every time). libgomp reads OMP_WAIT_POLICY when it loads, so unless the user chose a policy,
  // normtool sets it and executes itself once more. With one math thread nothing spins.
  if (!std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "active", 1);
    execv("/proc/self/exe", argv);  // on failure, go on with the default policy
  }
  CLI::App app{"normtool: reproduce the claims about normalization layers, on a CPU"};
  app.set_version_flag("--version", std::string("normtool ") + NORMTOOL_VERSION);
  app.require_subcommand(1);
  int exit_code = 0;
  nt::cli::setup_run(app, exit_code);
  nt::cli::setup_invariance(app, exit_code);
  nt::cli::setup_sweep(app, exit_code);
  nt::cli::setup_reproduce(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const nt::InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return exit_code;
}
