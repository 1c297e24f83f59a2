// The SIMT runtime's engine: fibers and their stacks, the per-block scheduler, the pool of
// worker threads that runs blocks, and launch()/tail_launch().
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "simt/scheduler.hpp"

#if defined(__SANITIZE_ADDRESS__)
extern "C" void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom,
                                               std::size_t size);
extern "C" void __sanitizer_finish_switch_fiber(void* fake_stack_save, const void** bottom_old,
                                                std::size_t* size_old);
#define SIMT_ASAN 1
#else
#define SIMT_ASAN 0
#endif

namespace simt {

namespace detail {

constinit thread_local ThreadState* tl_thread = nullptr;
constinit thread_local BlockState* tl_block = nullptr;
bool g_track_accesses = false;

namespace {

// Fiber stacks. 64 KiB: the deepest kernel of the tests and gallery uses a few KiB (measured
// by simt_bench, docs/simt.md), and throwing/unwinding on a fatal error needs about 2 KiB.
// Pages are only touched when used, so a 1024-thread block costs 64 MiB of address space but
// little memory. ASan's redzones and fake frames need more.
#if SIMT_ASAN
constexpr std::size_t kStackBytes = 256 * 1024;
#else
constexpr std::size_t kStackBytes = 64 * 1024;
#endif

std::atomic<Schedule> g_schedule{Schedule::in_order};
std::atomic<std::uint64_t> g_seed{0};
std::atomic<bool> g_checks{true};
std::atomic<unsigned> g_workers{0};

std::mutex g_report_mutex;
LaunchReport g_last_report;
LaunchReport g_accumulated;

void accumulate(const LaunchReport& r) {
  LaunchReport& acc = g_accumulated;
  if (acc.grids.empty()) acc.kernel = r.kernel;
  for (const std::string& g : r.grids)
    if (acc.grids.size() < 1024) acc.grids.push_back(g);  // bounded if never reset
  acc.blocks += r.blocks;
  acc.threads += r.threads;
  acc.checked = acc.checked || r.checked;
  acc.races_found += r.races_found;
  for (const RaceReport& race : r.races)
    if (acc.races.size() < 64) acc.races.push_back(race);
}

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

std::uint64_t splitmix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

struct Worker {
  // Stacks, allocated in chunks as blocks need them, each below its own guard page; reused by
  // every block and launch this thread runs.
  struct Chunk {
    void* base;
    std::size_t bytes;
  };
  std::vector<Chunk> chunks;
  std::vector<std::byte*> stacks;  // bottom of each stack (above its guard page)

  std::vector<Fiber> fibers = std::vector<Fiber>(kMaxBlockThreads);
  std::vector<Warp> warps = std::vector<Warp>(kMaxBlockThreads / kWarpSize);
  Block block;

  // `extern __shared__` memory: 16-byte aligned, grown to the largest launch seen.
  std::byte* dynamic_shared = nullptr;
  std::size_t dynamic_capacity = 0, dynamic_bytes = 0;

  fctx::fcontext_t scheduler = nullptr;  // the scheduler's context while a fiber runs
  const void* asan_scheduler_bottom = nullptr;
  std::size_t asan_scheduler_size = 0;
  void* asan_scheduler_fake = nullptr;

  Worker() = default;
  Worker(const Worker&) = delete;
  ~Worker() {
    for (const Chunk& c : chunks) munmap(c.base, c.bytes);
    std::free(dynamic_shared);
  }

  void ensure_stacks(unsigned n) {
    if (stacks.size() >= n) return;
    const std::size_t slot = kStackBytes + page_size();  // guard page below each stack
    const std::size_t count = n - stacks.size();
    const std::size_t bytes = slot * count;
    void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) throw KernelError("simt: cannot map fiber stacks");
    chunks.push_back({base, bytes});
    for (std::size_t i = 0; i < count; ++i) {
      std::byte* guard = static_cast<std::byte*>(base) + i * slot;
      mprotect(guard, page_size(), PROT_NONE);
      stacks.push_back(guard + page_size());
    }
  }

  void ensure_dynamic_shared(std::size_t bytes) {
    dynamic_bytes = bytes;
    if (bytes <= dynamic_capacity) return;
    std::free(dynamic_shared);
    dynamic_capacity = (bytes + 15) / 16 * 16;
    dynamic_shared = static_cast<std::byte*>(std::aligned_alloc(16, dynamic_capacity));
    if (dynamic_shared == nullptr) throw KernelError("simt: out of memory for shared memory");
  }
};

Worker& this_worker() {
  thread_local Worker worker;
  return worker;
}

namespace {
constinit thread_local Worker* tl_worker = nullptr;
}

Fiber& current_fiber() { return *static_cast<Fiber*>(tl_thread); }
Block& current_block() { return *static_cast<Block*>(tl_block); }

DynamicShared dynamic_shared_now() {
  if (tl_worker == nullptr || tl_thread == nullptr)
    fatal("simt::dynamic_shared used outside a kernel");
  return {tl_worker->dynamic_shared, tl_worker->dynamic_bytes};
}

// ---- errors --------------------------------------------------------------------------------

void Grid::fail(const std::string& what) {
  std::lock_guard lock(mutex);
  if (!failed.exchange(true)) error = what;
}

void Block::fail(const std::string& what) {
  if (!failed) {
    failed = true;
    error = what;
  }
}

void fatal(const std::string& what) {
  if (tl_thread == nullptr) throw KernelError("simt: " + what);
  current_block().fail("simt: " + what);
  throw Unwind{};
}

// ---- the scheduler -------------------------------------------------------------------------

void Block::release(unsigned* ids, unsigned n) {
  switch (grid->schedule) {
    case Schedule::in_order:
      for (unsigned i = 0; i < n; ++i) push(ids[i]);
      break;
    case Schedule::reverse:
      for (unsigned i = n; i-- > 0;) push(ids[i]);
      break;
    case Schedule::random:
      for (unsigned i = n; i > 1; --i) std::swap(ids[i - 1], ids[splitmix(rng) % i]);
      for (unsigned i = 0; i < n; ++i) push(ids[i]);
      break;
  }
  for (unsigned i = 0; i < n; ++i) fibers[ids[i]].state = FiberState::runnable;
}

namespace {

void switch_to_scheduler(Worker& w, Fiber& f, bool exiting) {
#if SIMT_ASAN
  __sanitizer_start_switch_fiber(exiting ? nullptr : &f.asan_fake_stack, w.asan_scheduler_bottom,
                                 w.asan_scheduler_size);
#endif
  (void)exiting;
  (void)f;
  fctx::transfer_t t = fctx::jump_fcontext(w.scheduler, nullptr);
  // Resumed by the scheduler (same OS thread: the worker is unchanged).
  w.scheduler = t.fctx;
#if SIMT_ASAN
  __sanitizer_finish_switch_fiber(f.asan_fake_stack, &w.asan_scheduler_bottom,
                                  &w.asan_scheduler_size);
#endif
}

void thread_exit(Block& b, Fiber& f);

[[noreturn]] void fiber_main(fctx::transfer_t t) {
  Worker& w = *tl_worker;
  w.scheduler = t.fctx;
  Fiber& f = *static_cast<Fiber*>(t.data);
#if SIMT_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &w.asan_scheduler_bottom, &w.asan_scheduler_size);
#endif
  Block& b = w.block;
  if (!b.cancel) {
    try {
      b.grid->task->invoke(b.grid->task->closure.get());
    } catch (const Unwind&) {
    } catch (const std::exception& e) {
      b.fail("simt: " + where_now() + ": the kernel threw: " + e.what());
    } catch (...) {
      b.fail("simt: " + where_now() + ": the kernel threw an exception");
    }
  }
  thread_exit(b, f);
  switch_to_scheduler(w, f, /*exiting=*/true);
  std::abort();  // an exited fiber is never resumed
}

void resume([[maybe_unused]] Worker& w, Fiber& f) {
  tl_thread = &f;
#if SIMT_ASAN
  __sanitizer_start_switch_fiber(&w.asan_scheduler_fake, f.stack_bottom, kStackBytes);
#endif
  fctx::transfer_t t = fctx::jump_fcontext(f.context, &f);
#if SIMT_ASAN
  __sanitizer_finish_switch_fiber(w.asan_scheduler_fake, nullptr, nullptr);
#endif
  f.context = t.fctx;
  tl_thread = nullptr;
}

// A thread returned from the kernel. Barriers and warp collectives waiting for it can no
// longer complete correctly: say so.
void thread_exit(Block& b, Fiber& f) {
  f.state = FiberState::exited;
  ++b.exited;
  Warp& warp = b.warps[f.warp];
  const unsigned bit = 1u << f.lane;
  warp.exited |= bit;
  if (b.cancel || b.failed) return;
  for (const WarpGroup& g : warp.groups) {
    if ((g.mask & bit) && !(g.arrived & bit)) {
      b.fail("simt: " + where_now() + ": lane " + std::to_string(f.lane) + " exited while lanes " +
             lanes_text(g.arrived) + " of warp " + std::to_string(f.warp) + " wait for it in " +
             name(g.op) + " (mask " + mask_text(g.mask) + ") at " + site(g.site));
      return;
    }
  }
  if (b.barrier.arrived > 0 && b.barrier.arrived + b.exited == b.nthreads) {
    b.fail("simt: " + kernel_block(b) + ": " + exited_before_barrier(b, "__syncthreads at " + site(b.barrier.site)));
  }
}

// After a fatal error: resume every blocked fiber so that it unwinds its stack.
void cancel_all(Block& b) {
  b.cancel = true;
  for (unsigned i = 0; i < b.nthreads; ++i) {
    FiberState s = b.fibers[i].state;
    if (s == FiberState::at_barrier || s == FiberState::at_warp) {
      b.fibers[i].state = FiberState::runnable;
      b.push(i);
    }
  }
}

}  // namespace

void suspend(Fiber& f) {
  Worker& w = *tl_worker;
  switch_to_scheduler(w, f, false);
  if (w.block.cancel) throw Unwind{};
}

bool run_block(Grid& grid, std::uint64_t linear) {
  Worker& w = this_worker();
  tl_worker = &w;
  const GridTask& task = *grid.task;
  const unsigned n = grid.nthreads;
  w.ensure_stacks(n);
  w.ensure_dynamic_shared(task.shared_bytes);

  Block& b = w.block;
  b.grid = &grid;
  b.linear = linear;
  b.grid_dim = task.grid;
  b.block_dim = task.block;
  b.block_idx = {unsigned(linear % task.grid.x), unsigned(linear / task.grid.x % task.grid.y),
                 unsigned(linear / (std::uint64_t(task.grid.x) * task.grid.y))};
  b.nthreads = n;
  b.nwarps = (n + kWarpSize - 1) / kWarpSize;
  b.fibers = w.fibers.data();
  b.warps = w.warps.data();
  b.barrier = Barrier{};
  b.exited = 0;
  b.epoch = 0;
  b.tails_queued = 0;
  b.failed = b.cancel = false;
  b.error.clear();
  b.head = b.count = 0;
  b.rng = grid.seed ^ (linear * 0xd1b54a32d192ed03ull);

  for (unsigned i = 0; i < b.nwarps; ++i) {
    Warp& warp = b.warps[i];
    const unsigned lanes = std::min(kWarpSize, n - i * kWarpSize);
    warp.present = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u);
    warp.exited = 0;
    warp.groups.clear();
  }
  const unsigned dx = task.block.x, dy = task.block.y;
  std::array<unsigned, kMaxBlockThreads> ids;
  for (unsigned i = 0; i < n; ++i) {
    Fiber& f = b.fibers[i];
    f.thread_idx = {i % dx, i / dx % dy, i / (dx * dy)};
    f.linear = i;
    f.warp = i / kWarpSize;
    f.lane = i % kWarpSize;
    f.state = FiberState::runnable;
    f.stack_bottom = w.stacks[i];
    // Stagger the stack tops by cache lines: tops a multiple of 4 KiB apart would all land
    // in one L1 set and evict each other's saved registers at every switch.
    const std::size_t color = (i % 64) * 64;
    f.context =
        fctx::make_fcontext(w.stacks[i] + kStackBytes - color, kStackBytes - color, &fiber_main);
    ids[i] = i;
  }
  begin_block_tracking(b);
  b.release(ids.data(), n);

  tl_block = &b;
  for (;;) {
    unsigned id;
    while (b.pop(id)) {
      Fiber& f = b.fibers[id];
      if (f.state == FiberState::exited) continue;
      resume(w, f);
      if (b.failed && !b.cancel) cancel_all(b);
    }
    if (b.exited == n) break;
    // Nothing can run and some threads have not finished: a deadlock, never a hang.
    if (!b.failed) b.fail("simt: " + describe_stall(b));
    cancel_all(b);
  }
  tl_block = nullptr;
  end_block_tracking(b);
  if (b.failed) grid.fail(b.error);
  return !b.failed;
}

// ---- worker pool ---------------------------------------------------------------------------

namespace {

void run_blocks(Grid& grid) {
  for (;;) {
    if (grid.failed.load(std::memory_order_relaxed)) return;
    std::uint64_t linear = grid.next_block.fetch_add(1, std::memory_order_relaxed);
    if (linear >= grid.nblocks) return;
    run_block(grid, linear);
  }
}

// Helper threads wait for a grid, run blocks of it with the launching thread, then wait again.
class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  void run(Grid& grid, unsigned helpers) {
    {
      std::lock_guard lock(mutex_);
      while (threads_.size() < helpers)
        threads_.emplace_back([this, index = threads_.size()] { loop(index); });
      grid_ = &grid;
      helpers_ = helpers;
      busy_ = helpers;
      ++generation_;
    }
    wake_.notify_all();
    run_blocks(grid);  // the launching thread works too
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return busy_ == 0; });
    grid_ = nullptr;
  }

 private:
  void loop(std::size_t index) {
    std::uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (index >= helpers_) continue;
      Grid* grid = grid_;
      lock.unlock();
      run_blocks(*grid);
      lock.lock();
      if (--busy_ == 0) done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  Grid* grid_ = nullptr;
  std::size_t helpers_ = 0, busy_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
};

Pool& pool() {
  static Pool p;
  return p;
}

std::string dims_text(dim3 d) {
  std::string s(1, '(');
  s += std::to_string(d.x);
  s += ',';
  s += std::to_string(d.y);
  s += ',';
  s += std::to_string(d.z);
  s += ')';
  return s;
}

// A configuration CUDA would refuse; "" when it is fine.
std::string invalid_config(const GridTask& t) {
  const std::uint64_t threads = std::uint64_t(t.block.x) * t.block.y * t.block.z;
  if (t.block.x == 0 || t.block.y == 0 || t.block.z == 0)
    return "block " + dims_text(t.block) + " has a zero dimension";
  if (t.grid.x == 0 || t.grid.y == 0 || t.grid.z == 0)
    return "grid " + dims_text(t.grid) + " has a zero dimension";
  if (threads > kMaxBlockThreads)
    return "block " + dims_text(t.block) + " has " + std::to_string(threads) +
           " threads; a block holds at most 1024";
  if (t.block.z > 64) return "block " + dims_text(t.block) + ": blockDim.z is at most 64";
  if (t.grid.x > 2147483647u || t.grid.y > 65535 || t.grid.z > 65535)
    return "grid " + dims_text(t.grid) + " exceeds CUDA's limits (2^31-1, 65535, 65535)";
  if (t.shared_bytes > 227 * 1024)
    return "dynamic shared memory of " + std::to_string(t.shared_bytes) +
           " bytes exceeds 227 KiB per block";
  return "";
}

std::mutex g_launch_mutex;

// Runs one grid, then its tail launches (depth first). Throws KernelError on failure.
void run_grid(const GridTask& task, LaunchReport& report) {
  Grid grid;
  grid.task = &task;
  grid.nblocks = std::uint64_t(task.grid.x) * task.grid.y * task.grid.z;
  grid.nthreads = task.block.x * task.block.y * task.block.z;
  grid.schedule = g_schedule.load();
  grid.seed = g_seed.load();
  grid.checks = g_checks.load();
  report.grids.push_back(task.name);

  const unsigned workers = worker_threads();
  const unsigned helpers =
      unsigned(std::min<std::uint64_t>(workers, grid.nblocks)) - 1;
  if (helpers == 0)
    run_blocks(grid);
  else
    pool().run(grid, helpers);

  report.blocks += grid.nblocks;
  report.threads += grid.nblocks * grid.nthreads;
  report.races_found += grid.races.found;
  for (RaceReport& r : grid.races.reports)
    if (report.races.size() < 64) report.races.push_back(std::move(r));
  if (grid.failed) throw KernelError(grid.error);

  // Tail launches in the order their launching threads queued them (block, thread, sequence),
  // so the order does not depend on which worker ran which block.
  std::sort(grid.tails.begin(), grid.tails.end(), [](const Grid::Tail& a, const Grid::Tail& b) {
    return std::tie(a.block, a.thread, a.seq) < std::tie(b.block, b.thread, b.seq);
  });
  for (const Grid::Tail& tail : grid.tails) run_grid(tail.task, report);
}

}  // namespace

void run_launch(GridTask task) {
  if (tl_thread != nullptr)
    fatal(where_now() + ": simt::launch of '" + task.name +
          "' from inside a kernel; use RL_TAIL_LAUNCH (simt::tail_launch)");
  std::lock_guard launch_lock(g_launch_mutex);
  LaunchReport report;
  report.kernel = task.name;
  report.checked = g_checks.load();
  g_track_accesses = report.checked || g_observer != nullptr;
  struct SaveReport {
    LaunchReport& report;
    ~SaveReport() {
      std::lock_guard lock(g_report_mutex);
      accumulate(report);
      g_last_report = std::move(report);
    }
  } save{report};
  if (std::string why = invalid_config(task); !why.empty())
    throw KernelError("simt: launch of '" + task.name + "': " + why);
  run_grid(task, report);
}

void queue_tail(GridTask task) {
  if (tl_thread == nullptr)
    throw KernelError("simt: tail launch of '" + task.name + "' outside a kernel");
  if (std::string why = invalid_config(task); !why.empty())
    fatal(where_now() + ": tail launch of '" + task.name + "': " + why);
  Block& b = current_block();
  std::lock_guard lock(b.grid->mutex);
  b.grid->tails.push_back({b.linear, tl_thread->linear, b.tails_queued++, std::move(task)});
}

}  // namespace detail

// ---- settings ------------------------------------------------------------------------------

void set_schedule(Schedule s, std::uint64_t seed) {
  detail::g_schedule = s;
  detail::g_seed = seed;
}
Schedule schedule() { return detail::g_schedule; }
void set_checks(bool on) { detail::g_checks = on; }
bool checks() { return detail::g_checks; }
void set_worker_threads(unsigned n) { detail::g_workers = n; }
unsigned worker_threads() {
  unsigned n = detail::g_workers;
  if (n == 0) n = std::max(1u, std::thread::hardware_concurrency());
  return n;
}

StackStats stack_stats() {
  detail::Worker& w = detail::this_worker();
  StackStats st;
  st.stack_bytes = detail::kStackBytes;
  st.stacks = w.stacks.size();
  const std::size_t page = detail::page_size();
  std::vector<unsigned char> in_core(detail::kStackBytes / page);
  for (std::byte* bottom : w.stacks) {
    // Stacks grow down from bottom + kStackBytes; the lowest nonzero byte is the deepest use.
    std::size_t lowest = detail::kStackBytes;
    if (mincore(bottom, detail::kStackBytes, in_core.data()) == 0)
      for (std::size_t p = 0; p < in_core.size(); ++p) {
        if (!(in_core[p] & 1)) continue;
        st.resident += page;
        if (lowest == detail::kStackBytes)
          for (std::size_t i = p * page; i < (p + 1) * page; ++i)
            if (bottom[i] != std::byte{0}) {
              lowest = i;
              break;
            }
      }
    st.high_water = std::max(st.high_water, detail::kStackBytes - lowest);
  }
  return st;
}

LaunchReport last_launch_report() {
  std::lock_guard lock(detail::g_report_mutex);
  return detail::g_last_report;
}
LaunchReport accumulated_report() {
  std::lock_guard lock(detail::g_report_mutex);
  return detail::g_accumulated;
}
void reset_accumulated_report() {
  std::lock_guard lock(detail::g_report_mutex);
  detail::g_accumulated = LaunchReport{};
}

const char* name(Schedule s) {
  switch (s) {
    case Schedule::in_order: return "in-order";
    case Schedule::reverse: return "reverse";
    case Schedule::random: return "random";
  }
  return "?";
}

}  // namespace simt
