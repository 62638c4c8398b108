#include "sweep/slurm.h"

#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/errors.h"
#include "io/files.h"

namespace nt {

namespace fs = std::filesystem;

namespace {

struct Output {
  int status;
  std::string text;
};

Output capture(const std::string& command) {
  Output o{-1, ""};
  std::FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf;
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), p)) o.text.append(buf.data(), n);
  const int s = pclose(p);
  o.status = WIFEXITED(s) ? WEXITSTATUS(s) : -1;
  return o;
}

std::string absolute(const std::string& path) { return path.empty() ? path : fs::absolute(path).lexically_normal().string(); }

// `text` with its control characters as \xNN, for a message.
std::string escaped(const std::string& text) {
  std::string s;
  for (unsigned char c : text) s += c < 0x20 || c == 0x7f ? fmt::format("\\x{:02x}", int(c)) : std::string(1, char(c));
  return s;
}

// A value that goes into an #SBATCH line: sbatch reads its directives line by line and stops at
// the first line that is not one, so a newline (or any control character) in a value would end
// the directives and put the rest into the script as a command. Refused, naming the option.
void check_directive(const std::string& option, const std::string& value) {
  for (unsigned char c : value)
    if (c < 0x20 || c == 0x7f)
      throw UsageError(fmt::format("{} \"{}\": holds a newline or another control character (byte 0x{:02x}), which "
                                   "would end sbatch's directives and run the rest as a command", option,
                                   escaped(value), int(c)));
}

// A path written into an #SBATCH line: no control character, and (sbatch splits a directive's
// words at blanks and expands %) no blank, quote or %.
void check_directive_path(const std::string& option, const std::string& path) {
  check_directive(option, path);
  if (path.find_first_of(" \t\"'%\\") != std::string::npos)
    throw UsageError(fmt::format("{} \"{}\": a path in a Slurm script may not hold blanks, quotes, backslashes or %",
                                 option, path));
}

// "#SBATCH --chdir=<dir>" when sbatch can read <dir> as one word; the script's `cd` does it
// anyway (a directory with blanks is fine there).
std::string chdir_directive(const std::string& dir) {
  return dir.find_first_of(" \t\"'%\\") == std::string::npos ? fmt::format("#SBATCH --chdir={}\n", dir) : "";
}

}  // namespace

void check_slurm_options(const SlurmOptions& o) {
  check_directive("--partition", o.partition);
  check_directive("--time", o.time);
  for (const std::string& e : o.extra) check_directive("--sbatch-arg", e);
  check_directive("the working directory (--chdir)", absolute(fs::current_path().string()));
}

void check_slurm_path(const std::string& what, const std::string& path) { check_directive_path(what, absolute(path)); }

std::string script_word(const std::string& text) {
  bool control = false;
  for (unsigned char c : text) control |= c < 0x20 || c == 0x7f;
  if (!control) return shell_quote(text);
  std::string q = "$'";  // bash's ANSI-C quoting: the script stays one command a line
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) q += fmt::format("\\x{:02x}", int(c));
    else if (c == '\\' || c == '\'') q += std::string("\\") + char(c);
    else q += char(c);
  }
  return q + "'";
}

std::string shell_quote(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string write_sbatch(const SweepSpec& spec, const std::vector<SweepJob>& jobs, const SlurmOptions& o,
                         const std::string& binary) {
  check_slurm_options(o);
  const std::string out = absolute(spec.out), cwd = absolute(fs::current_path().string());
  check_directive_path("--out", out);
  std::string indices;
  for (const SweepJob& j : jobs) {
    if (!indices.empty()) indices += ',';
    indices += std::to_string(j.index);
  }
  std::string s = "#!/bin/bash\n# written by normtool sweep --launcher slurm: one array task per grid job (sweep.json)\n";
  s += fmt::format("#SBATCH --job-name=normtool-{}\n", fs::path(out).filename().string());
  s += fmt::format("#SBATCH --array={}{}\n", indices, o.max_parallel > 0 ? fmt::format("%{}", o.max_parallel) : "");
  s += fmt::format("#SBATCH --cpus-per-task={}\n", o.cpus_per_task > 0 ? o.cpus_per_task : spec.threads_per_job);
  s += "#SBATCH --ntasks=1\n";
  if (!o.partition.empty()) s += fmt::format("#SBATCH --partition={}\n", o.partition);
  if (!o.time.empty()) s += fmt::format("#SBATCH --time={}\n", o.time);
  s += fmt::format("#SBATCH --output={}/logs/%a.log\n#SBATCH --open-mode=append\n", out);
  s += chdir_directive(cwd);
  s += "#SBATCH --requeue\n";
  s += fmt::format("#SBATCH --signal=B:TERM@{}\n", o.signal_lead_s);
  for (const std::string& e : o.extra) s += "#SBATCH " + e + "\n";
  s += "set -u\n";
  s += fmt::format("cd -- {} || exit 2\n", shell_quote(cwd));
  s += fmt::format("normtool={}\n", script_word(absolute(binary)));
  s += fmt::format("dir={}/\"$SLURM_ARRAY_TASK_ID\"\n", script_word(out));
  s += "case \"$SLURM_ARRAY_TASK_ID\" in\n";
  for (const SweepJob& j : jobs) {
    std::string args;
    if (!spec.config.empty()) args += " --config " + script_word(absolute(spec.config));
    for (const std::string& v : job_overrides(spec, j)) args += " --set " + script_word(v);
    s += fmt::format("  {}) args=({}) ;;\n", j.index, args.substr(1));  // no raw label: every user string is quoted
  }
  s += "  *) echo \"no job $SLURM_ARRAY_TASK_ID in this sweep\" >&2; exit 2 ;;\nesac\n";
  s += R"(echo "task $SLURM_ARRAY_TASK_ID of job ${SLURM_ARRAY_JOB_ID:-?} on $(hostname), restart ${SLURM_RESTART_COUNT:-0}"
if [ -f "$dir/checkpoint.bin" ] && [ -f "$dir/config.json" ]; then
  cmd=("$normtool" run --resume "$dir")
else
  rm -rf "$dir"
  cmd=("$normtool" run "${args[@]}" --out "$dir")
fi
# SIGTERM (the time limit is near, or a preemption): normtool checkpoints and exits 130, and the
# task goes back to the queue to resume from that checkpoint
"${cmd[@]}" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid; code=$?; if [ $code -eq 130 ]; then scontrol requeue "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}" || true; fi; exit $code' TERM
wait $pid
code=$?
exit $code
)";
  const std::string path = (fs::path(out) / "sweep.sbatch").string();
  write_file_atomically(path, s);
  fs::permissions(path, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add);
  return path;
}

void write_command_array(const std::string& path, const std::string& name,
                         const std::vector<std::vector<std::string>>& commands, const SlurmOptions& o, int cpus,
                         const std::string& log_dir) {
  check_slurm_options(o);
  const std::string cwd = absolute(fs::current_path().string()), logs = absolute(log_dir);
  check_directive_path("the log directory", logs);
  check_directive_path("the job name", name);
  std::string s = "#!/bin/bash\n# written by normtool: one array task per command\n";
  s += fmt::format("#SBATCH --job-name=normtool-{}\n#SBATCH --array=0-{}{}\n", name, commands.size() - 1,
                   o.max_parallel > 0 ? fmt::format("%{}", o.max_parallel) : "");
  s += fmt::format("#SBATCH --ntasks=1\n#SBATCH --cpus-per-task={}\n", o.cpus_per_task > 0 ? o.cpus_per_task : cpus);
  if (!o.partition.empty()) s += fmt::format("#SBATCH --partition={}\n", o.partition);
  if (!o.time.empty()) s += fmt::format("#SBATCH --time={}\n", o.time);
  s += fmt::format("#SBATCH --output={}/{}-%a.log\n#SBATCH --open-mode=append\n", logs, name);
  s += chdir_directive(cwd);
  for (const std::string& e : o.extra) s += "#SBATCH " + e + "\n";
  s += fmt::format("cd -- {} || exit 2\n", shell_quote(cwd));
  s += "case \"$SLURM_ARRAY_TASK_ID\" in\n";
  for (std::size_t i = 0; i < commands.size(); ++i) {
    std::string line;
    for (const std::string& a : commands[i]) {
      if (!line.empty()) line += ' ';
      line += script_word(a);
    }
    s += fmt::format("  {}) exec {} ;;\n", i, line);
  }
  s += "esac\nexit 2\n";
  write_file_atomically(path, s);
}

std::string submit_sbatch(const std::string& script) {
  const Output o = capture("sbatch --parsable " + shell_quote(script));
  std::string id = o.text;
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  if (o.status != 0 || id.empty() || id.find_first_not_of("0123456789;") != std::string::npos)
    throw std::runtime_error(fmt::format("sbatch {} failed (exit {}): {}", script, o.status, id.empty() ? "no output" : id));
  return id.substr(0, id.find(';'));  // "id;cluster" on a federation
}

std::map<int, std::string> slurm_task_states(const std::string& job_id) {
  std::map<int, std::string> states;
  if (job_id.empty()) return states;
  const std::string command = "squeue --noheader --array --format='%i %T' --jobs=" + shell_quote(job_id);
  Output o = capture(command);
  // a controller that does not answer for a moment (a busy slurmctld, a restart) is asked again
  for (int attempt = 1; attempt < 4 && o.status != 0 && o.status != 127 &&
                        o.text.find("Invalid job id") == std::string::npos;
       ++attempt) {
    std::this_thread::sleep_for(std::chrono::seconds(attempt));
    o = capture(command);
  }
  if (o.status == 127) return states;  // no squeue: no Slurm here, no task of it known
  if (o.status != 0) {
    // "Invalid job id specified": the job has left squeue, every task ended
    if (o.text.find("Invalid job id") != std::string::npos) return states;
    std::string why = o.text;
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    throw TryAgainError(fmt::format("squeue could not say the state of Slurm job {} (exit {}, 4 attempts): {}",
                                    job_id, o.status, why.empty() ? "no output" : why));
  }
  std::istringstream lines(o.text);
  for (std::string id, state; lines >> id >> state;) {
    const auto underscore = id.find('_');
    if (underscore == std::string::npos) continue;
    const std::string task = id.substr(underscore + 1);
    if (task.find_first_not_of("0123456789") != std::string::npos) continue;  // "[1-3%2]" is expanded by --array
    states[std::stoi(task)] = state;
  }
  return states;
}

}  // namespace nt
