// Console progress of a run. On a terminal: one line redrawn in place
// (step/total, loss, steps/s, ETA). Otherwise: a plain line every log_every steps.
#pragma once
#include <chrono>
#include <string>

namespace nt {

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

}  // namespace nt
