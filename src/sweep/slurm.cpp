#include "sweep/slurm.h"

#include <charconv>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/errors.h"
#include "io/files.h"
#include "sweep/command.h"

namespace nt {

namespace fs = std::filesystem;

namespace {

// `text` without the blanks and newlines around it.
std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n"), last = text.find_last_not_of(" \t\r\n");
  return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

std::string absolute(const std::string& path) {
  return path.empty() ? path : fs::absolute(path).lexically_normal().string();
}

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
      throw UsageError(
          fmt::format("{} \"{}\": holds a newline or another control character (byte 0x{:02x}), which "
                      "would end sbatch's directives and run the rest as a command",
                      option, escaped(value), int(c)));
}

// A path written into an #SBATCH line: no control character, and (sbatch splits a directive's
// words at blanks and expands %) no blank, quote or %.
void check_directive_path(const std::string& option, const std::string& path) {
  check_directive(option, path);
  if (path.find_first_of(" \t\"'%\\") != std::string::npos)
    throw UsageError(
        fmt::format("{} \"{}\": a path in a Slurm script may not hold blanks, quotes, backslashes or %", option, path));
}

// "#SBATCH --chdir=<dir>" when sbatch can read <dir> as one word; the script's `cd` does it
// anyway (a directory with blanks is fine there).
std::string chdir_directive(const std::string& dir) {
  return dir.find_first_of(" \t\"'%\\") == std::string::npos ? fmt::format("#SBATCH --chdir={}\n", dir) : "";
}

}  // namespace

nlohmann::json slurm_options_json(const SlurmOptions& s) {
  return {{"partition", s.partition},         {"time", s.time},
          {"cpus_per_task", s.cpus_per_task}, {"max_parallel", s.max_parallel},
          {"signal_lead_s", s.signal_lead_s}, {"extra", s.extra}};
}

SlurmOptions slurm_options_of(const nlohmann::json& j) {
  SlurmOptions s;
  s.partition = j.value("partition", "");
  s.time = j.value("time", "");
  s.cpus_per_task = j.value("cpus_per_task", 0);
  s.max_parallel = j.value("max_parallel", 0);
  s.signal_lead_s = j.value("signal_lead_s", 120);
  s.extra = j.value("extra", std::vector<std::string>{});
  return s;
}

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
    if (c < 0x20 || c == 0x7f)
      q += fmt::format("\\x{:02x}", int(c));
    else if (c == '\\' || c == '\'')
      q += std::string("\\") + char(c);
    else
      q += char(c);
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
  std::string s =
      "#!/bin/bash\n# written by normtool sweep --launcher slurm: one array task per grid job (sweep.json)\n";
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
  SweepSpec here = spec;  // the config's path as the task sees it, from the working directory
  if (!here.config.empty()) here.config = absolute(spec.config);
  for (const SweepJob& j : jobs) {
    std::vector<std::string> words;  // no raw label: every user string is quoted
    for (const std::string& a : job_run_args(here, j)) words.push_back(script_word(a));
    s += fmt::format("  {}) args=({}) ;;\n", j.index, fmt::join(words, " "));
  }
  s += "  *) echo \"no job $SLURM_ARRAY_TASK_ID in this sweep\" >&2; exit 2 ;;\nesac\n";
  s += R"(echo "task $SLURM_ARRAY_TASK_ID of job ${SLURM_ARRAY_JOB_ID:-?} on $(hostname), )"
       R"(restart ${SLURM_RESTART_COUNT:-0}"
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
trap 'kill -TERM $pid 2>/dev/null; wait $pid; code=$?; )"
       R"(if [ $code -eq 130 ]; then scontrol requeue "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}" || true; fi; )"
       R"(exit $code' TERM
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

namespace {

// A Slurm job id: 1 to 10 digits (Slurm's ids are 32-bit).
bool job_id_digits(const std::string& id) {
  return !id.empty() && id.size() <= 10 && id.find_first_not_of("0123456789") == std::string::npos;
}

// "<id>" or "<id>;<cluster>", as sbatch --parsable prints it: {id, cluster}; nullopt otherwise.
std::optional<std::pair<std::string, std::string>> parse_job(const std::string& job) {
  const auto semicolon = job.find(';');
  const std::string id = job.substr(0, semicolon),
                    cluster = semicolon == std::string::npos ? "" : job.substr(semicolon + 1);
  const bool cluster_ok =
      semicolon == std::string::npos ||
      (!cluster.empty() && cluster.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                     "0123456789_-.") == std::string::npos);
  if (!job_id_digits(id) || !cluster_ok) return std::nullopt;
  return std::make_pair(id, cluster);
}

// At most the first 200 bytes of `text`, its control characters as \xNN, for a message.
std::string quoted_excerpt(const std::string& text) {
  return escaped(text.substr(0, 200)) + (text.size() > 200 ? "..." : "");
}

}  // namespace

std::string submit_sbatch(const std::string& script, std::chrono::milliseconds limit) {
  std::optional<CommandOutput> o;
  try {
    o = run_command({"sbatch", "--parsable", script}, limit, kSlurmOutputCap);
  } catch (const TryAgainError& e) {
    throw TryAgainError(
        fmt::format("{}; it may have submitted the job before that: look with squeue --me before "
                    "submitting again",
                    e.what()));
  }
  if (!o)
    throw std::runtime_error(
        fmt::format("cannot submit {}: sbatch is not on this machine's PATH (--launcher print "
                    "writes the script without submitting it)",
                    script));
  // --parsable: the job id alone on stdout, or "<id>;<cluster>"; warnings go to stderr
  const std::string job = trimmed(o->out), why = trimmed(o->err);
  if (o->status != 0)
    throw std::runtime_error(fmt::format("sbatch {} failed (exit {}): {}", script, o->status,
                                         quoted_excerpt(why.empty() ? job.empty() ? "no output" : job : why)));
  if (!parse_job(job))
    throw std::runtime_error(fmt::format("sbatch {} printed \"{}\", not a job id (digits, or digits;cluster){}", script,
                                         quoted_excerpt(job), why.empty() ? "" : ": " + quoted_excerpt(why)));
  return job;
}

SlurmTasks slurm_task_states(const std::string& job, std::chrono::milliseconds limit) {
  SlurmTasks tasks;
  if (job.empty()) return tasks;
  const auto parsed = parse_job(job);
  if (!parsed)
    throw InputError(
        fmt::format("Slurm job \"{}\" (as recorded): not a job id as sbatch --parsable prints it (digits, "
                    "or digits;cluster)",
                    quoted_excerpt(job)));
  const auto& [id, cluster] = *parsed;
  std::vector<std::string> argv{"squeue", "--noheader", "--array", "--format=%i %T", "--jobs=" + id};
  if (!cluster.empty()) argv.push_back("--clusters=" + cluster);
  // "Invalid job id specified": the job has left squeue, every task ended
  auto ended = [](const CommandOutput& o) { return (o.err + o.out).find("Invalid job id") != std::string::npos; };
  std::optional<CommandOutput> o = run_command(argv, limit, kSlurmOutputCap);
  // a controller that does not answer for a moment (a busy slurmctld, a restart) is asked again
  for (int attempt = 1; attempt < 4 && o && o->status != 0 && !ended(*o); ++attempt) {
    std::this_thread::sleep_for(std::chrono::seconds(attempt));
    o = run_command(argv, limit, kSlurmOutputCap);
  }
  if (!o) {  // no squeue here: the tasks may be queued or running for all this machine can tell
    tasks.known = false;
    return tasks;
  }
  if (o->status != 0) {
    if (ended(*o)) return tasks;
    const std::string why = trimmed(o->err + o->out);
    throw TryAgainError(fmt::format("squeue could not say the state of Slurm job {} (exit {}, 4 attempts): {}", job,
                                    o->status, why.empty() ? "no output" : quoted_excerpt(why)));
  }
  std::istringstream lines(o->out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string task_id, state, more;
    words >> task_id >> state >> more;
    if (task_id.empty() || task_id == "CLUSTER:") continue;  // squeue --clusters heads each cluster's lines
    const auto underscore = task_id.find('_');
    if (underscore == std::string::npos) continue;  // not a task of an array
    // --array lists each task as <id>_<index>; an index past int (or none) is an answer that cannot be read
    const std::string index = task_id.substr(underscore + 1);
    int task = -1;
    const auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), task);
    if (state.empty() || !more.empty() || index.empty() || index.find_first_not_of("0123456789") != std::string::npos ||
        ec != std::errc() || end != index.data() + index.size())
      throw TryAgainError(fmt::format("squeue printed \"{}\" for Slurm job {}: not \"<job>_<task index> <state>\"",
                                      quoted_excerpt(trimmed(line)), job));
    tasks.states[task] = state;
  }
  return tasks;
}

}  // namespace nt
