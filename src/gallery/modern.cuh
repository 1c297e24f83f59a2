#pragma once
// Family "modern": what reductions look like today, the last rungs after the books. No seed
// text covers them; each header says which technique it adds (NVIDIA's "Faster parallel
// reductions on Kepler" for shuffles, the CUDA Programming Guide for __reduce_*_sync and
// cooperative groups, CUB's agent_reduce for vector loads and grid-stride loops, the CUDA
// sample threadFenceReduction for the single pass).
//
// The first three keep unrolling.cuh's shape (8 elements per thread, coalesced: element
// k*blockDim.x + tid of the block's 8 tiles) so that they differ from reduceUnrolling8 only in
// how a block combines its values: in registers across a warp, one shared slot per warp, no
// global round trips. One partial per block, then the final pass (final_pass.cuh).
#include <type_traits>

#include <vector>

#include "gallery/common.cuh"
#include "gallery/dispatch.cuh"
#include "gallery/final_pass.cuh"

namespace rl::gallery::inline RL_GALLERY_BACKEND {

inline constexpr unsigned kFullMask = 0xffffffffu;
inline constexpr unsigned kModernItems = 8;  // elements per thread of the tile-shaped kernels

namespace detail {

// Thread tid's fold of the block's ITEMS tiles (the identity where past n), as Acc.
template <unsigned ITEMS, class In, class Acc, class Op>
__device__ Acc load_items(rl::gmem<const In> input, std::size_t n, const Op& op) {
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * ITEMS + threadIdx.x;
  Acc v = Op::identity();
  for (unsigned k = 0; k < ITEMS; ++k) {
    const std::size_t j = base + static_cast<std::size_t>(k) * blockDim.x;
    if (j < n) {
      In x = input[j];
      v = op(v, static_cast<Acc>(x));
    }
  }
  return v;
}

// A warp's values folded into lane 0 through register shuffles: five steps, no memory. Each step
// is probed as its stride in threads: the offset times `scale` (1 when the lanes hold threads'
// values, 32 when they hold warps' sums); kProbed = false for bookkeeping the counts leave out.
template <bool kProbed = true, class T, class Op>
__device__ T warp_shuffle(T v, const Op& op, unsigned scale = 1) {
  for (unsigned offset = 16; offset > 0; offset >>= 1) {
    if constexpr (kProbed) {
      const rl::probe::Step probe(offset * scale);
      v = op(v, __shfl_down_sync(kFullMask, v, offset));
    } else {
      v = op(v, __shfl_down_sync(kFullMask, v, offset));
    }
  }
  return v;
}

// The warp's value in every lane through the hardware's redux (sm_80+): __reduce_add_sync,
// __reduce_min_sync, __reduce_max_sync exist for 32-bit integers only. A long long sum is split
// into a low 16-bit, a middle 16-bit and a high 32-bit part: the 16-bit parts cannot overflow
// 32 bits over 32 lanes, the high part only matters mod 2^32, so three reductions give the sum
// mod 2^64 exactly. Other types and ops (float, double, long long min/max, and any op without a
// redux instruction) take the shuffle tree of the op's combine.
// The one-instruction reduction is one probed step, named by its smallest stride (`scale`).
template <class T, class Op>
__device__ T warp_reduce_sync(T v, const Op& op, unsigned scale = 1) {
  constexpr core::OpKind kind = Op::kind;
  constexpr bool redux = kind == core::OpKind::sum || kind == core::OpKind::min || kind == core::OpKind::max;
  if constexpr (std::is_same_v<T, int> && redux) {
    const rl::probe::Step probe(scale);
    if constexpr (kind == core::OpKind::sum) return __reduce_add_sync(kFullMask, v);
    else if constexpr (kind == core::OpKind::min) return __reduce_min_sync(kFullMask, v);
    else return __reduce_max_sync(kFullMask, v);
  } else if constexpr (std::is_same_v<T, long long> && kind == core::OpKind::sum) {
    const rl::probe::Step probe(scale);
    const unsigned long long u = static_cast<unsigned long long>(v);
    const unsigned lo = static_cast<unsigned>(u & 0xffffu);
    const unsigned mid = static_cast<unsigned>((u >> 16) & 0xffffu);
    const unsigned hi = static_cast<unsigned>(u >> 32);
    const unsigned long long s = static_cast<unsigned long long>(__reduce_add_sync(kFullMask, lo)) +
                                 (static_cast<unsigned long long>(__reduce_add_sync(kFullMask, mid)) << 16) +
                                 (static_cast<unsigned long long>(__reduce_add_sync(kFullMask, hi)) << 32);
    return static_cast<long long>(s);
  } else {
    return warp_shuffle(v, op, scale);
  }
}

struct ShuffleWarp {
  template <class T, class Op>
  __device__ static T reduce(T v, const Op& op, unsigned scale) { return warp_shuffle(v, op, scale); }
};
struct ReduceSyncWarp {
  template <class T, class Op>
  __device__ static T reduce(T v, const Op& op, unsigned scale) { return warp_reduce_sync(v, op, scale); }
};
struct UnprobedShuffleWarp {  // the single pass's last block: bookkeeping, like finalPass
  template <class T, class Op>
  __device__ static T reduce(T v, const Op& op, unsigned scale) { return warp_shuffle<false>(v, op, scale); }
};

// Block-wide: each warp reduces in registers, lane 0 of each warp leaves its value in one shared
// slot, warp 0 reduces the slots. One __syncthreads. The value is valid in thread 0.
template <class Warp, class T, class Op>
__device__ T block_reduce(T v, rl::smem<T> warp_sums, const Op& op) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  v = Warp::reduce(v, op, 1);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    if (lane < blockDim.x / 32) v = warp_sums[lane];
    else v = Op::identity();
    v = Warp::reduce(v, op, 32);  // lanes hold warps' sums: strides of 32 threads and more
  }
  return v;
}

// The 16-byte load: a struct of 16 bytes aligned to 16, which nvcc loads with one 128-bit
// instruction (LDG.E.128). On SIMT the checked pointer is re-typed over the same allocation, so
// the load is one bounds-checked 16-byte access there too (and `explain` counts one request).
template <class In>
struct alignas(16) Vec16 {
  static constexpr unsigned kCount = 16 / sizeof(In);
  In v[kCount];
};

template <class In>
__device__ Vec16<In> load16(rl::gmem<const In> input, std::size_t i) {
#if RL_SIMT
  const simt::ptr<const Vec16<In>> vec(reinterpret_cast<const Vec16<In>*>(input.get()),
                                       input.region_base(), input.region_bytes(), input.space());
  return vec[i].read();
#else
  return reinterpret_cast<const Vec16<In>*>(input)[i];
#endif
}

}  // namespace detail

// reduceWarpShuffle — warp shuffles (__shfl_down_sync, Kepler and later): 8 elements per thread
// as reduceUnrolling8, then each warp folds its 32 values in registers in five shuffle steps;
// shared memory holds one value per warp and the block needs a single __syncthreads. Still
// slow: 4-byte loads (one per tile per thread), a grid sized to n (many short blocks each with
// its tree overhead), and a second launch for the partials.
template <class In, class Acc, class Op>
__global__ void reduceWarpShuffle(rl::gmem<const In> input, rl::gmem<Acc> partials, std::size_t n) {
  const Op op;
  __shared__ Acc warp_storage[32];
  rl::smem<Acc> warp_sums = warp_storage;
  Acc v = detail::load_items<kModernItems, In, Acc>(input, n, op);
  v = detail::block_reduce<detail::ShuffleWarp>(v, warp_sums, op);
  if (threadIdx.x == 0) partials[blockIdx.x] = v;
}

// reduceWarpReduceSync — the warp step in one instruction: __reduce_add_sync / min / max
// (sm_80+, 32-bit integers: int32 with Accumulate::wrap). int64 sums (int32 wide) use three
// 32-bit reductions of the value's 16/16/32-bit parts; float, double and int64 min/max fall back
// to shuffles (the registry says so). Still slow: as reduceWarpShuffle — the warp step was never
// the bottleneck of a memory-bound reduction.
template <class In, class Acc, class Op>
__global__ void reduceWarpReduceSync(rl::gmem<const In> input, rl::gmem<Acc> partials, std::size_t n) {
  const Op op;
  __shared__ Acc warp_storage[32];
  rl::smem<Acc> warp_sums = warp_storage;
  Acc v = detail::load_items<kModernItems, In, Acc>(input, n, op);
  v = detail::block_reduce<detail::ReduceSyncWarp>(v, warp_sums, op);
  if (threadIdx.x == 0) partials[blockIdx.x] = v;
}

// reduceCooperativeGroups — the same block shape written with cooperative groups: the block and
// its 32-thread tiles are objects (cg::this_thread_block, cg::tiled_partition<32>) and the warp
// step is cg::reduce, which picks redux or shuffles for the type. Still slow: as
// reduceWarpShuffle; the gain is in what the code says, not in speed.
template <class In, class Acc, class Op>
__global__ void reduceCooperativeGroups(rl::gmem<const In> input, rl::gmem<Acc> partials, std::size_t n) {
  const Op op;
  __shared__ Acc warp_storage[32];
  rl::smem<Acc> warp_sums = warp_storage;
  auto block = cg::this_thread_block();
  auto tile = cg::tiled_partition<32>(block);

  Acc v = detail::load_items<kModernItems, In, Acc>(input, n, op);
  {
    const rl::probe::Step probe(1);  // cg::reduce is one step to the probes (stride 1 and up)
    v = cg::reduce(tile, v, op);
  }
  if (tile.thread_rank() == 0) warp_sums[tile.meta_group_rank()] = v;
  block.sync();
  if (tile.meta_group_rank() == 0) {
    if (tile.thread_rank() < tile.meta_group_size()) v = warp_sums[tile.thread_rank()];
    else v = Op::identity();
    {
      const rl::probe::Step probe(32);
      v = cg::reduce(tile, v, op);
    }
    if (tile.thread_rank() == 0) partials[blockIdx.x] = v;
  }
}

// reduceVectorized — many elements per thread: a grid-stride loop over 16-byte vectors (4 ints
// or floats, 2 doubles per load), with a grid capped at kGridStrideMaxBlocks blocks (a constant,
// so the order of operations depends on n and the block only), each thread accumulating in a
// register; the n % (16/sizeof) leftover elements go to the first threads; then the shuffle
// block reduction. Few, long-lived blocks; the fewest load instructions per byte. Still slow:
// a second launch for the partials (a few microseconds at small n), and no tuning of the grid
// to the device.
template <class In, class Acc, class Op>
__global__ void reduceVectorized(rl::gmem<const In> input, rl::gmem<Acc> partials, std::size_t n) {
  const Op op;
  constexpr unsigned kVec = detail::Vec16<In>::kCount;
  __shared__ Acc warp_storage[32];
  rl::smem<Acc> warp_sums = warp_storage;

  const std::size_t gtid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t nvec = n / kVec;
  Acc v = Op::identity();
  for (std::size_t i = gtid; i < nvec; i += threads) {
    detail::Vec16<In> x = detail::load16(input, i);
    for (unsigned k = 0; k < kVec; ++k) v = op(v, static_cast<Acc>(x.v[k]));
  }
  if (gtid < n - nvec * kVec) {  // the last n % kVec elements
    In x = input[nvec * kVec + gtid];
    v = op(v, static_cast<Acc>(x));
  }
  v = detail::block_reduce<detail::ShuffleWarp>(v, warp_sums, op);
  if (threadIdx.x == 0) partials[blockIdx.x] = v;
}

// The single pass's ticket counter: zero when the module loads, and reset to zero by the last
// block of every launch, so each launch starts from zero (as the CUDA sample threadFenceReduction
// does). One counter per instantiation: two launches of the same instantiation must not run
// concurrently (the lab runs kernels one at a time).
template <class In, class Op>
__device__ unsigned int retirementCount = 0;

// reduceSinglePass — single-pass, last-block-done finish: every block reduces its tile-shaped
// share (as reduceWarpShuffle) and writes its partial; __threadfence makes the partial visible
// device-wide before thread 0 takes a ticket from an atomic counter; the block that draws the
// last ticket reduces all partials (in a fixed order: deterministic) and writes the result, then
// resets the counter. One launch instead of two. Still slow: the last block's pass over the
// partials is serial with everything before it, and the grid is sized to n (many blocks at large
// n make that pass longer); 4-byte loads.
template <class In, class Acc, class Op>
__global__ void reduceSinglePass(rl::gmem<const In> input, rl::gmem<Acc> partials,
                                 rl::gmem<Acc> result, std::size_t n) {
  const Op op;
  __shared__ Acc warp_storage[32];
  rl::smem<Acc> warp_sums = warp_storage;
  __shared__ unsigned last_storage[1];
  rl::smem<unsigned> am_last = last_storage;

  Acc v = detail::load_items<kModernItems, In, Acc>(input, n, op);
  v = detail::block_reduce<detail::ShuffleWarp>(v, warp_sums, op);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
    __threadfence();  // the partial is visible to every block before the ticket is taken
    const unsigned ticket = atomicAdd(&retirementCount<In, Op>, 1u);
    am_last[0] = ticket == gridDim.x - 1 ? 1u : 0u;
  }
  __syncthreads();
  const unsigned last = am_last[0];
  if (last != 0) {  // the same in every thread of the block: the barrier inside is uniform
    const rl::probe::Exclude bookkeeping;  // the pass over partials is not the kernel's reduction
    __threadfence();
    rl::vmem<const Acc> done = partials;  // written by other blocks: bypass this SM's L1
    Acc w = Op::identity();
    for (std::size_t i = threadIdx.x; i < gridDim.x; i += blockDim.x) w = op(w, done[i]);
    w = detail::block_reduce<detail::UnprobedShuffleWarp>(w, warp_sums, op);
    if (threadIdx.x == 0) {
      result[0] = w;
      atomicExch(&retirementCount<In, Op>, 0u);  // ready for the next launch
    }
  }
}

// --- launchers ---

#define RL_GALLERY_MODERN_LAUNCHER(kernel, launcher)                                           \
  template <class In, class Acc, class Op>                                                     \
  void launcher(const LaunchArgs& a) {                                                         \
    require_pow2_block(a, #kernel);                                                            \
    const std::size_t blocks = ceil_div(a.n, static_cast<std::size_t>(a.block) * kModernItems); \
    rl::launch(kernel<In, Acc, Op>, config(a, blocks, a.block, 0, #kernel),                    \
               dev_const<In>(a.input), dev<Acc>(a.scratch), a.n);                              \
    final_pass<Acc, Op>(a, blocks);                                                            \
  }
RL_GALLERY_MODERN_LAUNCHER(reduceWarpShuffle, launch_reduceWarpShuffle)
RL_GALLERY_MODERN_LAUNCHER(reduceWarpReduceSync, launch_reduceWarpReduceSync)
RL_GALLERY_MODERN_LAUNCHER(reduceCooperativeGroups, launch_reduceCooperativeGroups)
#undef RL_GALLERY_MODERN_LAUNCHER

template <class In, class Acc, class Op>
void launch_reduceVectorized(const LaunchArgs& a) {
  require_pow2_block(a, "reduceVectorized");
  if (reinterpret_cast<std::uintptr_t>(a.input) % 16 != 0)
    throw std::invalid_argument("reduceVectorized: the input must be 16-byte aligned");
  const std::size_t blocks = vectorized_blocks(a.n, a.block, sizeof(In));
  rl::launch(reduceVectorized<In, Acc, Op>, config(a, blocks, a.block, 0, "reduceVectorized"),
             dev_const<In>(a.input), dev<Acc>(a.scratch), a.n);
  final_pass<Acc, Op>(a, blocks);
}

template <class In, class Acc, class Op>
void launch_reduceSinglePass(const LaunchArgs& a) {
  require_pow2_block(a, "reduceSinglePass");
  const std::size_t blocks = ceil_div(a.n, static_cast<std::size_t>(a.block) * kModernItems);
  rl::launch(reduceSinglePass<In, Acc, Op>, config(a, blocks, a.block, 0, "reduceSinglePass"),
             dev_const<In>(a.input), dev<Acc>(a.scratch), dev<Acc>(a.result), a.n);
}

// The family's entries, each with its launcher (bound once per backend from the family list
// in gallery/CMakeLists.txt).
inline std::vector<Binding> modern_bindings() {
  return {
      RL_GALLERY_BIND(launch_reduceWarpShuffle, {
          .id = "warp-shuffle",
          .name = "reduceWarpShuffle",
          .family = "modern",
          .seed = "beyond the seeds (Kepler shuffles)",
          .technique = "8 elements per thread, then each warp folds its values in registers with "
                       "__shfl_down_sync: one shared slot per warp, one __syncthreads per block",
          .still_slow = "4-byte loads; a grid sized to n (many short blocks); a second launch for the partials",
          .final_pass = kFinalPartials,
          .constraints = {.items_per_thread = kModernItems},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<8>,
          .independent_loads = 8,
      }),
      RL_GALLERY_BIND(launch_reduceWarpReduceSync, {
          .id = "warp-reduce-sync",
          .name = "reduceWarpReduceSync",
          .family = "modern",
          .seed = "beyond the seeds (sm_80 __reduce_*_sync)",
          .technique = "the warp step in one instruction: __reduce_add/min/max_sync for int32 (wrap); an int64 "
                       "sum (int32 wide) uses three 32-bit reductions of its 16/16/32-bit parts; float, double "
                       "and int64 min/max fall back to shuffles",
          .still_slow = "as reduceWarpShuffle: the warp step is not the bottleneck of a memory-bound reduction",
          .final_pass = kFinalPartials,
          .constraints = {.items_per_thread = kModernItems},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<8>,
          .independent_loads = 8,
      }),
      RL_GALLERY_BIND(launch_reduceCooperativeGroups, {
          .id = "cooperative-groups",
          .name = "reduceCooperativeGroups",
          .family = "modern",
          .seed = "beyond the seeds (cooperative groups)",
          .technique = "the same shape with cooperative groups: cg::this_thread_block, cg::tiled_partition<32>, "
                       "cg::reduce",
          .still_slow = "as reduceWarpShuffle; the gain is in what the code says",
          .final_pass = kFinalPartials,
          .constraints = {.items_per_thread = kModernItems},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<8>,
          .independent_loads = 8,
      }),
      RL_GALLERY_BIND(launch_reduceVectorized, {
          .id = "vectorized",
          .name = "reduceVectorized",
          .family = "modern",
          .seed = "beyond the seeds (CUB-style loads)",
          .technique = "16-byte vector loads in a grid-stride loop over a grid capped at 2048 blocks: many "
                       "elements per thread accumulated in a register, few long-lived blocks",
          .still_slow = "a second launch for the partials; the grid is not tuned to the device",
          .final_pass = kFinalPartials,
          .constraints = {.items_per_thread = 16},
          .bytes_read = read_once,
          .scratch_bytes = vectorized_scratch,
          .independent_loads = 1,
          .load_width = 16,
      }),
      RL_GALLERY_BIND(launch_reduceSinglePass, {
          .id = "single-pass",
          .name = "reduceSinglePass",
          .family = "modern",
          .seed = "beyond the seeds (threadFenceReduction)",
          .technique = "single pass: each block writes its partial, __threadfence, takes a ticket from an atomic "
                       "counter; the last block reduces all partials in fixed order and resets the counter for "
                       "the next launch",
          .still_slow = "the last block's pass over the partials is serial with everything before it; 4-byte "
                        "loads; a grid sized to n",
          .final_pass = "none: the last block to finish reduces the partials (scratch) into the result in fixed "
                        "order",
          .constraints = {.items_per_thread = kModernItems},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<8>,
          .independent_loads = 8,
      }),
  };
}

}  // namespace rl::gallery::inline RL_GALLERY_BACKEND
