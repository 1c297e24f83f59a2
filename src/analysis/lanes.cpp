#include "analysis/lanes.hpp"

#include <atomic>
#include <bit>
#include <stdexcept>

namespace rl::analysis {
namespace {
std::atomic<LaneRecorder*> g_current{nullptr};
}

LaneRecorder::LaneRecorder(unsigned threads_per_block) : threads_per_block_(threads_per_block) {
  LaneRecorder* expected = nullptr;
  if (!g_current.compare_exchange_strong(expected, this))
    throw std::logic_error("LaneRecorder: another recorder is already recording");
}

LaneRecorder::~LaneRecorder() { g_current.store(nullptr); }

LaneRecorder* LaneRecorder::current() { return g_current.load(std::memory_order_relaxed); }

void LaneRecorder::hit(std::uint64_t block, unsigned warp, unsigned lane, unsigned step) {
  // A lane may reach a probe more than once per step (a loop inside it); the mask records that it
  // was there, which is what divergence is about.
  std::lock_guard lock(mutex_);
  masks_[Key{block, warp, step}] |= 1u << lane;
}

std::vector<StepCounts> LaneRecorder::steps() const {
  std::lock_guard lock(mutex_);
  std::vector<StepCounts> out;
  for (const auto& [key, mask] : masks_) {
    if (out.empty() || out.back().step != key.step) {
      out.push_back({});
      out.back().step = key.step;
    }
    StepCounts& s = out.back();
    const unsigned live = std::min(32u, threads_per_block_ - key.warp * 32);
    const unsigned lanes = static_cast<unsigned>(std::popcount(mask));
    s.active_threads += lanes;
    s.active_warps += 1;
    s.divergent_warps += lanes < live ? 1 : 0;
    s.lanes_histogram[lanes] += 1;
  }
  for (StepCounts& s : out) {
    s.lane_slots = 32 * s.active_warps;
    s.simd_utilization = s.lane_slots ? static_cast<double>(s.active_threads) / s.lane_slots : 0;
  }
  return out;
}

}  // namespace rl::analysis
