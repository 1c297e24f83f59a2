#pragma once
// The reduction order of reducelab::reduce, fixed by n alone. The GPU kernel (agent_reduce.cuh)
// and the CPU backend (cpu_reduce.hpp) both follow it, so they give the same bits.
//
//   vector  kVec = 16 / sizeof(T) consecutive elements (one 16-byte load).
//   row     kThreads vectors (4 KiB): one vector for each thread of a block.
//   tile    kItems rows (32 KiB of input for every type).
//   chunk   C chunks of whole tiles, as equal as tiles allow, with K = ceil(n / tile) tiles:
//           C = K while K <= kChunks / 2, kChunks / 2 while K < kChunks, kChunks from there on;
//           chunk c covers elements [begin(c), begin(c + 1)) with
//           begin(c) = floor(K * c / C) * tile (the last chunk ends at n). Thread t owns vector t of each row, so vector i of a tile lies in its row i;
//           elements past n are skipped. (Tile-sized units: a chunk never ends inside a tile
//           except at n, so every tile but the array's last takes the unguarded path. Splitting
//           chunks by rows balanced blocks better but cost 1.7x at 2^26 halves on an H200.)
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
  static constexpr unsigned kRow = kThreads * kVec;
  static constexpr std::uint64_t kTile = std::uint64_t(kRow) * kItems;
};

struct Plan {
  std::uint64_t n = 0;
  std::uint64_t tiles = 0;   // K = ceil(n / tile)
  std::uint64_t chunks = 0;  // C
  std::uint64_t tile = 1;    // elements per tile of the element type
  std::uint64_t per = 0;     // tiles / chunks
  std::uint32_t extra = 0;   // tiles % chunks
  // First element of chunk c (c == chunks gives n): floor(tiles * c / chunks) tiles in, computed
  // as per * c + floor(extra * c / chunks). extra * c < chunks^2 fits 32 bits for the
  // library's launches, so the kernel does one 32-bit division, not a 128-bit one (which cost a block about 1 us before its
  // first load at mid n; docs/performance.md).
  RL_HD_INLINE std::uint64_t chunk_begin(std::uint64_t c) const {
    if (c >= chunks) return n;
    std::uint64_t part;
    if (chunks <= 0xffffu) {
      part = static_cast<std::uint32_t>(extra * static_cast<std::uint32_t>(c)) / static_cast<std::uint32_t>(chunks);
    } else {  // more chunks than the library launches (a test's own plan): the wide way
      part = static_cast<std::uint64_t>((static_cast<unsigned __int128>(extra) * c) / chunks);
    }
    const std::uint64_t first = (per * c + part) * tile;
    return first < n ? first : n;
  }
  RL_HD_INLINE void set_chunks(std::uint64_t c) {
    chunks = c;
    per = c != 0 ? tiles / c : 0;
    extra = c != 0 ? static_cast<std::uint32_t>(tiles % c) : 0u;
  }
};

template <class T>
RL_HD_INLINE Plan plan_with_chunks(std::uint64_t n, std::uint64_t most) {
  Plan p;
  p.n = n;
  p.tile = Shape<T>::kTile;
  p.tiles = (n + p.tile - 1) / p.tile;
  p.set_chunks(p.tiles < most ? p.tiles : most);
  return p;
}

// The fixed order's plan for n elements of T. Between kChunks / 2 and kChunks tiles the chunks
// stay at kChunks / 2 (two tiles or one): one block each on a 132-SM Hopper, rather than some
// blocks taking two one-tile chunks one after the other (float sum at 2^24 on an H200: 25.2 us
// with 2048 one-tile chunks; see docs/performance.md).
template <class T>
RL_HD_INLINE Plan fixed_plan(std::uint64_t n) {
  Plan p = plan_with_chunks<T>(n, kChunks);
  if (p.tiles > kChunks / 2 && p.tiles < kChunks) p.set_chunks(kChunks / 2);
  return p;
}

// An order-free operation's plan: one chunk per block of a `grid`-block launch.
template <class T>
RL_HD_INLINE Plan split_plan(std::uint64_t n, std::uint64_t grid) {
  return plan_with_chunks<T>(n, grid);
}

}  // namespace reducelab::detail
