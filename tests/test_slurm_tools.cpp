// Slurm's commands as normtool runs them, from stand-ins first on PATH (no Slurm needed): what
// squeue and sbatch print is parsed as Slurm documents it and nothing else; a command that hangs
// or prints without end is stopped; a machine without squeue cannot tell a task's state, and says
// so, rather than taking the task for ended. Site options that would break the script are
// refused before anything runs.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include "core/errors.h"
#include "helpers.h"
#include "sweep/command.h"
#include "sweep/slurm.h"

namespace nt::test {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

// A directory of stand-in tools put first on PATH (`only`: PATH is that directory alone) for the
// test's lifetime.
struct StandIns {
  TempDir d;
  std::string path = std::getenv("PATH");
  explicit StandIns(bool only = false) {
    fs::create_directories(d.path);
    setenv("PATH", only ? d.path.c_str() : (d.path.string() + ":" + path).c_str(), 1);
  }
  ~StandIns() { setenv("PATH", path.c_str(), 1); }
  StandIns(const StandIns&) = delete;
  StandIns& operator=(const StandIns&) = delete;
  void tool(const std::string& name, const std::string& body) {
    const std::string file = (d.path / name).string();
    std::ofstream(file) << "#!/bin/sh\n" << body << "\n";
    chmod(file.c_str(), 0755);
  }
  std::string file(const std::string& name) const { return (d.path / name).string(); }
};

std::string what_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const TryAgainError& e) {
    return std::string("TryAgainError: ") + e.what();
  } catch (const InputError& e) {
    return std::string("InputError: ") + e.what();
  } catch (const std::exception& e) {
    return std::string("other: ") + e.what();
  }
  return "no error";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Whether process `pid` exists and is not a zombie.
bool alive(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

// squeue's answers: the states of the tasks it lists; "Invalid job id" (the job has ended): none;
// a controller that does not answer is asked again, and if it never does, an error: never "every
// task ended", which would report running tasks as failed.
TEST(SlurmTools, TaskStatesComeFromSqueueAndAControllerThatDoesNotAnswerIsAnError) {
  StandIns s;
  const std::map<int, std::string> running{{0, "RUNNING"}, {2, "PENDING"}};
  s.tool("squeue", "echo '7_0 RUNNING'; echo '7_2 PENDING'");
  EXPECT_EQ(slurm_task_states("7").states, running);
  EXPECT_TRUE(slurm_task_states("7").known);
  s.tool("squeue", "echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1");
  EXPECT_TRUE(slurm_task_states("7").states.empty());
  const std::string count = s.file("count");  // fails twice, then answers
  s.tool("squeue", "n=$(cat " + count + " 2>/dev/null || echo 0); echo $((n + 1)) > " + count +
                       "; if [ $n -lt 2 ]; then " +
                       "echo 'slurm_load_jobs error: Socket timed out on send/recv operation' >&2; exit 1; fi; " +
                       "echo '7_0 RUNNING'; echo '7_2 PENDING'");
  EXPECT_EQ(slurm_task_states("7").states, running);
  s.tool("squeue", "echo 'slurm_load_jobs error: Unable to contact slurm controller (connect failure)' >&2; exit 1");
  const std::string e = what_of([] { slurm_task_states("7"); });
  EXPECT_TRUE(has(e, "TryAgainError") && has(e, "Unable to contact slurm controller")) << e;
}

// A squeue or sbatch that hangs is stopped at its time-out with its process group (here a shell
// and the sleep it waits on), as one that closes its output and goes on: exit 75, naming the
// command and the time-out. Nothing is asked again after a time-out.
TEST(SlurmTools, ACommandThatHangsIsKilledAtItsTimeOut) {
  StandIns s;
  const std::string pid = s.file("pid");
  s.tool("squeue", "sleep 1000 & echo $! > " + pid + "; wait");
  std::string e = what_of([] { slurm_task_states("7", seconds(1)); });
  EXPECT_TRUE(has(e, "TryAgainError: squeue") && has(e, "did not finish within 1 s")) << e;
  std::ifstream in(pid);
  std::string sleeper;
  in >> sleeper;
  ASSERT_FALSE(sleeper.empty());
  for (int i = 0; i < 1000 && alive(sleeper); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(alive(sleeper)) << "the stand-in's sleep " << sleeper << " was left running";

  s.tool("squeue", "exec >/dev/null 2>&1; sleep 1000");  // its output closed, still running
  e = what_of([] { slurm_task_states("7", seconds(1)); });
  EXPECT_TRUE(has(e, "TryAgainError: squeue") && has(e, "did not finish within 1 s")) << e;

  s.tool("sbatch", "sleep 1000");
  e = what_of([] { submit_sbatch("x.sbatch", seconds(1)); });
  EXPECT_TRUE(has(e, "TryAgainError: sbatch --parsable x.sbatch did not finish within 1 s") &&
              has(e, "it may have submitted the job"))
      << e;
}

// What a command prints is read up to a bound; past it the command is stopped: a squeue printing
// without end (on stdout or stderr) ends in exit 75, not in an exhausted memory.
TEST(SlurmTools, ACommandThatPrintsWithoutEndIsStoppedAtTheBound) {
  StandIns s;
  for (const char* body : {"yes '7_0 RUNNING'", "yes 'error' >&2"}) {
    s.tool("squeue", body);
    const std::string e = what_of([] { slurm_task_states("7"); });
    EXPECT_TRUE(has(e, "TryAgainError: squeue") && has(e, "printed more than 1048576 bytes")) << body << ": " << e;
  }
  const auto eight = run_command({"sh", "-c", "printf 1234; printf 5678 >&2"}, seconds(5), 8);
  ASSERT_TRUE(eight);
  EXPECT_EQ(eight->out, "1234");
  EXPECT_EQ(eight->err, "5678");
  EXPECT_EQ(eight->status, 0);
  const std::string e = what_of([] { run_command({"sh", "-c", "printf 123456789"}, seconds(5), 8); });
  EXPECT_TRUE(has(e, "TryAgainError") && has(e, "printed more than 8 bytes")) << e;
  EXPECT_EQ(run_command({"sh", "-c", "exit 3"}, seconds(5), 8)->status, 3);
}

// Without squeue on PATH the state of a task cannot be told: said so, never "no task known".
TEST(SlurmTools, WithoutSqueueTheTasksCannotBeTold) {
  StandIns s(/*only=*/true);
  const SlurmTasks tasks = slurm_task_states("7");
  EXPECT_FALSE(tasks.known);
  EXPECT_TRUE(tasks.states.empty());
  EXPECT_TRUE(slurm_task_states("").known);  // no job submitted: nothing to tell
  EXPECT_FALSE(run_command({"squeue"}, seconds(1), 8).has_value());
}

// sbatch --parsable prints "<id>" or "<id>;<cluster>" (warnings on stderr): both are taken, and
// squeue is then asked on that cluster, each argument a word of its own (no shell). Anything else
// is refused with what sbatch printed.
TEST(SlurmTools, SbatchAnswersAreTakenAsSlurmDocumentsThem) {
  StandIns s;
  s.tool("sbatch", "echo 123");
  EXPECT_EQ(submit_sbatch("x.sbatch"), "123");
  s.tool("sbatch", "echo '123;cluster-2'");
  EXPECT_EQ(submit_sbatch("x.sbatch"), "123;cluster-2");
  s.tool("sbatch", "echo 'sbatch: warning: can not honor --cpus-per-task' >&2; echo 124");
  EXPECT_EQ(submit_sbatch("x.sbatch"), "124");
  for (const char* printed : {"12a", "", "123;", "99999999999", "123;a b", "Submitted batch job 5"}) {
    s.tool("sbatch", std::string("echo '") + printed + "'");
    const std::string e = what_of([] { submit_sbatch("x.sbatch"); });
    EXPECT_TRUE(has(e, "other: sbatch x.sbatch printed") && has(e, "not a job id")) << printed << ": " << e;
  }
  s.tool("sbatch", "echo 'sbatch: error: invalid partition specified: bad' >&2; exit 1");
  std::string e = what_of([] { submit_sbatch("x.sbatch"); });
  EXPECT_TRUE(has(e, "other: sbatch x.sbatch failed (exit 1): sbatch: error: invalid partition")) << e;

  const std::string args = s.file("args");
  s.tool("squeue", "printf '%s\\n' \"$@\" > " + args + "; echo 'CLUSTER: cluster-2'; echo '123_4 PENDING'");
  EXPECT_EQ(slurm_task_states("123;cluster-2").states, (std::map<int, std::string>{{4, "PENDING"}}));
  std::ifstream in(args);
  std::vector<std::string> argv;
  for (std::string a; std::getline(in, a);) argv.push_back(a);
  EXPECT_EQ(argv, (std::vector<std::string>{"--noheader", "--array", "--format=%i %T", "--jobs=123",
                                            "--clusters=cluster-2"}));
  for (const char* recorded : {"12;3;x", "abc", "1 2", "-1"}) {
    e = what_of([&] { slurm_task_states(recorded); });
    EXPECT_TRUE(has(e, "InputError: Slurm job")) << recorded << ": " << e;
  }
  StandIns none(/*only=*/true);
  e = what_of([] { submit_sbatch("x.sbatch"); });
  EXPECT_TRUE(has(e, "other: cannot submit x.sbatch: sbatch is not on this machine's PATH")) << e;
}

// A task index that is no number, or past an int (11 digits), or a line that is not "<job>_<task>
// <state>", is an answer that cannot be read (exit 75): never a task taken for ended.
TEST(SlurmTools, ATaskIndexThatIsNoNumberIsAnAnswerThatCannotBeRead) {
  StandIns s;
  for (const char* line :
       {"7_99999999999 RUNNING", "7_ RUNNING", "7_-1 RUNNING", "7_[1-3%2] PENDING", "7_1 RUNNING x", "7_1"}) {
    s.tool("squeue", std::string("echo '7_0 RUNNING'; echo '") + line + "'");
    const std::string e = what_of([] { slurm_task_states("7"); });
    EXPECT_TRUE(has(e, "TryAgainError: squeue printed \"" + std::string(line) + "\" for Slurm job 7"))
        << line << ": " << e;
  }
  s.tool("squeue", "echo '7 RUNNING'; echo '7_1 RUNNING'");  // the array's own line (no task) is not a task
  EXPECT_EQ(slurm_task_states("7").states, (std::map<int, std::string>{{1, "RUNNING"}}));
}

// A sweep on Slurm followed from a machine without squeue: a job without a result is "unknown",
// not failed; --aggregate waits (exit 75) and writes nothing; a second submission is refused.
TEST(SlurmTools, ASweepFollowedWithoutSqueueIsNotReportedFailed) {
  TempDir d;
  const std::string grid =
      "sweep --config " + source_dir() + "/configs/smoke/lm-none-pre.json seed=1,2 --launcher print --out " + (d / "s");
  ASSERT_EQ(run_normtool(grid).exit_code, 0);
  nlohmann::json doc = read_json(d / "s/sweep.json");
  doc["slurm_job_id"] = "123";  // as if submitted
  std::ofstream(d / "s/sweep.json") << doc.dump(2);
  fs::create_directories(d / "bin");
  const std::string no_squeue = "PATH=" + (d / "bin") + " " + binary() + " ";
  const CommandResult status = run_shell(no_squeue + "sweep --status " + (d / "s"));
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_TRUE(has(status.output, "2 unknown\n") && has(status.output, "squeue is not on this machine's PATH"))
      << status.output;
  const CommandResult aggregate = run_shell(no_squeue + "sweep --aggregate " + (d / "s"));
  EXPECT_EQ(aggregate.exit_code, 75) << aggregate.output;
  EXPECT_EQ(read_json(d / "s/sweep.json"), doc);
  EXPECT_FALSE(fs::exists(d / "s/aggregate.md"));
  const CommandResult again =
      run_shell(no_squeue + grid.substr(0, grid.find(" --launcher")) + " --launcher print --out " + (d / "s"));
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_TRUE(has(again.output, "squeue is not on this machine's PATH, so whether Slurm job 123")) << again.output;
}

// reproduce --collect without squeue: a claim whose array task has no result yet is pending
// (exit 75), not "ended without a result".
TEST(SlurmTools, ACollectionWithoutSqueueCountsTheClaimPending) {
  TempDir d;
  fs::create_directories(d / "r");
  std::ofstream(d / "r/reproduce.json") << nlohmann::json{
      {"launcher", "slurm"},
      {"ids", {"C11"}},
      {"claims_job_id", "123"},
      {"claims_tasks", {"C11"}}}.dump();
  fs::create_directories(d / "bin");
  const CommandResult r = run_shell("PATH=" + (d / "bin") + " " + binary() + " reproduce --collect " + (d / "r"));
  EXPECT_EQ(r.exit_code, 75) << r.output;
  EXPECT_TRUE(has(r.output, "C11 PENDING       task 0 of Slurm job 123: squeue is not on this machine's PATH"))
      << r.output;
  EXPECT_FALSE(has(r.output, "FAILED")) << r.output;
}

// A site option that would end sbatch's directives is refused (exit 2) before any claim runs, on
// submission and on --collect (the options kept in reproduce.json); so it is for a sweep.
TEST(SlurmTools, ABadSiteOptionIsRefusedBeforeAnythingRuns) {
  TempDir d;
  for (const char* option : {"--partition", "--sbatch-arg"}) {
    const CommandResult r = run_normtool("reproduce E4 C2 --quick --launcher slurm " + std::string(option) +
                                         " \"$(printf 'bad\\nx')\" --out " + (d / "r"));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_TRUE(has(r.output, std::string(option) + " \"bad\\x0ax\": holds a newline")) << r.output;
    EXPECT_FALSE(fs::exists(d / "r")) << "a claim ran";
  }
  fs::create_directories(d / "c");
  std::ofstream(d / "c/reproduce.json") << nlohmann::json{
      {"launcher", "slurm"},
      {"ids", {"E4"}},
      {"slurm", {{"partition", "a\nb"}}}}.dump();
  const CommandResult collect = run_normtool("reproduce --collect " + (d / "c"));
  EXPECT_EQ(collect.exit_code, 2) << collect.output;
  EXPECT_EQ(std::distance(fs::directory_iterator(d / "c"), fs::directory_iterator()), 1) << "a claim ran";
  const CommandResult sweep =
      run_normtool("sweep --config " + source_dir() + "/configs/smoke/lm-none-pre.json seed=1,2 " +
                   "--launcher slurm --partition \"$(printf 'bad\\nx')\" --out " + (d / "s"));
  EXPECT_EQ(sweep.exit_code, 2) << sweep.output;
  EXPECT_FALSE(fs::exists(d / "s"));
}

}  // namespace
}  // namespace nt::test
