#pragma once
// Family "unrolling": Professional CUDA C Programming §3.5, unrolling loops — the continuation
// of seed 000 (§3.4) that seeds 000 and 002 (§3.2 "展开循环") point to. Like §3.4 the kernels
// reduce in place in global memory and write one partial per block; the final pass
// (final_pass.cuh) replaces the book's host-side sum.
//
// Corrections to the book, common to the family:
//   - The book unrolls only when all of a block's tiles exist (`if (idx + 7*blockDim.x < n)`)
//     and otherwise drops the block's elements; here each thread folds the tiles that exist.
//   - The tree reads no partner at or beyond n (the book reads past the end in the tail block).
//   - The unrolled last warp is written for independent thread scheduling (Volta and later):
//     each step reads, __syncwarp()s, writes, __syncwarp()s. The book's `volatile` lockstep warp
//     is kept as reduceUnrollWarps8Volatile, registered unsafe: it is a data race.
//   - Generic op and accumulator type, 64-bit indices.
#include <vector>

#include "gallery/common.cuh"
#include "gallery/dispatch.cuh"
#include "gallery/final_pass.cuh"

namespace rl::gallery::inline RL_GALLERY_BACKEND {

namespace detail {

// Thread tid of block b folds the UNROLL tiles of blockDim.x elements that start at
// b * blockDim.x * UNROLL into the block's first tile, in place. Tiles past n are skipped, and
// a thread whose first element is past n writes nothing.
template <unsigned UNROLL, class T, class Op>
__device__ void fold_tiles(rl::gmem<T> g_idata, std::size_t n, const Op& op) {
  const std::size_t idx = static_cast<std::size_t>(blockIdx.x) * blockDim.x * UNROLL + threadIdx.x;
  if (idx >= n) return;  // no barrier in this function: returning is safe
  T v = g_idata[idx];
  for (unsigned k = 1; k < UNROLL; ++k) {
    const std::size_t j = idx + static_cast<std::size_t>(k) * blockDim.x;
    if (j < n) v = op(v, g_idata[j]);
  }
  g_idata[idx] = v;
}

// The first tile's interleaved tree down to `last_stride` (exclusive), with a barrier per step.
template <class T, class Op>
__device__ void tree(rl::gmem<T> idata, std::size_t valid, unsigned last_stride, const Op& op) {
  const unsigned tid = threadIdx.x;
  for (unsigned stride = blockDim.x / 2; stride > last_stride; stride >>= 1) {
    if (tid < stride && tid + stride < valid) {
      const rl::probe::Step probe(stride);
      idata[tid] = op(idata[tid], idata[tid + stride]);
    }
    __syncthreads();
  }
}

// One step of the unrolled last warp, correct under independent thread scheduling: every lane
// of warp 0 reads its pair, the warp meets at __syncwarp, then writes, then meets again, so no
// lane reads a word another lane is writing in the same step. The probe counts the lanes at the
// read; the write is the same step's work, attributed to it without counting the warp twice.
template <class T, class Op>
__device__ void warp_step(rl::gmem<T> idata, unsigned tid, std::size_t valid, unsigned s,
                          const Op& op) {
  const bool active = tid + s < valid;
  T v = Op::identity();
  if (active) {
    const rl::probe::Step probe(s);
    v = op(idata[tid], idata[tid + s]);
  }
  __syncwarp(0xffffffffu);
  if (active) {
    const rl::probe::Accesses probe(s);
    idata[tid] = v;
  }
  __syncwarp(0xffffffffu);
}

// The last 64 elements of the tile, reduced by warp 0 without __syncthreads (called by all 32
// lanes of warp 0). Unrolled by hand as the book does.
template <class T, class Op>
__device__ void warp_unrolled(rl::gmem<T> idata, unsigned tid, std::size_t valid, const Op& op) {
  warp_step(idata, tid, valid, 32, op);
  warp_step(idata, tid, valid, 16, op);
  warp_step(idata, tid, valid, 8, op);
  warp_step(idata, tid, valid, 4, op);
  warp_step(idata, tid, valid, 2, op);
  warp_step(idata, tid, valid, 1, op);
}

template <unsigned UNROLL, class T, class Op>
__device__ void reduce_unrolled(rl::gmem<T> g_idata, rl::gmem<T> g_odata, std::size_t n) {
  const Op op;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * UNROLL;
  const std::size_t valid = owned(n, base, blockDim.x);  // elements of the first tile
  fold_tiles<UNROLL>(g_idata, n, op);
  __syncthreads();
  tree(g_idata + base, valid, 0, op);
  if (threadIdx.x == 0) g_odata[blockIdx.x] = g_idata[base];
}

}  // namespace detail

// reduceUnrolling2 — §3.5.1: each block first adds two tiles (2*blockDim.x elements) element by
// element, then runs reduceInterleaved's tree on the first: half the blocks, twice the loads in
// flight per thread. Still slow: the tree's last five steps diverge in one warp, every step goes
// through global memory, one __syncthreads per step.
template <class T, class Op>
__global__ void reduceUnrolling2(rl::gmem<T> g_idata, rl::gmem<T> g_odata, std::size_t n) {
  detail::reduce_unrolled<2, T, Op>(g_idata, g_odata, n);
}

// reduceUnrolling4 — §3.5.1: four tiles per block. Still slow: as reduceUnrolling2, with a
// quarter of the blocks.
template <class T, class Op>
__global__ void reduceUnrolling4(rl::gmem<T> g_idata, rl::gmem<T> g_odata, std::size_t n) {
  detail::reduce_unrolled<4, T, Op>(g_idata, g_odata, n);
}

// reduceUnrolling8 — §3.5.1: eight tiles per block; the eight independent loads per thread hide
// memory latency (the book's biggest single step). Still slow: the tree, its divergent last
// warp and its barriers.
template <class T, class Op>
__global__ void reduceUnrolling8(rl::gmem<T> g_idata, rl::gmem<T> g_odata, std::size_t n) {
  detail::reduce_unrolled<8, T, Op>(g_idata, g_odata, n);
}

// reduceUnrollWarps8 — §3.5.2: unroll 8, the tree down to 64 elements, then warp 0 finishes
// without __syncthreads (unrolled warp). Corrected for independent thread scheduling: each
// unrolled step is read, __syncwarp, write, __syncwarp (the book's volatile lockstep warp is a
// race since Volta). Still slow: the warp steps still go through global memory, and the loop
// over strides still tests and branches at run time.
template <class T, class Op>
__global__ void reduceUnrollWarps8(rl::gmem<T> g_idata, rl::gmem<T> g_odata, std::size_t n) {
  const Op op;
  const unsigned tid = threadIdx.x;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * 8;
  const std::size_t valid = owned(n, base, blockDim.x);
  rl::gmem<T> idata = g_idata + base;
  detail::fold_tiles<8>(g_idata, n, op);
  __syncthreads();
  detail::tree(idata, valid, 32, op);
  if (tid < 32) detail::warp_unrolled(idata, tid, valid, op);
  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

// reduceUnrollWarps8Volatile — the book's unrolled last warp as printed: a `volatile` pointer
// and no __syncwarp, relying on the 32 lanes executing in lockstep (§3.5.2 on global memory,
// chapter 5's reduceSmemUnroll on shared memory). UNSAFE: since Volta's independent thread
// scheduling nothing orders one lane's read of vsmem[tid + s] against another lane's write of
// it. The last 64 values are moved to shared memory first (one __syncwarp, race-free) so that the
// race is one every checker can see: compute-sanitizer's racecheck watches shared memory only;
// the SIMT backend reports it too. A GPU may or may not return a wrong sum. Kept to demonstrate
// the race, not to use.
template <class T, class Op>
__global__ void reduceUnrollWarps8Volatile(rl::gmem<T> g_idata, rl::gmem<T> g_odata, std::size_t n) {
  const Op op;
  __shared__ T last_storage[64];
  rl::smem<T> last = last_storage;
  const unsigned tid = threadIdx.x;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * 8;
  const std::size_t valid = owned(n, base, blockDim.x);
  rl::gmem<T> idata = g_idata + base;
  detail::fold_tiles<8>(g_idata, n, op);
  __syncthreads();
  detail::tree(idata, valid, 32, op);
  if (tid < 32) {
    // the tree's last 64 values (the identity past n), then the textbook's warp
    T lo = Op::identity(), hi = Op::identity();
    if (tid < valid) lo = idata[tid];
    if (tid + 32 < valid) hi = idata[tid + 32];
    last[tid] = lo;
    last[tid + 32] = hi;
    __syncwarp(0xffffffffu);
    rl::vmem<T> vsmem = last;
    { const rl::probe::Step probe(32); vsmem[tid] = op(vsmem[tid], vsmem[tid + 32]); }
    { const rl::probe::Step probe(16); vsmem[tid] = op(vsmem[tid], vsmem[tid + 16]); }
    { const rl::probe::Step probe(8); vsmem[tid] = op(vsmem[tid], vsmem[tid + 8]); }
    { const rl::probe::Step probe(4); vsmem[tid] = op(vsmem[tid], vsmem[tid + 4]); }
    { const rl::probe::Step probe(2); vsmem[tid] = op(vsmem[tid], vsmem[tid + 2]); }
    { const rl::probe::Step probe(1); vsmem[tid] = op(vsmem[tid], vsmem[tid + 1]); }
    if (tid == 0) g_odata[blockIdx.x] = vsmem[0];
  }
}

// reduceCompleteUnrollWarps8 — §3.5.3: the tree's loop is unrolled too (block sizes up to 1024
// are written out, each step guarded by `blockDim.x >= ...`), then the unrolled last warp.
// Still slow: blockDim.x is a run-time value, so every guard is tested at run time; the steps
// still go through global memory.
template <class T, class Op>
__global__ void reduceCompleteUnrollWarps8(rl::gmem<T> g_idata, rl::gmem<T> g_odata, std::size_t n) {
  const Op op;
  const unsigned tid = threadIdx.x;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * 8;
  const std::size_t valid = owned(n, base, blockDim.x);
  rl::gmem<T> idata = g_idata + base;
  detail::fold_tiles<8>(g_idata, n, op);
  __syncthreads();
  if (blockDim.x >= 1024 && tid < 512 && tid + 512 < valid) {
    const rl::probe::Step probe(512);
    idata[tid] = op(idata[tid], idata[tid + 512]);
  }
  __syncthreads();
  if (blockDim.x >= 512 && tid < 256 && tid + 256 < valid) {
    const rl::probe::Step probe(256);
    idata[tid] = op(idata[tid], idata[tid + 256]);
  }
  __syncthreads();
  if (blockDim.x >= 256 && tid < 128 && tid + 128 < valid) {
    const rl::probe::Step probe(128);
    idata[tid] = op(idata[tid], idata[tid + 128]);
  }
  __syncthreads();
  if (blockDim.x >= 128 && tid < 64 && tid + 64 < valid) {
    const rl::probe::Step probe(64);
    idata[tid] = op(idata[tid], idata[tid + 64]);
  }
  __syncthreads();
  if (tid < 32) detail::warp_unrolled(idata, tid, valid, op);
  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

// reduceCompleteUnroll<iBlockSize> — §3.5.4: the block size is a template parameter, so the
// compiler removes the steps a block size does not need (the book's fastest kernel: 1.25 ms at
// 2^24 ints on a Tesla M2070). Instantiated for 32..1024. Still slow: partial sums still live in
// global memory (shared memory comes in chapter 5), and a block's last steps use one warp.
template <unsigned iBlockSize, class T, class Op>
__global__ void reduceCompleteUnroll(rl::gmem<T> g_idata, rl::gmem<T> g_odata, std::size_t n) {
  const Op op;
  const unsigned tid = threadIdx.x;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * iBlockSize * 8;
  const std::size_t valid = owned(n, base, iBlockSize);
  rl::gmem<T> idata = g_idata + base;
  detail::fold_tiles<8>(g_idata, n, op);
  __syncthreads();
  if (iBlockSize >= 1024 && tid < 512 && tid + 512 < valid) {
    const rl::probe::Step probe(512);
    idata[tid] = op(idata[tid], idata[tid + 512]);
  }
  __syncthreads();
  if (iBlockSize >= 512 && tid < 256 && tid + 256 < valid) {
    const rl::probe::Step probe(256);
    idata[tid] = op(idata[tid], idata[tid + 256]);
  }
  __syncthreads();
  if (iBlockSize >= 256 && tid < 128 && tid + 128 < valid) {
    const rl::probe::Step probe(128);
    idata[tid] = op(idata[tid], idata[tid + 128]);
  }
  __syncthreads();
  if (iBlockSize >= 128 && tid < 64 && tid + 64 < valid) {
    const rl::probe::Step probe(64);
    idata[tid] = op(idata[tid], idata[tid + 64]);
  }
  __syncthreads();
  if (tid < 32) detail::warp_unrolled(idata, tid, valid, op);
  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

// --- launchers: in place, UNROLL tiles per block, one partial per block, final pass ---

#define RL_GALLERY_UNROLL_LAUNCHER(kernel, launcher, unroll)                                   \
  template <class In, class Acc, class Op>                                                     \
  void launcher(const LaunchArgs& a) {                                                         \
    require_pow2_block(a, #kernel);                                                            \
    const std::size_t blocks = ceil_div(a.n, static_cast<std::size_t>(a.block) * (unroll));    \
    rl::launch(kernel<Acc, Op>, config(a, blocks, a.block, 0, #kernel), dev<Acc>(a.input),      \
               dev<Acc>(a.scratch), a.n);                                                      \
    final_pass<Acc, Op>(a, blocks);                                                            \
  }

RL_GALLERY_UNROLL_LAUNCHER(reduceUnrolling2, launch_reduceUnrolling2, 2)
RL_GALLERY_UNROLL_LAUNCHER(reduceUnrolling4, launch_reduceUnrolling4, 4)
RL_GALLERY_UNROLL_LAUNCHER(reduceUnrolling8, launch_reduceUnrolling8, 8)
RL_GALLERY_UNROLL_LAUNCHER(reduceUnrollWarps8, launch_reduceUnrollWarps8, 8)
RL_GALLERY_UNROLL_LAUNCHER(reduceUnrollWarps8Volatile, launch_reduceUnrollWarps8Volatile, 8)
RL_GALLERY_UNROLL_LAUNCHER(reduceCompleteUnrollWarps8, launch_reduceCompleteUnrollWarps8, 8)
#undef RL_GALLERY_UNROLL_LAUNCHER

template <unsigned iBlockSize, class Acc, class Op>
void launch_complete_unroll_block(const LaunchArgs& a) {
  const std::size_t blocks = ceil_div(a.n, static_cast<std::size_t>(iBlockSize) * 8);
  rl::launch(reduceCompleteUnroll<iBlockSize, Acc, Op>,
             config(a, blocks, iBlockSize, 0, "reduceCompleteUnroll"), dev<Acc>(a.input),
             dev<Acc>(a.scratch), a.n);
  final_pass<Acc, Op>(a, blocks);
}

// The book's switch over block sizes (§3.5.4), instantiating one kernel per power of two.
template <class In, class Acc, class Op>
void launch_reduceCompleteUnroll(const LaunchArgs& a) {
  require_pow2_block(a, "reduceCompleteUnroll");
  switch (a.block) {
    case 32: return launch_complete_unroll_block<32, Acc, Op>(a);
    case 64: return launch_complete_unroll_block<64, Acc, Op>(a);
    case 128: return launch_complete_unroll_block<128, Acc, Op>(a);
    case 256: return launch_complete_unroll_block<256, Acc, Op>(a);
    case 512: return launch_complete_unroll_block<512, Acc, Op>(a);
    case 1024: return launch_complete_unroll_block<1024, Acc, Op>(a);
  }
  throw std::invalid_argument("reduceCompleteUnroll: block " + std::to_string(a.block) +
                              " is not instantiated (32..1024, powers of two)");
}

// The family's entries, each with its launcher (bound once per backend from the family list
// in gallery/CMakeLists.txt).
inline std::vector<Binding> unrolling_bindings() {
  return {
      RL_GALLERY_BIND(launch_reduceUnrolling2, {
          .id = "unroll2",
          .name = "reduceUnrolling2",
          .family = "unrolling",
          .seed = "002 §3.2 (Professional CUDA C 3.5.1)",
          .technique = "each block first adds two tiles element-wise, then the interleaved tree: half the "
                       "blocks, more independent loads per thread",
          .still_slow = "the tree's divergent last warp, a barrier and a global round trip per step",
          .final_pass = kFinalPartials,
          .constraints = {.items_per_thread = 2, .in_place = true},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<2>,
          .independent_loads = 2,
      }),
      RL_GALLERY_BIND(launch_reduceUnrolling4, {
          .id = "unroll4",
          .name = "reduceUnrolling4",
          .family = "unrolling",
          .seed = "002 §3.2 (Professional CUDA C 3.5.1)",
          .technique = "four tiles per block folded before the tree",
          .still_slow = "as reduceUnrolling2, with a quarter of the blocks",
          .final_pass = kFinalPartials,
          .constraints = {.items_per_thread = 4, .in_place = true},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<4>,
          .independent_loads = 4,
      }),
      RL_GALLERY_BIND(launch_reduceUnrolling8, {
          .id = "unroll8",
          .name = "reduceUnrolling8",
          .family = "unrolling",
          .seed = "002 §3.2 (Professional CUDA C 3.5.1)",
          .technique = "eight tiles per block: eight independent loads in flight per thread hide memory latency",
          .still_slow = "the tree, its divergent last warp and its barriers",
          .final_pass = kFinalPartials,
          .constraints = {.items_per_thread = 8, .in_place = true},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<8>,
          .independent_loads = 8,
      }),
      RL_GALLERY_BIND(launch_reduceUnrollWarps8, {
          .id = "unroll-warps8",
          .name = "reduceUnrollWarps8",
          .family = "unrolling",
          .seed = "002 §3.2 (Professional CUDA C 3.5.2)",
          .technique = "unroll 8, tree down to 64 elements, then warp 0 finishes without __syncthreads; each "
                       "unrolled step is read, __syncwarp, write, __syncwarp (correct under independent thread "
                       "scheduling)",
          .still_slow = "the warp steps still go through global memory; the tree loop still tests the stride at "
                        "run time",
          .final_pass = kFinalPartials,
          .constraints = {.items_per_thread = 8, .in_place = true},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<8>,
          .independent_loads = 8,
      }),
      RL_GALLERY_BIND(launch_reduceUnrollWarps8Volatile, {
          .id = "unroll-warps8-volatile",
          .name = "reduceUnrollWarps8Volatile",
          .family = "unrolling",
          .seed = "002 §3.2 (Professional CUDA C 3.5.2, as printed)",
          .technique = "the book's last warp as printed: a volatile pointer and no __syncwarp, relying on the 32 "
                       "lanes running in lockstep (on the last 64 values moved to shared memory, where racecheck "
                       "can see it); UNSAFE: a data race since Volta's independent thread scheduling (the SIMT "
                       "backend and racecheck report it)",
          .still_slow = "as reduceUnrollWarps8, and it may return a wrong answer",
          .final_pass = kFinalPartials,
          .constraints = {.items_per_thread = 8, .in_place = true, .deterministic = false, .unsafe = true},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<8>,
          .independent_loads = 8,
      }),
      RL_GALLERY_BIND(launch_reduceCompleteUnrollWarps8, {
          .id = "complete-unroll-warps8",
          .name = "reduceCompleteUnrollWarps8",
          .family = "unrolling",
          .seed = "002 §3.2 (Professional CUDA C 3.5.3)",
          .technique = "the tree is unrolled too: one guarded step per block size up to 1024, then the unrolled "
                       "last warp",
          .still_slow = "blockDim.x is a run-time value, so every guard is still tested; partial sums in global "
                        "memory",
          .final_pass = kFinalPartials,
          .constraints = {.items_per_thread = 8, .in_place = true},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<8>,
          .independent_loads = 8,
      }),
      RL_GALLERY_BIND(launch_reduceCompleteUnroll, {
          .id = "complete-unroll",
          .name = "reduceCompleteUnroll",
          .family = "unrolling",
          .seed = "002 §3.2 (Professional CUDA C 3.5.4)",
          .technique = "the block size is a template parameter (instantiated 32..1024), so the compiler drops "
                       "the steps a block size does not need",
          .still_slow = "partial sums still live in global memory; a block's last steps use one warp",
          .final_pass = kFinalPartials,
          .constraints = {.items_per_thread = 8, .in_place = true},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<8>,
          .independent_loads = 8,
      }),
  };
}

}  // namespace rl::gallery::inline RL_GALLERY_BACKEND
