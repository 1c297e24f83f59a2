#include "analysis/recorder.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <functional>
#include <set>
#include <stdexcept>
#include <string_view>

namespace rl::analysis {
namespace {
std::atomic<Recorder*> g_current{nullptr};

std::uint64_t thread_key(std::uint64_t block, unsigned thread) { return block << 11 | thread; }

// A source site: the file, line and column of the access (one expression can access twice).
std::uint64_t site_of(const std::source_location& w) {
  return std::hash<std::string_view>{}(w.file_name()) ^ (std::uint64_t(w.line()) << 20 | w.column());
}
}  // namespace

void StepCounts::add(const StepCounts& o) {
  active_threads += o.active_threads;
  active_warps += o.active_warps;
  divergent_warps += o.divergent_warps;
  for (std::size_t k = 0; k < lanes_histogram.size(); ++k) lanes_histogram[k] += o.lanes_histogram[k];
  global_accesses += o.global_accesses;
  global_requests += o.global_requests;
  global_sectors += o.global_sectors;
  shared_accesses += o.shared_accesses;
  shared_wavefronts += o.shared_wavefronts;
  bank_conflict_ways = std::max(bank_conflict_ways, o.bank_conflict_ways);
}

void StepCounts::finish() {
  lane_slots = 32 * active_warps;
  simd_utilization = lane_slots ? static_cast<double>(active_threads) / static_cast<double>(lane_slots) : 0;
}

Recorder::Recorder(unsigned threads_per_block) : threads_per_block_(threads_per_block) {
  Recorder* expected = nullptr;
  if (!g_current.compare_exchange_strong(expected, this))
    throw std::logic_error("analysis::Recorder: another recorder is already recording");
  simt::set_access_observer(this);
}

Recorder::~Recorder() {
  simt::set_access_observer(nullptr);
  g_current.store(nullptr);
}

Recorder* Recorder::current() { return g_current.load(std::memory_order_relaxed); }

void Recorder::enter(std::uint64_t block, unsigned thread, unsigned warp, unsigned lane, unsigned step) {
  std::lock_guard lock(mutex_);
  if (std::find(step_order_.begin(), step_order_.end(), step) == step_order_.end()) step_order_.push_back(step);
  if (block == 0 && warp == 0 &&
      std::find(first_warp_order_.begin(), first_warp_order_.end(), step) == first_warp_order_.end())
    first_warp_order_.push_back(step);
  masks_[MaskKey{static_cast<int>(step), block, warp}] |= 1u << lane;
  ThreadState& t = threads_[thread_key(block, thread)];
  t.step = static_cast<int>(step);
  t.visits.clear();
}

void Recorder::leave(std::uint64_t block, unsigned thread) {
  std::lock_guard lock(mutex_);
  ThreadState& t = threads_[thread_key(block, thread)];
  t.step = kOutside;
  t.visits.clear();
}

void Recorder::attribute(std::uint64_t block, unsigned thread, unsigned step) {
  std::lock_guard lock(mutex_);
  ThreadState& t = threads_[thread_key(block, thread)];
  t.step = static_cast<int>(step);
  t.visits.clear();
}

void Recorder::exclude(std::uint64_t block, unsigned thread) {
  std::lock_guard lock(mutex_);
  ThreadState& t = threads_[thread_key(block, thread)];
  t.step = kExcluded;
  t.visits.clear();
}

void Recorder::on_access(const simt::AccessEvent& e) {
  if (e.is_atomic) return;  // atomics are counted by neither model
  std::lock_guard lock(mutex_);
  ThreadState& t = threads_[thread_key(e.block, e.thread)];
  if (t.step == kExcluded) return;
  const std::uint64_t site = site_of(e.where);
  const unsigned visit = t.visits[site]++;
  Access& a = accesses_[AccessKey{t.step, e.block, e.warp, site, visit, e.space == simt::Space::shared}];
  a.addresses.push_back(reinterpret_cast<std::uintptr_t>(e.address));
  a.bytes = e.bytes;
}

Counts Recorder::counts() const {
  std::lock_guard lock(mutex_);
  std::map<int, StepCounts> by_step;
  for (const auto& [key, mask] : masks_) {
    StepCounts& s = by_step[key.step];
    const unsigned live = std::min(32u, threads_per_block_ - key.warp * 32);
    const unsigned lanes = static_cast<unsigned>(std::popcount(mask));
    s.active_threads += lanes;
    s.active_warps += 1;
    s.divergent_warps += lanes < live ? 1 : 0;
    s.lanes_histogram[lanes] += 1;
  }
  for (const auto& [key, access] : accesses_) {
    StepCounts& s = by_step[key.step];
    if (!key.shared) {
      std::set<std::uintptr_t> lines, sectors;
      for (std::uintptr_t a : access.addresses) {
        for (std::uintptr_t b = a; b < a + access.bytes; b += 32) sectors.insert(b / 32);
        sectors.insert((a + access.bytes - 1) / 32);
        lines.insert(a / 128);
        lines.insert((a + access.bytes - 1) / 128);
      }
      s.global_accesses += 1;
      s.global_requests += lines.size();
      s.global_sectors += sectors.size();
    } else {
      std::array<std::set<std::uintptr_t>, 32> banks;  // distinct 4-byte words per bank
      for (std::uintptr_t a : access.addresses)
        for (std::uintptr_t w = a / 4; w <= (a + access.bytes - 1) / 4; ++w) banks[w % 32].insert(w);
      unsigned ways = 0;
      for (const auto& words : banks) ways = std::max(ways, static_cast<unsigned>(words.size()));
      s.shared_accesses += 1;
      s.shared_wavefronts += ways;
      s.bank_conflict_ways = std::max(s.bank_conflict_ways, ways);
    }
  }
  // Steps in a fixed order, the GPU counters' (gpu_counters.cpp): those the grid's first warp
  // reached, in its order; then the others by step value. (The order steps were first reached
  // in by any thread depends on which worker thread ran which block first.)
  std::vector<unsigned> order = first_warp_order_;
  std::vector<unsigned> rest;
  for (unsigned step : step_order_)
    if (std::find(order.begin(), order.end(), step) == order.end()) rest.push_back(step);
  std::sort(rest.begin(), rest.end());
  order.insert(order.end(), rest.begin(), rest.end());
  Counts out;
  for (unsigned step : order) {
    StepCounts s = by_step[static_cast<int>(step)];
    s.step = step;
    s.finish();
    out.totals.add(s);
    out.steps.push_back(s);
  }
  out.totals.finish();
  out.outside = by_step[kOutside];
  out.outside.finish();
  return out;
}

}  // namespace rl::analysis
