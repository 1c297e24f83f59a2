// Block barriers and warp collectives: where fibers wait for each other, and the checks that
// turn a GPU hang or undefined behaviour into a message.
#include <algorithm>

#include "simt/scheduler.hpp"

namespace simt::detail {

const char* name(Collective c) {
  switch (c) {
    case Collective::syncwarp: return "__syncwarp";
    case Collective::shfl_idx: return "__shfl_sync";
    case Collective::shfl_up: return "__shfl_up_sync";
    case Collective::shfl_down: return "__shfl_down_sync";
    case Collective::shfl_xor: return "__shfl_xor_sync";
    case Collective::ballot: return "__ballot_sync";
    case Collective::any: return "__any_sync";
    case Collective::all: return "__all_sync";
    case Collective::reduce_add: return "__reduce_add_sync";
    case Collective::reduce_min: return "__reduce_min_sync";
    case Collective::reduce_max: return "__reduce_max_sync";
  }
  return "?";
}

namespace {

const char* barrier_name(BarrierOp op) {
  switch (op) {
    case BarrierOp::none: return "__syncthreads";
    case BarrierOp::count: return "__syncthreads_count";
    case BarrierOp::all: return "__syncthreads_and";
    case BarrierOp::any: return "__syncthreads_or";
  }
  return "?";
}

// All live threads have arrived: check that it was one barrier reached by the whole block,
// then let everyone go.
void release_barrier(Block& b) {
  Barrier& bar = b.barrier;
  if (bar.divergent) {
    // Group the waiting threads by the barrier they reached.
    std::vector<std::source_location> sites;
    std::string detail;
    for (unsigned i = 0; i < b.nthreads; ++i) {
      const Fiber& f = b.fibers[i];
      if (f.state != FiberState::at_barrier) continue;
      auto same = [&](const std::source_location& s) {
        return s.line() == f.wait_site.line() && s.column() == f.wait_site.column() &&
               std::string_view(s.file_name()) == f.wait_site.file_name();
      };
      if (std::any_of(sites.begin(), sites.end(), same)) continue;
      sites.push_back(f.wait_site);
      const std::source_location here = f.wait_site;
      if (!detail.empty()) detail += "; ";
      detail += "threads " +
                thread_ranges(b.nthreads,
                              [&](unsigned j) {
                                const Fiber& g = b.fibers[j];
                                return g.state == FiberState::at_barrier &&
                                       g.wait_site.line() == here.line() &&
                                       g.wait_site.column() == here.column() &&
                                       std::string_view(g.wait_site.file_name()) ==
                                           here.file_name();
                              }) +
                " reached the one at " + site(here);
    }
    fatal(kernel_block(b) + ": divergent __syncthreads: " + detail +
          " (every thread of a block must reach the same barrier)");
  }
  if (b.exited > 0) {
    fatal(kernel_block(b) + ": " + exited_before_barrier(b, std::string(barrier_name(bar.op)) + " at " + site(bar.site)));
  }
  switch (bar.op) {
    case BarrierOp::none: bar.result = 0; break;
    case BarrierOp::count: bar.result = bar.count; break;
    case BarrierOp::all: bar.result = bar.count == int(b.nthreads); break;
    case BarrierOp::any: bar.result = bar.count > 0; break;
  }
  bar.arrived = 0;
  bar.count = 0;
  bar.divergent = false;
  ++b.epoch;  // every access before the barrier is now ordered before every access after it
  std::array<unsigned, kMaxBlockThreads> ids;
  for (unsigned i = 0; i < b.nthreads; ++i) ids[i] = i;
  b.release(ids.data(), b.nthreads);
}

bool same_site(const std::source_location& a, const std::source_location& b) {
  return a.line() == b.line() && a.column() == b.column() &&
         (a.file_name() == b.file_name() ||
          std::string_view(a.file_name()) == std::string_view(b.file_name()));
}

}  // namespace

int sync_threads(BarrierOp op, int predicate, const std::source_location& loc) {
  const ThreadState& t = current_thread(loc);
  Fiber& f = static_cast<Fiber&>(const_cast<ThreadState&>(t));
  Block& b = current_block();
  Barrier& bar = b.barrier;
  if (bar.arrived == 0) {
    bar.site = loc;
    bar.op = op;
  } else if (!same_site(bar.site, loc) || bar.op != op) {
    bar.divergent = true;
  }
  bar.count += predicate != 0;
  f.state = FiberState::at_barrier;
  f.wait_site = loc;
  ++bar.arrived;
  if (bar.arrived + b.exited == b.nthreads) release_barrier(b);
  suspend(f);
  return bar.result;
}

unsigned active_mask(const std::source_location& loc) {
  const ThreadState& t = current_thread(loc);
  const Warp& w = current_block().warps[t.warp];
  return w.present & ~w.exited;
}

namespace {

bool is_shuffle(Collective c) {
  return c == Collective::shfl_idx || c == Collective::shfl_up || c == Collective::shfl_down ||
         c == Collective::shfl_xor;
}

// The lane a shuffle reads, as PTX's shfl.sync defines it: segments of `width` lanes; a source
// outside the caller's segment (or below it for up) gives the caller its own value.
unsigned shuffle_source(Collective c, unsigned lane, int arg, int width) {
  const unsigned w = unsigned(width);
  const unsigned first = lane & ~(w - 1), last = first + w - 1;
  const unsigned b = unsigned(arg) & 31u;
  int j = int(lane);
  bool valid = true;
  switch (c) {
    case Collective::shfl_idx: j = int(first + (b & (w - 1))); break;
    case Collective::shfl_up: j = int(lane) - int(b); valid = j >= int(first); break;
    case Collective::shfl_down: j = int(lane + b); valid = j <= int(last); break;
    case Collective::shfl_xor: j = int(lane ^ b); valid = j <= int(last); break;
    default: break;
  }
  return valid ? unsigned(j) : lane;
}

// Every lane of the group has arrived: compute each lane's result.
void complete(Warp& w, const WarpGroup& g) {
  const unsigned mask = g.mask;
  switch (g.op) {
    case Collective::syncwarp: break;
    case Collective::shfl_idx:
    case Collective::shfl_up:
    case Collective::shfl_down:
    case Collective::shfl_xor:
      for (unsigned l = 0; l < kWarpSize; ++l) {
        if (!(mask >> l & 1)) continue;
        const unsigned src = shuffle_source(g.op, l, w.arg[l], w.width[l]);
        // A source lane outside the mask has no defined value on the GPU: give the own value.
        w.result[l] = (mask >> src & 1) ? w.value[src] : w.value[l];
      }
      break;
    case Collective::ballot:
    case Collective::any:
    case Collective::all: {
      unsigned ballot = 0;
      for (unsigned l = 0; l < kWarpSize; ++l)
        if ((mask >> l & 1) && w.arg[l]) ballot |= 1u << l;
      const std::uint64_t r = g.op == Collective::ballot ? ballot
                              : g.op == Collective::any  ? (ballot != 0)
                                                         : (ballot == mask);
      for (unsigned l = 0; l < kWarpSize; ++l)
        if (mask >> l & 1) w.result[l] = r;
      break;
    }
    case Collective::reduce_add:
    case Collective::reduce_min:
    case Collective::reduce_max: {
      std::uint32_t acc = 0;
      bool first = true;
      for (unsigned l = 0; l < kWarpSize; ++l) {
        if (!(mask >> l & 1)) continue;
        const auto v = std::uint32_t(w.value[l]);
        if (first) {
          acc = v;
          first = false;
        } else if (g.op == Collective::reduce_add) {
          acc += v;
        } else {
          const bool less = w.is_signed[l] ? std::int32_t(v) < std::int32_t(acc) : v < acc;
          if ((g.op == Collective::reduce_min) == less) acc = v;
        }
      }
      for (unsigned l = 0; l < kWarpSize; ++l)
        if (mask >> l & 1) w.result[l] = acc;
      break;
    }
  }
}

// The lanes of a completed collective have synchronized: each now knows what the others did
// (vector clocks for race tracking), then moves to a new clock value.
void join_clocks(Block& b, unsigned warp, unsigned mask) {
  std::array<std::uint32_t, kWarpSize> joined{};
  Fiber* lanes = b.fibers + warp * kWarpSize;
  for (unsigned l = 0; l < kWarpSize; ++l)
    if (mask >> l & 1)
      for (unsigned k = 0; k < kWarpSize; ++k) joined[k] = std::max(joined[k], lanes[l].clock[k]);
  for (unsigned l = 0; l < kWarpSize; ++l)
    if (mask >> l & 1) {
      lanes[l].clock = joined;
      ++lanes[l].clock[l];
    }
}

}  // namespace

std::uint64_t warp_collective(Collective op, unsigned mask, std::uint64_t value, int arg,
                              int width, bool is_signed, const std::source_location& loc) {
  const ThreadState& t = current_thread(loc);
  Fiber& f = static_cast<Fiber&>(const_cast<ThreadState&>(t));
  Block& b = current_block();
  Warp& w = b.warps[f.warp];
  const unsigned lane = f.lane, bit = 1u << lane;

  if (!(mask & bit))
    fatal(where_now() + ": " + name(op) + " at " + site(loc) + " with mask " + mask_text(mask) +
          " that does not name the calling lane " + std::to_string(lane));
  if (mask & ~w.present)
    fatal(where_now() + ": " + name(op) + " at " + site(loc) + " with mask " + mask_text(mask) +
          " names absent lane(s) " + lanes_text(mask & ~w.present) + " of warp " +
          std::to_string(f.warp) + " (outside blockDim: the warp has lanes " +
          lanes_text(w.present) + ")");
  if (mask & w.exited)
    fatal(where_now() + ": " + name(op) + " at " + site(loc) + " with mask " + mask_text(mask) +
          " names lane(s) " + lanes_text(mask & w.exited) + " of warp " + std::to_string(f.warp) +
          " that already exited");
  if (is_shuffle(op) && (width < 1 || width > 32 || (width & (width - 1)) != 0))
    fatal(where_now() + ": " + name(op) + " at " + site(loc) + " with width " +
          std::to_string(width) + " (must be a power of two from 1 to 32)");

  w.value[lane] = value;
  w.arg[lane] = arg;
  w.width[lane] = width;
  w.is_signed[lane] = is_signed;

  WarpGroup* group = nullptr;
  for (WarpGroup& g : w.groups)
    if (g.mask == mask) group = &g;
  if (group == nullptr) {
    w.groups.push_back({mask, 0, op, loc});
    group = &w.groups.back();
  } else if (group->op != op) {
    fatal(where_now() + ": " + name(op) + " at " + site(loc) + " while lanes " +
          lanes_text(group->arrived) + " of warp " + std::to_string(f.warp) + " wait in " +
          name(group->op) + " at " + site(group->site) + " with the same mask " +
          mask_text(mask) + " (the lanes of a mask must call the same collective)");
  }
  group->arrived |= bit;
  f.state = FiberState::at_warp;
  f.wait_op = op;
  f.wait_site = loc;

  if (group->arrived == mask) {
    complete(w, *group);
    if (b.grid->checks) join_clocks(b, f.warp, mask);
    w.groups.erase(w.groups.begin() + (group - w.groups.data()));
    if (mask == bit) {  // a warp of one: nothing to wait for
      f.state = FiberState::runnable;
      return w.result[lane];
    }
    std::array<unsigned, kWarpSize> ids;
    unsigned n = 0;
    for (unsigned l = 0; l < kWarpSize; ++l)
      if (mask >> l & 1) ids[n++] = f.warp * kWarpSize + l;
    b.release(ids.data(), n);
  }
  suspend(f);
  return w.result[lane];
}

std::string describe_stall(const Block& b) {
  std::string text = kernel_block(b) + ": deadlock, no thread can continue:";
  bool first = true;
  auto part = [&](const std::string& s) {
    text += first ? " " : "; ";
    text += s;
    first = false;
  };
  if (b.barrier.arrived > 0)
    part("threads " +
         thread_ranges(b.nthreads,
                       [&](unsigned i) { return b.fibers[i].state == FiberState::at_barrier; }) +
         " wait at __syncthreads (" + site(b.barrier.site) + ")");
  for (unsigned wi = 0; wi < b.nwarps; ++wi) {
    const Warp& w = b.warps[wi];
    for (const WarpGroup& g : w.groups) {
      std::string s = "warp " + std::to_string(wi) + " lanes " + lanes_text(g.arrived) +
                      " wait in " + name(g.op) + " at " + site(g.site) + " (mask " +
                      mask_text(g.mask) + ") for lanes " + lanes_text(g.mask & ~g.arrived);
      const unsigned missing = g.mask & ~g.arrived;
      unsigned at_barrier = 0;
      for (unsigned l = 0; l < kWarpSize; ++l)
        if ((missing >> l & 1) && b.fibers[wi * kWarpSize + l].state == FiberState::at_barrier)
          at_barrier |= 1u << l;
      if (at_barrier) s += " (lanes " + lanes_text(at_barrier) + " are at __syncthreads)";
      part(s);
    }
  }
  if (b.exited > 0)
    part("threads " +
         thread_ranges(b.nthreads,
                       [&](unsigned i) { return b.fibers[i].state == FiberState::exited; }) +
         " have exited");
  return text;
}

}  // namespace simt::detail
