#pragma once
// The reduction order of reducelab::reduce, fixed by n alone. The GPU kernel (agent_reduce.cuh)
// and the CPU backend (cpu_reduce.hpp) both follow it, so they give the same bits.
//
//   vector  kVec = 16 / sizeof(T) consecutive elements (one 16-byte load).
//   chunk   C = min(ceil(n / tile), kChunks) chunks of (nearly) equal length: chunk c covers
//           elements [begin(c), begin(c + 1)) with begin(c) = floor(V * c / C) * kVec, where
//           V = ceil(n / kVec) is the number of vectors (the last chunk ends at n).
//   tile    kThreads x kItems vectors (32 KiB of input for every type). A chunk is walked in
//           tiles starting at its first element; thread t of a tile owns its vectors
//           i = 0..kItems-1, vector i starting at element (i * kThreads + t) * kVec of the tile;
//           elements at or past the chunk's end are skipped.
//   1. per chunk, each thread t folds its elements tile by tile: within a tile, vector by
//      vector and element by element into a tile sum (starting from the identity), which then
//      joins the thread's accumulator (reduce_ops.cuh: lift, inner_combine, absorb);
//   2. the kThreads accumulators fold in a fixed tree: within each warp, shuffle-down steps of
//      16, 8, 4, 2, 1 lanes (lane l takes l + offset); then warp 0 folds the kThreads / 32 warp
//      results (lanes past them hold the identity) with the same five steps;
//   3. if C > 1, the C chunk results fold the same way: thread t folds chunks t, t + kThreads,
//      ... in order, then step 2's tree.
// The GPU may run chunks on any number of blocks in any order: a chunk's result depends only on
// its elements and this recipe. Operations whose combine is exactly associative and commutative
// (integers, min, max, argmin/argmax) give the same bits from any split, so for them the
// library makes one chunk per block of whatever grid is fastest on the GPU at hand.
#include <cstdint>

#include "reducelab/config.hpp"

namespace reducelab::detail {

// kThreads, kItems and kChunks are part of the order: changing one changes the bits of
// floating-point sums. The macros exist only for tune_reduce's variants (bench/).
#ifndef RL_REDUCE_THREADS
#define RL_REDUCE_THREADS 256
#endif
#ifndef RL_REDUCE_ITEMS
#define RL_REDUCE_ITEMS 8
#endif
// 256 threads x 8 vectors: the shape that kept a 2^22-element reduce to one wave of blocks on an
// H200 (int32 sum at 2^22: 10.98 us, against 13.15 us with 4 vectors; docs/performance.md).
inline constexpr unsigned kThreads = RL_REDUCE_THREADS;
inline constexpr unsigned kItems = RL_REDUCE_ITEMS;
inline constexpr unsigned kWarps = kThreads / 32;
// 2112 = 132 SMs x 16: an H100 SXM or H200 holds 8 blocks of this kernel per SM, 1056 at once,
// so at large n every block gets exactly two chunks of equal length.
inline constexpr std::uint64_t kChunks = 2112;
// The most chunk results one launch leaves in the workspace (kChunks for the fixed order, the
// grid for a split): the library never launches more blocks than this.
inline constexpr unsigned kMaxPartials = 2112;

template <class T>
struct Shape {
  static constexpr unsigned kVec = sizeof(T) <= 16 ? 16 / sizeof(T) : 1;  // elements per vector
  static constexpr std::uint64_t kTile = std::uint64_t(kThreads) * kItems * kVec;
};

struct Plan {
  std::uint64_t n = 0;
  std::uint64_t vectors = 0;  // V = ceil(n / kVec)
  std::uint64_t chunks = 0;   // C
  unsigned vec = 1;           // kVec of the element type
  // First element of chunk c (c == chunks gives n).
  RL_HD_INLINE std::uint64_t chunk_begin(std::uint64_t c) const {
    if (c >= chunks) return n;
    const auto first = static_cast<std::uint64_t>((static_cast<unsigned __int128>(vectors) * c) / chunks) * vec;
    return first < n ? first : n;
  }
};

template <class T>
RL_HD_INLINE Plan plan_with_chunks(std::uint64_t n, std::uint64_t most) {
  Plan p;
  p.n = n;
  p.vec = Shape<T>::kVec;
  p.vectors = (n + p.vec - 1) / p.vec;
  const std::uint64_t tiles = (n + Shape<T>::kTile - 1) / Shape<T>::kTile;
  p.chunks = tiles < most ? tiles : most;
  return p;
}

// The fixed order's plan for n elements of T.
template <class T>
RL_HD_INLINE Plan fixed_plan(std::uint64_t n) {
  return plan_with_chunks<T>(n, kChunks);
}

// An order-free operation's plan: one chunk per block of a `grid`-block launch.
template <class T>
RL_HD_INLINE Plan split_plan(std::uint64_t n, std::uint64_t grid) {
  return plan_with_chunks<T>(n, grid);
}

}  // namespace reducelab::detail
