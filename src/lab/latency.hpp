#pragma once
// Memory latency on the GPU by a pointer chase: one thread follows a random cycle through a
// buffer, one 128-byte line per hop, each load's address the value of the one before, so no
// two loads overlap and the time per hop is the latency. Loads go through L2, not L1 (ld.cg).
//   DRAM: a buffer 16 x the L2 (at least 256 MiB): almost every hop misses L2.
//   L2:   a buffer of 8 MiB, read once before timing: every hop hits L2 (either partition).
#include "lab/device.hpp"

namespace rl::lab {
class Device;
// Throws std::runtime_error naming a failed CUDA call. CUDA devices only.
MemoryLatency measure_memory_latency(Device& device);
}  // namespace rl::lab
