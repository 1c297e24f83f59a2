#pragma once
// Family "divergence": Professional CUDA C Programming §3.4, avoiding branch divergence
// (seed 000_00bbfe888573f105.txt). Every kernel reduces its block's blockDim.x elements in
// place in global memory, as the book does, and writes one partial per block; the shared final
// pass (final_pass.cuh) turns the partials into the result where the book summed them on the
// host.
//
// Corrections to the seed, common to the four kernels:
//   - `if (idx > n) return;` read past n at idx == n and left the block's other threads waiting
//     at a __syncthreads that returned threads never reach. Here no thread returns; a partner
//     at or beyond n is simply not read (the op's identity stands in), so a tail block neither
//     reads nor writes an element >= n.
//   - Templated over the accumulator type and the op: int32 sums accumulate in long long by
//     default (the seed's int sum of 2^24 values overflows for other sizes or data).
//   - 64-bit indices: n >= 2^31 works.
#include <vector>

#include "gallery/common.cuh"
#include "gallery/dispatch.cuh"
#include "gallery/final_pass.cuh"

namespace rl::gallery::inline RL_GALLERY_BACKEND {

// reduceNeighbored — §3.4.2: neighbored pairs, in place in global memory; thread tid works
// while tid % (2*stride) == 0. Still slow: after the first step only every other thread works
// but every warp stays scheduled (divergence in every warp at every step); each step goes
// through global memory. The body is shared with warmup below.
template <class T, class Op>
__device__ void neighbored_pairs(rl::gmem<T> g_idata, rl::gmem<T> g_odata, std::size_t n) {
  const Op op;
  const unsigned tid = threadIdx.x;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x;
  const std::size_t valid = owned(n, base, blockDim.x);  // elements this block owns
  rl::gmem<T> idata = g_idata + base;

  for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
    if ((tid % (2 * stride)) == 0 && tid + stride < valid) {
      const rl::probe::Step probe(stride);
      idata[tid] = op(idata[tid], idata[tid + stride]);
    }
    __syncthreads();
  }
  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

template <class T, class Op>
__global__ void reduceNeighbored(rl::gmem<T> g_idata, rl::gmem<T> g_odata, std::size_t n) {
  neighbored_pairs<T, Op>(g_idata, g_odata, n);
}

// warmup — §3.4: the same code as reduceNeighbored under its own name, launched first so that
// the GPU's start-up cost is not charged to reduceNeighbored. Still slow: as reduceNeighbored.
template <class T, class Op>
__global__ void warmup(rl::gmem<T> g_idata, rl::gmem<T> g_odata, std::size_t n) {
  neighbored_pairs<T, Op>(g_idata, g_odata, n);
}

// reduceNeighboredLess — §3.4.3: same pairs, but thread tid handles index 2*stride*tid, so the
// working threads are the first ones of the block and whole warps fall idle together. Still
// slow: the last five steps (fewer than 32 pairs) diverge inside one warp; the strided index
// spreads each warp's accesses over more memory segments as the stride grows; global memory
// round trips at every step.
template <class T, class Op>
__global__ void reduceNeighboredLess(rl::gmem<T> g_idata, rl::gmem<T> g_odata, std::size_t n) {
  const Op op;
  const unsigned tid = threadIdx.x;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x;
  const std::size_t valid = owned(n, base, blockDim.x);
  rl::gmem<T> idata = g_idata + base;

  for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
    const unsigned index = 2 * stride * tid;
    if (index < blockDim.x && index + stride < valid) {
      const rl::probe::Step probe(stride);
      idata[index] = op(idata[index], idata[index + stride]);
    }
    __syncthreads();
  }
  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

// reduceInterleaved — §3.4.4: the stride starts at half the block and halves; thread tid adds
// element tid + stride, so each warp reads and writes consecutive addresses. Still slow: the
// same intra-warp divergence in the last five steps; one element per thread, so half the
// threads are idle from the first step; every step round-trips through global memory.
template <class T, class Op>
__global__ void reduceInterleaved(rl::gmem<T> g_idata, rl::gmem<T> g_odata, std::size_t n) {
  const Op op;
  const unsigned tid = threadIdx.x;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x;
  const std::size_t valid = owned(n, base, blockDim.x);
  rl::gmem<T> idata = g_idata + base;

  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride && tid + stride < valid) {
      const rl::probe::Step probe(stride);
      idata[tid] = op(idata[tid], idata[tid + stride]);
    }
    __syncthreads();
  }
  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

// --- launchers: in place (the input buffer holds Acc), one partial per block, final pass ---

#define RL_GALLERY_DIVERGENCE_LAUNCHER(kernel, launcher)                                       \
  template <class In, class Acc, class Op>                                                     \
  void launcher(const LaunchArgs& a) {                                                         \
    require_pow2_block(a, #kernel);                                                            \
    const std::size_t blocks = ceil_div(a.n, a.block);                                         \
    rl::launch(kernel<Acc, Op>, config(a, blocks, a.block, 0, #kernel), dev<Acc>(a.input),      \
               dev<Acc>(a.scratch), a.n);                                                      \
    final_pass<Acc, Op>(a, blocks);                                                            \
  }

RL_GALLERY_DIVERGENCE_LAUNCHER(warmup, launch_warmup)
RL_GALLERY_DIVERGENCE_LAUNCHER(reduceNeighbored, launch_reduceNeighbored)
RL_GALLERY_DIVERGENCE_LAUNCHER(reduceNeighboredLess, launch_reduceNeighboredLess)
RL_GALLERY_DIVERGENCE_LAUNCHER(reduceInterleaved, launch_reduceInterleaved)
#undef RL_GALLERY_DIVERGENCE_LAUNCHER

// The family's entries, each with its launcher (bound once per backend from the family list
// in gallery/CMakeLists.txt).
inline std::vector<Binding> divergence_bindings() {
  return {
      RL_GALLERY_BIND(launch_warmup, {
          .id = "warmup",
          .name = "warmup",
          .family = "divergence",
          .seed = "000 §2 (Professional CUDA C 3.4)",
          .technique = "the same code as reduceNeighbored, run first so that GPU start-up is not charged "
                       "to the first measured kernel",
          .still_slow = "as reduceNeighbored",
          .final_pass = kFinalPartials,
          .constraints = {.in_place = true},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<1>,
          .independent_loads = 1,
      }),
      RL_GALLERY_BIND(launch_reduceNeighbored, {
          .id = "neighbored",
          .name = "reduceNeighbored",
          .family = "divergence",
          .seed = "000 §2 (Professional CUDA C 3.4.2)",
          .technique = "neighbored pairs in place in global memory: thread tid adds idata[tid + stride] when "
                       "tid % (2*stride) == 0",
          .still_slow = "after the first step only every other thread works but every warp stays scheduled "
                        "(divergence in every warp at every step); every step goes through global memory",
          .final_pass = kFinalPartials,
          .constraints = {.in_place = true},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<1>,
          .independent_loads = 1,
          .speedup_baseline = true,
      }),
      RL_GALLERY_BIND(launch_reduceNeighboredLess, {
          .id = "neighbored-less",
          .name = "reduceNeighboredLess",
          .family = "divergence",
          .seed = "000 §3 (Professional CUDA C 3.4.3)",
          .technique = "same pairs, but thread tid works on index 2*stride*tid: the working threads are the "
                       "first of the block, so whole warps go idle together",
          .still_slow = "the last five steps diverge inside one warp; the strided index spreads a warp's "
                        "accesses over more memory segments each step; global memory round trips",
          .final_pass = kFinalPartials,
          .constraints = {.in_place = true},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<1>,
          .independent_loads = 1,
      }),
      RL_GALLERY_BIND(launch_reduceInterleaved, {
          .id = "interleaved",
          .name = "reduceInterleaved",
          .family = "divergence",
          .seed = "000 §4 (Professional CUDA C 3.4.4)",
          .technique = "interleaved pairs: the stride starts at half the block and halves; a warp reads and "
                       "writes consecutive addresses",
          .still_slow = "intra-warp divergence in the last five steps; one element per thread, so half the "
                        "threads idle from the first step; every step through global memory",
          .final_pass = kFinalPartials,
          .constraints = {.in_place = true},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<1>,
          .independent_loads = 1,
      }),
  };
}

}  // namespace rl::gallery::inline RL_GALLERY_BACKEND
