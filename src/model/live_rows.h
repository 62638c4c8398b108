// The rows a recurrence runs at each step of a right-padded batch: at each position, only the
// batch rows whose sequence is real there (RNNSearch's encoder both ways and its decoder). A step
// over the live rows alone gives them the bits of a step over every row, as a product's rows do
// not depend on each other, and a sequence that has ended adds 0 to every gradient.
#pragma once
#include <vector>

namespace nt {

class LiveRows {
 public:
  // One step's rows.
  struct Step {
    int count = 0;               // the live rows
    const int* batch = nullptr;  // their batch rows b, increasing
    const int* seq = nullptr;    // their rows b*L + j of the (B*L) sequence
    const int* prev = nullptr;   // each one's row in the state so far, -1 where its sequence starts (state 0)
    bool same = false;           // the state's rows exactly, in order: the state is read as it is
    bool all = false;            // every batch row
  };

  // mask (B*L; null: every position real), each row's real positions a prefix; steps run from position 0, or from L - 1
  // when backward. The state before the first step has all B rows.
  void build(const float* mask, int B, int L, bool backward);
  Step at(int k) const;  // the k-th step (position L - 1 - k when backward)

 private:
  struct Offsets {
    int begin, count;
    bool same;
  };
  int B_ = 0;
  std::vector<int> batch_, seq_, prev_;
  std::vector<Offsets> steps_;
};

}  // namespace nt
