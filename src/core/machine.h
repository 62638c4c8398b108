// What this machine offers a run: cores, and memory that can still be taken.
#pragma once
#include <cstdint>

namespace nt {

int cpu_cores();

// The bytes this process can still allocate: the least of the kernel's MemAvailable, the room
// left under the cgroup's memory.max (a container's or a Slurm job's limit) and RLIMIT_AS.
int64_t available_memory();

}  // namespace nt
