// The training runs a machine is given at once: `n` slots, one per running job (a `normtool run`
// process of a sweep, or a run measured in this process). Several sweeps, and several claims of a
// reproduction, draw on one Slots so that a core left idle by one (the last odd job of a look, a
// run extended alone) is taken by the next, and never more than n run at once.
//
// Requests are granted by priority, the lowest number first (a reproduction's claims in the
// registry's order), and in the order they were asked among equals. A request waiting at the head
// holds back those behind it even when a slot is free: a request for every slot (a timing claim
// that must have the machine to itself) is served once the runs before it end, never starved.
//
// Each priority's held time is counted: busy_seconds(p) is the slot-seconds its holds lasted, the
// machine time a claim took whatever ran beside it.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <utility>

namespace nt {

class Slots {
 public:
  explicit Slots(int n);
  Slots(const Slots&) = delete;
  Slots& operator=(const Slots&) = delete;

  int size() const { return n_; }

  using Ticket = std::uint64_t;
  // A request for `count` slots (at most size()), queued until granted, cancelled or returned.
  Ticket ask(int priority, int count);
  bool try_take(Ticket t);   // granted now (then held until give_back), else it stays queued
  bool take(Ticket t);       // waits until granted; false when stop() came first (then cancelled)
  void cancel(Ticket t);     // a queued request withdrawn
  void give_back(Ticket t);  // a granted request's slots returned, its time counted

  // From now on nothing is granted: a stopping reproduction's waiting runs give up.
  void stop();
  bool stopped() const;

  double busy_seconds(int priority) const;

 private:
  struct Request {
    int priority, count;
    bool granted = false;
    std::chrono::steady_clock::time_point since;
  };
  bool grantable(Ticket t) const;  // under the lock: free slots and nothing queued before it
  void grant(Ticket t);

  int n_, free_;
  bool stopped_ = false;
  Ticket next_ = 0;
  std::map<Ticket, Request> requests_;
  std::set<std::pair<int, Ticket>> waiting_;  // the queued requests, in the order they are served
  std::map<int, double> busy_;
  mutable std::mutex lock_;
  std::condition_variable changed_;
};

// Holds `count` slots of `slots` for its scope (nothing without slots); granted() false when the
// slots stopped before they were granted.
class SlotHold {
 public:
  SlotHold(Slots* slots, int priority, int count);
  ~SlotHold();
  SlotHold(const SlotHold&) = delete;
  SlotHold& operator=(const SlotHold&) = delete;
  bool granted() const { return granted_; }

 private:
  Slots* slots_;
  Slots::Ticket ticket_ = 0;
  bool granted_ = true;
};

}  // namespace nt
