#pragma once
// Ragged segments of an order-free operation (integer sums and products, min, max, the
// arg-extrema, and exact floating-point sums and means): a warp per group of G neighbouring
// segments. Read by nvcc and by g++ (SIMT).
//
// A warp per segment (reduceShortPieces) keeps one segment's few loads in flight per warp and
// reads each segment's offsets with a dependent load first: segments of 1 to 64 elements ran at
// 2-7 % of the read ceiling on an H200, slower than CUB's segmented sums. Here a warp reads G
// segments' offsets at once (lane i: segment i), and when the group's segments follow each
// other in memory (each begins where the one before ends: offsets from a prefix sum) it reads
// the group's elements as one contiguous range: rounds of 32 lanes x kGroupVectors 16-byte
// vectors, each lane its neighbouring vectors, all loads of a round issued before the first
// use (the other warps' rounds cover the wait). Each lane folds its elements run
// by run (a run: the lane's elements of one segment; when the group's segments average less than
// half a lane's elements, all runs in one pass over the elements), and writes the segments that
// begin and end inside it; a segmented scan over the lanes (restart where a lane's last run
// begins inside it) joins the runs that cross lanes, and its last lane carries the open segment
// into the next round. Any order gives these operations' bits, so a segment gets what
// reducelab::reduce gives for it alone.
//
// Exact sums of float, half and bfloat16 fold a run in plain double while its exponents vouch for
// it (the window of exact_pair.cuh: up to 16 floats or 32 halves); a lane with a run the window
// cannot vouch for folds all its runs again with exact pairs, element by element, reading them
// again from L1 (as double sums always do), so that the pairs do not size the kernel.
//
// Groups whose segments do not follow each other (overlapping, unsorted, gaps), and groups of
// segments that average half a round or more (there the rounds' search, predicated folds and
// scan cost more than they save: docs/performance.md), are left to reduceSegmentWarps, launched
// next, which reads each group's offsets again and takes its segments one at a time
// (warp_fold_free, four 16-byte loads in flight per lane) with few registers, so many warps.
// With few segments (groups of one or two) reduceSegmentsWarpEach runs alone instead, a warp per
// segment in blocks the GPU starts as others end (segment_warps_shape).
// Segments longer than a tile are left to reduceLongPieces (a block each) and count as empty
// here: the warp that reads their offsets lists them (LongList), so that kernel need not read
// every segment's offsets again.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "segments/agent_long_pieces.cuh"
#include "segments/agent_pieces.cuh"

namespace reducelab::detail {

// 16-byte vectors a lane reads per round: 16 elements a lane for 4-, 2- and 1-byte types (four,
// two and one vectors), except exact half and bfloat16 sums, whose windows take 32. With more
// elements a lane, its one pass over short segments holds a copy of the code that closes one for
// each element. H200, 2^26 elements in segments of 1 to 64 (docs/performance.md): int8 sums
// 700.9 -> 207.9 us with one vector instead of four, maxima 754.4 -> 245.7, means (the kernels
// alone) 8144.8 -> 608.0; int16 maxima 275.7 -> 238.7 and half maxima 290.8 -> 254.2 with two
// (the kernels alone); but half sums 258.8 -> 275.8, so they keep four. Segments of 1 to 256 lose
// a little (int8 sums 145.5 -> 154.0 us, int16 sums 140.2 -> 146.5), power-law ones gain (int16
// maxima 1619.1 -> 887.5, half maxima 1615.9 -> 1025.6).
template <class T, class Sem>
inline constexpr unsigned kGroupVectors = sizeof(T) == 1 ? 1 : sizeof(T) == 2 && !window_sums_v<T, Sem> ? 2 : 4;

// Segments per warp: the largest power of two up to 32 that still gives each warp the GPU holds
// eight groups (fewer leave the last warps a long tail), so tens of thousands of segments of a
// few thousand elements get a warp each and millions of short ones share.
inline unsigned segment_group_size(std::uint64_t count, std::uint64_t warps_held) {
  unsigned g = 32;
  while (g > 1 && count / g < 8 * warps_held) g /= 2;
  return g;
}

// How a lane's elements of one round fold (reduceSegmentGroups): its first run (head, when it
// began in an earlier lane or round), its last run (tail), which may reach into the next lane.
template <class Acc>
struct LaneRuns {
  Acc head, tail;
  unsigned head_length = 0;        // the head segment's length, when head_done
  unsigned tail_lo = 0, tail_hi = 0;  // the tail segment's flattened extent
  unsigned head_segment = 0, tail_segment = 0;
  bool head_done = false;  // the head began before this lane and ends inside it
  bool restart = true;     // the tail began inside this lane (the scan does not reach back past it)
  bool exact = true;       // every run's window vouched for its plain double sum
};

// One group's offsets as its warp sees them: lane i holds segment i's (a segment longer than a
// tile counts as empty: reduceLongPieces takes it), the prefix sum of the lengths, and whether the
// group is one contiguous range of short segments (read by rounds) or not (a segment at a time).
struct GroupOffsets {
  std::uint64_t first = 0, length = 0;  // this lane's segment
  std::uint64_t len = 0;                // its length here (0 when longer than a tile)
  std::uint64_t off = 0, total = 0;     // where it starts in the group's range; the range's length
  std::uint64_t base = 0;               // the range's first element, when contiguous
  bool rounds = false;                  // the same for the whole warp
};

// The whole warp must call it; `b` and `e` are this lane's offsets (0, 0 past the group). kVectors:
// the group kernel's vectors a lane a round (its rounds take groups of less than half a round).
template <class T, unsigned kVectors>
__device__ __forceinline__ GroupOffsets group_offsets(std::int64_t b, std::int64_t e) {
  constexpr unsigned kRound = 32 * kVectors * Shape<T>::kVec;
  const unsigned lane = threadIdx.x % 32;
  GroupOffsets o;
  o.length = segment_length(b, e);
  o.first = o.length ? static_cast<std::uint64_t>(b) : 0;
  o.len = o.length <= Shape<T>::kTile ? o.length : 0;
  std::uint64_t incl = o.len;  // inclusive prefix sum of the lengths
#pragma unroll
  for (unsigned k = 1; k < 32; k <<= 1) {
    const std::uint64_t up = __shfl_up_sync(kFullMask, incl, k);
    if (lane >= k) incl += up;
  }
  o.off = incl - o.len;
  o.total = __shfl_sync(kFullMask, incl, 31);
  const unsigned live = __ballot_sync(kFullMask, o.len > 0);
  if (live == 0) return o;
  o.base = __shfl_sync(kFullMask, o.first - o.off, static_cast<unsigned>(__ffs(static_cast<int>(live)) - 1));
  const bool contiguous = __all_sync(kFullMask, o.len == 0 || o.first - o.off == o.base);
  // Segments of half a round or more on average read faster one at a time (the rounds' search,
  // predicated folds and scan cost more than they save there: docs/performance.md).
  o.rounds = contiguous && o.total < std::uint64_t(__popc(live)) * (kRound / 2);
  return o;
}

// Lane `lane`'s offsets of group g (0, 0 past the group or the segments).
__device__ __forceinline__ void load_group_offsets(rl::gmem<const std::int64_t> begin, rl::gmem<const std::int64_t> end,
                                                   std::uint64_t count, unsigned group, std::uint64_t g,
                                                   std::int64_t* b, std::int64_t* e) {
  const unsigned lane = threadIdx.x % 32;
  const std::uint64_t p = g * group + lane;
  *b = *e = 0;
  if (lane < group && p < count) *b = begin[p], *e = end[p];
}

// Threads a block of reduceSegmentsWarpEach has.
inline constexpr unsigned kSegmentWarpThreads = 64;
// The 16-byte loads each lane of reduceSegmentsWarpEach has in flight a round: six for doubles,
// four for other types. A warp's segment is a few rounds, each loaded, then folded; what an SM has
// in flight is its warps times a round. With four, exact double sums take 56 registers (18 blocks
// an SM, 36 warps of 2 KiB a round) where maxima take 40 (24 blocks), and the sums ran 5-7 %
// slower. H200, 2^26 doubles in segments of 1 to 4096 elements, the kernel alone
// (bench/segwarp_probe, docs/performance.md): exact sums 127.1 us with six loads (64 registers,
// 16 blocks), 129.0 with five, 126.7 with eight (72 registers, 14 blocks), CUB's segmented sum
// 130.1 us in the same call; with four they took 136.1-136.6 us in earlier calls (CUB 130.2-130.5).
// Maxima, one call: 127.0 us with four, 125.1 with six (51 registers, 18 blocks), 124.8 with eight.
template <class T>
inline constexpr unsigned kSegmentWarpLoads = std::is_same_v<T, double> ? 6 : 4;

// How the segments no reduceSegmentGroups round takes are launched over `count` segments. With
// groups of one or two segments (segment_group_size: few segments, so mostly long ones)
// reduceSegmentsWarpEach runs alone, a warp per segment, without reduceSegmentGroups (whose warps
// would each read one segment's offsets with one lane, a dependent load at a time, before the
// segments' loads could start), in blocks of two warps (`grid` of them), which the GPU starts as
// others end, so that segments of uneven lengths (1 to 4096 elements, say) do not leave a tail
// of warps that drew more than their share. Otherwise reduceSegmentWarps follows
// reduceSegmentGroups in blocks of kThreads, each warp looping over groups, with a grid the
// launcher sizes as for that kernel (`blocks` at most). A forced grid (tests) keeps the second way.
struct SegmentWarpsShape {
  unsigned group = 1;  // segments a group
  std::uint64_t groups = 0;
  std::uint64_t blocks = 1;  // blocks of kThreads that have a group for every warp
  bool alone = false;        // reduceSegmentsWarpEach, no reduceSegmentGroups before it
  unsigned grid = 0, threads = kThreads;  // alone: launches of `grid` blocks, a warp a segment
  std::uint64_t per_launch() const { return std::uint64_t(grid) * (threads / 32); }  // segments
};
// The most blocks a launch of reduceSegmentsWarpEach has (2^31 segments); more take more launches.
inline constexpr std::uint64_t kWarpEachBlocks = std::uint64_t(1) << 30;
// `group`: segment_group_size's (or a test's); groups of two count as few segments too. A launch of
// reduceSegmentsWarpEach has at most `most_blocks` blocks (a test on SIMT lowers it).
inline SegmentWarpsShape segment_warps_shape(std::uint64_t count, unsigned group, bool forced,
                                             std::uint64_t most_blocks = kWarpEachBlocks) {
  SegmentWarpsShape s;
  s.alone = group <= 2 && !forced;
  s.group = s.alone ? 1 : group;
  s.groups = (count + s.group - 1) / s.group;
  s.blocks = std::max<std::uint64_t>(1, (s.groups + kWarps - 1) / kWarps);
  if (s.alone) {
    constexpr unsigned per_block = kSegmentWarpThreads / 32;
    s.threads = kSegmentWarpThreads;
    s.grid = static_cast<unsigned>(std::clamp<std::uint64_t>((s.groups + per_block - 1) / per_block, 1, most_blocks));
  }
  return s;
}

// Launch with kThreads threads and any grid (launch_kernel: it may start while
// reduceSegmentGroups, launched just before it, runs): warp k of the grid takes groups k, k +
// (warps in the grid), ... of `group` segments and reduces, a segment at a time with the whole
// warp, those of the groups reduceSegmentGroups leaves (not one contiguous range, or long
// segments on average). Few registers, so many warps, as these segments want.
template <class T, class Sem, unsigned kVectors = kGroupVectors<T, Sem>>
__global__ void __launch_bounds__(kThreads)
    reduceSegmentWarps(rl::gmem<const T> input, std::uint64_t count, unsigned group,
                       rl::gmem<const std::int64_t> begin, rl::gmem<const std::int64_t> end,
                       rl::gmem<typename Sem::Out> output, rl::gmem<unsigned long long> redo) {
  let_consumer_start();  // reduceLongPieces may take its places: it waits for this one to end
  const std::uint64_t warps = std::uint64_t(gridDim.x) * kWarps;
  const std::uint64_t groups = (count + group - 1) / group;
  for (std::uint64_t g = std::uint64_t(blockIdx.x) * kWarps + threadIdx.x / 32; g < groups; g += warps) {
    std::int64_t b = 0, e = 0;
    load_group_offsets(begin, end, count, group, g, &b, &e);
    const GroupOffsets o = group_offsets<T, kVectors>(b, e);
    if (o.rounds || o.total == 0) continue;  // the same for the whole warp
    for (unsigned i = 0; i < group && g * group + i < count; ++i) {
      const std::uint64_t li = __shfl_sync(kFullMask, o.len, i), fi = __shfl_sync(kFullMask, o.first, i);
      if (li == 0) continue;  // written or listed by reduceSegmentGroups
      const typename Sem::Acc v = warp_fold_free<T, Sem>(input + fi, li);
      if (threadIdx.x % 32 == 0) store_piece<Sem>(output, g * group + i, v, li, redo);
    }
  }
  // Launched to overlap reduceSegmentGroups (whose groups and outputs are disjoint from these),
  // it ends only after that kernel has (the launch after it reads the long list): its last block
  // waits for it, so that the blocks that end early make room for others.
  if (blockIdx.x == gridDim.x - 1) wait_for_producer();
}

// Launch with kSegmentWarpThreads threads (or another multiple of 32), as many launches as it takes
// (launch_kernel: it may start while the kernel before it runs, and waits for that kernel before
// it reads): warp k of the grid takes segment first + k alone, writes it if empty, lists it for
// reduceLongPieces if longer than a tile, and otherwise reduces it with the whole warp. Every
// lane reads the segment's offsets (one request), so a warp's first input loads wait on one
// dependent load; and the kernel holds nothing else, not even a loop, so many warps fit (a loop
// over segments k, k + (warps in the grid), ... cost the float sums 10 registers: 58 against 48).
template <class T, class Sem>
__global__ void __launch_bounds__(kSegmentWarpThreads)
    reduceSegmentsWarpEach(rl::gmem<const T> input, std::uint64_t first, std::uint64_t count,
                           rl::gmem<const std::int64_t> begin, rl::gmem<const std::int64_t> end,
                           rl::gmem<typename Sem::Out> output, rl::gmem<unsigned long long> redo, LongList longs) {
  wait_for_producer();
  let_consumer_start();  // reduceLongPieces may take its places: it waits for this one to end
  const std::uint64_t p = first + std::uint64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (p >= count) return;  // the whole warp
  const unsigned lane = threadIdx.x % 32;
  const std::int64_t b = begin[p], e = end[p];
  const std::uint64_t length = segment_length(b, e);
  if (length == 0 || length > Shape<T>::kTile) {  // the same for the whole warp
    if (lane == 0) {
      if (length == 0) store_piece<Sem>(output, p, Sem::identity(), 0, redo);
      else longs.add(p);  // longer than a tile: reduceLongPieces'
    }
    return;
  }
  const typename Sem::Acc v = warp_fold_free<T, Sem, true, kSegmentWarpLoads<T>>(input + b, length);  // short: at most a tile
  if (lane == 0) store_piece<Sem>(output, p, v, length, redo);
}

// Launch with kThreads threads and any grid; warp k of the grid takes groups k, k + (warps in the
// grid), ... of `group` segments (a power of two, at most 32), reduces those read by rounds,
// writes every empty segment and lists the segments longer than a tile in `longs` for
// reduceLongPieces. Each round is loaded as it is folded: loading the next round before folding
// this one (kAhead, two rounds in flight a lane) took 16 to 40 more registers and fewer blocks an
// SM, and on an H200 the int32 and float maxima of 2^26 elements in segments of 1 to 64 took
// 184.2 and 208.9 us that way against 180.5 and 204.4, the exact float and half sums 416.9 and
// 299.7 against 355.4 and 258.2, the double maxima 332.0 against 304.3, the double sums the same
// (bench/segwarp_probe groups; kAhead true: the probe's comparison).
template <class T, class Sem, bool kAhead = false, unsigned kVectors = kGroupVectors<T, Sem>>
__global__ void __launch_bounds__(kThreads)
    reduceSegmentGroups(rl::gmem<const T> input, std::uint64_t count, unsigned group,
                        rl::gmem<const std::int64_t> begin, rl::gmem<const std::int64_t> end,
                        rl::gmem<typename Sem::Out> output, rl::gmem<unsigned long long> redo, LongList longs) {
  using Acc = typename Sem::Acc;
  constexpr unsigned kVec = Shape<T>::kVec;
  constexpr unsigned kK = kVectors * kVec;  // elements a lane takes per round
  constexpr unsigned kRound = 32 * kK;
  constexpr bool kWindow = window_sums_v<T, Sem>;
  // Per warp: where each of its segments starts in the group's flattened range, and its end
  // (a group holds at most 32 tiles: 32-bit offsets).
  __shared__ unsigned bound_storage[kWarps * 33];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  rl::smem<unsigned> all_bounds = bound_storage;
  const rl::smem<unsigned> bounds = all_bounds + warp * 33;
  const std::uint64_t warps = std::uint64_t(gridDim.x) * kWarps;
  const std::uint64_t groups = (count + group - 1) / group;
  let_consumer_start();  // reduceSegmentWarps needs nothing this kernel writes: it may start now

  // This lane's offsets, read one group ahead: they arrive while the group before is read.
  std::int64_t ahead_begin = 0, ahead_end = 0;
  std::uint64_t g = std::uint64_t(blockIdx.x) * kWarps + warp;
  load_group_offsets(begin, end, count, group, g, &ahead_begin, &ahead_end);
  for (; g < groups; g += warps) {
    const std::uint64_t p0 = g * group;
    const bool mine = lane < group && p0 + lane < count;
    const GroupOffsets o = group_offsets<T, kVectors>(ahead_begin, ahead_end);
    load_group_offsets(begin, end, count, group, g + warps, &ahead_begin, &ahead_end);
    if (mine && o.length == 0) store_piece<Sem>(output, p0 + lane, Sem::identity(), 0, redo);
    if (mine && o.length > Shape<T>::kTile) longs.add(p0 + lane);
    if (!o.rounds) continue;  // the same for the whole warp: reduceSegmentWarps takes the group
    const std::uint64_t off = o.off, total = o.total, base = o.base;
    // Segments shorter than half a lane's elements on average: each lane folds its elements in
    // one pass (below).
    const bool stream = 2 * total < std::uint64_t(__popc(__ballot_sync(kFullMask, o.len > 0))) * kK;
    bounds[lane] = static_cast<unsigned>(off);  // lanes past the group hold `total`
    if (lane == 0) bounds[32] = static_cast<unsigned>(total);
    __syncwarp();

    // Positions count elements from the 16-byte boundary at or below the group's first element:
    // element f of the group is at position shift + f.
    const rl::gmem<const T> x = input + base;
    const unsigned shift = misalignment16(x) / sizeof(T);
    const unsigned span = shift + static_cast<unsigned>(total);
    // The lane's kK elements of the round from position r0 (zeros outside the group).
    auto load_round = [&](unsigned r0, T (&dst)[kK]) {
      const unsigned q = r0 + lane * kK;
#pragma unroll
      for (unsigned u = 0; u < kVectors; ++u) {
        const unsigned at = q + u * kVec;
        if (at >= shift && at + kVec <= span) {
          const Vec<T> w = load_vec(x, at - shift);
#pragma unroll
          for (unsigned j = 0; j < kVec; ++j) dst[u * kVec + j] = w.v[j];
        } else {
#pragma unroll
          for (unsigned j = 0; j < kVec; ++j) {
            dst[u * kVec + j] = T{};
            if (at + j >= shift && at + j < span) dst[u * kVec + j] = x[at + j - shift];
          }
        }
      }
    };
    Acc carry = Sem::identity();  // the segment the last round left open
    T v[kK];
    [[maybe_unused]] T ahead[kAhead ? kK : 1];
    if constexpr (kAhead) load_round(0, v);
    for (unsigned r0 = 0; r0 < span; r0 += kRound) {
      const unsigned q = r0 + lane * kK;  // this lane's first position
      // This round's loads (kAhead: the next round's, before this one is folded).
      if constexpr (kAhead) {
        if (r0 + kRound < span) load_round(r0 + kRound, ahead);
      } else {
        load_round(r0, v);
      }
      const unsigned pos_lo = q > shift ? q : shift, pos_hi = q + kK < span ? q + kK : span;
      const bool has = pos_lo < pos_hi;
      const unsigned lo = has ? pos_lo - shift : 0, hi = has ? pos_hi - shift : 0;  // flattened items [lo, hi)
      unsigned s0 = 0;  // the segment of item lo: the last whose start is at or below it
      if (has) {
#pragma unroll
        for (unsigned step = 16; step > 0; step >>= 1)
          if (bounds[s0 + step] <= lo) s0 += step;
      }
      // The lane's runs (a run: one segment's items in [lo, hi)), folded in plain double windows or
      // with Sem's accumulator (kPairs false), or as exact pairs (kPairs true, and double sums).
      auto fold_runs = [&](auto pairs) {
        constexpr bool kPairs = decltype(pairs)::value;
        LaneRuns<Acc> r;
        r.head = r.tail = Sem::identity();
        if (!has) return r;
        // A run's plain double sum, if its window vouches for it (else the lane's runs are folded
        // again as pairs). Nothing to add only while the sum is -0 (only -0 elements); a +0 counts.
        auto window_run = [&](const WindowSum& w) -> Acc {
          if constexpr (kWindow) {
            if (!window_fits<T>(w, window_span<T>(kK))) {
              r.exact = false;
              return Sem::identity();
            }
            return bits_of_double(w.s) == 0x8000000000000000ull ? Sem::identity() : Acc{w.s, 0.0};
          } else {
            return Sem::identity();  // not called
          }
        };
        // A run that ends inside the lane: the head (when its segment began in an earlier lane or
        // round, the scan adds what came before) or the whole segment.
        auto ended = [&](const Acc& run, unsigned s, unsigned seg_lo, unsigned seg_hi, bool opened_before) {
          if (opened_before) r.head = run, r.head_done = true, r.head_segment = s, r.head_length = seg_hi - seg_lo;
          else if (r.exact) store_piece<Sem>(output, p0 + s, run, seg_hi - seg_lo, redo);
        };
        // The lane's last run: the scan joins it with what follows.
        auto last = [&](const Acc& run, unsigned s, unsigned seg_lo, unsigned seg_hi, bool opened_before) {
          r.tail = run, r.tail_segment = s, r.tail_lo = seg_lo, r.tail_hi = seg_hi;
          r.restart = !opened_before;
          return r;
        };
        // The segment after s that holds item f: past empty segments (and long ones, counted as empty).
        auto next_segment = [&](unsigned s, unsigned f) {
          do ++s;
          while (bounds[s + 1] == f);
          return s;
        };
        // Segments shorter than half a lane's elements on average (`stream`): one pass over the
        // lane's elements, a run closing where its segment ends. Otherwise (and for exact pairs)
        // run by run, below: a segment boundary in one lane at a different element than in the
        // next costs the warp a pass through the closing code per element, so with a boundary or
        // two a lane a pass per run costs less.
        if constexpr (!kPairs && (kWindow || !is_exact_pieces<Sem>::value)) if (stream) {
          unsigned s = s0, seg_lo = bounds[s0], seg_hi = bounds[s0 + 1];
          bool first = true;
          WindowSum w = window_identity();
          typename Sem::Inner in = Sem::inner_identity();
          auto close = [&]() -> Acc {
            if constexpr (kWindow) return window_run(w);
            else return Sem::absorb(Sem::identity(), in);
          };
#pragma unroll
          for (unsigned j = 0; j < kK; ++j) {
            const unsigned f = q + j - shift;  // wraps below `lo` before the first item
            if (q + j < shift || f < lo || f >= hi) continue;
            if (f == seg_hi) {  // segment s ended before this element
              ended(close(), s, seg_lo, seg_hi, first && seg_lo < lo);
              first = false;
              s = next_segment(s, f);
              seg_lo = f, seg_hi = bounds[s + 1];
              w = window_identity();
              in = Sem::inner_identity();
            }
            if constexpr (kWindow) window_add(w, v[j]);
            else in = Sem::inner_combine(in, Sem::lift(v[j], f - seg_lo));
          }
          return last(close(), s, seg_lo, seg_hi, first && seg_lo < lo);
        }
        // Items [a, b) of the segment that starts at seg_lo, one predicated pass over the lane's
        // elements (in registers, static indices), or for exact pairs one element at a time.
        auto fold_range = [&](unsigned a, unsigned b, unsigned seg_lo) -> Acc {
          if constexpr (kWindow) {
            if (!kPairs) {
              WindowSum w = window_identity();
#pragma unroll
              for (unsigned j = 0; j < kK; ++j) {
                const unsigned f = q + j - shift;  // wraps below `a` before the first item
                if (q + j >= shift && f >= a && f < b) window_add(w, v[j]);
              }
              return window_run(w);
            }
          }
          typename Sem::Inner in = Sem::inner_identity();
          if constexpr (is_exact_pieces<Sem>::value) {
            // Exact pairs (double sums, and runs no window vouched for): read again (from L1),
            // so that the pairs' TwoSums do not size the kernel's registers.
#pragma unroll 1
            for (unsigned f = a; f < b; ++f) in = Sem::inner_combine(in, Sem::lift(x[f], 0));
          } else {
#pragma unroll
            for (unsigned j = 0; j < kK; ++j) {
              const unsigned f = q + j - shift;
              if (q + j >= shift && f >= a && f < b) in = Sem::inner_combine(in, Sem::lift(v[j], f - seg_lo));
            }
          }
          return Sem::absorb(Sem::identity(), in);
        };
        unsigned s = s0, a = lo;
        bool first = true;
        for (;;) {
          const unsigned seg_lo = bounds[s], seg_hi = bounds[s + 1];
          const Acc run = fold_range(a, seg_hi < hi ? seg_hi : hi, seg_lo);
          const bool opened_before = first && seg_lo < lo;  // began in an earlier lane or round
          if (seg_hi >= hi) return last(run, s, seg_lo, seg_hi, opened_before);
          ended(run, s, seg_lo, seg_hi, opened_before);
          first = false;
          a = seg_hi;
          s = next_segment(s, a);
        }
      };
      LaneRuns<Acc> runs = fold_runs(std::false_type{});
      if constexpr (kWindow) {
        if (!runs.exact) runs = fold_runs(std::true_type{});
      }
      // Segmented inclusive scan of the tails over the lanes: lane l ends with its tail segment's
      // fold from that segment's first element (this round's lane 0 takes the carry).
      Acc acc = runs.tail;
      unsigned open = runs.restart ? 0u : 1u;
      if (lane == 0 && open) acc = Sem::combine(carry, acc), open = 0u;
#pragma unroll
      for (unsigned k = 1; k < 32; k <<= 1) {
        const unsigned from = lane >= k ? lane - k : lane;
        const Acc up = shuffle_from(acc, from);
        const unsigned up_open = __shfl_sync(kFullMask, open, from);
        if (lane >= k && open) acc = Sem::combine(up, acc), open = up_open;
      }
      const Acc before = shuffle_from(acc, lane > 0 ? lane - 1 : 0);
      if (runs.head_done)
        store_piece<Sem>(output, p0 + runs.head_segment, Sem::combine(lane > 0 ? before : carry, runs.head),
                         runs.head_length, redo);
      if (has && runs.tail_hi == hi)  // the tail segment ends in this lane
        store_piece<Sem>(output, p0 + runs.tail_segment, acc, runs.tail_hi - runs.tail_lo, redo);
      carry = shuffle_from(acc, 31);
      if constexpr (kAhead) {
#pragma unroll
        for (unsigned j = 0; j < kK; ++j) v[j] = ahead[j];
      }
    }
    __syncwarp();  // bounds are rewritten by the next group
  }
}

}  // namespace reducelab::detail
