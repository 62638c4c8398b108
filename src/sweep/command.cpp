#include "sweep/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/errors.h"

namespace nt {

using Clock = std::chrono::steady_clock;

namespace {

// `name` as execvp would find it on PATH; "" when it is not there.
std::string on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string file = (dir.empty() ? std::string(".") : dir) + "/" + name;
    struct stat st;
    if (::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(file.c_str(), X_OK) == 0) return file;
  }
  return "";
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

long long ms_until(Clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
}

// The child, after the fork (only async-signal-safe calls from here to exec): its own process
// group, killed when normtool dies, every signal unblocked and SIGPIPE default, stdin /dev/null,
// stdout and stderr into their pipes. An exec that fails writes its errno to `exec_error`.
[[noreturn]] void exec_child(const std::string& binary, std::vector<char*>& args, pid_t parent, int out, int err,
                             int exec_error) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // normtool died before prctl
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGPIPE, &dfl, nullptr);
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (in >= 0) dup2(in, 0);
  dup2(out, 1);
  dup2(err, 2);
  execv(binary.c_str(), args.data());
  const int e = errno;
  (void)!write(exec_error, &e, sizeof e);
  _exit(127);
}

// Reads stdout and stderr (fds, non-blocking) into `o` until both close. Returns why the command
// must be stopped, "" when it need not: `late` at the deadline, a failed poll, or more than `cap` bytes.
std::string read_output(pollfd (&fds)[2], CommandOutput& o, Clock::time_point deadline, const std::string& late,
                        std::size_t cap) {
  std::string* into[2] = {&o.out, &o.err};
  std::string stopped;
  while ((fds[0].fd >= 0 || fds[1].fd >= 0) && stopped.empty()) {
    if (ms_until(deadline) <= 0) {
      stopped = late;
      break;
    }
    if (poll(fds, 2, int(std::min<long long>(ms_until(deadline), 1000))) < 0) {
      if (errno != EINTR) stopped = fmt::format("could not be read: {}", std::strerror(errno));
      continue;
    }
    for (pollfd& p : fds) {
      if (p.fd < 0 || !p.revents) continue;
      char buffer[65536];
      const ssize_t n = ::read(p.fd, buffer, sizeof buffer);
      if (n > 0)
        into[&p - fds]->append(buffer, std::size_t(n));
      else if (n == 0 || (errno != EINTR && errno != EAGAIN))
        close_fd(p.fd);
    }
    if (o.out.size() + o.err.size() > cap) stopped = fmt::format("printed more than {} bytes", cap);
  }
  return stopped;
}

// Unless it is to be stopped already, waits for the command (whose streams closed: it has exited,
// or is about to) until the deadline, when `stopped` becomes `late`. Returns whether it was
// reaped, its wait status then in `status`.
bool wait_exit(pid_t pid, int& status, Clock::time_point deadline, const std::string& late, std::string& stopped) {
  while (stopped.empty()) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done < 0 && errno != EINTR) return false;  // not ours to wait for (SIGCHLD ignored): its status is not known
    if (done == pid) return true;
    if (ms_until(deadline) <= 0)
      stopped = late;
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min<long long>(ms_until(deadline), 10)));
  }
  return false;
}

}  // namespace

std::optional<CommandOutput> run_command(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                                         std::size_t cap) {
  const std::string binary = on_path(argv.front()), command = fmt::format("{}", fmt::join(argv, " "));
  if (binary.empty()) return std::nullopt;
  int out[2] = {-1, -1}, err[2] = {-1, -1}, exec_error[2] = {-1, -1};
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(exec_error, O_CLOEXEC) ? -1 : fork();
  if (pid < 0) {
    const int e = errno;
    for (int* p : {out, err, exec_error}) close_fd(p[0]), close_fd(p[1]);
    throw std::runtime_error(fmt::format("cannot start {}: {}", command, std::strerror(e)));
  }
  if (pid == 0) exec_child(binary, args, parent, out[1], err[1], exec_error[1]);
  setpgid(pid, pid);  // also here, so that the group exists before a kill (either call makes it)
  close_fd(out[1]), close_fd(err[1]), close_fd(exec_error[1]);
  for (int fd : {out[0], err[0]}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);  // a read never waits
  CommandOutput o;
  const auto deadline = Clock::now() + limit;
  const std::string late = fmt::format("did not finish within {:g} s", double(limit.count()) / 1000);
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string stopped = read_output(fds, o, deadline, late, cap);  // why it is killed
  int status = -1;
  const bool reaped = wait_exit(pid, status, deadline, late, stopped);
  if (!stopped.empty()) {
    kill(-pid, SIGKILL);  // the group: a shell's children too
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  for (int i = 0; i < 2; ++i) close_fd(fds[i].fd);
  int exec_errno = 0;
  const bool exec_failed = ::read(exec_error[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno;
  close_fd(exec_error[0]);
  if (exec_failed) throw std::runtime_error(fmt::format("cannot run {}: {}", binary, std::strerror(exec_errno)));
  if (!stopped.empty())
    throw TryAgainError(
        fmt::format("{} {}: stopped (its process group killed), so it answered nothing", command, stopped));
  o.status = reaped && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

}  // namespace nt
