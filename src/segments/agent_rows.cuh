#pragma once
// The kernels of short rows (a matrix's axis 1, up to 8 KiB a row): reduceRowGroups,
// reduceCutRows, reducePackedRows and reduceFreeRows (agent_segments.cuh has the map of every
// kernel). Read by nvcc and by g++ (SIMT).
#include <algorithm>
#include <cstdint>

#include "segments/agent_pieces.cuh"

namespace reducelab::detail {

// ---- Rows of an order-free operation, a few lanes each -----------------------------------------
// Short rows (a matrix's axis 1: 4, 16 or 256 elements) read with a warp per row leave most
// lanes idle and one small load per warp in flight: 2^24 rows of 16 floats reached 6% of the
// read ceiling on an H200. For order-free operations (exact sums included) the lanes split
// instead: `lanes` lanes per row (a power of two: enough 16-byte vectors to cover a row of fewer
// than 32 vectors, a quarter of the row's vectors from 32 on, at most 32; row_group_lanes, and
// free_row_lanes for the operations that are not exact sums),
// 32 / lanes neighbouring rows per warp, each lane one 16-byte vector of each of kRowUnroll rows
// at a time, in flight together. Packed rows make every warp load contiguous spans. The lanes of
// a row fold with shuffles; its first lane writes the result.
inline constexpr unsigned kRowUnroll = 4;
inline constexpr unsigned kDoubleRowLanes = 4;  // the fewest lanes per row of exact double sums
// Blocks of reduceRowGroups for one step each over `count` rows of `lanes` lanes.
inline std::uint64_t row_groups_blocks(unsigned lanes, std::uint64_t count) {
  const std::uint64_t per_block = std::uint64_t(kWarps) * (32 / lanes) * kRowUnroll;
  return (count + per_block - 1) / per_block;
}

// Rows of 32 vectors or more give each lane at least four: a row's shuffle tree is then at most
// log2(vectors / 4) levels deep. A lane per vector (32 lanes) paid five levels of window merges
// for every 512 bytes of rows of 256 halves: 2^20 x 256 on an H100, half sum 352 -> 271 us with
// 8 lanes a row, half max 308 -> 253, float sum (16 lanes) 378 -> 365 (docs/performance.md).
template <class T>
inline unsigned row_group_lanes(std::uint64_t length) {
  const std::uint64_t vectors = (length + Shape<T>::kVec - 1) / Shape<T>::kVec;
  const std::uint64_t most = vectors >= 32 ? vectors / 4 : vectors;
  unsigned lanes = 1;
  while (lanes < 32 && lanes < most) lanes *= 2;
  return lanes;
}

// Lanes per row for the order-free operations that are not exact sums (integer sums, min, max,
// argmin, argmax: a cheap fold per element, one shuffle step per level of a row's tree). From 16
// vectors a lane takes at least two, and rows of 8-byte elements have at most 16 lanes. Against
// row_group_lanes on an H200 (bench/rows_probe, cold): rows of 64 int32 or floats (16 vectors)
// with 8 lanes, int32 sum 339.7 -> 286.0 us and float max 319.3 -> 278.7 (int32 max 271.5 ->
// 272.8); rows of 256 doubles (128 vectors) with 16 lanes, max 352.6 -> 330.0. Rows of 64 vectors
// kept their 16 lanes (8: int32 and float max 2-3 % slower) and of 32 vectors their 8 (half max
// of 256, double max of 64).
template <class T>
inline unsigned free_row_lanes(std::uint64_t length) {
  const std::uint64_t vectors = (length + Shape<T>::kVec - 1) / Shape<T>::kVec;
  const std::uint64_t most = vectors >= 32 ? vectors / 4 : vectors >= 16 ? vectors / 2 : vectors;
  const unsigned cap = sizeof(T) == 8 ? 16u : 32u;
  unsigned lanes = 1;
  while (lanes < cap && lanes < most) lanes *= 2;
  return lanes;
}

// Whether reduceRowGroups takes this call: an order-free operation over contiguous matrix
// pieces of at most 8 KiB, and exact float, half and bfloat16 sums over rows of at most 8192
// elements (the window sums rows of 32 KiB floats or 16 KiB halves faster here than a block per
// row does). Longer rows read faster a block each (reduceLongPieces) or a warp each
// (reduceWarpRows, when there are enough of them), and so do window rows of more than 1024
// elements when there are enough (prefer_warp_rows, decided at launch; docs/performance.md).
inline constexpr std::uint64_t kRowGroupBytes = 8192;
inline constexpr std::uint64_t kRowGroupWindowElements = 8192;
template <class T, class Sem>
inline bool row_groups_fit(const Pieces& p) {
  constexpr bool kWindow = window_sums_v<T, Sem>;
  const std::uint64_t most = std::min<std::uint64_t>(kWindow ? kRowGroupWindowElements : kRowGroupBytes / sizeof(T),
                                                     Shape<T>::kTile);
  return Sem::order_free && !p.offsets && p.stride == 1 && p.length <= most;
}

// The widest load reduceRowGroups reads rows with: 8 or 4 (a row of exactly that many bytes, the
// input and the pitch multiples of it: the whole row in one load, as for rows of 4 halves or 2
// floats), 16 (16-byte vectors: the input and the pitch are multiples of 16 bytes), or 0 (element
// by element). The GPU and the SIMT launchers both ask here.
template <class T>
inline unsigned row_load_bytes(const void* input, const Pieces& p) {
  const auto at = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(input));
  const std::uint64_t pitch = p.step * sizeof(T), row = p.length * sizeof(T);
  for (const std::uint64_t word : {std::uint64_t(8), std::uint64_t(4)})
    if (row == word && at % word == 0 && pitch % word == 0) return static_cast<unsigned>(word);
  return at % 16 == 0 && pitch % 16 == 0 ? 16u : 0u;
}

// One W (a 4- or 8-byte unsigned integer) at `at`, aligned to its size.
template <class W, class T>
__device__ __forceinline__ W load_word(rl::gmem<const T> at) {
#if RL_SIMT
  const simt::ptr<const W> p(reinterpret_cast<const W*>(at.get()), at.region_base(), at.region_bytes(), at.space());
  return p[0].read();
#else
  return __ldg(reinterpret_cast<const W*>(at));
#endif
}

// A whole row of `bytes` (4 or 8, aligned to it) in one load: its elements first in the vector,
// the rest zero.
template <class T>
__device__ __forceinline__ Vec<T> load_word_row(rl::gmem<const T> row, unsigned bytes) {
  Vec<T> v{};
  if (bytes == 8) {
    const unsigned long long w = load_word<unsigned long long>(row);
    memcpy(static_cast<void*>(&v), &w, sizeof w);
  } else {
    const unsigned w = load_word<unsigned>(row);
    memcpy(static_cast<void*>(&v), &w, sizeof w);
  }
  return v;
}

// Calls f(j) for each element j of a row that is one word (`load` 8 or 4: row_load_bytes), with
// a bound known at compile time: the row's elements only, none predicated off.
template <class T, class F>
__device__ __forceinline__ void for_word_elements(unsigned load, F&& f) {
  if (load == 8) {
#pragma unroll
    for (unsigned j = 0; j < 8 / sizeof(T); ++j) f(j);
  } else {
#pragma unroll
    for (unsigned j = 0; j < 4 / sizeof(T); ++j) f(j);
  }
}

// Up to kVec elements of a row from element `at` (fewer at the row's end): one vector load, or
// the whole row in one word (`load`: row_load_bytes), else element by element.
template <class T>
__device__ __forceinline__ Vec<T> load_part(rl::gmem<const T> row, std::uint64_t at, std::uint64_t length,
                                            unsigned load) {
  constexpr unsigned kVec = Shape<T>::kVec;
  if (load == 16 && at + kVec <= length) return load_vec(row, at);
  if (load == 8 || load == 4) return load_word_row(row, load);  // the row is one word: at == 0
  Vec<T> v{};
#pragma unroll
  for (unsigned j = 0; j < kVec; ++j)
    if (at + j < length) v.v[j] = row[at + j];
  return v;
}

// Vector `at / kVec` of row r of a matrix whose rows are whole 16-byte vectors (`whole`: load 16
// and a length that is a multiple of kVec), zeros past the last row: one load and nothing else.
// reduceRowGroups reads such rows on a path of its own. Merged with load_part's other paths,
// the machine code loaded each double (and each 16-bit) vector into one shared register and
// moved it out at once, which waited for the load: one row's load in flight per lane, not
// four. On an H200, 2^20 x 256 along rows: double max 661 -> 506 us, half max 236 -> 151, half
// sum 242 -> 164 (docs/performance.md).
template <class T>
__device__ __forceinline__ Vec<T> load_whole(rl::gmem<const T> input, const Pieces& p, std::uint64_t r,
                                             std::uint64_t at) {
  return r < p.count ? load_vec(input + r * p.step, at) : Vec<T>{};
}

// One row r of an exact float, half, bfloat16 or double sum by its `lanes` lanes (sub: this
// lane's place among them), four vectors in flight each, folded in pairs (RunningFold) and with
// the row's shuffles; its first lane writes the result. Rows past the last take part in the
// shuffles and write nothing. What reduceRowGroups uses for the rows that its plain sums cannot
// vouch for (and for rows longer than the window): one row's registers at a time, in a loop that
// is not unrolled, keep this path from sizing the kernel.
template <class T, class Sem>
__device__ __forceinline__ void pair_row(rl::gmem<const T> input, const Pieces& pieces, unsigned lanes, unsigned sub,
                                         unsigned load, std::uint64_t r, rl::gmem<typename Sem::Out> output,
                                         rl::gmem<unsigned long long> redo) {
  using Acc = typename Sem::Acc;
  constexpr unsigned kVec = Shape<T>::kVec;
  const std::uint64_t length = pieces.length;
  const std::uint64_t vectors = (length + kVec - 1) / kVec;
  const bool live = r < pieces.count;
  const rl::gmem<const T> x = input + (live ? r : 0) * pieces.step;
  RunningFold<T, Sem> run(length / lanes + kVec);  // the most one lane takes
  auto take = [&](std::uint64_t k, const Vec<T>& v) {
    const std::uint64_t at = k * kVec;
    if (at + kVec <= length) {
      run.template take<kVec>(v.v, [&](unsigned j) { return at + j; });
    } else {
#pragma unroll
      for (unsigned j = 0; j < kVec; ++j)
        if (at + j < length) run.take_one(v.v[j], at + j);
    }
  };
  std::uint64_t k = sub;
  for (; k + 3 * lanes < vectors; k += 4 * lanes) {
    Vec<T> v[4];
#pragma unroll
    for (unsigned q = 0; q < 4; ++q) v[q] = live ? load_part(x, (k + q * lanes) * kVec, length, load) : Vec<T>{};
#pragma unroll
    for (unsigned q = 0; q < 4; ++q) take(k + q * lanes, v[q]);
  }
  for (; k < vectors; k += lanes) take(k, live ? load_part(x, k * kVec, length, load) : Vec<T>{});
  Acc acc = run.result();
  for (unsigned offset = lanes / 2; offset > 0; offset >>= 1) acc = Sem::combine(acc, shuffle_down(acc, offset));
  if (sub == 0 && live) store_piece<Sem>(output, r, acc, length, redo);
}

// ---- Exact double sums of short rows, split on each row's grid ----------------------------------
// Rows of up to kRowCutElements doubles (reduceCutRows): the lanes of a row hold all of it, find
// its largest magnitude (one redux where a warp holds the row, shuffles otherwise), split every
// element on the grid it gives (double_split, exact_sum.cuh) and sum the two parts in plain
// double, across the row's lanes too; the first lane writes s1 + s2 rounded once. No TwoSum pair
// per element and none per shuffle. The rows the split cannot sum (zeros only, an infinity or
// NaN, a lane's exponents too far apart, the ends of the range) go through pairs (cut_row_pairs).
// The redux in place of five levels of shuffles and compares (bench/cut_probe library, H200, the
// build before and after in two calls): rows of 256 doubles 513.2-513.4 -> 508.3-509.4 us, while
// the 16-lane kernel, unchanged, took 512.9-513.3 and 513.4-513.9. The pairs' path out of line and
// lean, the kernels held to five or six blocks an SM (kCutRowBlocks) and launched on a grid of
// every step (device_segments.cuh): 2^20 rows of 256 doubles 509.6 -> 486.9 us, 2^22 of 64 532.1
// -> 505.4, 2^26 of 4 (a lane a row) 638.8 -> 606.3 (bench/pack_probe lib, H200, three calls).
inline constexpr std::uint64_t kRowCutElements = 256;
template <class T, class Sem>
inline constexpr bool cut_rows_v = std::is_same_v<T, double> && is_exact_pieces<Sem>::value;

// Lanes per row: as few as hold the row at kCutPer vectors each (rows of up to 8 doubles get a
// lane each and no shuffle; rows of 256, all 32). Against eight vectors a lane, on an H200 (bench/
// cut_probe.cu): rows of 16 doubles 655 -> 547 us (2^24 rows), of 256 equal (505 and 504).
inline constexpr unsigned kCutPer = 4;
inline unsigned cut_row_lanes(std::uint64_t length) {
  const std::uint64_t vectors = (length + 1) / 2;
  unsigned lanes = 1;
  while (lanes < 32 && lanes * kCutPer < vectors) lanes *= 2;
  return lanes;
}

// Row r's exact sum from the kPer vectors its lanes hold each (zeros past its end), written by
// its first lane (`mine`). `group`: the row's lanes as a mask. Returns whether this lane's row is
// left to the pairs (only in the lane that would have written it).
template <class Sem, unsigned kLanes, unsigned kPer>
__device__ __forceinline__ bool cut_row(const Vec<double>* v, unsigned group, bool mine, std::uint64_t r,
                                        std::uint64_t length, rl::gmem<typename Sem::Out> output,
                                        rl::gmem<unsigned long long> redo) {
  std::uint32_t most = 0, least = 0;
  split_magnitude_range<kPer>(v, &most, &least);
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  constexpr bool kRedux = kLanes == 32;  // a whole warp's row: one redux (sm_80 on)
#else
  constexpr bool kRedux = false;
#endif
  if constexpr (kRedux) {
    most = __reduce_max_sync(kFullMask, most);
  } else {
#pragma unroll
    for (unsigned offset = kLanes / 2; offset > 0; offset >>= 1) {
      const std::uint32_t m = __shfl_xor_sync(kFullMask, most, offset);
      most = m > most ? m : most;
    }
  }
  const DoubleSplit grid = double_split(most, length);  // the same in every lane of the row
  // Each lane checks its own elements' exponents against the grid; the row's lanes agree below.
  const bool holds = split_holds(grid, least);
  double s1 = 0.0, s2 = 0.0;
  if (grid.usable) {
#pragma unroll
    for (unsigned q = 0; q < kPer; ++q)
#pragma unroll
      for (unsigned j = 0; j < 2; ++j) split_add(grid.sigma, v[q].v[j], s1, s2);  // past the row's end: zeros, which add nothing
  }
#pragma unroll
  for (unsigned offset = kLanes / 2; offset > 0; offset >>= 1) {
    s1 += __shfl_down_sync(kFullMask, s1, offset);
    s2 += __shfl_down_sync(kFullMask, s2, offset);
  }
  const bool exact = (__ballot_sync(kFullMask, !holds) & group) == 0;
  if (mine && exact) store_piece<Sem>(output, r, ExactPair{s1, s2}, length, redo);
  return mine && !exact;
}

// Row r of reduceCutRows with exact pairs: the rows the cut leaves. Each of the row's lanes folds
// its elements one at a time (element e to lane e / 2 % lanes, as the cut reads them), then a
// shuffle tree over the row's lanes; the row's first lane writes. Every lane of the warp calls it
// (`live`: this lane's row exists). Out of line and lean, so that this rare path does not size the
// kernel: pair_row (four vectors in flight a lane, a RunningFold) inlined there held the kernels
// at 58 to 64 registers (four blocks an SM); with this, 46 to 51, and 40 to 48 at kCutRowBlocks.
template <class Sem>
__device__ __noinline__ void cut_row_pairs(rl::gmem<const double> x, std::uint64_t length, unsigned lanes, unsigned sub,
                                           bool live, std::uint64_t r, rl::gmem<typename Sem::Out> output,
                                           rl::gmem<unsigned long long> redo) {
  typename Sem::Acc acc = Sem::identity();
  if (live) {
#pragma unroll 1
    for (std::uint64_t e = 2 * std::uint64_t(sub); e < length; e += 2 * std::uint64_t(lanes)) {
      acc = Sem::combine(acc, Sem::lift(x[e], e));
      if (e + 1 < length) acc = Sem::combine(acc, Sem::lift(x[e + 1], e + 1));
    }
  }
  for (unsigned offset = lanes / 2; offset > 0; offset >>= 1) acc = Sem::combine(acc, shuffle_down(acc, offset));
  if (sub == 0 && live) store_piece<Sem>(output, r, acc, length, redo);
}

// The rows of reduceCutRows, kLanes lanes a row with kPer vectors each: each step of a warp loads
// kRows rows' vectors (four loads a lane, or one row's kPer), cuts them, and sums the rows left
// with pairs. kWhole: rows of whole 16-byte vectors (load 16, an even length), read with vector
// loads only; otherwise element by element. On an H200 (bench/cut_probe.cu), 2^20 rows of 256
// doubles: the earlier cut inside reduceRowGroups' loop of four rows a step took 704-936 us (the
// compiler kept the four rows' values live together and the kernel spilled at its 80
// registers), this loop, a row a step, 565 us with the lanes known at run time and 531 with
// them known at compile time (five levels of three shuffles, unrolled; the probe's bare kernel
// without the pairs' fallback: 505).
template <class Sem, unsigned kLanes, unsigned kPer, bool kWhole>
__device__ __forceinline__ void cut_row_steps(rl::gmem<const double> input, const Pieces& pieces,
                                              rl::gmem<typename Sem::Out> output, rl::gmem<unsigned long long> redo) {
  constexpr unsigned kRows = kPer < 4 ? 4 / kPer : 1;
  constexpr unsigned kLoads = kRows * kPer;
  constexpr std::uint64_t kRowsPerWarp = 32 / kLanes, kRowsPerStep = kRowsPerWarp * kRows;
  const unsigned lane = threadIdx.x % 32, sub = lane % kLanes;
  const unsigned group = kLanes == 32 ? kFullMask : ((1u << kLanes) - 1u) << (lane - sub);  // the row's lanes
  const std::uint64_t length = pieces.length, vectors = (length + 1) / 2;
  const std::uint64_t warp = std::uint64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  const std::uint64_t warps = std::uint64_t(gridDim.x) * kWarps;
  for (std::uint64_t base = warp * kRowsPerStep; base < pieces.count; base += warps * kRowsPerStep) {
    const std::uint64_t first = base + lane / kLanes;  // this lane's row i: first + i * kRowsPerWarp
    Vec<double> v[kLoads];
#pragma unroll
    for (unsigned q = 0; q < kLoads; ++q) {
      const std::uint64_t r = first + (q / kPer) * kRowsPerWarp, k = sub + std::uint64_t(q % kPer) * kLanes;
      const rl::gmem<const double> x = input + (r < pieces.count ? r : 0) * pieces.step;
      if constexpr (kWhole) {
        v[q] = r < pieces.count && k < vectors ? load_vec(x, k * 2) : Vec<double>{};
      } else {
#pragma unroll
        for (unsigned j = 0; j < 2; ++j) v[q].v[j] = r < pieces.count && k * 2 + j < length ? x[k * 2 + j] : 0.0;
      }
    }
    unsigned todo = 0;
#pragma unroll
    for (unsigned i = 0; i < kRows; ++i) {
      const std::uint64_t r = first + i * kRowsPerWarp;
      const bool left = cut_row<Sem, kLanes, kPer>(v + i * kPer, group, sub == 0 && r < pieces.count, r, length, output, redo);
      todo |= (__ballot_sync(kFullMask, left) != 0u ? 1u : 0u) << i;
    }
#pragma unroll 1
    for (unsigned i = 0; i < kRows; ++i) {
      if (!((todo >> i) & 1u)) continue;
      const std::uint64_t r = first + i * kRowsPerWarp;
      const bool live = r < pieces.count;
      cut_row_pairs<Sem>(input + (live ? r : 0) * pieces.step, length, kLanes, sub, live, r, output, redo);
    }
  }
}

// The same for either way of reading the rows.
template <class Sem, unsigned kLanes, unsigned kPer>
__device__ __forceinline__ void cut_row_steps(rl::gmem<const double> input, const Pieces& pieces, unsigned load,
                                              rl::gmem<typename Sem::Out> output, rl::gmem<unsigned long long> redo) {
  if (load == 16 && pieces.length % 2 == 0) cut_row_steps<Sem, kLanes, kPer, true>(input, pieces, output, redo);
  else cut_row_steps<Sem, kLanes, kPer, false>(input, pieces, output, redo);
}

// Blocks of reduceCutRows an SM must hold. Sums: six for rows of four vectors a lane (40
// registers, no spills), five for one or two (48; held to six, they spilled 16 and 48 bytes).
// Means, whose result takes more registers, and the eight vectors a lane that only
// bench/cut_probe launches: four (held to six or five, means spilled up to 100 bytes, eight
// vectors 56 and 112).
template <class Sem, unsigned kPer>
inline constexpr int kCutRowBlocks = Sem::kMean || kPer > 4 ? 4 : kPer == 4 ? 6 : 5;

// Launch with kThreads threads and any grid: rows of kLanes lanes (cut_row_lanes) with kPer vectors
// each (cut_row_per), `load`: row_load_bytes. A kernel for each row shape: in one kernel that
// switched on the lanes at run time, ptxas sized every shape's registers together and spilled
// 48 bytes at the cap of 64 (each shape alone: 58 to 62 registers, no spill).
template <class T, class Sem, unsigned kLanes, unsigned kPer>
__global__ void __launch_bounds__(kThreads, kCutRowBlocks<Sem, kPer>)
    reduceCutRows(rl::gmem<const T> input, Pieces pieces, unsigned load, rl::gmem<typename Sem::Out> output,
                  rl::gmem<unsigned long long> redo) {
  static_assert(cut_rows_v<T, Sem>, "exact double sums and means");
  cut_row_steps<Sem, kLanes, kPer>(input, pieces, load, output, redo);
}

// Vectors a lane of reduceCutRows holds for rows of `length` over `lanes` lanes: a lane a row of
// up to 4 vectors (1, 2 or 4 of them), else kCutPer.
inline unsigned cut_row_per(unsigned lanes, std::uint64_t length) {
  const std::uint64_t vectors = (length + 1) / 2;
  return lanes > 1 || vectors > 2 ? kCutPer : static_cast<unsigned>(vectors <= 1 ? 1 : 2);
}
// Blocks of reduceCutRows for one step each over `count` rows of `lanes` lanes with `per` vectors
// each (a warp's step: 32 / lanes rows, times 4 / per when per < 4; cut_row_steps' kRowsPerStep).
inline std::uint64_t cut_rows_blocks(unsigned lanes, unsigned per, std::uint64_t count) {
  const std::uint64_t per_block = std::uint64_t(kWarps) * (32 / lanes) * (per < 4 ? 4 / per : 1);
  return (count + per_block - 1) / per_block;
}

// Calls f.template operator()<reduceCutRows<T, Sem, lanes, per>>() for the row shape's kernel
// (the GPU and the SIMT launchers share it).
template <class T, class Sem, class F>
inline decltype(auto) with_cut_rows_kernel(unsigned lanes, unsigned per, F&& f) {
  switch (lanes) {
    case 1:
      if (per == 1) return f.template operator()<reduceCutRows<T, Sem, 1, 1>>();
      if (per == 2) return f.template operator()<reduceCutRows<T, Sem, 1, 2>>();
      return f.template operator()<reduceCutRows<T, Sem, 1, kCutPer>>();
    case 2: return f.template operator()<reduceCutRows<T, Sem, 2, kCutPer>>();
    case 4: return f.template operator()<reduceCutRows<T, Sem, 4, kCutPer>>();
    case 8: return f.template operator()<reduceCutRows<T, Sem, 8, kCutPer>>();
    case 16: return f.template operator()<reduceCutRows<T, Sem, 16, kCutPer>>();
    default: return f.template operator()<reduceCutRows<T, Sem, 32, kCutPer>>();
  }
}

// Blocks of reduceRowGroups an SM must hold. Float, half and bfloat16 sums keep the pairs' path
// for the rows the window cannot vouch for in the same kernel; left alone, the compiler sized
// the whole kernel's registers for it (118 per thread for float: two blocks an SM, half the
// loads in flight of the max kernel's 53). That path now takes one row at a time, and the
// kernel must hold three blocks (78 registers, no spills; a cap of 64 for four blocks spilled
// in the hot loop: 1.85 million local requests per launch under Nsight Compute, H200).
template <class T, class Sem>
inline constexpr int kRowGroupBlocks = window_sums_v<T, Sem> ? 3 : 1;

// Launch with kThreads threads and any grid. `load`: row_load_bytes.
template <class T, class Sem>
__global__ void __launch_bounds__(kThreads, kRowGroupBlocks<T, Sem>)
    reduceRowGroups(rl::gmem<const T> input, Pieces pieces, unsigned lanes, unsigned load,
                    rl::gmem<typename Sem::Out> output, rl::gmem<unsigned long long> redo) {
  using Acc = typename Sem::Acc;
  constexpr unsigned kVec = Shape<T>::kVec;
  const unsigned lane = threadIdx.x % 32, sub = lane % lanes;
  const unsigned rows_per_warp = 32 / lanes;
  const std::uint64_t length = pieces.length;
  const std::uint64_t vectors = (length + kVec - 1) / kVec;
  const bool whole = load == 16 && length % kVec == 0;  // load_whole
  const std::uint64_t rows_per_step = std::uint64_t(rows_per_warp) * kRowUnroll;
  const std::uint64_t warp = std::uint64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  const std::uint64_t warps = std::uint64_t(gridDim.x) * kWarps;
  // Float, half and bfloat16 sums and means (exact pairs) try the window first (exact_pair.cuh).
  // Longer rows fold each lane's run in a window and the lanes' pairs in the tree (RunningFold).
  constexpr bool kWindow = window_sums_v<T, Sem>;
  constexpr std::uint64_t kRowWindow = 1024;
  for (std::uint64_t base = warp * rows_per_step; base < pieces.count; base += warps * rows_per_step) {
    std::uint64_t row[kRowUnroll];
#pragma unroll
    for (unsigned u = 0; u < kRowUnroll; ++u) row[u] = base + std::uint64_t(u) * rows_per_warp + lane / lanes;
    // The vectors from element `at` of the kRowUnroll rows, every load before the first use.
    auto load_rows = [&](std::uint64_t at, Vec<T>* v) {
#pragma unroll
      for (unsigned u = 0; u < kRowUnroll; ++u) v[u] = Vec<T>{};
#pragma unroll
      for (unsigned u = 0; u < kRowUnroll; ++u)
        if (row[u] < pieces.count) v[u] = load_part(input + row[u] * pieces.step, at, length, load);
    };
    if constexpr (kWindow) {  // plain double sums first, pairs only for the rows they cannot vouch for
      unsigned todo = (1u << kRowUnroll) - 1u;  // the rows (bit u) still to be written
      if (length <= kRowWindow) {
        todo = 0;
        WindowSum w[kRowUnroll];
#pragma unroll
        for (unsigned u = 0; u < kRowUnroll; ++u) w[u] = window_identity();
        if (whole) {
          for (std::uint64_t k = sub; k < vectors; k += lanes) {
            Vec<T> v[kRowUnroll];
#pragma unroll
            for (unsigned u = 0; u < kRowUnroll; ++u) v[u] = load_whole(input, pieces, row[u], k * kVec);
#pragma unroll
            for (unsigned u = 0; u < kRowUnroll; ++u) window_add_batch<kVec>(w[u], v[u].v);
          }
        } else {
          for (std::uint64_t k = sub; k < vectors; k += lanes) {
            const std::uint64_t at = k * kVec;
            Vec<T> v[kRowUnroll];
            load_rows(at, v);
            if (at + kVec <= length) {
#pragma unroll
              for (unsigned u = 0; u < kRowUnroll; ++u) window_add_batch<kVec>(w[u], v[u].v);
            } else if (load == 8) {  // the row is one word: its elements, no predicates
#pragma unroll
              for (unsigned u = 0; u < kRowUnroll; ++u) window_add_batch<8 / sizeof(T)>(w[u], v[u].v);
            } else if (load == 4) {
#pragma unroll
              for (unsigned u = 0; u < kRowUnroll; ++u) window_add_batch<4 / sizeof(T)>(w[u], v[u].v);
            } else {  // past the end: no +0 added (an all -0 row stays -0)
#pragma unroll
              for (unsigned u = 0; u < kRowUnroll; ++u)
#pragma unroll
                for (unsigned j = 0; j < kVec; ++j)
                  if (at + j < length) window_add(w[u], v[u].v[j]);
            }
          }
        }
#pragma unroll
        for (unsigned u = 0; u < kRowUnroll; ++u) {
          for (unsigned offset = lanes / 2; offset > 0; offset >>= 1) w[u] = window_merge(w[u], shuffle_down(w[u], offset));
          const bool mine = sub == 0 && row[u] < pieces.count;
          const bool exact = window_is_exact<T>(w[u], length);
          if (mine && exact) output[row[u]] = Sem::finish_exact(w[u].s, length);
          todo |= (__ballot_sync(kFullMask, mine && !exact) != 0u ? 1u : 0u) << u;
        }
        if (todo == 0) continue;  // the same for the whole warp
      }
      // The rows left (or, past kRowWindow, every row), one at a time with pairs (RunningFold):
      // one row's registers at a time keep this path from sizing the kernel.
#pragma unroll 1
      for (unsigned u = 0; u < kRowUnroll; ++u)
        if ((todo >> u) & 1u)  // not row[u]: a dynamic index puts row[] on the stack
          pair_row<T, Sem>(input, pieces, lanes, sub, load, base + std::uint64_t(u) * rows_per_warp + lane / lanes, output, redo);
      continue;
    }
    // Every other order-free operation: the kRowUnroll rows together. (Two steps of each lane's
    // walk in flight at once, eight loads a lane, measured slower on an H200: the kernel's
    // registers grew for every operation, 2^20 x 256 double max 700 -> 1167 us, half max 237 -> 317.)
    Acc acc[kRowUnroll];
#pragma unroll
    for (unsigned u = 0; u < kRowUnroll; ++u) acc[u] = Sem::identity();
    if (whole) {
      for (std::uint64_t k = sub; k < vectors; k += lanes) {
        const std::uint64_t at = k * kVec;
        Vec<T> v[kRowUnroll];
#pragma unroll
        for (unsigned u = 0; u < kRowUnroll; ++u) v[u] = load_whole(input, pieces, row[u], at);
#pragma unroll
        for (unsigned u = 0; u < kRowUnroll; ++u)
          acc[u] = absorb_elements<Sem, kVec>(acc[u], v[u].v, [&](unsigned j) { return at + j; });
      }
    } else {
      for (std::uint64_t k = sub; k < vectors; k += lanes) {  // once, unless rows are longer than a warp's vectors
        const std::uint64_t at = k * kVec;
        Vec<T> v[kRowUnroll];
        load_rows(at, v);
        if (at + kVec <= length) {  // whole vectors (the same for every row)
#pragma unroll
          for (unsigned u = 0; u < kRowUnroll; ++u)
            acc[u] = absorb_elements<Sem, kVec>(acc[u], v[u].v, [&](unsigned j) { return at + j; });
        } else if (load == 8 || load == 4) {  // the row is one word: its elements, no predicates
#pragma unroll
          for (unsigned u = 0; u < kRowUnroll; ++u) {
            typename Sem::Inner in = Sem::inner_identity();
            for_word_elements<T>(load, [&](unsigned j) { in = Sem::inner_combine(in, Sem::lift(v[u].v[j], j)); });
            acc[u] = Sem::absorb(acc[u], in);
          }
        } else {
#pragma unroll
          for (unsigned u = 0; u < kRowUnroll; ++u) {
            typename Sem::Inner in = Sem::inner_identity();
#pragma unroll
            for (unsigned j = 0; j < kVec; ++j)
              if (at + j < length) in = Sem::inner_combine(in, Sem::lift(v[u].v[j], at + j));
            acc[u] = Sem::absorb(acc[u], in);
          }
        }
      }
    }
#pragma unroll
    for (unsigned u = 0; u < kRowUnroll; ++u) {
      for (unsigned offset = lanes / 2; offset > 0; offset >>= 1) acc[u] = Sem::combine(acc[u], shuffle_down(acc[u], offset));
      if (sub == 0 && row[u] < pieces.count) store_piece<Sem>(output, row[u], acc[u], length, redo);
    }
  }
}

// ---- Short rows packed in vectors, a lane each -------------------------------------------------
// Exact float, half and bfloat16 sums and means of a dense matrix (the pitch is the row's length,
// the input 16-byte aligned) whose rows of 2, 4 or 8 elements divide a 16-byte vector: every
// vector holds kVec / length whole rows. A thread takes whole vectors, four in flight, the
// warp's lanes neighbouring ones (each load of the warp is 512 contiguous bytes), and sums each
// of their rows alone in a window (exact_pair.cuh), with no shuffle and no per-row load or
// address: reduceRowGroups gave such rows a lane and an 8-byte load each, and its per-row work
// held rows of 4 halves to a third of the read ceiling. A row the window cannot vouch for (an
// infinity or NaN, exponents too far apart) is summed again from memory with pairs. Rows of two
// or four whole vectors (16 or 32 halves, 8 or 16 floats) take a thread each the same way, its
// row's vectors in flight, where reduceRowGroups gave them two or four lanes and a shuffle tree.
// Order-free operations that are not exact sums (integer sums, min, max, argmin, argmax) take the
// same packed reads, each row folded alone in registers: reduceRowGroups gave rows of 4 halves a lane
// and an 8-byte load each (half max of 2^26 x 4 on an H200: 430 us, 28 % of the read ceiling).
template <class T, class Sem>
inline constexpr bool packed_order_free_v = Sem::order_free && !is_exact_pieces<Sem>::value;
// What reducePackedRows is compiled for: the launchers instantiate it for these alone.
template <class T, class Sem>
inline constexpr bool packed_rows_v = window_sums_v<T, Sem> || packed_order_free_v<T, Sem>;
template <class T, class Sem>
inline bool packed_rows_fit(const void* input, const Pieces& p) {
  if constexpr (packed_rows_v<T, Sem>) {
    constexpr unsigned kVec = Shape<T>::kVec;
    // Rows of one whole vector stay in reduceRowGroups, which reads them the same way (a lane and a
    // vector each): for float sums it measured 1 % faster (2^26 x 4, H100: 450 against 454 us).
    const bool one_vector = p.length == kVec && (sizeof(T) == 4 || packed_order_free_v<T, Sem>);
    const bool in_a_vector = p.length >= 2 && p.length <= kVec && kVec % p.length == 0 && !one_vector;
    const bool whole_vectors =
        p.length == 2 * kVec || p.length == 4 * kVec || (packed_order_free_v<T, Sem> && p.length == 8 * kVec);
    return !p.offsets && p.stride == 1 && p.step == p.length && (in_a_vector || whole_vectors) &&
           reinterpret_cast<std::uintptr_t>(input) % 16 == 0;
  } else {
    return false;
  }
}

// Row r (its `length` elements from `x`) with exact pairs, element by element: the rows a window
// could not vouch for. Out of line, so that this rare path does not size the kernel's registers.
template <class T, class Sem>
__device__ __noinline__ void packed_row_pairs(rl::gmem<const T> x, std::uint64_t r, unsigned length,
                                              rl::gmem<typename Sem::Out> output, rl::gmem<unsigned long long> redo) {
  typename Sem::Acc acc = Sem::identity();
#pragma unroll 1
  for (unsigned j = 0; j < length; ++j) acc = Sem::combine(acc, Sem::lift(x[r * length + j], j));
  store_piece<Sem>(output, r, acc, length, redo);
}

// Row r, its kLength elements in registers (e), written: exact sums through a window (pairs when
// the window cannot vouch for it), order-free operations folded.
template <class T, class Sem, unsigned kLength>
__device__ __forceinline__ void packed_row(const T* e, std::uint64_t r, rl::gmem<const T> input,
                                           rl::gmem<typename Sem::Out> output, rl::gmem<unsigned long long> redo) {
  if constexpr (window_sums_v<T, Sem>) {
    WindowSum w = window_identity();
    window_add_batch<kLength>(w, e);
    if (window_is_exact<T>(w, kLength)) output[r] = Sem::finish_exact(w.s, kLength);
    else packed_row_pairs<T, Sem>(input, r, kLength, output, redo);
  } else {
    const typename Sem::Acc acc =
        absorb_elements<Sem, kLength>(Sem::identity(), e, [](unsigned j) { return std::uint64_t(j); });
    store_piece<Sem>(output, r, acc, kLength, redo);
  }
}

// Whether the results of a vector's rows are written together (packed_vector_rows): two or more
// rows a vector whose results fill 4, 8 or 16 bytes, from a window or a plain fold (exact pairs
// may list a row for the redo instead).
template <class T, class Sem, unsigned kLength>
inline constexpr unsigned kPackedResultBytes = Shape<T>::kVec / kLength * sizeof(typename Sem::Out);
template <class T, class Sem, unsigned kLength>
inline constexpr bool packed_results_together_v =
    Shape<T>::kVec / kLength >= 2 &&
    (kPackedResultBytes<T, Sem, kLength> == 4 || kPackedResultBytes<T, Sem, kLength> == 8 ||
     kPackedResultBytes<T, Sem, kLength> == 16) &&
    (window_sums_v<T, Sem> || (!is_exact_pieces<Sem>::value && !two_columns_v<Sem>));

// Min and max of rows of two or four 16-bit floats, a vector's worth (four words) at a time, in
// 16x2 integer steps: each word's two order keys (keys16x2), the 16x2 extreme of a row's words,
// then the two keys left for each row side by side and one more 16x2 extreme, which leaves two
// rows' keys in one word; keys16x2 undoes itself, and rows that held a NaN (nans16x2) take the
// canonical one. The bits are Extremum's, with a few integer operations a word where each element
// took its key's round trip and a NaN test: the maxima along 2^26 x 4 halves ran at 88 % of their
// floor that way, at 92 % this way (H200).
template <class T, class Sem, unsigned kLength>
inline constexpr bool half_extreme_rows_v = is_half_like<T> && extremum_v<Sem> && (kLength == 2 || kLength == 4);
template <class T, bool kMax, unsigned kLength>
RL_HD_INLINE void extreme_rows16x2(const std::uint32_t (&w)[4], std::uint32_t (&out)[4 / kLength]) {
  constexpr unsigned kRows = 8 / kLength, kPer = kLength / 2;  // rows, and words a row
  std::uint32_t key[kRows], nan[kRows];
#pragma unroll
  for (unsigned r = 0; r < kRows; ++r) {
    key[r] = keys16x2(w[r * kPer]);
    nan[r] = nans16x2<T>(w[r * kPer]);
#pragma unroll
    for (unsigned q = 1; q < kPer; ++q) {
      key[r] = extreme_s16x2<kMax>(key[r], keys16x2(w[r * kPer + q]));
      nan[r] |= nans16x2<T>(w[r * kPer + q]);
    }
  }
#pragma unroll
  for (unsigned i = 0; i < kRows / 2; ++i) {  // rows 2i and 2i + 1: low lanes beside high lanes
    const std::uint32_t a = key[2 * i], b = key[2 * i + 1];
    const std::uint32_t lows = (a & 0xffffu) | (b << 16), highs = (a >> 16) | (b & 0xffff0000u);
    const std::uint32_t m = nan[2 * i], n = nan[2 * i + 1];
    const std::uint32_t nans = ((m & 0xffffu) | (n << 16)) | ((m >> 16) | (n & 0xffff0000u));
    out[i] = canonical_nans16x2<T>(keys16x2(extreme_s16x2<kMax>(lows, highs)), nans);
  }
}

// The kVec / kLength rows of vector k (already loaded in v). Their results go out as one 4-, 8-
// or 16-byte store where the output allows it: a store a row wrote every other slot of the
// warp's span, and exact sums along 2^26 x 4 halves took 225.4 us that way against 195.6 (H200,
// two calls; the second machine read 2 % slower).
template <class T, class Sem, unsigned kLength>
__device__ __forceinline__ void packed_vector_rows(const Vec<T>& v, std::uint64_t k, rl::gmem<const T> input,
                                                   rl::gmem<typename Sem::Out> output,
                                                   rl::gmem<unsigned long long> redo) {
  constexpr unsigned kRows = Shape<T>::kVec / kLength;
  if constexpr (half_extreme_rows_v<T, Sem, kLength>) {
    if (misalignment16<T>(output) % (kRows * sizeof(T)) == 0) {
      std::uint32_t w[4], out[kRows / 2];
      memcpy(w, v.v, sizeof w);
      extreme_rows16x2<T, std::is_base_of_v<Extremum<T, true>, Sem>, kLength>(w, out);
      T o[kRows];
      memcpy(o, out, sizeof o);
      store_results<T, kRows>(output, k * kRows, o);
      return;
    }
  }
  if constexpr (packed_results_together_v<T, Sem, kLength>) {
    constexpr unsigned kBytes = kPackedResultBytes<T, Sem, kLength>;
    if (misalignment16<typename Sem::Out>(output) % kBytes == 0) {
      typename Sem::Out out[kRows];
      bool plain = true;  // every row's result known here
#pragma unroll
      for (unsigned i = 0; i < kRows; ++i) {
        const T* e = v.v + i * kLength;
        if constexpr (window_sums_v<T, Sem>) {
          WindowSum w = window_identity();
          window_add_batch<kLength>(w, e);
          const bool exact = window_is_exact<T>(w, kLength);
          plain = plain && exact;
          out[i] = Sem::finish_exact(exact ? w.s : 0.0, kLength);  // finish_exact takes only a window's exact sum
        } else {
          out[i] = Sem::finish(absorb_elements<Sem, kLength>(Sem::identity(), e, [](unsigned j) { return std::uint64_t(j); }),
                               kLength);
        }
      }
      if (plain) {
        store_results<typename Sem::Out, kRows>(output, k * kRows, out);
        return;
      }
    }
  }
#pragma unroll
  for (unsigned i = 0; i < kRows; ++i) packed_row<T, Sem, kLength>(v.v + i * kLength, k * kRows + i, input, output, redo);
}

// A loaded vector as a thread holds it until it is used: 16-bit elements as four words (a Vec of
// them is split into a register an element as the load arrives, which waits for it, so that a
// thread's loads went out one after another; maxima along 2^26 x 4 halves 184.4 -> 169.7 us,
// H200), others as the Vec. load_held loads vector k of the
// input when `live` (otherwise words are zeros and a Vec is left as it was); as_vec gives the
// elements back.
struct Words {
  std::uint32_t w[4];
};
template <class T>
using Held = std::conditional_t<is_half_like<T>, Words, Vec<T>>;
template <class T>
__device__ __forceinline__ void load_held(rl::gmem<const T> input, std::uint64_t k, bool live, Held<T>& h) {
  if constexpr (is_half_like<T>) {
    load_words(input, live ? k * Shape<T>::kVec : 0, live, h.w);
  } else {
    // Left as it was when not live (the callers skip such vectors), as the kernels loaded before.
    if (live) h = load_vec(input, k * Shape<T>::kVec);
  }
}
template <class T>
__device__ __forceinline__ Vec<T> as_vec(const Held<T>& h) {
  if constexpr (is_half_like<T>) {
    Vec<T> v;
    memcpy(static_cast<void*>(&v), h.w, sizeof v);
    return v;
  } else {
    return h;
  }
}

// Rows of kV whole vectors, a thread each (rows first, first + threads, ...), four vectors in
// flight (4 / kV rows), or a row's eight.
template <class T, class Sem, unsigned kV>
__device__ __forceinline__ void packed_whole_rows(rl::gmem<const T> input, std::uint64_t rows, std::uint64_t first,
                                                  std::uint64_t threads, rl::gmem<typename Sem::Out> output,
                                                  rl::gmem<unsigned long long> redo) {
  constexpr unsigned kVec = Shape<T>::kVec, kLength = kV * kVec, kRows = kV >= 4 ? 1 : 4 / kV;
  for (std::uint64_t r = first; r < rows; r += kRows * threads) {
    Held<T> v[kRows][kV];
#pragma unroll
    for (unsigned i = 0; i < kRows; ++i)
#pragma unroll
      for (unsigned k = 0; k < kV; ++k) load_held(input, (r + i * threads) * kV + k, r + i * threads < rows, v[i][k]);
#pragma unroll
    for (unsigned i = 0; i < kRows; ++i) {
      const std::uint64_t row = r + i * threads;
      if (row >= rows) break;
      T e[kLength];
#pragma unroll
      for (unsigned k = 0; k < kV; ++k) {
        const Vec<T> x = as_vec<T>(v[i][k]);
#pragma unroll
        for (unsigned j = 0; j < kVec; ++j) e[k * kVec + j] = x.v[j];
      }
      packed_row<T, Sem, kLength>(e, row, input, output, redo);
    }
  }
}

// Launch with kThreads threads and any grid; packed_rows_fit must hold. A kernel for each row
// shape (kV: rows of kV whole vectors, or kPackedInVector for rows inside one vector): in one
// kernel for every shape, ptxas sized every shape's registers together (exact float sums 70
// registers, three blocks an SM; rows of four whole vectors alone take 37 in bench/pack_probe).
inline constexpr unsigned kPackedInVector = 1;
template <class T, class Sem, unsigned kV>
__global__ void __launch_bounds__(kThreads)
    reducePackedRows(rl::gmem<const T> input, Pieces pieces, rl::gmem<typename Sem::Out> output,
                     rl::gmem<unsigned long long> redo) {
  constexpr unsigned kVec = Shape<T>::kVec;
  constexpr unsigned kIn = 4;
  const unsigned length = static_cast<unsigned>(pieces.length);
  const std::uint64_t vectors = pieces.count * length / kVec;
  const std::uint64_t threads = std::uint64_t(gridDim.x) * kThreads;
  const std::uint64_t first = std::uint64_t(blockIdx.x) * kThreads + threadIdx.x;
  if constexpr (kV != kPackedInVector) {  // rows of two, four (or, order-free, eight) whole vectors
    packed_whole_rows<T, Sem, kV>(input, pieces.count, first, threads, output, redo);
  } else {
    for (std::uint64_t k = first; k < vectors; k += kIn * threads) {
      Held<T> v[kIn];
#pragma unroll
      for (unsigned q = 0; q < kIn; ++q) load_held(input, k + q * threads, k + q * threads < vectors, v[q]);
#pragma unroll
      for (unsigned q = 0; q < kIn; ++q) {
        if (k + q * threads >= vectors) break;
        const Vec<T> x = as_vec<T>(v[q]);
        if (length == 2) packed_vector_rows<T, Sem, 2>(x, k + q * threads, input, output, redo);
        else if (length == 4) packed_vector_rows<T, Sem, 4>(x, k + q * threads, input, output, redo);
        else if constexpr (kVec >= 8) packed_vector_rows<T, Sem, 8>(x, k + q * threads, input, output, redo);
      }
    }
    // The rows after the last whole vector (fewer than kVec / length), a thread each.
    for (std::uint64_t r = vectors * kVec / length + first; r < pieces.count; r += threads) {
      if constexpr (window_sums_v<T, Sem>) {
        WindowSum w = window_identity();
#pragma unroll 1
        for (unsigned j = 0; j < length; ++j) {
          const T e = input[r * length + j];
          window_add(w, e);
        }
        if (window_is_exact<T>(w, length)) output[r] = Sem::finish_exact(w.s, length);
        else packed_row_pairs<T, Sem>(input, r, length, output, redo);
      } else {
        typename Sem::Inner in = Sem::inner_identity();
#pragma unroll 1
        for (unsigned j = 0; j < length; ++j) in = Sem::inner_combine(in, Sem::lift(input[r * length + j], j));
        store_piece<Sem>(output, r, Sem::absorb(Sem::identity(), in), length, redo);
      }
    }
  }
}

// Blocks of reducePackedRows for one step each over the rows of `p` (a thread's step: four
// vectors, or a row of eight).
template <class T>
inline std::uint64_t packed_rows_blocks(const Pieces& p) {
  const std::uint64_t vectors = p.count * p.length / Shape<T>::kVec;
  const std::uint64_t per_block = std::uint64_t(kThreads) * std::max<std::uint64_t>(4, p.length / Shape<T>::kVec);
  return std::max<std::uint64_t>(1, (vectors + per_block - 1) / per_block);
}

// Calls f.template operator()<reducePackedRows<T, Sem, kV>>() for rows of `length` (packed_rows_fit
// holds; the GPU and the SIMT launchers share it).
template <class T, class Sem, class F>
inline decltype(auto) with_packed_rows_kernel(std::uint64_t length, F&& f) {
  constexpr unsigned kVec = Shape<T>::kVec;
  if constexpr (packed_order_free_v<T, Sem>) {
    if (length == 8 * kVec) return f.template operator()<reducePackedRows<T, Sem, 8>>();
  }
  if (length == 2 * kVec) return f.template operator()<reducePackedRows<T, Sem, 2>>();
  if (length == 4 * kVec) return f.template operator()<reducePackedRows<T, Sem, 4>>();
  return f.template operator()<reducePackedRows<T, Sem, kPackedInVector>>();
}

// ---- Short rows of whole vectors, a few lanes each ---------------------------------------------
// Min, max, argmin, argmax and integer sums and products of dense rows of 4 to 64 whole 16-byte
// vectors (a power of two; 4- and 8-byte elements, and the min and max of 16-bit floats, the input
// and pitch 16-byte aligned): two
// vectors a lane, a row over half as many lanes as it has vectors, and each warp step loads both
// its rows' vectors (four loads a lane) before it folds any, the way reduceCutRows reads exact
// double sums; then a shuffle tree over the row's lanes. Rows of 128 vectors of 8-byte elements
// (256 doubles) take 32 lanes of four vectors. reduceRowGroups looped over each row group's
// loads, and reducePackedRows gave rows of 16 doubles a thread (eight loads a lane, 128 bytes
// apart from lane to lane). H200, bench/rows_probe, cold, median of 10, the same call: max along
// 2^24 x 16 doubles 658.5 -> 553.6 us, floats 272.7 -> 262.0, int32 270.6 -> 261.8; along 2^20 x
// 256 floats 254.4 -> 244.7, doubles (32 x 4) 505.3 -> 493.0. In the library, on a grid of every
// row (the next calls): 2^24 x 16 double max 521.5 us; rows of 32, 64 and 128 floats 258.5, 255.0
// and 249.1 against 293.4, 275.0 and 264.7 in reduceRowGroups, rows of 32 and 64 doubles 521.9
// and 527.5 against 574.6 and 543.6. Rows of 128 doubles (64 vectors) stay in reduceRowGroups:
// 543.2 us for 2^21 of them with 32 lanes of two vectors, against 521.5 with its 16 lanes.
// Half and bfloat16 minima and maxima take it too, each vector loaded and folded as four words of
// two keys (load_words, Extremum::absorb_words).
// Exact half sums and means take it as well: a row of at most kHalfChain halves sums exactly in
// plain double in any order (exact_pieces.cuh), so a lane adds its words' halves to one double and
// the row's lanes add theirs, with no window to check and no pair.
template <class T, class Sem>
inline constexpr bool free_half_sums_v = std::is_same_v<T, half> && is_exact_pieces<Sem>::value;
template <class T, class Sem>
inline constexpr bool free_rows_v =
    (packed_order_free_v<T, Sem> &&
     (sizeof(T) == 4 || sizeof(T) == 8 ||
      (is_half_like<T> && requires(const std::uint32_t* w) { Sem::template absorb_words<4>(Sem::identity(), w); }))) ||
    free_half_sums_v<T, Sem>;
struct FreeRows {
  unsigned lanes = 0;  // a row's lanes; 0: not reduceFreeRows's rows
  unsigned per = 0;    // vectors a lane: 2, or 4
};
// Rows of up to 512 halves, four vectors a lane from 256 halves. H200, bench/rows_probe half, cold,
// median of 10, µs, two vectors a lane against four: max of rows of 256 halves 126.0 / 124.5
// (bfloat16 min 125.9 / 124.0), of 512 128.1 / 122.3, of 128 127.4 / 131.2, of 64 128.8 /
// 139.9; reduceRowGroups took 151.5, 144.4, 167.1 and 164.6 at its best lanes.
inline constexpr std::uint64_t kFreeRowsHalfVectors = 64, kFreeRowsHalfQuarter = 32;
template <class T, class Sem>
inline FreeRows free_rows_shape(const void* input, const Pieces& p) {
  if constexpr (free_rows_v<T, Sem>) {
    constexpr unsigned kVec = Shape<T>::kVec;
    if (p.offsets || p.stride != 1 || p.length % kVec != 0 || row_load_bytes<T>(input, p) != 16) return {};
    const std::uint64_t vectors = p.length / kVec;
    if (sizeof(T) == 8 && vectors == 128) return {32, 4};
    const std::uint64_t most = sizeof(T) == 8 ? 32 : sizeof(T) == 4 ? 64 : kFreeRowsHalfVectors;
    if (vectors < 4 || vectors > most || (vectors & (vectors - 1)) != 0) return {};
    static_assert(kFreeRowsHalfVectors * 8 <= kHalfChain, "rows of halves that sum exactly in double");
    if (sizeof(T) == 2 && vectors >= kFreeRowsHalfQuarter) return {static_cast<unsigned>(vectors / 4), 4};
    return {static_cast<unsigned>(vectors / 2), 2};
  } else {
    (void)input, (void)p;
    return {};
  }
}
// Rows a block takes in a step of reduceFreeRows: four vectors a lane, 4 / per rows.
inline std::uint64_t free_rows_per_block(const FreeRows& f) {
  return std::uint64_t(kWarps) * (32 / f.lanes) * (4 / f.per);
}
// The GPU's grid for `every` blocks of reduceFreeRows (one step each): all of them, except for
// exact half sums, which measured faster on at most kFreeHalfSumBlocks an SM, each block looping.
// H200, bench/widen_probe, cold, median of 10, µs, every row against 64 blocks an SM: 2^20 x 256
// halves 139.5 / 131.0 (16 an SM 134.0, 4 134.9), 2^19 x 512 136.5 / 129.2; the maxima of the
// same rows 124.4 / 125.4 and 122.4 / 123.2.
inline constexpr std::uint64_t kFreeHalfSumBlocks = 64;
template <class T, class Sem>
inline std::uint64_t free_rows_blocks(std::uint64_t every, int sms) {
  return free_half_sums_v<T, Sem> ? std::min<std::uint64_t>(every, kFreeHalfSumBlocks * std::uint64_t(sms)) : every;
}

// Launch with kThreads threads and any grid; `lanes` and kPer: free_rows_shape's.
template <class T, class Sem, unsigned kPer>
__global__ void __launch_bounds__(kThreads, 4)
    reduceFreeRows(rl::gmem<const T> input, Pieces pieces, unsigned lanes, rl::gmem<typename Sem::Out> output,
                   rl::gmem<unsigned long long> redo) {
  static_assert(free_rows_v<T, Sem>, "order-free operations other than exact sums, 4- and 8-byte elements, exact half sums");
  static_assert(kPer == 2 || kPer == 4, "two or four vectors a lane");
  constexpr unsigned kVec = Shape<T>::kVec, kRows = 4 / kPer, kLoads = kRows * kPer;
  const unsigned lane = threadIdx.x % 32, sub = lane % lanes;
  const std::uint64_t rows_per_warp = 32 / lanes, rows_per_step = rows_per_warp * kRows;
  const std::uint64_t warp = std::uint64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  const std::uint64_t warps = std::uint64_t(gridDim.x) * kWarps;
  for (std::uint64_t base = warp * rows_per_step; base < pieces.count; base += warps * rows_per_step) {
    const std::uint64_t first = base + lane / lanes;  // this lane's row i: first + i * rows_per_warp
    Held<T> v[kLoads];  // 16-bit elements as words
#pragma unroll
    for (unsigned q = 0; q < kLoads; ++q) {
      const std::uint64_t r = first + (q / kPer) * rows_per_warp, k = sub + std::uint64_t(q % kPer) * lanes;
      // Other types as before: with the words' loader, double maxima of rows of 256 took 613 us
      // against 479 (H200).
      if constexpr (is_half_like<T>) load_held(input + (r < pieces.count ? r : 0) * pieces.step, k, r < pieces.count, v[q]);
      else v[q] = load_whole(input, pieces, r, k * kVec);
    }
#pragma unroll
    for (unsigned i = 0; i < kRows; ++i) {
      const std::uint64_t r = first + i * rows_per_warp;
      if constexpr (free_half_sums_v<T, Sem>) {  // the row's halves into one double (two chains)
        double s[2] = {-0.0, -0.0};
#pragma unroll
        for (unsigned q = 0; q < kPer * 4; ++q) s[q % 2] += half_word_sum(v[i * kPer + q / 4].w[q % 4]);
        double a = s[0] + s[1];
        for (unsigned offset = lanes / 2; offset > 0; offset >>= 1) a += shuffle_down(a, offset);
        if (sub == 0 && r < pieces.count) output[r] = half_chain_result<Sem>(a, pieces.length);
      } else {
        typename Sem::Acc a = Sem::identity();
        if constexpr (is_half_like<T>) {  // the row's words, two keys each
          std::uint32_t w[kPer * 4];
#pragma unroll
          for (unsigned q = 0; q < kPer * 4; ++q) w[q] = v[i * kPer + q / 4].w[q % 4];
          a = Sem::template absorb_words<kPer * 4>(a, w);
        } else {
          typename Sem::Inner in = Sem::inner_identity();
#pragma unroll
          for (unsigned q = 0; q < kPer; ++q) {
            const std::uint64_t at = (sub + std::uint64_t(q) * lanes) * kVec;
#pragma unroll
            for (unsigned j = 0; j < kVec; ++j) in = Sem::inner_combine(in, Sem::lift(as_vec<T>(v[i * kPer + q]).v[j], at + j));
          }
          a = Sem::absorb(a, in);
        }
        for (unsigned offset = lanes / 2; offset > 0; offset >>= 1) a = Sem::combine(a, shuffle_down(a, offset));
        if (sub == 0 && r < pieces.count) store_piece<Sem>(output, r, a, pieces.length, redo);  // rows past the last: zeros, unwritten
      }
    }
  }
}

// Calls f.template operator()<reduceFreeRows<T, Sem, per>>() for free_rows_shape's `per` (the GPU
// and SIMT launchers share it); four vectors a lane only for 8- and 2-byte elements.
template <class T, class Sem, class F>
inline decltype(auto) with_free_rows_kernel(const FreeRows& shape, F&& f) {
  if constexpr (sizeof(T) == 8 || sizeof(T) == 2) {
    if (shape.per == 4) return f.template operator()<reduceFreeRows<T, Sem, 4>>();
  }
  return f.template operator()<reduceFreeRows<T, Sem, 2>>();
}

}  // namespace reducelab::detail
