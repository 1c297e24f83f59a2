#pragma once
// What the instrumented CUDA build's probes count on the GPU (probe.cuh with RL_PROBES_ON_GPU=1):
// per step and per warp execution of the probe, the lanes that were there, read with
// __activemask() and __popc() by the lowest of them and added with atomics into this buffer.
// One layout for nvcc (device code writes it) and g++ (the host sums it): plain integers only.
//
// A step is a slot: step 0 is slot 0, step 2^k is slot k + 1 (gallery steps are strides, powers
// of two). Any other value is counted in `irregular` and nowhere else. Each slot is kept in
// kShards copies chosen by the global warp index, so that a large grid does not queue every
// warp's atomics on one address.
#include <cstdint>

namespace rl::analysis {

struct Counts;  // analysis/recorder.hpp (host only: nvcc's device pass never sees it)

struct GpuProbeCounters {
  static constexpr unsigned kSlots = 33;
  static constexpr unsigned kShards = 32;
  struct Slot {
    unsigned long long executions;    // warp executions of the probe
    unsigned long long lanes;         // active lanes summed over them
    unsigned long long divergent;     // executions with fewer lanes than the warp has threads
    unsigned long long histogram[33]; // [k]: executions with k active lanes
  };
  Slot shards[kShards][kSlots];
  // 1 + the position at which the grid's first warp (block 0, warp 0) first reached the slot;
  // 0 when it never did. Written by that warp's leading lane only, so no atomics are needed.
  unsigned order[kSlots];
  unsigned order_next;
  unsigned long long irregular;  // probes whose step was neither 0 nor a power of two
};

constexpr unsigned gpu_probe_slot_step(unsigned slot) { return slot == 0 ? 0u : 1u << (slot - 1); }

// The shards summed into the recorder's shape: steps ordered as the grid's first warp met them
// (slots it never reached follow, by step value); only the lane fields are filled (the GPU build
// records no addresses), so memory fields stay 0.
Counts counts_from_gpu(const GpuProbeCounters& raw);

}  // namespace rl::analysis
