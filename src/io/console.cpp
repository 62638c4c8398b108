#include "io/console.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "config/user_json.h"

namespace nt {

void open_closed_standard_streams() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int opened = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);  // the lowest free number: fd
    if (opened >= 0 && opened != fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
  }
}

namespace {
std::atomic<bool> g_console_lost{false};

bool print_to(std::FILE* stream, std::string_view text) noexcept {
  const bool written = std::fwrite(text.data(), 1, text.size(), stream) == text.size() && std::fflush(stream) == 0;
  std::clearerr(stream);  // the next line tries again
  if (!written) g_console_lost = true;
  return written;
}

// A line of its own on stderr, the line redrawn in place (if any) erased first.
void print_message(bool tty, bool& drawn, const std::string& line) {
  if (tty && drawn) print_err("\r\033[K");
  eprint("{}\n", line);
  drawn = false;
}
}  // namespace

bool print_err(std::string_view text) noexcept { return print_to(stderr, text); }
bool print_advice(std::string_view text) noexcept { return print_to(stdout, text); }
bool console_lost() noexcept { return g_console_lost; }

void ignore_pipe_and_file_size_signals() {
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGXFSZ, SIG_IGN);
}

Progress::Progress(std::string name, int total_steps, int log_every)
    : name_(std::move(name)), total_(total_steps), log_every_(log_every), tty_(isatty(fileno(stderr)) != 0) {}

void Progress::step(int step, double loss, double steps_per_s) {
  const int done_steps = step + 1;
  if (tty_) {
    const auto now = std::chrono::steady_clock::now();
    if (done_steps < total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    const double eta = steps_per_s > 0 ? (total_ - done_steps) / steps_per_s : 0.0;
    eprint("\r\033[K{} step {}/{}  loss {:.4f}  {:.1f} steps/s  ETA {}:{:02d}", name_, done_steps, total_, loss,
           steps_per_s, int(eta) / 60, int(eta) % 60);
    drawn_ = true;
  } else if (step % log_every_ == 0 || done_steps == total_) {
    eprint("{} step {}/{}: loss {:.4f}, {:.1f} steps/s\n", name_, done_steps, total_, loss, steps_per_s);
  }
}

void Progress::message(const std::string& line) { print_message(tty_, drawn_, line); }

void Progress::done() {
  if (tty_ && drawn_) print_err("\n");
  drawn_ = false;
}

namespace {
std::string clock_text(double s) {
  const int t = int(std::lround(std::max(0.0, s)));
  return t >= 3600 ? fmt::format("{}:{:02d}:{:02d}", t / 3600, t / 60 % 60, t % 60)
                   : fmt::format("{}:{:02d}", t / 60, t % 60);
}
}  // namespace

WorkProgress::WorkProgress(std::string what, std::string unit, int total)
    : what_(std::move(what)),
      unit_(std::move(unit)),
      total_(total),
      tty_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()) {}

std::string WorkProgress::line(int done, const std::string& now) const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string s = fmt::format("{}: {}/{} {} done, {} elapsed", what_, done, total_, unit_, clock_text(elapsed));
  if (done > 0 && done < total_) s += fmt::format(", about {} left", clock_text(elapsed / done * (total_ - done)));
  if (!now.empty()) s += " (" + now + ")";
  return s;
}

void WorkProgress::update(int done, const std::string& now) {
  if (tty_) {
    eprint("\r\033[K{}", line(done, now));
    drawn_ = true;
  } else {
    eprint("{}\n", line(done, now));
  }
  std::fflush(stderr);
}

void WorkProgress::message(const std::string& line) { print_message(tty_, drawn_, line); }

void WorkProgress::clear() {
  if (tty_ && drawn_) print_err("\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

void WorkProgress::finish() {
  if (tty_ && drawn_) print_err("\n");
  drawn_ = false;
}

namespace {
std::string escaped(std::string_view text, bool keep_list_lines) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (!n || i + n > text.size() || !valid_utf8(text.substr(i, n))) {
      out += fmt::format("\\x{:02x}", c), ++i;
      continue;
    }
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    // C0, DEL, C1 (U+009B is a terminal's CSI), and the bidirectional overrides and isolates, which
    // reorder what the terminal shows
    const bool list_line = keep_list_lines && cp == '\n' && text.substr(i + 1, 2) == "  ";
    const bool control = (cp < 0x20 && !list_line) || (cp >= 0x7F && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
                         (cp >= 0x2066 && cp <= 0x2069);
    out += control ? (cp < 0x100 ? fmt::format("\\x{:02x}", cp) : fmt::format("\\u{{{:04x}}}", cp))
                   : std::string(text.substr(i, n));
    i += n;
  }
  return out;
}
}  // namespace

std::string printable(std::string_view text) { return escaped(text, false); }
std::string printable_message(std::string_view text) { return escaped(text, true); }

}  // namespace nt
