#include "sweep/slots.h"

#include <algorithm>
#include <stdexcept>

namespace nt {

Slots::Slots(int n) : n_(std::max(1, n)), free_(n_) {}

Slots::Ticket Slots::ask(int priority, int count) {
  if (count < 1 || count > n_) throw std::logic_error("Slots::ask: a request for more slots than there are");
  std::lock_guard<std::mutex> hold(lock_);
  const Ticket t = next_++;
  requests_[t] = Request{priority, count, false, {}};
  waiting_.insert({priority, t});
  return t;
}

bool Slots::grantable(Ticket t) const {
  const Request& r = requests_.at(t);
  return !stopped_ && free_ >= r.count && waiting_.begin()->second == t;
}

void Slots::grant(Ticket t) {
  Request& r = requests_.at(t);
  waiting_.erase({r.priority, t});
  free_ -= r.count;
  r.granted = true;
  r.since = std::chrono::steady_clock::now();
  changed_.notify_all();  // the next in line may fit in what is left
}

bool Slots::try_take(Ticket t) {
  std::lock_guard<std::mutex> hold(lock_);
  if (requests_.at(t).granted) return true;
  if (!grantable(t)) return false;
  grant(t);
  return true;
}

bool Slots::take(Ticket t) {
  std::unique_lock<std::mutex> hold(lock_);
  changed_.wait(hold, [&] { return stopped_ || requests_.at(t).granted || grantable(t); });
  if (requests_.at(t).granted) return true;
  if (stopped_) {
    hold.unlock();
    cancel(t);
    return false;
  }
  grant(t);
  return true;
}

void Slots::cancel(Ticket t) {
  std::lock_guard<std::mutex> hold(lock_);
  const auto it = requests_.find(t);
  if (it == requests_.end() || it->second.granted) return;
  waiting_.erase({it->second.priority, t});
  requests_.erase(it);
  changed_.notify_all();  // the one behind it may be at the head now
}

void Slots::give_back(Ticket t) {
  std::lock_guard<std::mutex> hold(lock_);
  const auto it = requests_.find(t);
  if (it == requests_.end() || !it->second.granted) return;
  const Request& r = it->second;
  busy_[r.priority] += r.count * std::chrono::duration<double>(std::chrono::steady_clock::now() - r.since).count();
  free_ += r.count;
  requests_.erase(it);
  changed_.notify_all();
}

void Slots::stop() {
  std::lock_guard<std::mutex> hold(lock_);
  stopped_ = true;
  changed_.notify_all();
}

bool Slots::stopped() const {
  std::lock_guard<std::mutex> hold(lock_);
  return stopped_;
}

double Slots::busy_seconds(int priority) const {
  std::lock_guard<std::mutex> hold(lock_);
  const auto it = busy_.find(priority);
  return it == busy_.end() ? 0.0 : it->second;
}

SlotHold::SlotHold(Slots* slots, int priority, int count) : slots_(slots) {
  if (!slots_) return;
  ticket_ = slots_->ask(priority, count);
  granted_ = slots_->take(ticket_);
}

SlotHold::~SlotHold() {
  if (slots_ && granted_) slots_->give_back(ticket_);
}

}  // namespace nt
