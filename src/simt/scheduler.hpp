#pragma once
// Internal to the runtime (.cpp files only): fibers, blocks, warps, the worker that runs them.
//
// One worker (an OS thread) runs one block at a time. The block's threads are fibers; the
// worker's own stack runs the scheduler, which resumes runnable fibers from a queue. A fiber
// runs until it blocks (barrier, warp collective) or exits, then jumps back to the scheduler.
#include <boost/context/detail/fcontext.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "simt/runtime.hpp"

namespace simt::detail {

namespace fctx = boost::context::detail;

enum class FiberState : std::uint8_t { runnable, at_barrier, at_warp, exited };

struct Fiber : ThreadState {
  fctx::fcontext_t context = nullptr;  // where to resume it
  FiberState state = FiberState::runnable;
  Collective wait_op = Collective::syncwarp;
  std::source_location wait_site;       // where it blocks
  std::byte* stack_bottom = nullptr;    // lowest usable address (above the guard page)
  void* asan_fake_stack = nullptr;
  // Race tracking: what this lane knows of each lane of its warp (vector clock); own entry is
  // its current clock. A warp collective joins the clocks of its lanes.
  std::array<std::uint32_t, kWarpSize> clock{};
};

// A warp collective waiting for lanes: one per distinct mask in flight.
struct WarpGroup {
  unsigned mask = 0, arrived = 0;
  Collective op = Collective::syncwarp;
  std::source_location site;
};

struct Warp {
  unsigned present = 0;  // lanes inside blockDim
  unsigned exited = 0;
  std::vector<WarpGroup> groups;  // usually 0 or 1
  std::array<std::uint64_t, kWarpSize> value{}, result{};
  std::array<int, kWarpSize> arg{}, width{};
  std::array<bool, kWarpSize> is_signed{};
};

struct Barrier {
  unsigned arrived = 0;
  std::source_location site;  // of the first arrival
  bool divergent = false;     // a second site (or another variant) was reached
  BarrierOp op = BarrierOp::none;
  int count = 0, result = 0;
};

// Races found in one grid, deduplicated, shared by the workers.
struct RaceCollector {
  std::mutex mutex;
  std::uint64_t found = 0;
  std::vector<RaceReport> reports;
  void add(RaceReport r, std::uint64_t count);
};

// One grid being run by the pool.
struct Grid {
  const GridTask* task = nullptr;
  std::uint64_t nblocks = 0;
  unsigned nthreads = 0;  // per block
  Schedule schedule = Schedule::in_order;
  std::uint64_t seed = 0;
  bool checks = true;
  std::atomic<std::uint64_t> next_block{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::string error;  // first fatal error
  struct Tail {
    std::uint64_t block;
    unsigned thread, seq;
    GridTask task;
  };
  std::vector<Tail> tails;
  RaceCollector races;
  void fail(const std::string& what);
};

struct Block : BlockState {
  Grid* grid = nullptr;
  unsigned nthreads = 0, nwarps = 0;
  Fiber* fibers = nullptr;
  Warp* warps = nullptr;
  Barrier barrier;
  unsigned exited = 0;
  std::uint32_t epoch = 0;  // barriers completed: orders all accesses of earlier epochs
  unsigned tails_queued = 0;
  bool failed = false, cancel = false;
  std::string error;
  std::uint64_t rng = 0;
  // Run queue: a ring of fiber ids; a fiber is in it at most once.
  std::array<std::uint16_t, kMaxBlockThreads> queue{};
  unsigned head = 0, count = 0;

  void push(unsigned id) { queue[(head + count++) % kMaxBlockThreads] = std::uint16_t(id); }
  bool pop(unsigned& id) {
    if (count == 0) return false;
    id = queue[head];
    head = (head + 1) % kMaxBlockThreads;
    --count;
    return true;
  }
  // Makes runnable, in the schedule's order, the fibers whose ids are given (ascending).
  void release(unsigned* ids, unsigned n);
  void fail(const std::string& what);  // records the first error; does not throw
};

// Everything a worker thread owns: stacks, fibers, the block being run, race shadow memory.
struct Worker;
Worker& this_worker();

// Runs block `linear` of `grid` on this worker; returns false when it failed.
bool run_block(Grid& grid, std::uint64_t linear);

// The running fiber gives control back to the scheduler; throws Unwind when the block is being
// cancelled after a fatal error.
void suspend(Fiber& f);
struct Unwind {};

Fiber& current_fiber();
Block& current_block();

// Message helpers.
std::string thread_name(const Block& b, unsigned linear);  // "(x,y,z)"
std::string block_name(const Block& b);                     // "(x,y,z)"
std::string kernel_block(const Block& b);                   // "kernel 'k' block (x,y,z)"
std::string lanes_text(unsigned mask);                      // "0-15, 17"
std::string mask_text(unsigned mask);                       // "0x0000ffff"
// "<barrier> was reached by threads ... after threads ... had exited (...)": the report of a
// barrier that some threads of the block returned before. `barrier` names it and its site.
std::string exited_before_barrier(const Block& b, const std::string& barrier);
// Threads of the block for which pred(id) holds, as ranges: "0-15, 32-47".
template <class Pred>
std::string thread_ranges(unsigned n, Pred pred) {
  std::string out;
  unsigned ranges = 0;
  for (unsigned i = 0; i < n;) {
    if (!pred(i)) {
      ++i;
      continue;
    }
    unsigned j = i;
    while (j + 1 < n && pred(j + 1)) ++j;
    if (ranges++ == 6) {
      out += ", ...";
      break;
    }
    if (!out.empty()) out += ", ";
    out += std::to_string(i);
    if (j > i) {
      out += '-';
      out += std::to_string(j);
    }
    i = j + 1;
  }
  return out;
}

// Stall: no fiber can run, some have not exited. Describes who waits where (one line).
std::string describe_stall(const Block& b);

// Race tracking and the observer (checks.cpp).
void begin_block_tracking(Block& b);
void end_block_tracking(Block& b);
extern AccessObserver* g_observer;

}  // namespace simt::detail
