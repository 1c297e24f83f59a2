// What the runtime checks about memory: bounds (always), races between the threads of a block
// (with checks on), and the access observer. Also the wording of every message.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <unordered_map>

#include "simt/scheduler.hpp"

namespace simt {

const char* name(Space s) { return s == Space::global ? "global" : "shared"; }

const char* name(AccessKind k) {
  switch (k) {
    case AccessKind::read: return "read";
    case AccessKind::write: return "write";
    case AccessKind::atomic: return "atomic";
  }
  return "?";
}

namespace detail {

AccessObserver* g_observer = nullptr;

// ---- wording ---------------------------------------------------------------------------------

std::string site(const std::source_location& loc) {
  if (loc.file_name() == nullptr || loc.file_name()[0] == '\0') return "";
  return std::string(loc.file_name()) + ":" + std::to_string(loc.line());
}

namespace {
std::string triple(unsigned x, unsigned y, unsigned z) {
  std::string s(1, '(');
  s += std::to_string(x);
  s += ',';
  s += std::to_string(y);
  s += ',';
  s += std::to_string(z);
  s += ')';
  return s;
}
uint3 thread_coords(const Block& b, unsigned linear) {
  const unsigned dx = b.block_dim.x, dy = b.block_dim.y;
  return {linear % dx, linear / dx % dy, linear / (dx * dy)};
}
std::string at_site(const std::source_location& loc) {
  std::string s = site(loc);
  return s.empty() ? "" : " at " + s;
}
}  // namespace

std::string thread_name(const Block& b, unsigned linear) {
  uint3 t = thread_coords(b, linear);
  return triple(t.x, t.y, t.z);
}
std::string block_name(const Block& b) {
  return triple(b.block_idx.x, b.block_idx.y, b.block_idx.z);
}
std::string kernel_block(const Block& b) {
  return "kernel '" + b.grid->task->name + "' block " + block_name(b);
}

std::string exited_before_barrier(const Block& b, const std::string& barrier) {
  return barrier + " was reached by threads " +
         thread_ranges(b.nthreads, [&](unsigned i) { return b.fibers[i].state == FiberState::at_barrier; }) +
         " after threads " +
         thread_ranges(b.nthreads, [&](unsigned i) { return b.fibers[i].state == FiberState::exited; }) +
         " had exited (a return before a barrier: every thread of the block must reach it; CUDA leaves this "
         "undefined)";
}

std::string where_now() {
  if (tl_thread == nullptr) return "host code";
  const Block& b = current_block();
  const ThreadState& t = *tl_thread;
  return kernel_block(b) + " thread " + triple(t.thread_idx.x, t.thread_idx.y, t.thread_idx.z) +
         " (warp " + std::to_string(t.warp) + ", lane " + std::to_string(t.lane) + ")";
}

std::string lanes_text(unsigned mask) {
  return thread_ranges(kWarpSize, [&](unsigned l) { return (mask >> l & 1) != 0; });
}

std::string mask_text(unsigned mask) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", mask);
  return buf;
}

// ---- bounds ----------------------------------------------------------------------------------

void out_of_bounds(const void* addr, std::size_t bytes, const std::byte* base,
                   std::size_t region_bytes, std::size_t elem_bytes, Space space,
                   AccessKind kind, const std::source_location& loc) {
  const char* verb = kind == AccessKind::read    ? "read"
                     : kind == AccessKind::write ? "write"
                                                 : "atomic";
  if (base == nullptr && region_bytes == 0)
    fatal(where_now() + ": " + verb + " through a null pointer" + at_site(loc));
  const auto off = std::int64_t(reinterpret_cast<std::uintptr_t>(addr) -
                                reinterpret_cast<std::uintptr_t>(base));
  const auto elem = std::int64_t(elem_bytes);
  std::string index = off % elem == 0 ? " (index " + std::to_string(off / elem) + ")" : "";
  fatal(where_now() + ": out-of-bounds " + verb + " of " + std::to_string(bytes) + " bytes in " +
        name(space) + " memory at offset " + std::to_string(off) + index + " of a region of " +
        std::to_string(region_bytes) + " bytes (" + std::to_string(region_bytes / elem_bytes) +
        " elements)" + at_site(loc));
}

// ---- race tracking ---------------------------------------------------------------------------
//
// Shadow memory, per 4-byte word, for the block being run: the last write and up to two reads
// of the current barrier epoch. Two accesses race when they come from different threads, touch
// a common byte, at least one writes, not both are atomics, and neither a barrier (an earlier
// epoch) nor a warp collective both lanes took part in (vector clocks) orders them. Lossy by
// design (a third concurrent reader may be forgotten), never a false report.

namespace {

constexpr std::uint16_t kNoThread = 0xffff;

struct Access {
  std::uint32_t epoch = 0;
  std::uint32_t clock = 0;
  std::uint16_t thread = kNoThread;
  AccessKind kind = AccessKind::read;
  std::uint8_t bytes = 0;  // bit i: byte i of the word
  std::source_location site;
};

struct Word {
  std::uintptr_t key = 0;
  std::uint32_t generation = 0;  // valid only in the block that wrote it
  Access write;
  Access reads[2];
};

// Open addressing, linear probing; a new block bumps the generation instead of clearing.
class Shadow {
 public:
  void begin_block() {
    if (++generation_ == 0) {  // wrapped: really clear once in 2^32 blocks
      std::fill(table_.begin(), table_.end(), Word{});
      generation_ = 1;
    }
    used_ = 0;
    if (table_.empty()) table_.resize(1 << 12);
  }

  Word& at(std::uintptr_t key) {
    if ((used_ + 1) * 2 > table_.size()) grow();
    const std::size_t mask = table_.size() - 1;
    for (std::size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      Word& w = table_[i];
      if (w.generation != generation_) {
        w = Word{};
        w.key = key;
        w.generation = generation_;
        ++used_;
        return w;
      }
      if (w.key == key) return w;
    }
  }

 private:
  static std::size_t hash(std::uintptr_t k) { return (k * 0x9e3779b97f4a7c15ull) >> 20; }
  void grow() {
    std::vector<Word> old(table_.size() * 2);
    old.swap(table_);
    used_ = 0;
    for (Word& w : old)
      if (w.generation == generation_) at(w.key) = w;
  }

  std::vector<Word> table_;
  std::uint32_t generation_ = 0;
  std::size_t used_ = 0;
};

thread_local Shadow tl_shadow;

// Races found in the running block, deduplicated, merged into the grid's at its end.
struct LocalRaces {
  std::vector<RaceReport> reports;
  std::vector<std::uint64_t> counts;
  std::vector<std::pair<std::source_location, std::source_location>> sites;
  std::uint64_t found = 0;
};
thread_local LocalRaces tl_races;

bool same_site(const std::source_location& a, const std::source_location& b) {
  return a.line() == b.line() && a.column() == b.column() &&
         std::string_view(a.file_name()) == std::string_view(b.file_name());
}

void report_race(const Block& b, const Access& prev, const Fiber& f, AccessKind kind,
                 const std::source_location& loc, Space space, std::size_t offset) {
  LocalRaces& lr = tl_races;
  ++lr.found;
  for (std::size_t i = 0; i < lr.reports.size(); ++i) {
    const RaceReport& r = lr.reports[i];
    // One report per pair of sites (and kinds, space); with unknown sites, per word.
    if (r.space == space && r.kind_a == prev.kind && r.kind_b == kind &&
        same_site(lr.sites[i].first, prev.site) && same_site(lr.sites[i].second, loc) &&
        (prev.site.line() != 0 || r.offset == offset)) {
      ++lr.counts[i];
      return;
    }
  }
  if (lr.reports.size() >= 64) return;
  RaceReport r;
  r.kernel = b.grid->task->name;
  r.block = b.block_idx;
  r.linear_a = prev.thread;
  r.linear_b = f.linear;
  r.thread_a = thread_coords(b, prev.thread);
  r.thread_b = f.thread_idx;
  r.space = space;
  r.offset = offset;
  r.kind_a = prev.kind;
  r.kind_b = kind;
  r.site_a = site(prev.site);
  r.site_b = site(loc);
  auto who = [&](unsigned linear, AccessKind k, const std::string& s) {
    return "thread " + thread_name(b, linear) + " (warp " + std::to_string(linear / kWarpSize) +
           ", lane " + std::to_string(linear % kWarpSize) + ") " + name(k) +
           (s.empty() ? "" : " at " + s);
  };
  r.message = "race in " + kernel_block(b) + " on " + name(space) + " memory at offset " +
              std::to_string(offset) + ": " + who(prev.thread, prev.kind, r.site_a) + " and " +
              who(f.linear, kind, r.site_b) +
              ", not ordered by a barrier or warp collective both took part in";
  lr.reports.push_back(std::move(r));
  lr.counts.push_back(1);
  lr.sites.emplace_back(prev.site, loc);
}

void track_word(Block& b, Fiber& f, std::uintptr_t word, std::uint8_t bytes, AccessKind kind,
                const std::source_location& loc, Space space, std::size_t offset) {
  Word& w = tl_shadow.at(word);
  const std::uint32_t clock = f.clock[f.lane];
  auto races_with = [&](const Access& prev) {
    if (prev.thread == kNoThread || prev.epoch != b.epoch || prev.thread == f.linear) return false;
    if (!(prev.bytes & bytes)) return false;
    if (prev.kind == AccessKind::atomic && kind == AccessKind::atomic) return false;
    // Same warp: ordered when a collective of both lanes came after prev.
    if (prev.thread / kWarpSize == f.warp && prev.clock <= f.clock[prev.thread % kWarpSize])
      return false;
    return true;
  };
  const Access now{b.epoch, clock, std::uint16_t(f.linear), kind, bytes, loc};
  if (races_with(w.write)) report_race(b, w.write, f, kind, loc, space, offset);
  if (kind == AccessKind::read) {
    // Keep this read unless the slot holds one that is still unordered with later writes.
    Access* slot = &w.reads[1];
    for (Access& r : w.reads)
      if (r.thread == kNoThread || r.epoch != b.epoch || r.thread == f.linear) {
        slot = &r;
        break;
      }
    *slot = now;
    return;
  }
  for (Access& r : w.reads) {
    if (races_with(r)) report_race(b, r, f, kind, loc, space, offset);
    r = Access{};
  }
  w.write = now;
}

}  // namespace

void begin_block_tracking(Block& b) {
  if (!b.grid->checks) return;
  tl_shadow.begin_block();
  tl_races.reports.clear();
  tl_races.counts.clear();
  tl_races.sites.clear();
  tl_races.found = 0;
  for (unsigned i = 0; i < b.nthreads; ++i) {
    b.fibers[i].clock.fill(0);
    b.fibers[i].clock[i % kWarpSize] = 1;
  }
}

void end_block_tracking(Block& b) {
  if (!b.grid->checks || tl_races.found == 0) return;
  for (std::size_t i = 0; i < tl_races.reports.size(); ++i)
    b.grid->races.add(std::move(tl_races.reports[i]), tl_races.counts[i]);
  std::lock_guard lock(b.grid->races.mutex);
  b.grid->races.found += tl_races.found;
}

void RaceCollector::add(RaceReport r, std::uint64_t count) {
  std::lock_guard lock(mutex);
  for (RaceReport& have : reports)
    if (have.space == r.space && have.kind_a == r.kind_a && have.kind_b == r.kind_b &&
        have.site_a == r.site_a && have.site_b == r.site_b &&
        (!have.site_a.empty() || have.offset == r.offset)) {
      have.occurrences += count;
      return;
    }
  if (reports.size() >= 64) return;
  r.occurrences = count;
  reports.push_back(std::move(r));
}

void record_access(const void* addr, std::size_t bytes, const std::byte* base, Space space,
                   AccessKind kind, const std::source_location& loc) {
  if (tl_thread == nullptr) return;  // host code touching device memory
  Fiber& f = current_fiber();
  Block& b = current_block();
  if (AccessObserver* obs = g_observer) {
    AccessEvent e;
    e.block = b.linear;
    e.thread = f.linear;
    e.warp = f.warp;
    e.lane = f.lane;
    e.address = addr;
    e.bytes = unsigned(bytes);
    e.space = space;
    e.is_write = kind != AccessKind::read;
    e.is_atomic = kind == AccessKind::atomic;
    e.where = loc;
    obs->on_access(e);
  }
  if (!b.grid->checks) return;
  const auto a = reinterpret_cast<std::uintptr_t>(addr);
  const std::size_t offset = base ? a - reinterpret_cast<std::uintptr_t>(base) : a;
  // Split into the 4-byte words it covers, with the bytes of each.
  for (std::uintptr_t p = a; p < a + bytes;) {
    const std::uintptr_t word = p >> 2;
    const std::uintptr_t end = std::min<std::uintptr_t>(a + bytes, (word + 1) << 2);
    std::uint8_t mask = 0;
    for (std::uintptr_t q = p; q < end; ++q) mask |= std::uint8_t(1u << (q & 3));
    track_word(b, f, word, mask, kind, loc, space, offset);
    p = end;
  }
}

}  // namespace detail

void set_access_observer(AccessObserver* obs) { detail::g_observer = obs; }

}  // namespace simt
