#include "analysis/gpu_counters.hpp"

#include <algorithm>
#include <vector>

#include "analysis/recorder.hpp"

namespace rl::analysis {

Counts counts_from_gpu(const GpuProbeCounters& raw) {
  constexpr unsigned kSlots = GpuProbeCounters::kSlots;
  StepCounts by_slot[kSlots];
  for (unsigned slot = 0; slot < kSlots; ++slot) {
    StepCounts& s = by_slot[slot];
    s.step = gpu_probe_slot_step(slot);
    for (const auto& shard : raw.shards) {
      const auto& c = shard[slot];
      s.active_warps += c.executions;
      s.active_threads += c.lanes;
      s.divergent_warps += c.divergent;
      for (unsigned k = 0; k < 33; ++k) s.lanes_histogram[k] += c.histogram[k];
    }
    s.finish();
  }
  std::vector<unsigned> slots;
  for (unsigned slot = 0; slot < kSlots; ++slot)
    if (by_slot[slot].active_warps > 0) slots.push_back(slot);
  // Reached by the first warp: in its order; the others after, by step value (= slot order).
  std::stable_sort(slots.begin(), slots.end(), [&](unsigned a, unsigned b) {
    const unsigned oa = raw.order[a] ? raw.order[a] : ~0u, ob = raw.order[b] ? raw.order[b] : ~0u;
    return oa < ob;
  });
  Counts out;
  for (unsigned slot : slots) {
    out.totals.add(by_slot[slot]);
    out.steps.push_back(by_slot[slot]);
  }
  out.totals.finish();
  return out;
}

}  // namespace rl::analysis
