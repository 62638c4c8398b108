// An external command (Slurm's sbatch and squeue) run with a time-out and a bound on what it
// prints: a tool that hangs or prints without end never holds normtool with it.
#pragma once
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace nt {

// What a command printed, and how it ended.
struct CommandOutput {
  int status = -1;       // its exit status; -1 when a signal ended it
  std::string out, err;  // its stdout and its stderr
};

// Runs argv (argv[0] found on PATH as execvp would) without a shell, its stdin /dev/null, in a
// process group of its own that is killed with normtool, and reads its stdout and stderr until it
// has closed both and exited. nullopt when argv[0] is not on PATH. When it has not ended within
// `limit`, or has printed more than `cap` bytes (stdout and stderr together), its process group is
// killed and the answer is a TryAgainError naming the command and the limit: what it would have
// said is not known. A command found but not runnable is a runtime_error.
std::optional<CommandOutput> run_command(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                                         std::size_t cap);

}  // namespace nt
