// The quick reproductions that several tests read, each made once: every claim as a user runs them
// first (`reproduce --quick --ablations --jobs 2`), and at one job without their ablations C7 and
// C10, which train inside one process, and C9, whose ablations are sweeps of their own. Under CTest
// the QuickReportSetup.* tests make them, one process each, into the folder NORMTOOL_QUICK_REPORTS
// names, and the QuickReport.* tests that read them wait for them (a CTest fixture,
// tests/CMakeLists.txt); a test program run by hand makes its own, once.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include "helpers.h"

namespace nt::test {

struct QuickReproduction {
  const char* name;  // its folder
  const char* args;  // normtool's arguments but --out
};
inline constexpr QuickReproduction kQuickAll{"all", "reproduce --quick --ablations --jobs 2"};
inline constexpr QuickReproduction kQuickOneJob{"one-job", "reproduce C7 C9 C10 --quick --jobs 1"};

// The folder CTest names for the reproductions, or null in a test program run by hand.
inline const char* ctest_quick_reports() { return std::getenv("NORMTOOL_QUICK_REPORTS"); }

inline std::filesystem::path quick_report_path(const QuickReproduction& q) {
  static const TempDir own;  // a test program run by hand: its own folder
  const char* under_ctest = ctest_quick_reports();
  return (under_ctest ? std::filesystem::path(under_ctest) : own.path) / q.name;
}

// Runs the reproduction into its folder, anew; by hand, once per process.
inline CommandResult make_quick_report(const QuickReproduction& q) {
  static std::map<std::string, CommandResult> made;
  if (!ctest_quick_reports() && made.count(q.name)) return made.at(q.name);
  const std::filesystem::path out = quick_report_path(q);
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(out.parent_path());
  return made[q.name] = run_normtool(std::string(q.args) + " --out " + out.string());
}

// The reproduction's folder, for a test that reads it (made first when run by hand).
inline std::filesystem::path quick_report(const QuickReproduction& q) {
  if (!ctest_quick_reports()) {
    const CommandResult r = make_quick_report(q);
    if (r.exit_code != 0) throw std::runtime_error("normtool " + std::string(q.args) + " failed:\n" + r.output);
  }
  return quick_report_path(q);
}

}  // namespace nt::test
