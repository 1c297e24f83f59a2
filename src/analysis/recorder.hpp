#pragma once
// What probes (analysis/probe.cuh) saw, executed on the SIMT backend: for every warp execution
// of a probed step, which of the warp's lanes were there, and for every warp-wide memory access
// (the lanes of one warp at one source site, the k-th time each lane gets there within the step)
// the addresses it touched. From these follow the counts the seeds argue with:
//   active threads and warps, divergent warps, lane slots, SIMD utilization, the histogram of
//   active lanes per warp execution (control divergence);
//   global requests as distinct 128-byte lines per warp access (PMPP 10.5's model) and as
//   32-byte sectors (what the memory system moves);
//   shared-memory bank conflicts: a warp access to w distinct 4-byte words in one of the 32 banks
//   takes w wavefronts ("w-way"); lanes reading the same word share it (broadcast).
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "simt/runtime.hpp"

namespace rl::analysis {

struct StepCounts {
  std::optional<unsigned> step;       // the probe's value (the stride); empty: outside any step
  std::uint64_t active_threads = 0;   // lanes that did the step's work
  std::uint64_t active_warps = 0;     // warp executions with at least one such lane
  std::uint64_t divergent_warps = 0;  // some of the warp's lanes did the work, some did not
  std::uint64_t lane_slots = 0;       // 32 x active_warps: what the hardware spends
  double simd_utilization = 0;        // active_threads / lane_slots
  std::array<std::uint64_t, 33> lanes_histogram{};  // [k]: warp executions with k active lanes
  std::uint64_t global_accesses = 0;  // warp-wide global loads and stores
  std::uint64_t global_requests = 0;  // distinct 128-byte lines, summed over those accesses
  std::uint64_t global_sectors = 0;   // distinct 32-byte sectors, summed likewise
  std::uint64_t shared_accesses = 0;  // warp-wide shared loads and stores
  std::uint64_t shared_wavefronts = 0;  // sum of each access's ways (1 when conflict-free)
  unsigned bank_conflict_ways = 0;    // the worst access's ways (1: none; 0: no shared access)
  // The accesses above split into loads and stores (an access is a store when a lane wrote), each
  // with the lanes that made it: per instruction class, what Nsight Compute's warp-level and
  // thread-level SASS counters count.
  struct ClassCounts {
    std::uint64_t accesses = 0;  // warp-wide instructions
    std::uint64_t lanes = 0;     // the lanes that took part, summed over them
  };
  ClassCounts global_loads, global_stores, shared_loads, shared_stores;

  void add(const StepCounts& o);  // sums, and the max for bank_conflict_ways
  void finish();                  // lane_slots and simd_utilization from the sums
};

// What block 0 (or the first few blocks) did, warp by warp, for pictures (render/): per step, the
// lanes that did its work, those still running, and every warp access with each lane's address.
struct LaneAddress {
  unsigned lane = 0;
  std::uintptr_t address = 0;
};
struct WarpAccess {
  bool shared = false;
  bool write = false;   // at least one lane wrote
  unsigned bytes = 0;   // per lane
  std::vector<LaneAddress> lanes;  // in lane order
  unsigned sectors = 0, lines = 0;  // global: distinct 32-byte sectors and 128-byte lines
  unsigned ways = 0;                // shared: the most distinct words in one bank
};
struct WarpStep {
  std::uint64_t block = 0;
  unsigned warp = 0;
  std::uint32_t present = 0;  // lanes inside the block
  std::uint32_t active = 0;   // lanes that did the step's work
  std::uint32_t live = 0;     // lanes not exited (known from this warp's probes, carried forward)
  std::vector<WarpAccess> accesses;  // in the order the warp first made them
};
struct StepTrace {
  std::optional<unsigned> step;  // empty: accesses outside any step
  std::vector<WarpStep> warps;   // every warp of the traced blocks, by block then warp
};
struct Trace {
  unsigned threads_per_block = 0;
  std::uint64_t blocks = 0;       // traced
  std::vector<StepTrace> steps;   // the order of Counts::steps; then `outside` last
};

// The sectors, lines and bank ways of one warp access (the rules of the header comment).
void measure(WarpAccess& a);

struct Counts {
  std::vector<StepCounts> steps;  // block 0 warp 0's order, then the others by step value
  StepCounts outside;             // accesses outside any probed step (loads, final writes)
  StepCounts totals;              // the steps summed (outside not included)
};

// Records while it exists: it is Recorder::current() for probes and the SIMT runtime's access
// observer. One at a time.
class Recorder final : public simt::AccessObserver {
 public:
  explicit Recorder(unsigned threads_per_block);
  ~Recorder() override;
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  static Recorder* current();
  // `live`: the warp's lanes that have not exited (the SIMT runtime's __activemask()).
  void enter(std::uint64_t block, unsigned thread, unsigned warp, unsigned lane, unsigned step,
             std::uint32_t live = ~0u);
  void leave(std::uint64_t block, unsigned thread);
  // Attributes the thread's accesses to `step` until leave(), without marking its lane.
  void attribute(std::uint64_t block, unsigned thread, unsigned step);
  void exclude(std::uint64_t block, unsigned thread);
  void on_access(const simt::AccessEvent& e) override;

  Counts counts() const;
  // Blocks 0..blocks-1, every warp, every step (counts()'s order) and the outside accesses.
  Trace trace(std::uint64_t blocks = 1) const;

 private:
  static constexpr int kOutside = -1;
  static constexpr int kExcluded = -2;
  // The thread's accesses count toward `step` (or kOutside, kExcluded) from now on; the caller
  // holds mutex_.
  void set_step(std::uint64_t block, unsigned thread, int step);
  struct ThreadState {
    int step = kOutside;
    std::map<std::uint64_t, unsigned> visits;  // site -> times reached in the current step
  };
  struct MaskKey {
    int step;
    std::uint64_t block;
    unsigned warp;
    auto operator<=>(const MaskKey&) const = default;
  };
  struct AccessKey {
    int step;
    std::uint64_t block;
    unsigned warp;
    std::uint64_t site;
    unsigned visit;
    bool shared;
    auto operator<=>(const AccessKey&) const = default;
  };
  struct Access {
    std::vector<std::uintptr_t> addresses;
    std::vector<unsigned> lanes;  // of each address
    unsigned bytes = 0;
    bool write = false;
    std::uint64_t sequence = 0;  // when it was first made
  };
  std::vector<unsigned> ordered_steps() const;  // counts()'s order; mutex_ held

  unsigned threads_per_block_;
  mutable std::mutex mutex_;
  std::unordered_map<std::uint64_t, ThreadState> threads_;
  std::map<MaskKey, std::uint32_t> masks_;
  std::map<MaskKey, std::uint32_t> live_;  // AND of the live masks seen at enter()
  std::uint64_t sequence_ = 0;
  std::map<AccessKey, Access> accesses_;
  std::vector<unsigned> step_order_;
  std::vector<unsigned> first_warp_order_;  // steps block 0's warp 0 entered, in its order
};

}  // namespace rl::analysis
