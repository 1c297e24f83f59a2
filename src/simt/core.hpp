#pragma once
// The SIMT runtime's foundations: CUDA's qualifiers and index types, the runtime's settings,
// its errors and reports, and the per-thread state the built-ins read.
//
// Included through simt/runtime.hpp (which portable.cuh includes under g++); not on its own.
#include <cstddef>
#include <cstdint>
#include <source_location>
#include <stdexcept>
#include <string>
#include <vector>

// ---- CUDA's qualifiers mean nothing on the CPU ----------------------------------------------
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
// A block's threads are fibers of one OS thread, and a worker thread runs one block at a time,
// so a thread_local static is exactly one block's shared memory. Caveats: it is not reset
// between blocks (CUDA does not reset it either), and it must be a static array or scalar in
// the kernel or a __device__ function, as in CUDA.
#define __shared__ static thread_local
#define __constant__ static

// ---- index types, global names as in CUDA ---------------------------------------------------
struct uint3 {
  unsigned x, y, z;
};

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return {x, y, z}; }
};

inline constexpr int warpSize = 32;

namespace simt {

inline constexpr unsigned kWarpSize = 32;
inline constexpr unsigned kMaxBlockThreads = 1024;

// Where a checked pointer points.
enum class Space : std::uint8_t { global, shared };
const char* name(Space s);

// A fatal check failed in a kernel (out of bounds, barrier divergence, bad warp mask, deadlock)
// or a launch was invalid. The message is one line naming kernel, block and thread.
class KernelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---- settings (take effect at the next launch) ----------------------------------------------

// The order in which runnable fibers of a block are resumed after a barrier or warp collective
// releases them (and at block start). A correct kernel gives the same answer under all three;
// a missing barrier shows up as a different answer or a race report.
enum class Schedule { in_order, reverse, random };
const char* name(Schedule s);
void set_schedule(Schedule s, std::uint64_t seed = 0);
Schedule schedule();

// Race tracking and the detail of barrier/mask diagnostics. Bounds checks are always on.
void set_checks(bool on);
bool checks();

// OS threads that run blocks (the launching thread is one of them). 0 = all cores.
void set_worker_threads(unsigned n);
unsigned worker_threads();

// ---- the access observer (for `explain`): zero cost while unset -----------------------------
struct AccessEvent {
  std::uint64_t block = 0;   // linear block id
  unsigned thread = 0;       // linear thread id in the block
  unsigned warp = 0, lane = 0;
  const void* address = nullptr;
  unsigned bytes = 0;
  Space space = Space::global;
  bool is_write = false;
  bool is_atomic = false;
  std::source_location where;  // file_name() is "" when unknown (*p, p->)
};

class AccessObserver {
 public:
  virtual ~AccessObserver() = default;
  // Called for every checked access of every thread; blocks run concurrently on worker
  // threads, so it is called concurrently unless set_worker_threads(1).
  virtual void on_access(const AccessEvent& e) = 0;
};
void set_access_observer(AccessObserver* obs);  // nullptr: none

// ---- what a launch found that was not fatal -------------------------------------------------
enum class AccessKind : std::uint8_t { read, write, atomic };
const char* name(AccessKind k);

struct RaceReport {
  std::string kernel;
  uint3 block{};
  uint3 thread_a{}, thread_b{};  // a: the earlier access, b: the one that found the race
  unsigned linear_a = 0, linear_b = 0;
  Space space = Space::shared;
  std::size_t offset = 0;  // bytes from the start of the region (address when unknown)
  AccessKind kind_a = AccessKind::read, kind_b = AccessKind::read;
  std::string site_a, site_b;  // "file:line", or "" when unknown
  std::uint64_t occurrences = 1;  // racing pairs folded into this report
  std::string message;            // one line saying all of the above
};

struct LaunchReport {
  std::string kernel;                  // the launched kernel (tail launches included below)
  std::vector<std::string> grids;      // every grid run, in order (the kernel, then tails)
  std::uint64_t blocks = 0;            // blocks run, all grids
  std::uint64_t threads = 0;           // threads run, all grids
  bool checked = false;                // race tracking was on
  std::uint64_t races_found = 0;       // racing pairs detected (before dedupe)
  std::vector<RaceReport> races;       // deduplicated by (sites, space, kinds), capped
  bool has_races() const { return races_found != 0; }
};
// The report of the last launch() that returned or threw (from any host thread).
LaunchReport last_launch_report();
// Every launch since the last reset, merged (a kernel plus its final pass are two launches):
// grids, blocks and threads add up, races are merged (same cap). `kernel` is the first one's.
LaunchReport accumulated_report();
void reset_accumulated_report();

// ---- what fibers cost (for simt_bench and docs) ----------------------------------------------
struct StackStats {
  std::size_t stack_bytes = 0;  // usable bytes of each fiber stack (a guard page below each)
  std::size_t stacks = 0;       // stacks this OS thread holds (the most threads of a block run)
  std::size_t high_water = 0;   // deepest use of any of them, bytes (stacks start zeroed)
  std::size_t resident = 0;     // bytes of them in memory now
};
// About the stacks of the calling OS thread (run with set_worker_threads(1) to measure).
StackStats stack_stats();

// ---- state the built-ins read ----------------------------------------------------------------
namespace detail {

// What a kernel may ask about the thread it runs as. The fiber record in runtime.cpp starts
// with this.
struct ThreadState {
  uint3 thread_idx;
  unsigned linear;  // x + y*Dx + z*Dx*Dy
  unsigned warp, lane;
};

struct BlockState {
  uint3 block_idx;
  dim3 block_dim;
  dim3 grid_dim;
  std::uint64_t linear;
};

// The fiber now running on this OS thread, and its block. nullptr outside a kernel.
extern constinit thread_local ThreadState* tl_thread;
extern constinit thread_local BlockState* tl_block;

// Race tracking or an observer is on: accesses take the slow path. Set only between launches.
extern bool g_track_accesses;

// Throws KernelError on a host thread; inside a kernel records the error and unwinds the fiber.
[[noreturn]] void fatal(const std::string& what);
// "kernel 'k' block (x,y,z) thread (x,y,z) (warp w, lane l)" for messages.
std::string where_now();
std::string site(const std::source_location& loc);  // "file:line" or ""

inline const ThreadState& current_thread(const std::source_location& loc) {
  if (tl_thread == nullptr) [[unlikely]]
    fatal("a CUDA built-in was used outside a kernel at " + site(loc));
  return *tl_thread;
}

}  // namespace detail
}  // namespace simt

// ---- CUDA's index built-ins ------------------------------------------------------------------
// Read through the current fiber's and block's state; read-only.
#define threadIdx (static_cast<const ::uint3&>(::simt::detail::tl_thread->thread_idx))
#define blockIdx (static_cast<const ::uint3&>(::simt::detail::tl_block->block_idx))
#define blockDim (static_cast<const ::dim3&>(::simt::detail::tl_block->block_dim))
#define gridDim (static_cast<const ::dim3&>(::simt::detail::tl_block->grid_dim))
