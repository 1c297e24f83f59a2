#include "analysis/recorder.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <functional>
#include <utility>
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
  for (auto [mine, theirs] : {std::pair{&global_loads, &o.global_loads}, std::pair{&global_stores, &o.global_stores},
                              std::pair{&shared_loads, &o.shared_loads}, std::pair{&shared_stores, &o.shared_stores}}) {
    mine->accesses += theirs->accesses;
    mine->lanes += theirs->lanes;
  }
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

void Recorder::enter(std::uint64_t block, unsigned thread, unsigned warp, unsigned lane, unsigned step,
                     std::uint32_t live) {
  std::lock_guard lock(mutex_);
  if (std::find(step_order_.begin(), step_order_.end(), step) == step_order_.end()) step_order_.push_back(step);
  if (block == 0 && warp == 0 &&
      std::find(first_warp_order_.begin(), first_warp_order_.end(), step) == first_warp_order_.end())
    first_warp_order_.push_back(step);
  masks_[MaskKey{static_cast<int>(step), block, warp}] |= 1u << lane;
  if (auto [it, fresh] = live_.try_emplace(MaskKey{static_cast<int>(step), block, warp}, live); !fresh) it->second &= live;
  set_step(block, thread, static_cast<int>(step));
}

void Recorder::set_step(std::uint64_t block, unsigned thread, int step) {
  ThreadState& t = threads_[thread_key(block, thread)];
  t.step = step;
  t.visits.clear();
}

void Recorder::leave(std::uint64_t block, unsigned thread) {
  std::lock_guard lock(mutex_);
  set_step(block, thread, kOutside);
}

void Recorder::attribute(std::uint64_t block, unsigned thread, unsigned step) {
  std::lock_guard lock(mutex_);
  set_step(block, thread, static_cast<int>(step));
}

void Recorder::exclude(std::uint64_t block, unsigned thread) {
  std::lock_guard lock(mutex_);
  set_step(block, thread, kExcluded);
}

void Recorder::on_access(const simt::AccessEvent& e) {
  if (e.is_atomic) return;  // atomics are counted by neither model
  std::lock_guard lock(mutex_);
  ThreadState& t = threads_[thread_key(e.block, e.thread)];
  if (t.step == kExcluded) return;
  const std::uint64_t site = site_of(e.where);
  const unsigned visit = t.visits[site]++;
  Access& a = accesses_[AccessKey{t.step, e.block, e.warp, site, visit, e.space == simt::Space::shared}];
  if (a.addresses.empty()) a.sequence = sequence_++;
  a.addresses.push_back(reinterpret_cast<std::uintptr_t>(e.address));
  a.lanes.push_back(e.lane);
  a.bytes = e.bytes;
  a.write = a.write || e.is_write;
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
    WarpAccess a;
    a.shared = key.shared;
    a.bytes = access.bytes;
    for (std::uintptr_t address : access.addresses) a.lanes.push_back(LaneAddress{0, address});
    measure(a);
    // Lanes that took part: a lane counts once however many of its events fell into the access.
    std::uint32_t lanes = 0;
    for (unsigned lane : access.lanes) lanes |= 1u << (lane & 31u);
    StepCounts::ClassCounts& cls = key.shared ? (access.write ? s.shared_stores : s.shared_loads)
                                              : (access.write ? s.global_stores : s.global_loads);
    cls.accesses += 1;
    cls.lanes += static_cast<unsigned>(std::popcount(lanes));
    if (!key.shared) {
      s.global_accesses += 1;
      s.global_requests += a.lines;
      s.global_sectors += a.sectors;
    } else {
      s.shared_accesses += 1;
      s.shared_wavefronts += a.ways;
      s.bank_conflict_ways = std::max(s.bank_conflict_ways, a.ways);
    }
  }
  Counts out;
  for (unsigned step : ordered_steps()) {
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

std::vector<unsigned> Recorder::ordered_steps() const {
  // Steps in a fixed order, the GPU counters' (gpu_counters.cpp): those the grid's first warp
  // reached, in its order; then the others by step value. (The order steps were first reached
  // in by any thread depends on which worker thread ran which block first.)
  std::vector<unsigned> order = first_warp_order_;
  std::vector<unsigned> rest;
  for (unsigned step : step_order_)
    if (std::find(order.begin(), order.end(), step) == order.end()) rest.push_back(step);
  std::sort(rest.begin(), rest.end());
  order.insert(order.end(), rest.begin(), rest.end());
  return order;
}

void measure(WarpAccess& a) {
  a.sectors = a.lines = a.ways = 0;
  if (a.lanes.empty() || a.bytes == 0) return;
  if (!a.shared) {
    std::set<std::uintptr_t> lines, sectors;
    for (const LaneAddress& l : a.lanes) {
      for (std::uintptr_t b = l.address; b < l.address + a.bytes; b += 32) sectors.insert(b / 32);
      sectors.insert((l.address + a.bytes - 1) / 32);
      lines.insert(l.address / 128);
      lines.insert((l.address + a.bytes - 1) / 128);
    }
    a.sectors = static_cast<unsigned>(sectors.size());
    a.lines = static_cast<unsigned>(lines.size());
  } else {
    std::array<std::set<std::uintptr_t>, 32> banks;  // distinct 4-byte words per bank
    for (const LaneAddress& l : a.lanes)
      for (std::uintptr_t w = l.address / 4; w <= (l.address + a.bytes - 1) / 4; ++w) banks[w % 32].insert(w);
    for (const auto& words : banks) a.ways = std::max(a.ways, static_cast<unsigned>(words.size()));
  }
}

Trace Recorder::trace(std::uint64_t blocks) const {
  std::lock_guard lock(mutex_);
  const std::vector<unsigned> order = ordered_steps();
  Trace out;
  out.threads_per_block = threads_per_block_;
  out.blocks = blocks;
  const unsigned warps = (threads_per_block_ + 31) / 32;
  std::vector<int> steps(order.begin(), order.end());
  steps.push_back(kOutside);
  std::map<std::pair<std::uint64_t, unsigned>, std::uint32_t> live;  // carried forward, step to step
  for (int step : steps) {
    StepTrace st;
    if (step != kOutside) st.step = static_cast<unsigned>(step);
    for (std::uint64_t b = 0; b < blocks; ++b)
      for (unsigned w = 0; w < warps; ++w) {
        WarpStep ws;
        ws.block = b;
        ws.warp = w;
        const unsigned in_block = std::min(32u, threads_per_block_ - w * 32);
        ws.present = in_block == 32 ? ~0u : (1u << in_block) - 1;
        auto [carried, fresh] = live.try_emplace({b, w}, ws.present);
        if (auto m = masks_.find(MaskKey{step, b, w}); m != masks_.end()) ws.active = m->second;
        if (auto l = live_.find(MaskKey{step, b, w}); l != live_.end()) carried->second &= l->second;
        ws.live = carried->second & ws.present;
        std::vector<std::pair<std::uint64_t, WarpAccess>> found;
        for (auto it = accesses_.lower_bound(AccessKey{step, b, w, 0, 0, false});
             it != accesses_.end() && it->first.step == step && it->first.block == b && it->first.warp == w; ++it) {
          WarpAccess a;
          a.shared = it->first.shared;
          a.bytes = it->second.bytes;
          a.write = it->second.write;
          for (std::size_t k = 0; k < it->second.addresses.size(); ++k)
            a.lanes.push_back(LaneAddress{it->second.lanes[k], it->second.addresses[k]});
          std::stable_sort(a.lanes.begin(), a.lanes.end(),
                           [](const LaneAddress& x, const LaneAddress& y) { return x.lane < y.lane; });
          measure(a);
          found.emplace_back(it->second.sequence, std::move(a));
        }
        std::sort(found.begin(), found.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
        for (auto& f : found) ws.accesses.push_back(std::move(f.second));
        st.warps.push_back(std::move(ws));
      }
    out.steps.push_back(std::move(st));
  }
  return out;
}

}  // namespace rl::analysis
