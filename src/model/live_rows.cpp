#include "model/live_rows.h"

#include <algorithm>
#include <cstdint>

#include "core/check.h"

namespace nt {

void LiveRows::build(const float* mask, int B, int L, bool backward) {
  B_ = B;
  auto real = [&](int b, int j) { return !mask || mask[int64_t(b) * L + j] != 0.0f; };
  for (int b = 0; b < B; ++b)
    for (int j = 1; j < L; ++j) NT_CHECK(!real(b, j) || real(b, j - 1), "LiveRows: the batch is not right-padded");
  batch_.clear(), seq_.clear(), prev_.clear(), steps_.clear();
  std::vector<int> row_in_state(B), now(B);  // each batch row's row in the state so far (-1: none)
  for (int b = 0; b < B; ++b) row_in_state[b] = b;
  int state_rows = B;
  for (int k = 0; k < L; ++k) {
    const int j = backward ? L - 1 - k : k;
    Offsets o{int(batch_.size()), 0, true};
    for (int b = 0; b < B; ++b) {
      if (!real(b, j)) continue;
      o.same = o.same && row_in_state[b] == o.count;
      batch_.push_back(b), seq_.push_back(b * L + j), prev_.push_back(row_in_state[b]);
      ++o.count;
    }
    o.same = o.same && o.count == state_rows;
    steps_.push_back(o);
    if (o.count == 0) continue;  // the state stays as it is
    std::fill(now.begin(), now.end(), -1);
    for (int i = 0; i < o.count; ++i) now[batch_[o.begin + i]] = i;
    row_in_state.swap(now), state_rows = o.count;
  }
}

LiveRows::Step LiveRows::at(int k) const {
  const Offsets& o = steps_.at(k);
  return {o.count, batch_.data() + o.begin, seq_.data() + o.begin, prev_.data() + o.begin, o.same, o.count == B_};
}

}  // namespace nt
