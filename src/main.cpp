// normtool: wires the subcommands (src/cli/, one file each) and maps errors to exit codes, here
// and nowhere else: 0 success; 1 a run that failed or diverged, or an error of normtool's own;
// 2 bad input (usage, config, data: an InputError or a command-line parse error).
// What a command prints on stdout is its product: when it cannot all be written (a full disk, a
// closed pipe), exit 1 (a command that already failed keeps its code). `run` is the exception:
// its run directory is the record, so its console line is advisory (cli/run.cpp).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <exception>
#include <new>
#include <sstream>
#include <string>

#include "cli/compare.h"
#include "cli/config.h"
#include "cli/invariance.h"
#include "cli/presets.h"
#include "cli/reproduce.h"
#include "cli/run.h"
#include "cli/runs.h"
#include "cli/sweep.h"
#include "core/errors.h"
#include "core/threads.h"
#include "normtool_commit.h"  // NORMTOOL_COMMIT, written at build time (cmake/commit.cmake)
#include "io/console.h"

namespace {

// Whether everything printed to stdout was written; says so on stderr when not.
bool stdout_written() {
  std::cout.flush();
  const bool ok = std::fflush(stdout) == 0 && !std::ferror(stdout) && !std::cout.fail();
  if (!ok) nt::eprint("error: cannot write to standard output: {}\n", std::strerror(errno ? errno : EIO));
  return ok;
}

int finish(int code) { return stdout_written() || code != 0 ? code : 1; }

// CLI11's output for a parse error (or --help), its exit code. The message may quote an argument:
// that through printable, CLI11's own lines ("Run with --help ...") kept; a message not found in
// its output escapes all of it.
int print_parse_error(CLI::App& app, const CLI::ParseError& e) {
  std::ostringstream out, err;
  const int code = app.exit(e, out, err);
  fmt::print("{}", out.str());
  std::string text = err.str();
  if (const std::size_t at = text.find(e.what()); at != std::string::npos)
    text.replace(at, std::string_view(e.what()).size(), nt::printable(e.what()));
  else if (!text.empty())
    text = nt::printable(text) + "\n";
  nt::print_err(text);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  nt::open_closed_standard_streams();       // before any other file can take fd 0, 1 or 2
  nt::ignore_pipe_and_file_size_signals();  // a closed pipe or ulimit -f: a failed write, not a killed process
  std::signal(SIGCHLD, SIG_DFL);            // a parent that ignored it would take our children's exits from us
  // OpenMP's wait policy and OpenBLAS's kernels are read when the libraries load (core/threads.h):
  // when they need setting, run again with them; on failure, go on as is.
  if (nt::tune_math_environment()) execv("/proc/self/exe", argv);
  CLI::App app{"normtool: reproduce the claims about normalization layers, on a CPU"};
  app.set_version_flag("--version", std::string("normtool ") + NORMTOOL_VERSION + " (commit " + NORMTOOL_COMMIT + ")");
  app.require_subcommand(1);
  int exit_code = 0;
  nt::cli::setup_run(app, exit_code);
  nt::cli::setup_invariance(app, exit_code);
  nt::cli::setup_sweep(app, exit_code);
  nt::cli::setup_reproduce(app, exit_code);
  nt::cli::setup_presets(app, exit_code);
  nt::cli::setup_config(app, exit_code);
  nt::cli::setup_compare(app, exit_code);
  nt::cli::setup_runs(app, exit_code);
  // CLI11 says only "A subcommand is required" for a word it does not know
  std::string known;
  bool is_known = false;
  for (const CLI::App* sub : app.get_subcommands({})) {
    known += (known.empty() ? "" : ", ") + sub->get_name();
    is_known |= argc > 1 && sub->get_name() == argv[1];
  }
  if (argc > 1 && argv[1][0] != '-' && !is_known) {
    nt::eprint("error: unknown subcommand \"{}\" (expected one of: {}; see normtool --help)\n", nt::printable(argv[1]),
               known);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return finish(print_parse_error(app, e) == 0 ? 0 : 2);
  } catch (const nt::InputError& e) {  // a message may quote a user's bytes: shown, never sent to the terminal
    nt::eprint("error: {}\n", nt::printable_message(e.what()));
    return finish(2);
  } catch (const nt::TryAgainError& e) {
    nt::eprint("error: {} (try again later)\n", nt::printable(e.what()));
    return finish(75);
  } catch (const std::bad_alloc&) {
    nt::eprint(
        "error: out of memory (the estimate of what the config needs was too low, or other "
        "processes took the memory)\n");
    return finish(1);
  } catch (const std::exception& e) {
    nt::eprint("error: {}\n", nt::printable(e.what()));
    return finish(1);
  }
  return finish(exit_code);
}
