#pragma once
// Active-lane counts from probes (analysis/probe.cuh), executed on the SIMT backend: for every
// warp execution of a probed step, which of the warp's lanes were there. From the masks follow
// the counts the seeds argue with: active threads and warps, divergent warps, lane slots, SIMD
// utilization, and the histogram of active lanes per warp execution.
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace rl::analysis {

struct StepCounts {
  unsigned step = 0;
  std::uint64_t active_threads = 0;   // lanes that reached the probe
  std::uint64_t active_warps = 0;     // warps with at least one such lane
  std::uint64_t divergent_warps = 0;  // some of the warp's live lanes reached it, some did not
  std::uint64_t lane_slots = 0;       // 32 x active_warps: what the hardware spends
  double simd_utilization = 0;        // active_threads / lane_slots
  std::array<std::uint64_t, 33> lanes_histogram{};  // [k]: warp executions with k active lanes
};

// Records probe hits of one launch (or several) while it is `current()`. Blocks run on several
// worker threads at once, so hits are kept per worker and merged when read.
class LaneRecorder {
 public:
  explicit LaneRecorder(unsigned threads_per_block);
  ~LaneRecorder();
  LaneRecorder(const LaneRecorder&) = delete;
  LaneRecorder& operator=(const LaneRecorder&) = delete;

  static LaneRecorder* current();
  void hit(std::uint64_t block, unsigned warp, unsigned lane, unsigned step);

  // One row per step, in step order. A warp's live lanes are the threads the block has in it
  // (the last warp of a block whose size is not a multiple of 32 has fewer).
  std::vector<StepCounts> steps() const;

 private:
  struct Key {
    std::uint64_t block;
    unsigned warp, step;
    bool operator<(const Key& o) const {
      return step != o.step ? step < o.step : block != o.block ? block < o.block : warp < o.warp;
    }
  };
  unsigned threads_per_block_;
  mutable std::mutex mutex_;
  std::map<Key, std::uint32_t> masks_;
};

}  // namespace rl::analysis
