#pragma once
// Family "shared-memory": seed 001_bfcc402c6c32768c.txt, shared-memory reduction with strided
// (bank-conflicting) versus sequential (conflict-free) addressing. Each block copies its
// blockDim.x elements into shared memory once and reduces them there; one partial per block,
// then the final pass (final_pass.cuh).
//
// Corrections to the seed: the fixed `ThreadsPerBlock` array becomes dynamic shared memory sized
// by the launch (any power-of-two block); threads past n load the op's identity instead of
// reading past the end (the seed reads a[tid] unguarded); int index arithmetic becomes 64-bit;
// the input may be any dtype and is converted to the accumulator as it is loaded.
#include <vector>

#include "gallery/common.cuh"
#include "gallery/dispatch.cuh"
#include "gallery/final_pass.cuh"

namespace rl::gallery::inline RL_GALLERY_BACKEND {

namespace detail {
// cache[threadIdx.x] = a[blockIdx.x * blockDim.x + threadIdx.x], or the identity past n.
template <class In, class Acc, class Op>
__device__ void load_block(rl::gmem<const In> a, rl::smem<Acc> cache, std::size_t n) {
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  Acc v = Op::identity();
  if (tid < n) {
    In x = a[tid];
    v = static_cast<Acc>(x);
  }
  cache[threadIdx.x] = v;
}
}  // namespace detail

// BC_addKernel — seed 001: strided addressing in shared memory, index = 2*i*cacheIndex. The
// working threads are contiguous (no warp divergence until fewer than 32 remain) but a warp's
// addresses are 2*i words apart: a 2-, 4-, ... way bank conflict at step i. Still slow: the bank
// conflicts (each conflicting access is replayed), one element per thread, a barrier per step.
template <class In, class Acc, class Op>
__global__ void BC_addKernel(rl::gmem<const In> a, rl::gmem<Acc> r, std::size_t n) {
  const Op op;
  RL_DYNAMIC_SHARED(Acc, cache);
  const unsigned cacheIndex = threadIdx.x;

  // copy data to shared memory from global memory
  detail::load_block<In, Acc, Op>(a, cache, n);
  __syncthreads();

  // add these data using reduce
  for (unsigned i = 1; i < blockDim.x; i *= 2) {
    const unsigned index = 2 * i * cacheIndex;
    if (index < blockDim.x) {
      const rl::probe::Step probe(i);
      cache[index] = op(cache[index], cache[index + i]);
    }
    __syncthreads();
  }

  // copy the result of reduce to global memory
  if (cacheIndex == 0) r[blockIdx.x] = cache[0];
}

// NBC_addKernel2 — seed 001: sequential addressing, the stride starts at half the block and
// halves, thread cacheIndex adds cacheIndex + i: a warp touches 32 consecutive words, one per
// bank, no conflict. Still slow: half the threads idle from the first step (each thread loads
// one element), the last five steps diverge inside one warp, a barrier per step.
template <class In, class Acc, class Op>
__global__ void NBC_addKernel2(rl::gmem<const In> a, rl::gmem<Acc> r, std::size_t n) {
  const Op op;
  RL_DYNAMIC_SHARED(Acc, cache);
  const unsigned cacheIndex = threadIdx.x;

  detail::load_block<In, Acc, Op>(a, cache, n);
  __syncthreads();

  for (unsigned i = blockDim.x / 2; i > 0; i /= 2) {
    if (cacheIndex < i) {
      const rl::probe::Step probe(i);
      cache[cacheIndex] = op(cache[cacheIndex], cache[cacheIndex + i]);
    }
    __syncthreads();
  }

  if (cacheIndex == 0) r[blockIdx.x] = cache[0];
}

#define RL_GALLERY_SHARED_LAUNCHER(kernel, launcher)                                           \
  template <class In, class Acc, class Op>                                                     \
  void launcher(const LaunchArgs& a) {                                                         \
    require_pow2_block(a, #kernel);                                                            \
    const std::size_t blocks = ceil_div(a.n, a.block);                                         \
    rl::launch(kernel<In, Acc, Op>, config(a, blocks, a.block, a.block * sizeof(Acc), #kernel), \
               dev_const<In>(a.input), dev<Acc>(a.scratch), a.n);                              \
    final_pass<Acc, Op>(a, blocks);                                                            \
  }

RL_GALLERY_SHARED_LAUNCHER(BC_addKernel, launch_BC_addKernel)
RL_GALLERY_SHARED_LAUNCHER(NBC_addKernel2, launch_NBC_addKernel2)
#undef RL_GALLERY_SHARED_LAUNCHER

// The family's entries, each with its launcher (bound once per backend from the family list
// in gallery/CMakeLists.txt).
inline std::vector<Binding> shared_memory_bindings() {
  return {
      RL_GALLERY_BIND(launch_BC_addKernel, {
          .id = "bc-add",
          .name = "BC_addKernel",
          .family = "shared-memory",
          .seed = "001",
          .technique = "the block's elements copied once into shared memory and reduced there, strided "
                       "addressing index = 2*i*tid: contiguous working threads",
          .still_slow = "2-, 4-, ... way bank conflicts (a warp's addresses 2*i words apart); one element per "
                        "thread; a barrier per step",
          .final_pass = kFinalPartials,
          .constraints = {},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<1>,
          .independent_loads = 1,
      }),
      RL_GALLERY_BIND(launch_NBC_addKernel2, {
          .id = "nbc-add",
          .name = "NBC_addKernel2",
          .family = "shared-memory",
          .seed = "001",
          .technique = "sequential addressing in shared memory: thread tid adds tid + i, a warp touches 32 "
                       "consecutive words (no bank conflict)",
          .still_slow = "half the threads idle from the first step; the last five steps diverge in one warp; a "
                        "barrier per step",
          .final_pass = kFinalPartials,
          .constraints = {},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<1>,
          .independent_loads = 1,
      }),
  };
}

}  // namespace rl::gallery::inline RL_GALLERY_BACKEND
