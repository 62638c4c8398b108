#include "sweep/processes.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <thread>

#include "io/console.h"
#include "io/files.h"
#include "io/run_files.h"
#include "sweep/slots.h"

namespace nt {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_sweep_interrupt(int) { g_stop = true; }
std::atomic<int> g_jobs{0};  // the jobs of every sweep of this process now running

std::mutex g_signals_lock;
int g_signals_live = 0;
struct sigaction g_old_int {};
struct sigaction g_old_term {};

// Starts `binary run ...` for one job (`run --resume` when `resume`) with stdout and stderr in its
// log; returns the pid. The job dies with the sweep: with the thread that started it, in fact
// (PR_SET_PDEATHSIG), which is why run_queue returns only once its jobs have ended.
pid_t launch(const SweepSpec& spec, const SweepJob& job, bool resume, const std::string& binary, const fs::path& log) {
  std::vector<std::string> args{binary, "run"};
  if (resume) {
    args.insert(args.end(), {"--resume", job.dir});
  } else {
    for (std::string& a : job_run_args(spec, job)) args.push_back(std::move(a));
    args.insert(args.end(), {"--out", job.dir});
  }
  std::vector<char*> argv;  // built before the fork: the child of a threaded parent only execs
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string log_path = log.string();
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(fmt::format("sweep: fork failed: {}", std::strerror(errno)));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);  // the sweep died before prctl
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    // a resumed job's log goes on; a new job's starts afresh; never through a link of either kind
    int fd = open_for_writing(log_path, O_WRONLY | O_CREAT | O_APPEND, /*fresh=*/!resume);
    if (fd < 0 && resume) fd = open_for_writing(log_path, O_WRONLY, /*fresh=*/true);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      if (fd > 2)
        close(fd);  // when it was 1 or 2 (a sweep started with either closed), it is the log now
      else
        fcntl(fd, F_SETFD, 0);  // ...and must outlive the exec
    }
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

// The queue's hold on the slots and its children, let go however run_queue ends: an exception
// (a sweep.json that cannot be written) must neither leave its request at the head of the slots,
// holding back every claim after it, nor its jobs running.
struct Launched {
  struct Job {
    int sweep, job;
    Slots::Ticket ticket;
  };
  Slots& slots;
  std::map<pid_t, Job> running;
  std::optional<Slots::Ticket> asked;  // the next job's request for a slot
  // Starts the job on the slot `ticket` holds (given back when it cannot start).
  void start(const SweepSpec& spec, SweepJob& j, const Pending& p, Slots::Ticket ticket, const std::string& binary) {
    pid_t pid = -1;
    try {
      pid = launch(spec, j, p.resume, binary, fs::path(spec.out) / "logs" / (std::to_string(j.index) + ".log"));
    } catch (...) {
      slots.give_back(ticket);
      throw;
    }
    running[pid] = {p.sweep, p.job, ticket};
    ++g_jobs;
    j.status = "running";
  }
  ~Launched() {
    if (asked) slots.cancel(*asked);
    for (const auto& [pid, j] : running) {
      kill(pid, SIGTERM);
      while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      --g_jobs;
      slots.give_back(j.ticket);
    }
  }
};

}  // namespace

StopOnSignals::StopOnSignals() {
  std::lock_guard<std::mutex> hold(g_signals_lock);
  if (g_signals_live++ > 0) return;
  g_stop = false;
  struct sigaction sa {};
  sa.sa_handler = on_sweep_interrupt;
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

StopOnSignals::~StopOnSignals() {
  std::lock_guard<std::mutex> hold(g_signals_lock);
  if (--g_signals_live > 0) return;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

bool stop_requested() { return g_stop; }
int running_jobs() { return g_jobs; }

void run_queue(const std::vector<SweepSpec>& specs, std::vector<std::vector<SweepJob>>& jobs,
               const std::vector<Pending>& queue, SlotShare share, const std::string& binary, bool quiet,
               const std::function<void(int sweep)>& job_ended) {
  StopOnSignals stop;
  Slots& slots = *share.slots;
  Launched launched{slots, {}, {}};
  auto& running = launched.running;
  WorkProgress progress("sweep", "jobs", int(queue.size()));  // io/console.h: redrawn on a terminal
  int finished = 0;
  if (!quiet && !queue.empty()) progress.update(0);
  bool forwarded = false;
  std::size_t next = 0;
  auto reap = [&] {
    for (auto it = running.begin(); it != running.end();) {
      int status = 0;
      const pid_t got = waitpid(it->first, &status, WNOHANG);
      if (got == 0 || (got < 0 && errno == EINTR)) {  // still running (ECHILD: reaped already, ended)
        ++it;
        continue;
      }
      const Launched::Job r = it->second;
      it = running.erase(it);
      --g_jobs;
      slots.give_back(r.ticket);
      SweepJob& j = jobs[r.sweep][r.job];
      const json summary = read_summary(j.dir);
      j.status = summary.is_object() ? summary.value("status", "") : "";
      // no result: it failed, or a signal took it before it could checkpoint
      if (j.status.empty() || j.status == "running") j.status = forwarded ? "stopped" : "failed";
      ++finished;
      if (!quiet) progress.message(fmt::format("#{} : {} -> {}", j.index, j.label(), j.status));
      if (!quiet) progress.update(finished);
      job_ended(r.sweep);
    }
  };
  for (;;) {
    reap();
    // a signal to this process, or one that another sweep of it saw (which stopped the slots)
    const bool stopping = g_stop || slots.stopped();
    if (stopping && !forwarded) {  // a SIGTERM to the sweep alone reaches its jobs too
      for (const auto& [pid, r] : running) kill(pid, SIGTERM);
      forwarded = true;
      slots.stop();
      if (launched.asked) slots.cancel(*launched.asked), launched.asked.reset();
    }
    const bool more = !stopping && next < queue.size();
    if (!more && running.empty()) break;
    if (more) {
      if (!launched.asked) launched.asked = slots.ask(share.priority, 1);
      if (slots.try_take(*launched.asked)) {
        const Slots::Ticket ticket = *launched.asked;
        launched.asked.reset();
        const Pending& p = queue[next++];
        launched.start(specs[p.sweep], jobs[p.sweep][p.job], p, ticket, binary);
        continue;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!quiet) progress.finish();
}

}  // namespace nt
