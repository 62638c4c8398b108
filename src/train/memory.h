// What a run will take in memory, from its config alone, so that a config too big for the
// machine is refused with the figures (exit 2) before anything is allocated or written, rather
// than ending in std::bad_alloc or the kernel's OOM killer halfway.
//
//   parameters   weights, their gradients, the optimizer's moments, the trainer's copy for
//                update norms
//   activations  one training step's arena: every op's output and its gradient (Linear, norm,
//                activation, residual outputs), attention's P and dS (B x heads x T x T each), the
//                logits, plus an eighth for alignment and the arena's headroom
//   data         the dataset in memory (Fashion-MNIST 220 MB as floats, the others a few MB)
// The figures are estimates: a test holds them within a factor of two of the peak resident size.
#pragma once
#include <cstdint>
#include <string>

#include "config/config.h"

namespace nt {

struct MemoryEstimate {
  int64_t params = 0, activations = 0, data = 0;
  int64_t total() const { return params + activations + data; }
};

MemoryEstimate estimate_memory(const RunConfig& c);

// Throws InputError naming the figures when `runs` copies of the run (a sweep's parallel jobs)
// need more than the machine has available (core/machine.h).
void check_memory(const RunConfig& c, int runs = 1);

std::string format_bytes(int64_t bytes);  // "1.2 GiB", "340 MiB"

}  // namespace nt
