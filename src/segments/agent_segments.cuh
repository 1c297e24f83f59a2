#pragma once
// reduceSegments — one block per piece (a row, a column or a segment; pieces.hpp), each piece in
// reducelab::reduce's fixed order for its length (reduce_order.hpp): the block folds the piece's
// chunks one after another with the library's own fold_chunk and block_fold, keeps the chunk
// results in shared memory and folds them as reduceChunks' last block does. A piece's bits so
// depend on its elements alone, never on the grid. Read by nvcc and by g++ (SIMT).
//
// Still slow: a short row leaves most of a 256-thread block idle, a column is read with a
// stride (one element per row) instead of coalesced across neighbouring columns, and a single
// long row uses one block of the GPU.
#include <cstdint>

#include "reducelab/detail/agent_reduce.cuh"
#include "reducelab/detail/portable.cuh"
#include "segments/pieces.hpp"

namespace reducelab::detail {

// Step 1 for chunk c of a piece whose elements are `stride` apart: fold_chunk's order, one
// element at a time.
template <class T, class Sem>
__device__ __forceinline__ typename Sem::Acc fold_strided_chunk(rl::gmem<const T> x, std::uint64_t stride,
                                                                const Plan& plan, std::uint64_t c) {
  using Acc = typename Sem::Acc;
  using Inner = typename Sem::Inner;
  constexpr unsigned kVec = Shape<T>::kVec;
  constexpr std::uint64_t kTile = Shape<T>::kTile;
  const std::uint64_t begin = plan.chunk_begin(c), end = plan.chunk_begin(c + 1);
  Acc acc = Sem::identity();
  for (std::uint64_t tile = begin; tile < end; tile += kTile) {
    const std::uint64_t base = tile + std::uint64_t(threadIdx.x) * kVec;
    Inner in = Sem::inner_identity();
#pragma unroll 1
    for (unsigned i = 0; i < kItems; ++i) {
      if (tile + std::uint64_t(i) * kThreads * kVec >= end) break;
      const std::uint64_t at = base + std::uint64_t(i) * kThreads * kVec;
#pragma unroll 1
      for (unsigned j = 0; j < kVec && at + j < plan.n; ++j) {
        const T v = x[(at + j) * stride];
        in = Sem::inner_combine(in, Sem::lift(v, at + j));
      }
    }
    acc = Sem::absorb(acc, in);
  }
  return acc;
}

template <class T>
__device__ __forceinline__ bool is_aligned16(rl::gmem<const T> p) {
#if RL_SIMT
  return reinterpret_cast<std::uintptr_t>(p.get()) % 16 == 0;
#else
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
#endif
}

// Launch with kThreads threads and any grid; block b reduces pieces b, b + gridDim.x, ...
// begin/end are read only for segments (pieces.offsets).
template <class T, class Sem>
__global__ void __launch_bounds__(kThreads)
    reduceSegments(rl::gmem<const T> input, Pieces pieces, rl::gmem<const std::int64_t> begin,
                   rl::gmem<const std::int64_t> end, rl::gmem<typename Sem::Out> output) {
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[kWarps];
  rl::smem<Acc> slots = slot_storage;
  __shared__ Acc chunk_storage[kChunks];  // 2112 x at most 16 bytes: 33 KiB
  rl::smem<Acc> chunk_results = chunk_storage;

  for (std::uint64_t p = blockIdx.x; p < pieces.count; p += gridDim.x) {
    std::uint64_t first = 0, length = 0;
    if (pieces.offsets) {
      const std::int64_t b = begin[p], e = end[p];
      length = segment_length(b, e);
      first = length ? static_cast<std::uint64_t>(b) : 0;
    } else {
      first = p * pieces.step;
      length = pieces.length;
    }
    const Plan plan = fixed_plan<T>(length);
    const rl::gmem<const T> x = input + first;
    const bool contiguous = pieces.stride == 1;
    const bool aligned = contiguous && is_aligned16(x);
    Acc v;
    if (plan.chunks <= 1) {
      v = Sem::identity();
      if (plan.chunks == 1)
        v = contiguous ? fold_chunk<T, Sem>(x, plan, 0, aligned) : fold_strided_chunk<T, Sem>(x, pieces.stride, plan, 0);
      v = block_fold<Sem>(v, slots);
    } else {
      for (std::uint64_t c = 0; c < plan.chunks; ++c) {
        Acc w = contiguous ? fold_chunk<T, Sem>(x, plan, c, aligned)
                           : fold_strided_chunk<T, Sem>(x, pieces.stride, plan, c);
        w = block_fold<Sem>(w, slots);
        if (threadIdx.x == 0) chunk_results[c] = w;
        __syncthreads();  // slots are reused; chunk_results complete before step 3
      }
      // Step 3: thread t folds chunks t, t + kThreads, ... in order, then the block tree.
      Acc w = Sem::identity();
      for (std::uint64_t c = threadIdx.x; c < plan.chunks; c += kThreads) {
        const Acc r = chunk_results[c];
        w = Sem::combine(w, r);
      }
      v = block_fold<Sem>(w, slots);
    }
    if (threadIdx.x == 0) output[p] = Sem::finish(v, length);
    __syncthreads();  // slots and chunk_results are reused by the next piece
  }
}

}  // namespace reducelab::detail
