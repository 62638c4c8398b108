// Console progress of a run. On a terminal: one line redrawn in place
// (step/total, loss, steps/s, ETA). Otherwise: a plain line every log_every steps.
//
// The standard streams (main.cpp): a closed 0, 1 or 2 is opened on /dev/null at start-up, before
// any other file, so that no log file can take its number. Diagnostics go to stderr through
// print_err, which never throws: a console that cannot be written (2>/dev/full, a closed pipe)
// loses the line and nothing else, and a run keeps training and records its files. What a command
// prints to stdout is its product: main checks that it was all written (exit 1 when not).
#pragma once
#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/core.h>

namespace nt {

// Opens /dev/null on each of fds 0, 1 and 2 that is closed.
void open_closed_standard_streams();

// SIGPIPE and SIGXFSZ ignored (main.cpp, first thing): a console that goes away (`| head` that
// has exited) or a file past `ulimit -f` is a write that fails with EPIPE or EFBIG, handled where
// it happens (a lost console line; a run that stops "failed" with its files whole), never a
// process killed mid-way with its run left "running".
void ignore_pipe_and_file_size_signals();

// `text` to stderr, whole or not at all; never throws. False when it could not be written.
bool print_err(std::string_view text) noexcept;
// `text` to stdout as advice, not as the command's product (run's one-line result); never throws.
bool print_advice(std::string_view text) noexcept;
// Whether a line to the console (print_err, print_advice) could not be written since start-up:
// a run records it in summary.json ("console_lost": true) and goes on training.
bool console_lost() noexcept;
// `text` safe to print on a terminal as one line: every byte that is not part of valid UTF-8, and
// every control character (C0 with newline and tab, DEL, C1), as \xNN, the bidirectional overrides as
// \u{NNNN} (an error message quoting a user's file or argument: a name cannot start a line of its own)
std::string printable(std::string_view text);
// An error message as printable shows it, but for a newline followed by two spaces, which starts
// the next line of a list normtool wrote (a config's problems, also inside a sweep job's error): a
// user's name can then at most add an indented line under the message, never a line of its own.
std::string printable_message(std::string_view text);
template <typename... T>
void eprint(fmt::format_string<T...> format, T&&... args) {
  print_err(fmt::format(format, std::forward<T>(args)...));
}

class Progress {
 public:
  Progress(std::string name, int total_steps, int log_every);
  void step(int step, double loss, double steps_per_s);  // after each step
  void message(const std::string& line);                 // a line of its own (eval results)
  void done();                                           // ends the redrawn line

 private:
  std::string name_;
  int total_, log_every_;
  bool tty_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

// Progress of long work made of parts (a sweep's jobs, a reproduction's claims), on stderr. On a
// terminal: one line redrawn in place ("sweep: 3/6 jobs done, 0:42 elapsed, about 0:50 left");
// otherwise that line printed plainly at each update. The estimate is the mean time per finished
// part times the parts left.
class WorkProgress {
 public:
  WorkProgress(std::string what, std::string unit, int total);
  void update(int done, const std::string& now = "");  // `now`: what runs next, e.g. "running C4"
  void message(const std::string& line);               // a line of its own, above the redrawn one
  void finish();                                       // ends the redrawn line
  void clear();                                        // erases the redrawn line, before a line of its own on stdout
  std::string line(int done, const std::string& now) const;  // the text of the progress line

 private:
  std::string what_, unit_;
  int total_;
  bool tty_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace nt
