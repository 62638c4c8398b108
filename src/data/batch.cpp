// Batch: what every dataset fills (data/dataset.h), and its rows taken apart.
#include <algorithm>

#include "data/dataset.h"

namespace nt {

int64_t Batch::real_targets() const {
  int64_t n = 0;
  for (float m : mask) n += m != 0.0f;
  return n;
}

namespace {
// Rows [first, first + count) of v, a vector of B equal rows (or empty), into out.
template <class Vector>
void copy_row_range(const Vector& v, int B, int first, int count, Vector& out) {
  const std::size_t width = v.size() / std::size_t(B);
  out.assign(v.begin() + std::ptrdiff_t(first * width), v.begin() + std::ptrdiff_t((first + count) * width));
}
}  // namespace

void Batch::copy_rows(int first, int count, Batch& out) const {
  out.B = count;
  out.T = T;
  out.S = S;
  out.padded = padded;
  copy_row_range(tokens, B, first, count, out.tokens);
  copy_row_range(targets, B, first, count, out.targets);
  copy_row_range(mask, B, first, count, out.mask);
  copy_row_range(token_mask, B, first, count, out.token_mask);
  copy_row_range(x, B, first, count, out.x);
  copy_row_range(src, B, first, count, out.src);
  copy_row_range(src_mask, B, first, count, out.src_mask);
}

}  // namespace nt
