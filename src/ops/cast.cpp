// cast: a value stored between two ops in the run's number format (train.precision).
//
//   forward   x = round(x)    in place: what the next ops read, and what the ops before kept
//                             for their backward, is the rounded value
//   backward  dx = round(dx)  in place, once every consumer of x has added its part: the
//                             gradient is stored in the format too (mixed-precision training's
//                             backward of a cast), the producer of x reads it rounded
//
// Rounding is to nearest, ties to even (core/number_format.h); fp32 records nothing.
#include "core/number_format.h"
#include "core/parallel.h"
#include "ops/ops.h"

namespace nt {

namespace {

struct CastContext {
  Tensor<float> x;
  Precision p;
};

void cast_backward_node(const void* p, unsigned) {
  const auto& c = *static_cast<const CastContext*>(p);
  parallel_chunks(c.x.size(), [&](int64_t i, int64_t n) { round_in_place(c.p, c.x.grad + i, std::size_t(n)); });
}

}  // namespace

Tensor<float> cast(Graph<float>& g, Tensor<float> x, Precision p) {
  if (p == Precision::fp32) return x;
  parallel_chunks(x.size(), [&](int64_t i, int64_t n) { round_in_place(p, x.data + i, std::size_t(n)); });
  if (x.grad) g.record(cast_backward_node, CastContext{x, p}, {nullptr});
  return x;
}

}  // namespace nt
