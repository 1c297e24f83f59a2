#pragma once
// The final pass, written once and used by every gallery kernel that leaves one partial per
// block in scratch (seed 000 copies the partials to the host and sums them there; the gallery
// keeps everything on the device so a kernel is timed as one stream of launches).
//
// finalPass: block b folds partials [b*chunk, (b+1)*chunk) with a fixed per-thread stride and a
// shared-memory tree, so the order of operations depends on the count alone: deterministic,
// bit for bit, on every run and both backends. Above kFinalOneBlock partials an inner round of
// chunked blocks shrinks the count 4096-fold first (geometry.hpp).
#include "gallery/common.cuh"

namespace rl::gallery::inline RL_GALLERY_BACKEND {

// How an entry's per-block values become one value (Entry::final_pass), for the entries that
// end in the launchers below.
inline constexpr std::string_view kFinalPartials =
    "one partial per block into scratch, then finalPass (final_pass.cuh): deterministic, fixed "
    "order; one block when at most 16384 partials, else 4096-partial chunks first";
inline constexpr std::string_view kFinalSegments =
    "the book's single-block kernel runs once per segment of 2*block elements (grid = "
    "ceil(n / (2*block)), block b on input + b*2*block); each block's value is a partial in "
    "scratch, then finalPass (final_pass.cuh) reduces the partials in fixed order";
inline constexpr std::string_view kFinalAtomic =
    "none: each block combines its value into the result with an atomic (rl::atomic_combine) "
    "after a one-thread kernel writes the op's identity there";

template <class Op>
__global__ void finalPass(rl::gmem<const typename Op::value_type> in, std::size_t count,
                          std::size_t chunk, rl::gmem<typename Op::value_type> out) {
  using T = typename Op::value_type;
  const rl::probe::Exclude not_explained;  // bookkeeping after the kernel being explained
  const Op op;
  __shared__ T partial_storage[kFinalThreads];
  rl::smem<T> partial = partial_storage;

  const unsigned tid = threadIdx.x;
  const std::size_t begin = static_cast<std::size_t>(blockIdx.x) * chunk;
  const std::size_t end = begin + owned(count, begin, chunk);
  T v = Op::identity();
  for (std::size_t i = begin + tid; i < end; i += blockDim.x) v = op(v, in[i]);
  partial[tid] = v;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) partial[tid] = op(partial[tid], partial[tid + stride]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = partial[0];
}

// Writes the op's identity into *out: the starting value for kernels that combine atomically.
template <class Op>
__global__ void initIdentity(rl::gmem<typename Op::value_type> out) {
  const rl::probe::Exclude not_explained;
  if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = Op::identity();
}

// A launch of the gallery's bookkeeping (the final pass, the identity), not of an entry's kernel:
// marked so that reports of a launcher's kernels (explain --backend cuda) tell them apart.
inline rl::LaunchConfig helper_config(const LaunchArgs& a, std::size_t grid, unsigned block, const char* name) {
  rl::LaunchConfig cfg = config(a, grid, block, 0, name);
  cfg.helper = true;
  return cfg;
}

// Reduces `count` partials that a kernel wrote at the start of args.scratch into args.result.
template <class Acc, class Op>
void final_pass(const LaunchArgs& a, std::size_t count) {
  Acc* buf[2] = {dev<Acc>(a.scratch),
                 reinterpret_cast<Acc*>(static_cast<unsigned char*>(a.scratch) +
                                        align_up(count * sizeof(Acc), kScratchAlign))};
  int src = 0;
  while (count > kFinalOneBlock) {
    const std::size_t blocks = ceil_div(count, kFinalChunk);
    rl::launch(finalPass<Op>, helper_config(a, blocks, kFinalThreads, "finalPass"),
               static_cast<const Acc*>(buf[src]), count, kFinalChunk, buf[1 - src]);
    count = blocks;
    src = 1 - src;
  }
  rl::launch(finalPass<Op>, helper_config(a, 1, kFinalThreads, "finalPass"),
             static_cast<const Acc*>(buf[src]), count, count, dev<Acc>(a.result));
}

template <class Acc, class Op>
void init_identity(const LaunchArgs& a) {
  rl::launch(initIdentity<Op>, helper_config(a, 1, 32, "initIdentity"), dev<Acc>(a.result));
}

}  // namespace rl::gallery::inline RL_GALLERY_BACKEND
