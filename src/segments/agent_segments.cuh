#pragma once
// The kernels of reduce_axis and reduce_segments. Every piece (a row, a column or a segment;
// pieces.hpp) is reduced in reducelab::reduce's fixed order for its length (reduce_order.hpp), so
// its bits depend on its elements alone, never on the kernel, the grid or the GPU. Read by nvcc
// and by g++ (SIMT).
//
//   reduceTinyPieces   a thread per piece of at most one vector (a matrix's rows or columns of
//                      a few elements): neighbouring threads read neighbouring pieces.
//   reduceShortPieces  a warp per contiguous piece of at most one tile (kTile elements: 8192
//                      floats): the warp's lanes stand in for the block's 256 threads, so the
//                      order is the block's; lane l reads vector l of each row, 512 bytes a row.
//   reduceSegments     a block per piece: the piece's chunks one after another with the
//                      library's own fold_chunk and block_fold, the chunk results in shared
//                      memory, folded as reduceChunks' last block does.
//
// Fewer long rows than multiprocessors go through reducelab::reduce row by row instead
// (device_segments.cuh): the same order, the whole GPU on each row.
//
// Still slow: a column is read with a stride (one element per row) instead of coalesced across
// neighbouring columns; a few long segments (whose lengths only the GPU knows) get a block each.
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

// The first element and the length of piece p.
template <class Index>
__device__ __forceinline__ void piece_extent(const Pieces& pieces, Index begin, Index end, std::uint64_t p,
                                             std::uint64_t* first, std::uint64_t* length) {
  if (pieces.offsets) {
    const std::int64_t b = begin[p], e = end[p];
    *length = segment_length(b, e);
    *first = *length ? static_cast<std::uint64_t>(b) : 0;
  } else {
    *first = p * pieces.step;
    *length = pieces.length;
  }
}

// The block's order for a contiguous piece of n <= kTile elements (one chunk, one tile), computed
// by one warp. Lane l stands for the block's threads l + 32 w (w < kWarps): it folds each one's
// vectors as fold_chunk would, the warp folds each w as block_fold's warps do, and lane 0 replays
// warp 0's final tree over the kWarps results (the lanes past kWarps hold the identity, which
// every built-in combine passes through exactly). The whole warp must call it.
template <class T, class Sem>
__device__ __forceinline__ typename Sem::Acc warp_fold_tile(rl::gmem<const T> x, std::uint64_t n, bool aligned) {
  using Acc = typename Sem::Acc;
  using Inner = typename Sem::Inner;
  constexpr unsigned kVec = Shape<T>::kVec;
  const unsigned lane = threadIdx.x % 32;
  Acc warps[kWarps];
#pragma unroll
  for (unsigned w = 0; w < kWarps; ++w) {
    warps[w] = Sem::identity();
    if (std::uint64_t(w) * 32 * kVec >= n) continue;  // the same for every lane
    const std::uint64_t t = w * 32 + lane;
    Inner in = Sem::inner_identity();
#pragma unroll 1
    for (unsigned i = 0; i < kItems; ++i) {
      const std::uint64_t row = std::uint64_t(i) * kThreads * kVec;
      if (row >= n) break;
      const std::uint64_t at = row + t * kVec;
      if (aligned && at + kVec <= n) {
        const Vec<T> v = load_vec(x, at);
#pragma unroll
        for (unsigned j = 0; j < kVec; ++j) in = Sem::inner_combine(in, Sem::lift(v.v[j], at + j));
      } else {
#pragma unroll 1
        for (unsigned j = 0; j < kVec && at + j < n; ++j) {
          const T e = x[at + j];
          in = Sem::inner_combine(in, Sem::lift(e, at + j));
        }
      }
    }
    warps[w] = warp_fold<Sem>(Sem::absorb(Sem::identity(), in));
  }
  static_assert(kWarps == 8, "the final tree below is written for 8 warps");
  const Acc a0 = Sem::combine(warps[0], warps[4]), a1 = Sem::combine(warps[1], warps[5]);
  const Acc a2 = Sem::combine(warps[2], warps[6]), a3 = Sem::combine(warps[3], warps[7]);
  return Sem::combine(Sem::combine(a0, a2), Sem::combine(a1, a3));
}

// Launch with kThreads threads and any grid; thread k of the grid reduces pieces k, k + (threads
// in the grid), ... of a matrix whose pieces hold at most one vector (kVec elements): such a piece
// lies in the block's thread 0's first vector, every other thread, warp and chunk holds the
// identity, which every built-in combine passes through exactly, so the order is this one fold.
// Neighbouring threads take neighbouring pieces: columns are read coalesced, row by row.
template <class T, class Sem>
__global__ void __launch_bounds__(kThreads)
    reduceTinyPieces(rl::gmem<const T> input, Pieces pieces, rl::gmem<typename Sem::Out> output) {
  const std::uint64_t threads = std::uint64_t(gridDim.x) * kThreads;
  for (std::uint64_t p = std::uint64_t(blockIdx.x) * kThreads + threadIdx.x; p < pieces.count; p += threads) {
    const rl::gmem<const T> x = input + p * pieces.step;
    typename Sem::Inner in = Sem::inner_identity();
    for (std::uint64_t i = 0; i < pieces.length; ++i) {
      const T e = x[i * pieces.stride];
      in = Sem::inner_combine(in, Sem::lift(e, i));
    }
    output[p] = Sem::finish(Sem::absorb(Sem::identity(), in), pieces.length);
  }
}

// Launch with kThreads threads and any grid; warp k of the grid reduces pieces k, k + (warps in
// the grid), ... of at most kTile elements (longer ones are left to reduceSegments). Contiguous
// pieces only (stride 1).
template <class T, class Sem>
__global__ void __launch_bounds__(kThreads)
    reduceShortPieces(rl::gmem<const T> input, Pieces pieces, rl::gmem<const std::int64_t> begin,
                      rl::gmem<const std::int64_t> end, rl::gmem<typename Sem::Out> output) {
  const std::uint64_t warps = std::uint64_t(gridDim.x) * kWarps;
  for (std::uint64_t p = std::uint64_t(blockIdx.x) * kWarps + threadIdx.x / 32; p < pieces.count; p += warps) {
    std::uint64_t first = 0, length = 0;
    piece_extent(pieces, begin, end, p, &first, &length);
    if (length > Shape<T>::kTile) continue;  // the same for the whole warp
    const rl::gmem<const T> x = input + first;
    const typename Sem::Acc v = warp_fold_tile<T, Sem>(x, length, is_aligned16(x));
    if (threadIdx.x % 32 == 0) output[p] = Sem::finish(v, length);
  }
}

// Launch with kThreads threads and any grid; block b reduces pieces b, b + gridDim.x, ...
// (with pieces.skip_short, only those longer than kTile). begin/end are read only for segments.
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
    piece_extent(pieces, begin, end, p, &first, &length);
    if (pieces.skip_short && length <= Shape<T>::kTile) continue;  // the same for the whole block
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
