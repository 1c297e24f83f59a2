#pragma once
// The reduction order of reducelab::reduce, fixed by n alone. The GPU kernel (agent_reduce.cuh)
// and the CPU backend (cpu_reduce.hpp) both follow it, so they give the same bits.
//
//   tile    kThreads x kItems x kVec consecutive elements (16 KiB of input for every dtype).
//           Thread t of a tile owns its vectors i = 0..kItems-1, each kVec consecutive elements
//           starting at element (i * kThreads + t) * kVec of the tile.
//   chunk   a run of consecutive tiles: chunk c of C covers tiles [tiles*c/C, tiles*(c+1)/C).
//           C = min(tiles, kChunks) is a function of n only.
//   1. per chunk, each thread t folds its elements tile by tile: within a tile, vector by
//      vector and element by element into a tile sum (starting from the identity; elements past
//      n skipped), which then joins the thread's accumulator (reduce_ops.cuh: lift,
//      inner_combine, absorb);
//   2. the kThreads accumulators fold in a fixed tree: within each warp, shuffle-down steps of
//      16, 8, 4, 2, 1 lanes (lane l takes l + offset); then warp 0 folds the kThreads / 32 warp
//      results (lanes past them hold the identity) with the same five steps;
//   3. the C chunk results fold the same way: thread t folds chunks t, t + kThreads, ... in
//      order, then step 2's tree.
// The GPU may run chunks on any number of blocks in any order: a chunk's result depends only
// on its elements and this recipe. Operations whose combine is exactly associative and
// commutative (integers, min, max, argmin/argmax) get the same bits from any split, so for them
// the library makes one chunk per block instead (the split that is fastest on the GPU at hand).
#include <algorithm>
#include <cstdint>

#include "reducelab/config.hpp"

namespace reducelab::detail {

inline constexpr unsigned kThreads = 256;  // threads per block (H200: see docs/performance.md)
inline constexpr unsigned kItems = 4;      // 16-byte vectors per thread per tile
inline constexpr std::uint64_t kChunks = 2048;  // chunks of the fixed order at large n
inline constexpr unsigned kWarps = kThreads / 32;

template <class T>
struct Shape {
  static constexpr unsigned kVec = sizeof(T) <= 16 ? 16 / sizeof(T) : 1;  // elements per vector
  static constexpr std::uint64_t kTile = std::uint64_t(kThreads) * kItems * kVec;
};

struct Plan {
  std::uint64_t n = 0;
  std::uint64_t tiles = 0;   // ceil(n / tile)
  std::uint64_t chunks = 0;  // C
  RL_HD_INLINE std::uint64_t chunk_begin(std::uint64_t c) const {
    return chunks == 0 ? 0 : static_cast<std::uint64_t>((static_cast<unsigned __int128>(tiles) * c) / chunks);
  }
};

// The fixed order's plan for n elements of T.
template <class T>
RL_HD_INLINE Plan fixed_plan(std::uint64_t n) {
  Plan p;
  p.n = n;
  p.tiles = (n + Shape<T>::kTile - 1) / Shape<T>::kTile;
  p.chunks = p.tiles < kChunks ? p.tiles : kChunks;
  return p;
}

// An order-free operation's plan: one chunk per block of a `grid`-block launch.
template <class T>
RL_HD_INLINE Plan split_plan(std::uint64_t n, std::uint64_t grid) {
  Plan p = fixed_plan<T>(n);
  p.chunks = p.tiles < grid ? p.tiles : grid;
  return p;
}

}  // namespace reducelab::detail
