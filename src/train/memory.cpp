#include "train/memory.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/machine.h"
#include "core/threads.h"
#include "data/dataset.h"
#include "model/shape.h"
#include "train/shards.h"

namespace nt {

namespace {

constexpr int64_t kFloat = 4;

}  // namespace

MemoryEstimate estimate_memory(const RunConfig& c) {
  const ModelShape shape = model_shape(c);
  const int64_t states = c.train.optimizer == Optimizer::sgd ? (c.train.momentum > 0 ? 1 : 0) : 2;
  MemoryEstimate e;
  // weights, gradients, moments, the update-norm copy; bf16/fp16: the fp32 masters beside the rounded weights
  e.params = shape.params * kFloat * (3 + states + (c.train.precision != Precision::fp32));
  // a data-parallel step's copies of the model beyond the first: weights and gradients each
  const int threads = math_threads_for(c.train.threads);
  const bool sharded = shards_apply(c, threads);
  if (sharded) e.params += shape.params * kFloat * 2 * (std::min(threads, c.train.batch_size) - 1);
  e.activations = shape.activations * kFloat * 9 / 8;
  // sharded: the shards' graphs hold the whole step's activations between them, and the session's
  // graph also grows to a whole batch's forward (evaluation, statistics steps), about half of them
  if (sharded) e.activations += e.activations / 2;
  e.data = data_sizes(c.data).bytes;
  return e;
}

std::string format_bytes(int64_t bytes) {
  if (bytes >= (int64_t(1) << 30)) return fmt::format("{:.1f} GiB", double(bytes) / double(int64_t(1) << 30));
  return fmt::format("{:.0f} MiB", double(bytes) / double(1 << 20));
}

void check_memory(const RunConfig& c, int runs) {
  const MemoryEstimate e = estimate_memory(c);
  const int64_t available = available_memory();
  if (e.total() * runs <= available) return;
  throw InputError(fmt::format(
      "the config needs about {} of memory{} (parameters and optimizer {}, one step's activations {}, data {}), "
      "more than the {} available: reduce train.batch_size (= {}), {}",
      format_bytes(e.total() * runs), runs > 1 ? fmt::format(" for {} runs at once", runs) : "", format_bytes(e.params),
      format_bytes(e.activations), format_bytes(e.data), format_bytes(available), c.train.batch_size,
      model_shape(c).smaller));
}

}  // namespace nt
