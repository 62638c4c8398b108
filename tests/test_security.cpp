// Hostile input, second pass (issue 21), part one: what reaches a shell, and the standard streams.
//   - the generated sweep.sbatch: site options and the working directory with a newline are
//     refused (exit 2 naming the option); hostile grid values, run by bash with a stub in place of
//     normtool, reach the stub as arguments and execute nothing;
//   - closed or full standard streams: no signal, no log corrupted, stdout failures reported.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "helpers.h"

namespace nt::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// `sweep --launcher print` with these extra arguments; sh syntax (printf makes the newlines).
CommandResult print_sweep(const TempDir& d, const std::string& extra) {
  return run_normtool("sweep --config " + smoke_config() + " seed=1,2 --launcher print --out " + (d / "s") + " " +
                      extra);
}

TEST(Security, SiteOptionsWithANewlineAreRefusedNamingTheOption) {
  for (const std::string option : {"--partition", "--time", "--sbatch-arg"}) {
    TempDir d;
    const CommandResult r = print_sweep(d, option + "=\"$(printf 'gpu\\ntouch " + (d / "pwned") + "')\"");
    EXPECT_EQ(r.exit_code, 2) << option << ": " << r.output;
    EXPECT_NE(r.output.find(option), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("control character"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(d / "s/sweep.sbatch")) << option;
  }
  TempDir d;  // a carriage return or any other control byte as well
  const CommandResult r = print_sweep(d, "--time=\"$(printf '1:00\\r')\"");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST(Security, AWorkingDirectoryWithANewlineIsRefused) {
  TempDir d;
  fs::create_directories(d.path / "a\nb");
  const CommandResult r = run_shell("cd \"$(printf '" + d.str() + "/a\\nb')\" && " + binary() + " sweep --config " +
                                    smoke_config() + " seed=1 --launcher print --out " + (d / "s"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("working directory"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(d / "s/sweep.sbatch"));
}

// Grid values that would run `touch <canary>` if any of them reached the shell unquoted, in the
// script's body or in its comments.
TEST(Security, HostileGridValuesReachTheStubAsArgumentsAndExecuteNothing) {
  TempDir d;
  fs::create_directories(d.path);
  const std::string canary = d / "pwned";
  const std::vector<std::string> values = {"$(touch " + canary + ")",
                                           "`touch " + canary + "`",
                                           "x';touch " + canary + ";'",
                                           "a\ntouch " + canary,
                                           "\"; touch " + canary + "; \"",
                                           "$HOME\\\\${IFS}*",
                                           "x\r\n#SBATCH --wrap=touch " + canary};
  // the grid in a file, as one argument: data.path is not read until a job runs
  std::string grid = "data.path=";
  for (std::size_t i = 0; i < values.size(); ++i) grid += (i ? "," : "") + values[i];
  ASSERT_EQ(grid.find(",,"), std::string::npos);
  { std::ofstream(d / "grid") << grid; }
  const CommandResult r = run_shell("cd " + d.str() + " && " + binary() + " sweep --config " + smoke_config() +
                                    " --set data.dataset=fortunes \"$(cat grid)\" --launcher print --out " + (d / "s"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string script = read_text(d / "s/sweep.sbatch");
  EXPECT_EQ(script.find("touch " + canary + "\n"), std::string::npos) << "a raw line:\n" << script;
  for (unsigned char c : script) EXPECT_TRUE(c == '\n' || (c >= 0x20 && c != 0x7f)) << "a control byte " << int(c);
  // every #SBATCH directive comes before the first line that is neither a directive nor a comment
  bool body = false;
  std::istringstream lines(script);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("#SBATCH", 0) == 0)
      EXPECT_FALSE(body) << "a directive after the body starts: " << line;
    else if (!line.empty() && line[0] != '#')
      body = true;
  }
  // the stub records its arguments, each ended by a NUL, one file per task
  std::ofstream(d / "stub") << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > \"" << d.str()
                            << "/args.$SLURM_ARRAY_TASK_ID\"\n";
  fs::permissions(d / "stub", fs::perms::owner_all);
  std::string stubbed = script;
  const auto at = stubbed.find("\nnormtool=");
  ASSERT_NE(at, std::string::npos) << script;
  stubbed.replace(at + 1, stubbed.find('\n', at + 1) - at - 1, "normtool=" + d / "stub");
  std::ofstream(d / "stubbed.sbatch") << stubbed;
  EXPECT_EQ(run_shell("bash -n " + (d / "stubbed.sbatch")).exit_code, 0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const CommandResult task =
        run_shell("cd / && SLURM_ARRAY_TASK_ID=" + std::to_string(i) + " bash " + (d / "stubbed.sbatch"));
    EXPECT_EQ(task.exit_code, 0) << task.output;
    const std::string args = read_text(d / ("args." + std::to_string(i)));
    std::vector<std::string> argv;
    for (std::size_t p = 0, q; (q = args.find('\0', p)) != std::string::npos; p = q + 1)
      argv.push_back(args.substr(p, q - p));
    const std::vector<std::string> expected = {"run",
                                               "--config",
                                               smoke_config(),
                                               "train.threads=1",  // the fixed overrides, then the axes
                                               "data.dataset=fortunes",
                                               "--set",
                                               "data.path=" + values[i],
                                               "--out",
                                               d / ("s/" + std::to_string(i))};
    EXPECT_EQ(argv, expected) << "task " << i;
  }
  EXPECT_FALSE(fs::exists(canary)) << "a grid value ran as a command";
}

TEST(Security, AHealthyRunWithAnUnwritableStderrCompletes) {
  TempDir d;
  const CommandResult r =
      run_shell(binary() + " run" + four_step_run() + " --out " + (d / "r") + " 2>/dev/full; echo \"exit=$?\"");
  EXPECT_NE(r.output.find("exit=0"), std::string::npos) << r.output;  // was 134 (SIGABRT), status failed
  EXPECT_EQ(read_json(d / "r/summary.json").value("status", ""), "completed");
}

TEST(Security, ClosedStandardStreamsLeaveTheLogsClean) {
  for (const char* redirect : {">&-", "2>&-", ">&- 2>&-", "<&- >&- 2>&-"}) {
    TempDir d;
    const CommandResult r =
        run_shell(binary() + " run" + four_step_run() + " --out " + (d / "r") + " " + redirect + "; echo \"exit=$?\"");
    EXPECT_NE(r.output.find("exit=0"), std::string::npos) << redirect << ": " << r.output;
    for (const char* log : {"metrics.jsonl", "layers.jsonl"}) {
      std::ifstream in(d / ("r/" + std::string(log)));
      for (std::string line; std::getline(in, line);)
        EXPECT_TRUE(json::accept(line)) << redirect << ": " << log << " holds a line that is not JSON: " << line;
    }
    EXPECT_EQ(read_json(d / "r/summary.json").value("status", ""), "completed") << redirect;
  }
}

TEST(Security, ASweepWithClosedStandardStreamsRunsAndLogsItsJobs) {
  TempDir d;
  const CommandResult r = run_shell(binary() + " sweep" + four_step_run() + " seed=1,2 -j 2 --out " + (d / "s") +
                                    " >&- 2>&-; echo \"exit=$?\"");
  EXPECT_NE(r.output.find("exit=0"), std::string::npos) << r.output;
  ASSERT_TRUE(fs::exists(d / "s/sweep.json"));
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(read_json(d / ("s/" + std::to_string(i) + "/summary.json")).value("status", ""), "completed");
    EXPECT_NE(read_text(d / ("s/logs/" + std::to_string(i) + ".log")).find("step 4/4"), std::string::npos);
  }
}

TEST(Security, StdoutThatCannotBeWrittenIsExit1) {
  for (const std::string& command :
       {"run --print-config" + four_step_run(), std::string("--help"), std::string("run --help"),
        "sweep --dry-run" + four_step_run() + " seed=1,2", std::string("reproduce --list")}) {
    const CommandResult r = run_shell(binary() + " " + command + " 2>&1 >/dev/full; echo \"exit=$?\"");
    EXPECT_NE(r.output.find("exit=1"), std::string::npos) << command << ": " << r.output;
    EXPECT_NE(r.output.find("cannot write to standard output"), std::string::npos) << command << ": " << r.output;
  }
}

}  // namespace
}  // namespace nt::test
