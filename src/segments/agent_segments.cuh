#pragma once
// The kernels of reduce_axis and reduce_segments. Every piece (a row, a column or a segment;
// pieces.hpp) gets what reducelab::reduce gives for its elements alone, so its bits never depend
// on the kernel, the grid or the GPU: order-free operations (integers, min/max, arg-extrema, and
// floating-point sums and means, carried as exact pairs: exact_pair.cuh) in whatever order
// reads fastest, the others (floating-point products, user operations) in reducelab::reduce's
// fixed order for the piece's length (reduce_order.hpp). Read by nvcc and by g++ (SIMT).
//
// Order-free (plan_pieces at the end of this file):
//   reduceColumns      columns (axis 0): coalesced across neighbouring columns, rows in bands
//                      (16-bit floats' min, max, sums and means: two columns a lane, as words;
//                      vectors of columns a lane where they pay: VecColumns, vec_columns_pay).
//   reduceNarrowColumns  exact sums and means of 2, 4, 8 or 16 dense float columns: the matrix
//                      read as one array, a thread keeping the sums of every column (or of the
//                      columns a vector holds).
//   reduceHalfColumns  exact sums and means of 2, 4 or 8 to 256 (a power of two) dense half
//                      columns: read the same way, the sums added as integers (counts of 2^-24);
//                      reduceHalfColumnExtrema, min and max of such half and bfloat16 columns.
//   reduceHalfColumnBands  exact half sums and means of at least 256 columns in whole 16-byte
//                      vectors: a vector of eight columns a lane, plain doubles over bands of at
//                      most 8192 rows (or a warp a group over every row), the bands' sums added
//                      as integers. (Other 16-bit columns take reduceColumns, two columns a lane.)
//   reduceRowGroups    rows of up to 8 KiB (exact sums: 8192 elements): a few lanes per
//                      row, 16-byte loads, several rows per warp in flight.
//   reduceCutRows      exact double sums and means of rows of up to 256 elements: the row's
//                      lanes hold all of it and split it on one grid (double_split, exact_sum.cuh).
//   reducePackedRows   dense rows of 2, 4 or 8 elements (whole rows in each 16-byte vector): a
//                      thread per vector, no shuffle; rows of two or four whole vectors (eight for
//                      order-free operations): a thread per row (a kernel for each row shape).
//                      Exact float, half and bfloat16 sums, and the order-free operations that are
//                      not exact sums.
//   reduceFreeRows     min, max, argmin, argmax and integer sums and products of dense rows of 4
//                      to 64 whole vectors (4 to 32, and 128, for 8-byte elements; 4- and 8-byte
//                      elements; the min, max, exact sum and mean of halves): two or four vectors
//                      a lane, every load of a step issued first (before reducePackedRows and
//                      reduceRowGroups).
//   reduceLongPieces   longer rows and segments: a block each (few rows of exact sums, minima
//                      or maxima: eight loads in flight a thread).
//   reduceWarpRows     longer rows (up to 64 KiB; float, half and bfloat16 rows of more than
//                      1024 elements) of exact sums and means, when there are at least as many
//                      as the GPU holds warps: a warp each.
//   reduceBlockRows    the other long rows of exact sums and means of a dense matrix: a block
//                      each, without reduceLongPieces' list of segments and strided pieces.
//   reduceSegmentGroups  segments of up to a tile: a warp per group of up to 32 neighbouring
//                      short segments, read as one contiguous range (agent_segment_groups.cuh).
//   reduceSegmentWarps the groups it leaves (longer or scattered segments): a warp per segment.
//   reduceSegmentsWarpEach  few segments (no reduceSegmentGroups): a warp each, in small blocks.
//   reduceRedoPieces   exact sums only: the pieces whose pair lost part of the sum, with digits
//                      (not after float rows a block each: their blocks sum a lost row again;
//                      nor after reduceLongPieces of float or double sums, which sums them all).
// The fixed order (order-free operations take the first too, for matrix pieces of at most one
// vector):
//   reduceTinyPieces   a thread per piece of at most one vector (a matrix's rows or columns of
//                      a few elements): neighbouring threads read neighbouring pieces.
//   reduceSingles      pieces of one element, piece p at element p (a single row's columns, a
//                      single column's rows): units of 16 bytes of results a thread.
//   reduceShortPieces  a warp per contiguous piece of at most one tile (kTile elements: 8192
//                      floats): the warp's lanes stand in for the block's 256 threads, so the
//                      order is the block's; lane l reads vector l of each row, 512 bytes a row
//                      (order-free operations: four loads in flight per lane, one warp fold).
//   reduceSegments     a block per piece: the piece's chunks one after another with the
//                      library's own fold_chunk and block_fold, the chunk results in shared
//                      memory, folded as reduceChunks' last block does.
//
// Fewer long rows than multiprocessors go through reducelab::reduce row by row instead
// (device_segments.cuh): the same order, the whole GPU on each row.
//
// Float, half and bfloat16 sums and means sum in plain double while a window of exponents vouches
// for it (exact_pair.cuh), and fall back to exact pairs per row or per thread where it cannot.
// Double rows of up to 256 elements are split on a grid set by the row's largest element and summed
// as two plain double sums (double_split, exact_sum.cuh; reduceCutRows here), pairs where the
// exponents lie too far apart for it; longer double pieces split each lane's rounds of loads the
// same way (CutFold).
//
// Still slow: columns of floating-point products follow each column's fixed order, one element
// per row with a stride; a few long segments (whose lengths only the GPU knows) get a block each;
// columns of 16-bit elements load 2 bytes a lane (64 bytes a warp) but for their min, max,
// sums and means, which read words of two columns (PairExtremum, PairSum) where the kernels above
// do not take them; rows shorter than one
// 16-byte vector take one load each only when they are exactly 4 or 8 bytes (others, element by
// element), unless they are exact sums of a dense matrix whose rows divide a vector
// (reducePackedRows); exact sums of long rows stay 4 to 7 % behind CUB's plain sums: a warp a row
// (reduceWarpRows) reads slower than a block a row, and a block a row pays each row's fold of
// exact pairs (docs/performance.md).
#include <algorithm>
#include <cstdint>

#include "reducelab/detail/agent_reduce.cuh"
#include "reducelab/detail/cluster.cuh"
#include "reducelab/detail/exact_half.cuh"
#include "reducelab/detail/portable.cuh"
#include "reducelab/detail/workspace.hpp"
#include "segments/exact_pieces.cuh"
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

// How many bytes p lies past a 16-byte boundary.
template <class T>
__device__ __forceinline__ unsigned misalignment16(rl::gmem<const T> p) {
#if RL_SIMT
  return static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(p.get()) % 16);
#else
  return static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(p) % 16);
#endif
}
template <class T>
__device__ __forceinline__ bool is_aligned16(rl::gmem<const T> p) {
  return misalignment16(p) == 0;
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

// The most elements one of `lanes` threads takes in fold_contiguous over n elements: its share of
// the vectors, rounded up, and one element each of the head and the tail.
template <class T>
__host__ __device__ constexpr std::uint64_t contiguous_share(std::uint64_t n, std::uint64_t lanes) {
  return (n / Shape<T>::kVec + lanes - 1) / lanes * Shape<T>::kVec + 2;
}

// An order-free operation over the contiguous elements x[0, n): `lanes` threads (at least 32)
// take turns (this one is `lane`), each folding into `run`. The elements before x's first 16-byte
// boundary (the head) go one to a thread, then 16-byte vectors, kIn loads in flight per thread,
// then the lane's last vectors (fewer than kIn) and the rest (the tail) one to a thread: a segment
// that starts anywhere keeps the vector loads (element by element, a warp has a quarter of a float
// piece's bytes in flight). Any order gives these operations' bits. `run` is a RunningFold, or a
// WindowFold, CutFold (which takes each round of loads whole) or PairFold (exact_pieces.cuh).
// kShort, for pieces of at most a tile (reduceSegmentsWarpEach): 32-bit positions, and the last
// vectors and the head's and tail's elements loaded at once after the rounds, not one at a time.
// For segments of a few thousand elements a warp each, those round trips were a good part of a
// segment's time (H200, uniform:1..4096 float max 69.2 -> 65.3 us, double sums 138.8 -> 136.5);
// for long rows they are nothing, and the loads kept together cost registers (a block a row:
// 30 -> 48 for double maxima), so long pieces keep one load at a time.
// `rotate`: the whole rounds (every lane's kIn loads) start at round rotate % rounds and wrap
// around, so that warps summing neighbouring rows at once read different offsets of their rows
// (reduceWarpRows).
template <class T, unsigned kIn = 4, bool kShort = false, class Fold>
__device__ __forceinline__ void fold_contiguous(Fold& run, rl::gmem<const T> x, std::uint64_t n, unsigned lanes,
                                                unsigned lane, std::uint64_t rotate = 0) {
  using Index = std::conditional_t<kShort, unsigned, std::uint64_t>;
  constexpr unsigned kVec = Shape<T>::kVec;
  const Index head = static_cast<Index>(std::min<std::uint64_t>(n, (16 - misalignment16(x)) % 16 / sizeof(T)));
  if constexpr (!kShort)
    for (std::uint64_t e = lane; e < head; e += lanes) run.take_one(x[e], e);
  const rl::gmem<const T> body = x + head;
  const Index vectors = static_cast<Index>((n - head) / kVec);
  const auto round = [&](Index k) {  // vectors k, k + lanes, ..., k + (kIn - 1) * lanes
    Vec<T> v[kIn];
#pragma unroll
    for (unsigned u = 0; u < kIn; ++u) v[u] = load_vec(body, (k + u * lanes) * kVec);
    if constexpr (requires { run.template take_round<kIn>(v); }) {
      run.template take_round<kIn>(v);  // a CutFold: the round as one group
    } else {
#pragma unroll
      for (unsigned u = 0; u < kIn; ++u)
        run.template take<kVec>(v[u].v, [&](unsigned j) { return head + (k + u * lanes) * kVec + j; });
      if constexpr (requires { run.settle(); }) run.settle();  // a WindowFold's window: a round at most
    }
  };
  const Index step = static_cast<Index>(kIn * lanes);
  Index k = lane;
  if constexpr (!kShort) {
    // The rounds every lane takes whole, starting `rotate` rounds in.
    const Index rounds = vectors / step;
    if (rotate != 0 && rounds > 1) {
      Index j = static_cast<Index>(rotate % rounds);
#pragma unroll 1
      for (Index i = 0; i < rounds; ++i) {
        round(j * step + lane);
        j = j + 1 == rounds ? 0 : j + 1;
      }
      k = rounds * step + lane;
    }
  }
  for (; k + (kIn - 1) * lanes < vectors; k += step) round(k);
  if constexpr (kShort) {
    // Head and tail hold fewer than kVec <= 32 elements: one at most a lane.
    static_assert(kVec <= 32, "a lane takes one element of the head and one of the tail at most");
    constexpr unsigned kLeft = kIn > 1 ? kIn - 1 : 1;
    Vec<T> left[kLeft];
#pragma unroll
    for (unsigned u = 0; u < kLeft; ++u)
      if (k + u * lanes < vectors) left[u] = load_vec(body, (k + u * lanes) * kVec);
    const Index tail = head + vectors * kVec + lane;
    T first{}, last{};
    if (lane < head) first = x[lane];
    if (tail < n) last = x[tail];
#pragma unroll
    for (unsigned u = 0; u < kLeft; ++u)
      if (k + u * lanes < vectors)
        run.template take<kVec>(left[u].v, [&](unsigned j) { return head + (k + u * lanes) * kVec + j; });
    if (lane < head) run.take_one(first, lane);
    if (tail < n) run.take_one(last, tail);
  } else {
    for (; k < vectors; k += lanes) {
      const Vec<T> v = load_vec(body, k * kVec);
      run.template take<kVec>(v.v, [&](unsigned j) { return head + k * kVec + j; });
    }
    for (std::uint64_t e = head + vectors * kVec + lane; e < n; e += lanes) run.take_one(x[e], e);
  }
}

// One of `lanes` threads' fold of its share of an order-free operation over the contiguous
// elements x[0, n) (fold_contiguous, kIn loads in flight), before the warp's or block's fold.
// Exact sums of float, half and bfloat16 fold each lane's elements in plain double windows of a
// round of loads each, settled into a pair (WindowFold); exact double sums split up to eight
// rounds on one grid (CutFold). A lane whose windows or splits do not vouch for its sum folds its
// elements again with pairs, a load in flight (rare, and few registers for it). Against
// RunningFold, in a warp a segment, segments of 1 to 4096 floats took 107.2 -> 78.6 us on an
// H200, halves 92.9 -> 70.3 us (docs/performance.md). Other operations, and window sums with
// kRoundWindows false (one window a thread, which reduceLongPieces keeps: few rows of 2^20 halves
// a block each took 133.3 -> 151.9 us with a window a round, floats 244.2 -> 254.8, H200):
// RunningFold.
template <class T, class Sem, unsigned kIn, bool kRoundWindows = true, bool kShort = false>
__device__ __forceinline__ typename Sem::Acc lane_fold_free(rl::gmem<const T> x, std::uint64_t n, unsigned lanes,
                                                            unsigned lane, std::uint64_t rotate = 0) {
  using Acc = typename Sem::Acc;
  if constexpr ((window_sums_v<T, Sem> && kRoundWindows) || cut_sums_v<T, Sem>) {
    using First = std::conditional_t<cut_sums_v<T, Sem>, CutFold, WindowFold<T>>;
    First first = [] {
      if constexpr (cut_sums_v<T, Sem>) return CutFold{};
      else return WindowFold<T>(kIn * Shape<T>::kVec + 2);  // a round, and a head or tail element
    }();
    fold_contiguous<T, kIn, kShort>(first, x, n, lanes, lane, rotate);
    first.settle();  // the last window, or the grid's open sums
    if (first.exact) return Acc{first.a, first.b};
    PairFold<T, Sem> p;
    fold_contiguous<T, 1>(p, x, n, lanes, lane);
    return p.acc;
  } else {
    RunningFold<T, Sem> run(contiguous_share<T>(n, lanes));
    fold_contiguous<T, kIn, kShort>(run, x, n, lanes, lane, rotate);
    return run.result();
  }
}

// An order-free operation over a contiguous piece of n elements (segments of up to a tile, long
// rows in reduceWarpRows), by one warp (lane_fold_free, kIn loads in flight), then a warp fold.
// The whole warp must call it.
template <class T, class Sem, bool kShort = false, unsigned kIn = 4>
__device__ __forceinline__ typename Sem::Acc warp_fold_free(rl::gmem<const T> x, std::uint64_t n,
                                                            std::uint64_t rotate = 0) {
  return warp_fold<Sem>(lane_fold_free<T, Sem, kIn, true, kShort>(x, n, 32, threadIdx.x % 32, rotate));
}

// Whether Sem is min or max (Extremum, whose result type is the element's).
template <class Sem>
inline constexpr bool extremum_v = std::is_base_of_v<Extremum<typename Sem::Out, true>, Sem> ||
                                   std::is_base_of_v<Extremum<typename Sem::Out, false>, Sem>;

// The result of piece p, whose one element is x. A finite floating-point element is its own exact
// sum and mean: converted once, with none of the pair's steps; an infinity or NaN takes them (and
// their rules for the result; a pair that would need the redo lists p, and the redo writes it).
// The minimum and maximum of one floating-point element are the element, or the canonical NaN:
// what its order key's round trip gives, in one comparison.
template <class Sem, class T>
__device__ __forceinline__ typename Sem::Out single_result(T x, std::uint64_t p, rl::gmem<unsigned long long> redo) {
  if constexpr (extremum_v<Sem> && is_floating<T>) return is_nan(x) ? canonical_nan<T>() : x;
  if constexpr (is_exact_pieces<Sem>::value) {
    const double v = static_cast<double>(widen(x));
    if (finite_double(v)) return Sem::finish_exact(v, 1);
  }
  const typename Sem::Acc a = Sem::absorb(Sem::identity(), Sem::inner_combine(Sem::inner_identity(), Sem::lift(x, 0)));
  if constexpr (is_exact_pieces<Sem>::value) {
    if (Sem::needs_redo(a)) list_for_redo(redo, p);
  }
  return Sem::finish(a, 1);
}
template <class Sem, class T>
__device__ __forceinline__ void store_single(rl::gmem<typename Sem::Out> output, std::uint64_t p, T x,
                                             rl::gmem<unsigned long long> redo) {
  output[p] = single_result<Sem>(x, p, redo);
}

// reduceSingles' unit: the elements a thread loads at once, as many as make 16 bytes of results
// (16 bytes of input where a result is no wider than its element: 8 halves for their maxima, 4
// for their float sums, 2 int32 for their int64 sums).
template <class T, class Sem>
inline constexpr unsigned kSingleUnit =
    16 / (sizeof(typename Sem::Out) > sizeof(T) ? sizeof(typename Sem::Out) : sizeof(T));
// K neighbouring elements, aligned to their size: reduceSingles' units, VecColumns' vectors.
template <class T, unsigned K>
struct alignas(K * sizeof(T)) Neighbours {
  T v[K];
};
// The unit at element `at` (aligned to the unit) in one load.
template <class T, unsigned kN>
__device__ __forceinline__ Neighbours<T, kN> load_unit(rl::gmem<const T> input, std::uint64_t at) {
  using U = Neighbours<T, kN>;
#if RL_SIMT
  const simt::ptr<const U> p(reinterpret_cast<const U*>(input.get() + at), input.region_base(), input.region_bytes(),
                             input.space());
  return p[0].read();
#else
  constexpr unsigned kBytes = kN * sizeof(T);
  using Raw = std::conditional_t<
      kBytes == 16, uint4,
      std::conditional_t<kBytes == 8, uint2,
                         std::conditional_t<kBytes == 4, unsigned, std::conditional_t<kBytes == 2, unsigned short, unsigned char>>>>;
  static_assert(sizeof(Raw) == kBytes, "one load of the unit's bytes");
  const Raw raw = __ldg(reinterpret_cast<const Raw*>(input + at));
  U out;
  memcpy(&out, &raw, sizeof out);
  return out;
#endif
}
// The input's elements before its first unit boundary (at most `count`).
template <class T, class Sem>
inline unsigned singles_head(const T* input, std::uint64_t count) {
  constexpr std::uintptr_t kBytes = kSingleUnit<T, Sem> * sizeof(T);
  const std::uint64_t head = (kBytes - reinterpret_cast<std::uintptr_t>(input) % kBytes) % kBytes / sizeof(T);
  return static_cast<unsigned>(head < count ? head : count);
}
// Whether reduceSingles takes a matrix's pieces: one element each, piece p at element p (the rows
// of a single column, the columns of a single row), and the results of whole units land on
// 16-byte boundaries of the output.
template <class T, class Sem>
inline bool singles_fit(const T* input, const typename Sem::Out* output, const Pieces& p) {
  return !p.offsets && p.length == 1 && p.step == 1 &&
         reinterpret_cast<std::uintptr_t>(output + singles_head<T, Sem>(input, p.count)) % 16 == 0;
}

// kN results at output[first...] in stores of min(kN * sizeof(Out), 16) bytes (output + first
// aligned to that): one 4- or 8-byte store, or one 16-byte store a chunk.
template <class Out, unsigned kN>
__device__ __forceinline__ void store_results(rl::gmem<Out> output, std::uint64_t first, const Out (&o)[kN]) {
  constexpr unsigned kBytes = kN * sizeof(Out);
  static_assert(kBytes == 4 || kBytes == 8 || kBytes % 16 == 0, "a word, or whole 16-byte chunks");
#if RL_SIMT
  constexpr unsigned kChunk = kBytes < 16 ? kBytes : 16;
  struct alignas(kChunk) Chunk {
    unsigned char b[kChunk];
  };
  const simt::ptr<Chunk> to(reinterpret_cast<Chunk*>(output.get() + first), output.region_base(),
                            output.region_bytes(), output.space());
  Chunk c[kBytes / kChunk];
  memcpy(c, o, kBytes);
#pragma unroll
  for (unsigned k = 0; k < kBytes / kChunk; ++k) to[k] = c[k];
#else
  if constexpr (kBytes < 16) {
    std::conditional_t<kBytes == 4, std::uint32_t, unsigned long long> w;
    memcpy(&w, o, kBytes);
    *reinterpret_cast<decltype(w)*>(output + first) = w;
  } else {
    // __stcs: a 16-byte store (st.global.cs.v4), streamed past L1. A plain uint4 store came out of
    // nvcc as four 4-byte stores, each lane 16 bytes from the next: no instruction wrote a whole
    // 32-byte sector, and reduceSingles took 4190 us for float maxima along 1 x 2^28, about 4 ms a
    // GB written whatever the type (H200), where a column a thread took 580.
    std::uint32_t w[kBytes / 4];
    memcpy(w, o, kBytes);
    uint4* to = reinterpret_cast<uint4*>(output + first);
#pragma unroll
    for (unsigned k = 0; k < kBytes / 16; ++k) __stcs(to + k, make_uint4(w[4 * k], w[4 * k + 1], w[4 * k + 2], w[4 * k + 3]));
  }
#endif
}

// Units a thread of reduceSingles loads before it writes their results.
inline constexpr unsigned kSinglesInFlight = 4;

// Launch with kThreads threads and any grid over `count` one-element pieces, piece p at element p
// (singles_fit), output + head 16-byte aligned: thread k takes units k, k + threads, ... of the
// input from element `head` (the first unit boundary), kSinglesInFlight at a time, and writes
// their 16 bytes of results with 16-byte stores, so that every store writes whole 32-byte sectors;
// the elements before `head` and after the last whole unit go one a thread. reduceTinyPieces reads
// one element a lane: 64 bytes a warp load for 16-bit types, whose pieces of one element then
// moved 56 % of the copy ceiling (half maxima along the columns of 1 x 2^28, H200). With 16 bytes
// of input a thread, the 32 bytes of int64 sums of int32 or float sums of halves went out in two
// stores, each writing half of every sector: 1197 against 858 us a column a thread (int32 sums),
// 615 against 526 (half sums).
template <class T, class Sem>
__global__ void __launch_bounds__(kThreads)
    reduceSingles(rl::gmem<const T> input, std::uint64_t count, unsigned head, rl::gmem<typename Sem::Out> output,
                  rl::gmem<unsigned long long> redo) {
  constexpr unsigned kN = kSingleUnit<T, Sem>;
  using Out = typename Sem::Out;
  const std::uint64_t thread = std::uint64_t(blockIdx.x) * kThreads + threadIdx.x;
  const std::uint64_t threads = std::uint64_t(gridDim.x) * kThreads;
  const std::uint64_t units = (count - head) / kN, tail = head + units * kN;
  if (thread < head) store_single<Sem, T>(output, thread, input[thread], redo);
  if (thread < count - tail) store_single<Sem, T>(output, tail + thread, input[tail + thread], redo);
  for (std::uint64_t v = thread; v < units; v += kSinglesInFlight * threads) {
    Neighbours<T, kN> x[kSinglesInFlight];
#pragma unroll
    for (unsigned u = 0; u < kSinglesInFlight; ++u)
      if (v + u * threads < units) x[u] = load_unit<T, kN>(input, head + (v + u * threads) * kN);
#pragma unroll
    for (unsigned u = 0; u < kSinglesInFlight; ++u) {
      if (v + u * threads >= units) continue;
      const std::uint64_t first = head + (v + u * threads) * kN;
      Out o[kN];
      if constexpr (extremum_v<Sem> && is_half_like<T>) {  // a word of two results at a time
        std::uint32_t w[kN / 2];
        memcpy(w, x[u].v, sizeof w);
#pragma unroll
        for (unsigned q = 0; q < kN / 2; ++q) w[q] = canonical_nans16x2<T>(w[q], nans16x2<T>(w[q]));
        memcpy(o, w, sizeof o);
      } else {
#pragma unroll
        for (unsigned j = 0; j < kN; ++j) o[j] = single_result<Sem>(x[u].v[j], first + j, redo);
      }
      store_results(output, first, o);
    }
  }
}

// A thread loads the elements of this many one-element pieces before it writes the first.
inline constexpr unsigned kTinyInFlight = 4;

// Launch with kThreads threads and any grid; thread k of the grid reduces pieces k, k + (threads
// in the grid), ... of a matrix whose pieces hold at most one vector (kVec elements): such a piece
// lies in the block's thread 0's first vector, every other thread, warp and chunk holds the
// identity, which every built-in combine passes through exactly, so the order is this one fold.
// Neighbouring threads take neighbouring pieces: columns are read coalesced, row by row. Pieces
// of one element (a single row's columns, a single column's rows) keep kTinyInFlight loads in
// flight per thread.
template <class T, class Sem>
__global__ void __launch_bounds__(kThreads)
    reduceTinyPieces(rl::gmem<const T> input, Pieces pieces, rl::gmem<typename Sem::Out> output,
                     rl::gmem<unsigned long long> redo) {
  const std::uint64_t threads = std::uint64_t(gridDim.x) * kThreads;
  if (pieces.length == 1) {  // one element a piece: a single row's columns, a single column's rows
    for (std::uint64_t first = std::uint64_t(blockIdx.x) * kThreads + threadIdx.x; first < pieces.count;
         first += kTinyInFlight * threads) {
      T e[kTinyInFlight];
#pragma unroll
      for (unsigned u = 0; u < kTinyInFlight; ++u)
        if (first + u * threads < pieces.count) e[u] = input[(first + u * threads) * pieces.step];
#pragma unroll
      for (unsigned u = 0; u < kTinyInFlight; ++u)
        if (first + u * threads < pieces.count) store_single<Sem>(output, first + u * threads, e[u], redo);
    }
    return;
  }
  for (std::uint64_t p = std::uint64_t(blockIdx.x) * kThreads + threadIdx.x; p < pieces.count; p += threads) {
    const rl::gmem<const T> x = input + p * pieces.step;
    typename Sem::Inner in = Sem::inner_identity();
    for (std::uint64_t i = 0; i < pieces.length; ++i) {
      const T e = x[i * pieces.stride];
      in = Sem::inner_combine(in, Sem::lift(e, i));
    }
    store_piece<Sem>(output, p, Sem::absorb(Sem::identity(), in), pieces.length, redo);
  }
}

// Launch with kThreads threads and any grid; warp k of the grid reduces pieces k, k + (warps in
// the grid), ... of at most kTile elements (longer ones are left to reduceSegments). Contiguous
// pieces only (stride 1). Fixed-order operations only: order-free segments take
// reduceSegmentGroups and reduceSegmentWarps.
template <class T, class Sem>
__global__ void __launch_bounds__(kThreads)
    reduceShortPieces(rl::gmem<const T> input, Pieces pieces, rl::gmem<const std::int64_t> begin,
                      rl::gmem<const std::int64_t> end, rl::gmem<typename Sem::Out> output,
                      rl::gmem<unsigned long long> redo) {
  static_assert(!Sem::order_free, "order-free segments take reduceSegmentGroups");
  const std::uint64_t warps = std::uint64_t(gridDim.x) * kWarps;
  for (std::uint64_t p = std::uint64_t(blockIdx.x) * kWarps + threadIdx.x / 32; p < pieces.count; p += warps) {
    std::uint64_t first = 0, length = 0;
    piece_extent(pieces, begin, end, p, &first, &length);
    if (length > Shape<T>::kTile) continue;  // the same for the whole warp
    const rl::gmem<const T> x = input + first;
    const typename Sem::Acc v = warp_fold_tile<T, Sem>(x, length, is_aligned16(x));
    if (threadIdx.x % 32 == 0) store_piece<Sem>(output, p, v, length, redo);
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

namespace reducelab::detail {

// ---- Columns of an order-free operation, read coalesced ----------------------------------------
// Integer sums and products, min, max, argmin, argmax and exact pairs give the same bits in any order, so a
// matrix's columns (axis 0) need not follow the fixed order of each column: a warp reads W
// neighbouring columns (W = min(cols, 32)) of 32 / W neighbouring rows at once, every lane one
// element, so a row's columns come in as one coalesced load instead of one sector per element.
// When there are at least as many groups of 32 columns as resident warps (a few hundred rows of
// a million columns), a warp takes a whole group and its lanes write their columns' results: the
// block's fold and store of every 32 columns measured slower than reading them. Otherwise the
// rows are cut into bands; a block takes a (column group, band) job, its 8 warps folding
// interleaved rows, 8 loads in flight per thread; the block folds its warps' partials per column
// in shared memory. With one band the block writes the results; with more, each band's partials
// go to the workspace and the block that takes the group's last ticket folds them, all its
// threads at once.
struct ColumnShape {
  std::uint64_t cols = 0, rows = 0, pitch = 0;
  unsigned width = 1;        // W: columns per warp
  unsigned phases = 1;       // 32 / W rows per warp step
  std::uint64_t groups = 0;  // ceil(cols / W)
  std::uint64_t bands = 1;
  std::uint64_t band_rows = 0;
  bool warp_per_group = false;  // many groups of 32 columns: a warp folds a whole group alone
};

// The most partials and group tickets a columns launch uses (the workspace's pieces area).
inline constexpr std::uint64_t kColumnJobs = 2048;

// The most jobs whose 32 partials of Acc each the workspace holds: kColumnJobs for accumulators
// of up to 16 bytes, half as many for PairSum's two pairs.
template <class Acc>
inline constexpr std::uint64_t kColumnJobsOf =
    kPiecePartialBytes / (32 * sizeof(Acc)) < kColumnJobs ? kPiecePartialBytes / (32 * sizeof(Acc)) : kColumnJobs;

// Whether Acc is exact sums' pair (ExactPair), or several columns' pairs (VecColumns, PairSum).
template <class Acc>
inline constexpr bool exact_pair_acc_v =
    std::is_same_v<Acc, ExactPair> ||
    requires(Acc& a) { requires std::is_same_v<std::remove_cvref_t<decltype(a.c[0])>, ExactPair>; };

// Jobs a block to begin with: two; one for exact sums, whose partials cost the group's last block
// an exact merge each, so that it folds half as many (H200, exact float sums along 2^20 x 256,
// the kernel alone: two floats a lane, 198 bands 259.9 us, 99 bands 249.0; a column a lane, 132
// bands 262.9, 66 bands 257.4; doubles 481.5 -> 477.4; bench/colvec_probe's `bands` mode).
template <class Acc>
inline constexpr std::uint64_t kColumnJobsPerBlock = exact_pair_acc_v<Acc> ? 1 : 2;

// `blocks` and `warps`: how many blocks and warps the launch keeps resident. With at least as many
// groups of 32 columns as warps, a warp takes a whole group (every row) and writes its columns,
// with no block fold. Otherwise the rows are cut into bands, kColumnJobsPerBlock jobs a block to
// begin with; blocks take jobs b, b + blocks, ..., so a launch lasts about as long as the most
// jobs one block takes times a band's rows. Of the band counts from half to twice that first one,
// the one with the least of that product is taken, the first one unless another is strictly less:
// 256 groups of half words on 396 blocks took 4 bands (three jobs for some blocks, two for
// others: 3/4 of the rows) and take 3 (two jobs at most: 2/3). The bands are capped at the jobs
// whose partials (Acc) the workspace holds.
template <class Acc>
inline ColumnShape column_shape(const Pieces& p, std::uint64_t blocks, std::uint64_t warps) {
  constexpr std::uint64_t most_jobs = kColumnJobsOf<Acc>;
  if (blocks < 1) blocks = 1;
  const std::uint64_t wanted_jobs = kColumnJobsPerBlock<Acc> * blocks;
  const std::uint64_t target_jobs = wanted_jobs < most_jobs ? wanted_jobs : most_jobs;
  ColumnShape s;
  s.cols = p.count, s.rows = p.length, s.pitch = p.stride;
  s.width = static_cast<unsigned>(s.cols < 32 ? s.cols : 32);
  s.phases = 32 / s.width;
  s.groups = (s.cols + s.width - 1) / s.width;
  if (s.width == 32 && s.groups >= warps) {
    s.warp_per_group = true;
    s.band_rows = s.rows;
    return s;
  }
  const std::uint64_t step = std::uint64_t(kWarps) * s.phases * 8;  // rows a block covers per 8 loads
  const std::uint64_t most_by_rows = (s.rows + step - 1) / step;
  std::uint64_t most_bands = most_jobs / s.groups < most_by_rows ? most_jobs / s.groups : most_by_rows;
  if (most_bands < 1) most_bands = 1;
  std::uint64_t bands = s.groups >= target_jobs ? 1 : (target_jobs + s.groups - 1) / s.groups;
  if (bands > most_bands) bands = most_bands;
  // The most jobs one block takes with b bands (the launch's length is that over b).
  const auto rounds = [&](std::uint64_t b) { return (s.groups * b + blocks - 1) / blocks; };
  const std::uint64_t first = bands;
  for (std::uint64_t b = (first + 1) / 2; b <= 2 * first && b <= most_bands; ++b)
    if (rounds(b) * bands < rounds(bands) * b) bands = b;
  // Bands of whole block steps: a warp's load then covers `phases` rows that start a 128-byte line
  // (dense rows of W columns). Bands of 63551 rows (2^26 x 4 on 1056 blocks) put every load of
  // a band but the first across two lines: float maxima along 2^26 x 4 took 300.5 us against
  // 249.1 with bands of 32768 rows (H200).
  s.band_rows = ((s.rows + bands - 1) / bands + step - 1) / step * step;
  s.bands = (s.rows + s.band_rows - 1) / s.band_rows;
  return s;
}

// The blocks a launch of `shape` can use: one per job of bands, or kWarps groups per block when
// a warp takes a whole group.
inline std::uint64_t column_blocks(const ColumnShape& s) {
  return s.warp_per_group ? (s.groups + kWarps - 1) / kWarps : s.groups * s.bands;
}

// Whether reduceColumns takes this call: an order-free operation along axis 0 with columns of
// more than one vector (shorter ones go to reduceTinyPieces, already coalesced).
template <class T, class Sem>
inline bool columns_fit(const Pieces& p) {
  return Sem::order_free && !p.offsets && p.stride > 1 && p.length > Shape<T>::kVec;
}

// ---- Min and max of 16-bit float columns, two columns to a lane --------------------------------
// A lane of reduceColumns reads one element of each row, so a warp takes 64 bytes of a row per
// load for 16-bit elements. Read that way a 16384 x 16384 matrix of 2-byte elements came in at 66 %
// of the read ceiling on an H100, at 4 bytes a lane 92 %, at 16 bytes 99 % (bench/columns_probe):
// the 64-byte pieces of rows 32 KiB apart cost the DRAM more than the bytes. So the min and max of
// half and bfloat16 columns read the matrix as 32-bit words, two neighbouring columns a word, and
// run reduceColumns over the words with PairExtremum: both columns' order keys in one word (as
// Extremum::absorb_batch makes them), their largest and smallest keys kept with the 16x2 max and
// min. A NaN's key lies beyond the infinities' keys, so the two extremes also tell whether a column
// saw one. The results are Extremum's, bit for bit.
template <class T>
struct ColumnPair {
  T v[2];
};

template <class T, bool kMax>
  requires is_half_like<T>
struct PairExtremum {
  using Acc = std::uint64_t;  // the largest keys of the word's two columns (low half), the smallest (high half)
  using Inner = Acc;
  using Out = ColumnPair<T>;
  static constexpr bool order_free = true;
  static constexpr bool has_atomic_combine = false;
  RL_HD_INLINE static Acc pack(std::uint32_t most, std::uint32_t least) { return std::uint64_t(least) << 32 | most; }
  RL_HD_INLINE static Acc identity() { return pack(0x80008000u, 0x7fff7fffu); }
  RL_HD_INLINE static Inner inner_identity() { return identity(); }
  RL_HD_INLINE static Inner lift(std::uint32_t w, std::uint64_t) {
    const std::uint32_t k = keys16x2(w);
    return pack(k, k);
  }
  RL_HD_INLINE static Acc combine(Acc a, Acc b) {
    return pack(extreme_s16x2<true>(static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b)),
                extreme_s16x2<false>(static_cast<std::uint32_t>(a >> 32), static_cast<std::uint32_t>(b >> 32)));
  }
  RL_HD_INLINE static Acc inner_combine(Acc a, Acc b) { return combine(a, b); }
  RL_HD_INLINE static Acc absorb(Acc a, Acc b) { return combine(a, b); }
  RL_HD_INLINE static Out finish(Acc a, std::uint64_t n) {
    using Column = Extremum<T, kMax>;
    using Key = typename Column::Key;
    Out o;
    for (unsigned j = 0; j < 2; ++j) {
      const Key hi = static_cast<std::int16_t>(static_cast<std::uint32_t>(a) >> (16 * j));
      const Key lo = static_cast<std::int16_t>(static_cast<std::uint32_t>(a >> 32) >> (16 * j));
      o.v[j] = Column::finish(Column::saw_nan(hi, lo) ? Column::nan_key() : kMax ? hi : lo, n);
    }
    return o;
  }
};

// ---- Exact sums and means of 16-bit float columns, two columns to a lane ----------------------
// Read the same way for the same reason: a lane takes a word of two neighbouring columns per row
// and folds each half in its own window and pair (bfloat16) or plain double and pair (half; the
// RunningFolds below), so a warp reads 128 bytes of a row per load. A pair that lost part of its
// sum lists its column, not the word, for the redo (store_piece). Exact sums have one answer in
// any grouping: the bits are the one-column kernel's. Only from 16 columns (pair_columns_fit).
template <class T, class Sem>
  requires(is_half_like<T> && is_exact_pieces<Sem>::value)
struct PairSum {
  using Column = Sem;  // one column's semantics (store_piece lists lost columns with it)
  static constexpr unsigned kColumnLoads = 16;  // loads in flight a thread (reduceColumns)
  struct Acc {
    static constexpr unsigned kColumns = 2;  // loaded a column at a time (load_other_block)
    typename Sem::Acc c[2];
  };
  using Inner = Acc;
  using Out = ColumnPair<typename Sem::Out>;
  static constexpr bool order_free = true;
  static constexpr bool has_atomic_combine = false;
  RL_HD_INLINE static Acc identity() { return Acc{{Sem::identity(), Sem::identity()}}; }
  RL_HD_INLINE static Inner inner_identity() { return identity(); }
  RL_HD_INLINE static Acc combine(Acc a, Acc b) { return Acc{{Sem::combine(a.c[0], b.c[0]), Sem::combine(a.c[1], b.c[1])}}; }
  RL_HD_INLINE static Acc inner_combine(Acc a, Acc b) { return combine(a, b); }
  RL_HD_INLINE static Acc absorb(Acc a, Acc b) { return combine(a, b); }
  __device__ __forceinline__ static Out finish(Acc a, std::uint64_t n) { return Out{{finish_column(a.c[0], n), finish_column(a.c[1], n)}}; }
  // One column's result, out of line: inlined twice, the mean's division took the kernel from 74
  // to 94 registers.
  __device__ __noinline__ static typename Sem::Out finish_column(typename Sem::Acc a, std::uint64_t n) {
    return Sem::finish(a, n);
  }
};

// A lane's fold of its words: RunningFold's window and pair for each column, the low halves (the
// even column) and the high halves (the odd one) kept apart. The batch's magnitude ranges come
// from the words themselves: the 16x2 max and min leave each column's in its own half. (Splitting
// the words into two arrays of elements for two RunningFolds took 122 registers.)
template <class T, class Sem>
struct RunningFold<std::uint32_t, PairSum<T, Sem>> {
  using Acc = typename PairSum<T, Sem>::Acc;
  ColumnWindow<T, Sem> col[2];
  int span = 0;

  __device__ __forceinline__ explicit RunningFold(std::uint64_t most) : span(window_span<T>(most)) {}
  template <unsigned N, class IndexOf>
  __device__ __forceinline__ void take(const std::uint32_t* word, IndexOf) {
    std::uint32_t most2 = 0, least2 = 0xffffffffu;
    double s[2] = {-0.0, -0.0};
#pragma unroll
    for (unsigned k = 0; k < N; ++k) {
      const std::uint32_t m = word[k] & 0x7fff7fffu;
      most2 = max_u16x2(most2, m);
      least2 = min_u16x2(least2, sub_u16x2(m, 0x00010001u));  // zeros wrap to 0xffff
#pragma unroll
      for (unsigned j = 0; j < 2; ++j) s[j] += static_cast<double>(widen(element(word[k], j)));
    }
#pragma unroll
    for (unsigned j = 0; j < 2; ++j) {
      const std::uint32_t least = least2 >> (16 * j) & 0xffffu;
      const WindowSum batch{s[j], most2 >> (16 * j) & 0xffffu, least == 0xffffu ? 0xffffffffu : least};
      if (col[j].take(batch, span)) continue;
#pragma unroll
      for (unsigned k = 0; k < N; ++k) col[j].acc = add_one(col[j].acc, element(word[k], j));
    }
  }
  __device__ __forceinline__ void take_one(std::uint32_t word, std::uint64_t index) {
    take<1>(&word, [&](unsigned) { return index; });
  }
  __device__ __forceinline__ Acc result() {
    col[0].flush();
    col[1].flush();
    return Acc{{col[0].acc, col[1].acc}};
  }

 private:
  RL_HD_INLINE static T element(std::uint32_t word, unsigned j) {
    T x;
    x.bits = static_cast<std::uint16_t>(word >> (16 * j));
    return x;
  }
  // The rare path (a wide exponent range, an infinity or NaN): one element into the pair, out of
  // line; inlined, sixteen copies of the pair's addition took the kernel from 77 to 128 registers.
  __device__ __noinline__ static typename Sem::Acc add_one(typename Sem::Acc a, T x) {
    return Sem::combine(a, Sem::lift(x, 0));
  }
};

// Half columns: a plain double chain per column and no window (HalfChains, exact_pieces.cuh).
template <class Sem>
struct RunningFold<std::uint32_t, PairSum<half, Sem>> {
  using Acc = typename PairSum<half, Sem>::Acc;
  HalfChains<Sem, 2> chains;  // the low halves' column, the high halves'

  __device__ __forceinline__ explicit RunningFold(std::uint64_t) {}
  template <unsigned N, class IndexOf>
  __device__ __forceinline__ void take(const std::uint32_t* word, IndexOf) {
    chains.template make_room<N>();
#pragma unroll
    for (unsigned k = 0; k < N; ++k) {
      half lo, hi;
      lo.bits = static_cast<std::uint16_t>(word[k]);
      hi.bits = static_cast<std::uint16_t>(word[k] >> 16);
      chains.add(0, lo);
      chains.add(1, hi);
    }
  }
  __device__ __forceinline__ void take_one(std::uint32_t word, std::uint64_t index) {
    take<1>(&word, [&](unsigned) { return index; });
  }
  __device__ __forceinline__ Acc result() { return Acc{{chains.result(0), chains.result(1)}}; }
};

// The min, max, sum or mean of half or bfloat16 (Op) along axis 0, when the columns pair up into
// aligned 32-bit words: an even count of columns, an even pitch, the input 4-byte aligned (and,
// for sums and means, at least 16 columns: pair_columns_fit).
template <class T, class Op>
inline constexpr bool pair_columns_v =
    is_half_like<T> && (std::is_same_v<Op, op::min> || std::is_same_v<Op, op::max> ||
                        std::is_same_v<Op, op::sum> || std::is_same_v<Op, op::mean>);
template <class T, class Op>
struct PairColumns {
  using type = PairSum<T, ExactPieceSemantics<T, Op>>;
};
template <class T>
struct PairColumns<T, op::min> {
  using type = PairExtremum<T, false>;
};
template <class T>
struct PairColumns<T, op::max> {
  using type = PairExtremum<T, true>;
};
template <class T, class Op>
using pair_columns_t = typename PairColumns<T, Op>::type;
// Sums and means pair only from 16 columns: on an H100, two columns a lane made half sums over
// 16384 x 16384, 256 x 2^20, 2^20 x 256, 2^23 x 32 and 2^24 x 16 10-19 % faster, but 2^25 x 8 2 %
// and 2^26 x 4 18 % slower (docs/performance.md).
template <class Op>
inline bool pair_columns_fit(const void* input, const Pieces& p) {
  const bool sums = std::is_same_v<Op, op::sum> || std::is_same_v<Op, op::mean>;
  return p.count % 2 == 0 && p.stride % 2 == 0 && reinterpret_cast<std::uintptr_t>(input) % 4 == 0 &&
         (!sums || p.count >= 16);
}
// The same columns as vectors of k neighbouring columns (words of two half columns, or
// VecColumns' vectors below): a k-th as many, the pitch in vectors.
inline Pieces column_vector_pieces(const Pieces& p, unsigned k) {
  Pieces w = p;
  w.count = p.count / k;
  w.stride = p.stride / k;
  w.elements = p.elements / k;
  return w;
}

// ---- Columns of 4- and 8-byte elements, several of them to a lane -------------------------------
// A lane of reduceColumns that reads one float of each row puts 128 bytes of a row in a warp's
// load: float and int32 maxima and sums along the columns of 16384 x 16384 read 88 % of the read
// ceiling where double maxima (8 bytes a lane) read 97 % (H200 shapes run), and bench/columns_probe
// read 16-byte lanes at 99 % where 4-byte lanes read 92 % (H100). So when the columns split into
// aligned vectors of K neighbouring columns (a count and a pitch that are multiples of K, a start
// aligned to the vector), reduceColumns can run over the vectors: a lane keeps one accumulator a
// column and writes K results. K: a 16-byte vector for the order-free operations other than exact
// sums (also four words of two half columns' minima and maxima); two floats for exact float sums
// and means (each column keeps a window and a pair). Any order gives these operations' bits, so
// each column's result is the one-column kernel's. Where vectors read faster: vec_columns_pay.
template <class T, class Sem, unsigned kK>
struct VecColumnsBase {
  static constexpr unsigned K = kK;
  using Vec = Neighbours<T, K>;
  struct Acc {
    static constexpr unsigned kColumns = K;  // loaded a column at a time (load_other_block)
    typename Sem::Acc c[K];
  };
  struct Inner {
    typename Sem::Inner c[K];
  };
  struct Out {
    typename Sem::Out c[K];
  };
  static constexpr bool order_free = true;
  static constexpr bool has_atomic_combine = false;
  // R (Acc, Inner or Out) whose column j is f(j): each operation, column by column.
  template <class R, class F>
  RL_HD_INLINE static R each(F f) {
    R r;
#pragma unroll
    for (unsigned j = 0; j < K; ++j) r.c[j] = f(j);
    return r;
  }
  RL_HD_INLINE static Acc identity() { return each<Acc>([](unsigned) { return Sem::identity(); }); }
  RL_HD_INLINE static Inner inner_identity() { return each<Inner>([](unsigned) { return Sem::inner_identity(); }); }
  RL_HD_INLINE static Inner lift(const Vec& x, std::uint64_t index) {
    return each<Inner>([&](unsigned j) { return Sem::lift(x.v[j], index); });
  }
  RL_HD_INLINE static Acc combine(const Acc& a, const Acc& b) {
    return each<Acc>([&](unsigned j) { return Sem::combine(a.c[j], b.c[j]); });
  }
  RL_HD_INLINE static Inner inner_combine(const Inner& a, const Inner& b) {
    return each<Inner>([&](unsigned j) { return Sem::inner_combine(a.c[j], b.c[j]); });
  }
  RL_HD_INLINE static Acc absorb(const Acc& a, const Inner& b) {
    return each<Acc>([&](unsigned j) { return Sem::absorb(a.c[j], b.c[j]); });
  }
};
template <class T, class Sem, bool kExact = is_exact_pieces<Sem>::value>
struct VecColumns : VecColumnsBase<T, Sem, 16 / sizeof(T)> {
  using Base = VecColumnsBase<T, Sem, 16 / sizeof(T)>;
  RL_HD_INLINE static typename Base::Out finish(const typename Base::Acc& a, std::uint64_t n) {
    return Base::template each<typename Base::Out>([&](unsigned j) { return Sem::finish(a.c[j], n); });
  }
};
// Exact sums and means: Column names one column's semantics, so that store_piece lists a lost
// pair's column for the redo, not the vector.
template <class T, class Sem>
struct VecColumns<T, Sem, true> : VecColumnsBase<T, Sem, 2> {
  using Base = VecColumnsBase<T, Sem, 2>;
  using Column = Sem;
  __device__ __forceinline__ static typename Base::Out finish(const typename Base::Acc& a, std::uint64_t n) {
    return Base::template each<typename Base::Out>([&](unsigned j) { return finish_column(a.c[j], n); });
  }
  // Out of line, as PairSum's: inlined per column, the mean's division costs the loop registers.
  __device__ __noinline__ static typename Sem::Out finish_column(typename Sem::Acc a, std::uint64_t n) {
    return Sem::finish(a, n);
  }
};

// A lane's fold of exact float sums over its vectors: one RunningFold (window and pair) a column,
// each batch's elements of a column taken together.
template <class T, class Sem>
  requires is_exact_pieces<Sem>::value
struct RunningFold<Neighbours<T, 2>, VecColumns<T, Sem, true>> {
  using V = VecColumns<T, Sem, true>;
  RunningFold<T, Sem> col[2];
  __device__ __forceinline__ explicit RunningFold(std::uint64_t most) : col{RunningFold<T, Sem>(most), RunningFold<T, Sem>(most)} {}
  template <unsigned N, class IndexOf>
  __device__ __forceinline__ void take(const Neighbours<T, 2>* v, IndexOf index_of) {
#pragma unroll
    for (unsigned j = 0; j < 2; ++j) {
      T e[N];
#pragma unroll
      for (unsigned k = 0; k < N; ++k) e[k] = v[k].v[j];
      col[j].template take<N>(e, index_of);
    }
  }
  __device__ __forceinline__ void take_one(Neighbours<T, 2> x, std::uint64_t index) {
    col[0].take_one(x.v[0], index);
    col[1].take_one(x.v[1], index);
  }
  __device__ __forceinline__ typename V::Acc result() { return typename V::Acc{{col[0].result(), col[1].result()}}; }
};

// Whether T's columns under Sem may take VecColumns: order-free operations on elements of 4 or 8
// bytes other than exact sums, argmin and argmax (and the words of two half columns' minima and
// maxima: PairExtremum), and exact float sums and means. (Four argmin
// accumulators, each a key and a 64-bit index, took float columns to 118 registers, and two
// spilled for doubles.)
template <class T, class Sem>
inline constexpr bool vec_columns_v =
    Sem::order_free && !is_half_like<T> && !two_columns_v<Sem> && !requires(typename Sem::Acc a) { a.index; } &&
    (is_exact_pieces<Sem>::value ? std::is_same_v<T, float> : sizeof(T) == 4 || sizeof(T) == 8);
// And whether these columns can: whole aligned vectors.
template <class T, class Sem>
inline bool vec_columns_fit(const void* input, const Pieces& p) {
  constexpr unsigned K = VecColumns<T, Sem>::K;
  return p.count % K == 0 && p.stride % K == 0 && reinterpret_cast<std::uintptr_t>(input) % (K * sizeof(T)) == 0;
}
// And whether they read faster so, given the vectors' launch shape (column_shape). Vectors make a
// K-th as many groups, so a few groups of many rows take many bands, and the last block's fold of
// a group's bands (256 / W threads a column, four loads in flight, bands / slices round trips a
// thread) grew past what the wider loads save; and a warp that takes a whole group of vectors reads
// K times as many bytes of each row, in as many round trips as before. bench/colvec_probe (H200,
// cold, median of 10), µs, a column a lane against vectors: float max along 2^20 x 256 258.2
// against 267.3 (2 groups x 512 bands; 258.0 on 256 bands), int32 max 255.7 against 279.1, half
// max 134.9 against 151.8; a warp a group, along 256 x 2^20: int32 max 252.6 against 260.3, double
// max 493.6 against 510.1, half max 127.1 against 138.5, but exact float sums 263.3 against 257.4.
// Where the bands stay few the vectors win: 16384 x 16384 exact float sums 274.9 against 258.8,
// int32 max 251.4 against 249.0; 2^24 x 16 float max 262.4 against 254.3. So vectors are taken on
// bands of at most kFoldPartials partials a thread of that fold, and a warp a group only for exact
// sums. Nor are four words of half or bfloat16 minima and maxima where a word a lane would give
// each warp a whole group (`lanes_warp_a_group`; the launchers pass it for words only): along 256
// x 2^20 the four words make 4096 groups of one band, a sixth of them in the 792 blocks' last
// round (138.5 us against 127.1 a word a lane, a warp a group). Float maxima's vectors on the same
// shape (8192 groups on 1056 blocks) were as fast as a column a lane (252.3 against 254.7), and
// in `reducelab bench` 1.3 points of the read ceiling faster, so 4- and 8-byte columns keep them.
inline constexpr std::uint64_t kFoldPartials = 32;
template <class Sem>
inline bool vec_columns_pay(const ColumnShape& s, bool lanes_warp_a_group) {
  if (s.warp_per_group || lanes_warp_a_group) return two_columns_v<Sem>;
  return s.bands <= kFoldPartials * (kThreads / s.width);
}

// The fold of partials[b * width] over bands b = slice, slice + slices, ... < bands, four loads in
// flight. Out of line: inlined, its registers pushed the exact sums' main loop into spills.
template <class Sem>
__device__ __noinline__ typename Sem::Acc fold_band_partials(rl::gmem<typename Sem::Acc> partials, unsigned width,
                                                             unsigned slice, unsigned slices, std::uint64_t bands) {
  using Acc = typename Sem::Acc;
  Acc part = Sem::identity();
  std::uint64_t b = slice;
  for (; b + 3 * slices < bands; b += 4 * slices) {
    Acc q[4];
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) q[k] = load_other_block(partials, (b + k * slices) * width);
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) part = Sem::combine(part, q[k]);
  }
  for (; b < bands; b += slices) part = Sem::combine(part, load_other_block(partials, b * width));
  return part;
}

// Loads in flight per thread: 16 for two-column exact sums of 16-bit floats (PairSum), whose two
// folds hold more registers, so fewer warps are resident to cover the latency; 8 for the rest
// (exact float sums two columns a lane took 120 registers with 16).
template <class Sem>
inline constexpr unsigned kColumnLoads = 8;
template <class Sem>
  requires requires { Sem::kColumnLoads; }
inline constexpr unsigned kColumnLoads<Sem> = Sem::kColumnLoads;

// Loads in flight a thread where a warp takes a whole group (ColumnShape::warp_per_group), whose
// warps fold every row of their columns with no bands to share the latency: 16 for exact float
// sums two floats a lane (126 registers, two blocks an SM), whose bands keep 8. H200, the kernel
// alone, bench/colvec_probe's `loads` mode: along 256 x 2^20 (a warp a group) 253.5 and 254.9 us
// with 8, 242.0 and 242.3 with 16; with 16 in bands, 2^20 x 256 249.5 and 254.0 against 249.1
// and 250.5, 16384 x 16384 250.4 and 250.8 against 252.5 and 251.9.
template <class Sem>
inline constexpr unsigned kWarpGroupLoads =
    exact_pair_acc_v<typename Sem::Acc> && !std::is_same_v<typename Sem::Acc, ExactPair> && kColumnLoads<Sem> < 16
        ? 16
        : kColumnLoads<Sem>;

// (kLoads: kWarpGroupLoads<Sem> where a warp takes a whole group, other counts for bench/colvec_probe.)
template <class T, class Sem, unsigned kLoads = kColumnLoads<Sem>>
__global__ void __launch_bounds__(kThreads)
    reduceColumns(rl::gmem<const T> input, ColumnShape shape, rl::gmem<typename Sem::Acc> partials,
                  rl::gmem<unsigned> tickets, rl::gmem<typename Sem::Out> output, rl::gmem<unsigned long long> redo) {
  using Acc = typename Sem::Acc;
  __shared__ Acc lane_storage[kThreads];
  rl::smem<Acc> lanes = lane_storage;
  __shared__ unsigned last_storage[1];
  rl::smem<unsigned> am_last = last_storage;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned width = shape.width, phases = shape.phases;
  const bool active = lane < width * phases;
  const unsigned column_in_group = lane % width, phase = lane / width;
  const std::uint64_t jobs = shape.groups * shape.bands;
  const std::uint64_t step = std::uint64_t(kWarps) * phases;  // rows between one thread's loads

  if (shape.warp_per_group) {  // lane l folds column 32 g + l over every row and writes it
    for (std::uint64_t g = std::uint64_t(blockIdx.x) * kWarps + warp; g < shape.groups;
         g += std::uint64_t(gridDim.x) * kWarps) {
      const std::uint64_t column = g * 32 + lane;
      if (column >= shape.cols) continue;
      RunningFold<T, Sem> run(shape.rows);
      std::uint64_t r = 0;
      for (; r + kLoads <= shape.rows; r += kLoads) {
        T x[kLoads];
#pragma unroll
        for (unsigned k = 0; k < kLoads; ++k) x[k] = input[(r + k) * shape.pitch + column];
        run.template take<kLoads>(x, [&](unsigned k) { return r + k; });
      }
      for (; r < shape.rows; ++r) run.take_one(input[r * shape.pitch + column], r);
      store_piece<Sem>(output, column, run.result(), shape.rows, redo);
    }
    return;
  }
  for (std::uint64_t job = blockIdx.x; job < jobs; job += gridDim.x) {
    // Jobs that run at once take neighbouring groups of the same band, so the launch reads whole
    // rows at a time. Dealt group by group (every band of group 0, then of group 1, ...), exact
    // half sums along the columns of 2^20 x 256 (four groups of words) took 167.1 us, and 157.2
    // dealt this way (H200, docs/performance.md).
    const std::uint64_t band = job / shape.groups, group = job % shape.groups;
    const std::uint64_t column = group * width + column_in_group;
    const bool mine = active && column < shape.cols;
    const std::uint64_t row_begin = band * shape.band_rows;
    const std::uint64_t row_end = row_begin + shape.band_rows < shape.rows ? row_begin + shape.band_rows : shape.rows;
    RunningFold<T, Sem> run((row_end - row_begin) / step + 1);  // the most one thread takes
    if (mine) {
      std::uint64_t r = row_begin + std::uint64_t(warp) * phases + phase;
      for (; r + (kLoads - 1) * step < row_end; r += kLoads * step) {
        T x[kLoads];
#pragma unroll
        for (unsigned k = 0; k < kLoads; ++k) x[k] = input[(r + k * step) * shape.pitch + column];
        run.template take<kLoads>(x, [&](unsigned k) { return r + k * step; });
      }
      for (; r < row_end; r += step) run.take_one(input[r * shape.pitch + column], r);
    }
    lanes[threadIdx.x] = run.result();
    __syncthreads();
    Acc total = Sem::identity();
    if (threadIdx.x < width) {  // this block's fold of column group * width + threadIdx.x
      for (unsigned w = 0; w < kWarps; ++w)
        for (unsigned ph = 0; ph < phases; ++ph) total = Sem::combine(total, lanes[w * 32 + ph * width + threadIdx.x]);
    }
    const std::uint64_t out_column = group * width + threadIdx.x;
    if (shape.bands == 1) {
      if (threadIdx.x < width && out_column < shape.cols) store_piece<Sem>(output, out_column, total, shape.rows, redo);
      __syncthreads();  // lanes is reused by the next job
      continue;
    }
    if (threadIdx.x < width) partials[(group * shape.bands + band) * width + threadIdx.x] = total;
    __syncthreads();  // every partial written before thread 0's ticket (its release publishes them)
    if (threadIdx.x == 0) am_last[0] = take_ticket(tickets + group) == shape.bands - 1 ? 1u : 0u;
    __syncthreads();
    if (am_last[0] != 0) {  // the group's last band: fold the bands' partials
      // Every thread takes part: thread t folds column t % W of bands t / W, t / W + S, ... (S =
      // kThreads / W slices), four loads in flight, then thread c < W folds column c's slices.
      // One thread per column walking 2048 bands paid an L2 round trip per band.
      const unsigned slices = kThreads / width, slice = threadIdx.x / width, c = threadIdx.x % width;
      lanes[threadIdx.x] = slice < slices ? fold_band_partials<Sem>(partials + group * shape.bands * width + c, width,
                                                                    slice, slices, shape.bands)
                                          : Sem::identity();
      __syncthreads();
      if (threadIdx.x < width) {
        Acc all = Sem::identity();
        for (unsigned k = 0; k < slices; ++k) all = Sem::combine(all, lanes[k * width + threadIdx.x]);
        if (out_column < shape.cols) store_piece<Sem>(output, out_column, all, shape.rows, redo);
      }
      if (threadIdx.x == 0) tickets[group] = 0u;
    }
    __syncthreads();
  }
}

// ---- A few columns of exact half and float sums, read as one array ------------------------------
// reduceColumns gives each lane one column, so a matrix of 4 half columns is read 2 bytes a lane
// (4 bytes with two columns a lane), and every element takes a window step of its own column:
// 2^26 x 4 half sums along axis 0 ran at 50 % of the read ceiling (H200). When a 16-byte vector
// holds whole rows (a dense matrix whose columns divide the vector's elements, and a 16-byte
// aligned start), element j of every vector lies in column j % kCols: the threads read the
// matrix as one array, in units of kIn 16-byte vectors a thread (blocks take every gridDim.x-th
// unit), and each keeps kCols running sums (NarrowRuns), every column's elements of the kIn
// vectors taken as one batch. Exact sums give the same bits in any order. The block folds each
// column, posts kCols partials, and the block that takes the last ticket folds the posts, a warp
// a column, and writes the kCols results.
// Taken for 2, 4 and 8 half columns and 2 and 4 float columns (bench/narrow_probe, H200, cold,
// µs, against reduceColumns): 2^27 x 2 half 350 -> 131, 2^26 x 4 half 251 -> 135, 2^25 x 8 half
// 204 -> 152, 2^27 x 2 float 327 -> 245, 2^26 x 4 float 303 -> 254; and for rows of two or four
// vectors (against the column kernel the library took: two half columns a word, float columns
// two a lane or, for 8 columns, one): 2^24 x 16 half 174.8 -> 151.4, 2^23 x 32 half 172.4 ->
// 152.9, 2^25 x 8 float 287.9 -> 255.5, 2^24 x 16 float 284.1 -> 255.8. Before the last block's fold
// was spread over a warp per column it took 20-40 us of these launches, and 8 half columns and 4
// float columns were slower than reduceColumns. Each thread taking vectors t, t + threads, ...
// instead of units was as fast, except for 4 float columns, where it spilled (322 us).
// bfloat16 was not measured and keeps reduceColumns. Half columns have since moved to
// reduceHalfColumns (below), which adds them as integers.
template <class T, class Sem>
inline constexpr bool narrow_columns_v = window_sums_v<T, Sem> && std::is_same_v<T, float>;
// Rows of two vectors (8 float columns) or four (16): vector k holds columns (k % groups) * kVec to
// + kVec, and a thread that takes every 256th vector sees the same columns each time, so it keeps a
// running sum for each of kVec columns.
template <class T, class Sem>
inline bool narrow_columns_fit(const void* input, const Pieces& p) {
  constexpr std::uint64_t kVec = Shape<T>::kVec;
  const bool columns = p.count == 2 || p.count == 4 || p.count == 2 * kVec || p.count == 4 * kVec;
  return narrow_columns_v<T, Sem> && !p.offsets && columns && p.stride == p.count &&
         reinterpret_cast<std::uintptr_t>(input) % 16 == 0;
}
// The columns a thread keeps (kCols, or a vector's elements when rows are wider than a vector).
template <class T, unsigned kCols>
inline constexpr unsigned kNarrowHeld = kCols < Shape<T>::kVec ? kCols : Shape<T>::kVec;
// Loads in flight a thread, and blocks an SM: a vector's columns held (four float columns) take
// eight loads and two blocks (108 registers), the others four loads and three blocks (72-80).
// H200, cold, µs (bench/narrow_probe), eight loads and two blocks against four loads and three:
// 2^26 x 4 float 256.7 / 260.7, 2^25 x 8 float 255.5 / 257.6, 2^24 x 16 float 255.8 / 261.3.
template <class T, unsigned kCols>
inline constexpr unsigned kNarrowLoads = kNarrowHeld<T, kCols> == Shape<T>::kVec ? 8 : 4;
template <class T, unsigned kCols>
inline constexpr int kNarrowBlocksPerSm = kNarrowHeld<T, kCols> == Shape<T>::kVec ? 2 : 3;
// The blocks' partials a launch may post: kCols of them a block, within the workspace's pieces area.
template <class Acc, unsigned kCols>
inline constexpr std::uint64_t kNarrowBlocks = std::min<std::uint64_t>(4096, kPiecePartialBytes / (kCols * sizeof(Acc)));

// A thread's running sums of kCols float columns: a window per column (RunningFold), `most` the
// most elements the thread takes of a column.
template <class T, class Sem, unsigned kCols>
struct NarrowRuns {
  using Acc = typename Sem::Acc;
  RunningFold<T, Sem> run[kCols];
  __device__ __forceinline__ explicit NarrowRuns(std::uint64_t most) {
#pragma unroll
    for (unsigned j = 0; j < kCols; ++j) run[j] = RunningFold<T, Sem>(most);
  }
  template <unsigned N>
  __device__ __forceinline__ void take(unsigned j, const T* e) {
    run[j].template take<N>(e, [](unsigned) { return std::uint64_t(0); });
  }
  __device__ __forceinline__ Acc result(unsigned j) { return run[j].result(); }
};
// kV vectors into the kCols columns' running sums, each column's elements as one batch.
template <unsigned kV, unsigned kCols, class T, class Runs>
__device__ __forceinline__ void narrow_take(Runs& runs, const Vec<T>* v) {
  constexpr unsigned kPer = Shape<T>::kVec / kCols;
#pragma unroll
  for (unsigned j = 0; j < kCols; ++j) {
    T e[kV * kPer];
#pragma unroll
    for (unsigned u = 0; u < kV; ++u)
#pragma unroll
      for (unsigned r = 0; r < kPer; ++r) e[u * kPer + r] = v[u].v[r * kCols + j];
    runs.template take<kV * kPer>(j, e);
  }
}

// Launch with kThreads threads and a grid of at most kNarrowBlocks. (kIn and kMinBlocks: other
// shapes for bench/narrow_probe.)
template <class T, class Sem, unsigned kCols, unsigned kIn = kNarrowLoads<T, kCols>,
          int kMinBlocks = kNarrowBlocksPerSm<T, kCols>>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    reduceNarrowColumns(rl::gmem<const T> input, std::uint64_t rows, rl::gmem<typename Sem::Acc> partials,
                        rl::gmem<unsigned> ticket, rl::gmem<typename Sem::Out> output) {
  using Acc = typename Sem::Acc;
  constexpr unsigned kVec = Shape<T>::kVec, kHeld = kNarrowHeld<T, kCols>;
  constexpr unsigned kPer = kVec / kHeld, kGroups = kCols / kHeld;  // rows a vector, vectors a row
  static_assert(kVec % kCols == 0 || kCols % kVec == 0, "a vector holds whole rows, or a row whole vectors");
  static_assert(kGroups <= 32 && 32 % kGroups == 0 && kThreads % kGroups == 0, "a thread's vectors hold the same columns");
  __shared__ Acc slot_storage[kCols * kWarps];
  rl::smem<Acc> slots = slot_storage;
  __shared__ unsigned last_storage[1];
  rl::smem<unsigned> am_last = last_storage;
  // The last block sums a column whose pair lost part of its sum again itself (BlockRedo).
  __shared__ unsigned long long redo_digit_storage[ExactTraits<T>::kDigits];
  __shared__ unsigned redo_misc_storage[2];
  __shared__ unsigned long long redo_listed_storage[kCols];
  BlockRedo<Sem> here{redo_digit_storage, redo_misc_storage, redo_listed_storage};
  here.clear();  // barriers follow before the last block's stores
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::uint64_t threads = std::uint64_t(gridDim.x) * kThreads;
  const std::uint64_t t = std::uint64_t(blockIdx.x) * kThreads + threadIdx.x;
  const std::uint64_t n = rows * kCols, vectors = n / kVec;
  // Units of kIn vectors a thread (vector u * kUnit + i * kThreads + threadIdx.x), every
  // gridDim.x-th to a block, then the vectors past the last whole unit one to a thread.
  constexpr std::uint64_t kUnit = std::uint64_t(kThreads) * kIn;
  const std::uint64_t units = vectors / kUnit;
  const std::uint64_t most = ((units + gridDim.x - 1) / gridDim.x + 1) * kIn;  // vectors a thread takes, at most
  // (Rows wider than a vector: every vector index a thread takes is threadIdx.x modulo kGroups.)
  NarrowRuns<T, Sem, kHeld> runs(most * kPer + 1);  // a thread's elements of a column, at most
  for (std::uint64_t u = blockIdx.x; u < units; u += gridDim.x) {
    Vec<T> v[kIn];
#pragma unroll
    for (unsigned i = 0; i < kIn; ++i) v[i] = load_vec(input, (u * kUnit + i * kThreads + threadIdx.x) * kVec);
    narrow_take<kIn, kHeld>(runs, v);
  }
  std::uint64_t k = units * kUnit + t;
  for (; k < vectors; k += threads) {
    const Vec<T> v = load_vec(input, k * kVec);
    narrow_take<1, kHeld>(runs, &v);
  }
  if constexpr (kGroups == 1) {
    if (t < n - vectors * kVec) {  // the last rows, past the whole vectors: element t of them is in column t % kCols
      const T x = input[vectors * kVec + t];
#pragma unroll
      for (unsigned j = 0; j < kCols; ++j)
        if (t % kCols == j) runs.template take<1>(j, &x);
    }
  }
  // The block's fold of each column: every warp folds its lanes' sums (lanes g, g + kGroups, ...
  // hold the same columns; lane g < kGroups ends with them), then warp w folds columns w, w +
  // kWarps, ... over the kWarps results and posts them. The ticket follows the barrier.
#pragma unroll
  for (unsigned j = 0; j < kHeld; ++j) {
    Acc w = runs.result(j);
#pragma unroll
    for (unsigned offset = 16; offset >= kGroups; offset >>= 1) w = Sem::combine(w, shuffle_down(w, offset));
    if (lane < kGroups) slots[(lane * kHeld + j) * kWarps + warp] = w;
  }
  __syncthreads();
  for (unsigned c = warp; c < kCols; c += kWarps) {
    Acc a = lane < kWarps ? slots[c * kWarps + lane] : Sem::identity();
#pragma unroll
    for (unsigned offset = kWarps / 2; offset > 0; offset >>= 1) a = Sem::combine(a, shuffle_down(a, offset));
    if (lane == 0) partials[std::uint64_t(blockIdx.x) * kCols + c] = a;
  }
  __syncthreads();  // every post written before thread 0's ticket (its release publishes them)
  if (threadIdx.x == 0) am_last[0] = take_ticket(ticket) == gridDim.x - 1 ? 1u : 0u;
  __syncthreads();
  if (am_last[0] == 0) return;
  // The last block: warp w folds the posts of columns w, w + kWarps, ... (lane l those of blocks
  // l, l + 32, ..., four loads in flight) and writes their results. All of it in one warp, column
  // after column, was a chain of dependent steps: 41 us of a 180 us launch for four half columns
  // of 2^26 rows (H200).
  for (unsigned c = warp; c < kCols; c += kWarps) {
    const Acc a = warp_fold<Sem>(fold_band_partials<Sem>(partials + c, kCols, lane, 32, gridDim.x));
    if (lane == 0) store_piece<Sem>(output, c, a, rows, here);
  }
  if (threadIdx.x == 0) ticket[0] = 0u;
  __syncthreads();
  here.run(input, kCols, rows, output);  // the columns whose pair lost part of its sum
}

// ---- Exact sums and means of dense half columns, read as one array, added as integers ----------
// The matrix is read as reduceNarrowColumns reads it (units of kIn 16-byte vectors a thread, a
// thread's vectors always holding the same columns): rows of 2, 4 or 8 halves (a vector holds
// whole rows) or of 2 to 32 vectors (16 to 256 columns; a thread keeps 8 columns). A thread sums
// each column in a plain double (exact for up to kHalfChain halves, exact_pair.cuh); the doubles
// then become what the whole-array kernel adds halves as (ExactHalfSum, exact_half.cuh): an
// integer count of 2^-24 shifted past three flag bits, so that two sums combine with one integer
// addition and one OR, in any order. A thread hands its doubles to its counts in shared memory every
// kHalfChain elements; at the end the lanes that hold the same columns add theirs with shuffles,
// the warps theirs in shared memory, and the blocks theirs with 64-bit atomic additions into one
// counter pair a column (HalfColumnCounts); the block that takes the last ticket rounds each
// column's count once and clears the counters.
// Against the window and pair of each column (NarrowRuns, reduceNarrowColumns: a pair combine at
// every fold, and the last block folding every block's pairs), bench/colsum_probe on an H200
// (cold, µs; a plain read of the 2^28 halves 118.4): 2^25 x 8 155.2 -> 124.4, 2^24 x 16 156.8 ->
// 124.3, 2^23 x 32 160.0 -> 124.8, 2^22 x 64 188.4 -> 125.6, and 2^20 x 256 (until then two
// columns a lane, reduceColumns) 154.7 -> 128.8.
template <class T, class Sem>
inline constexpr bool half_columns_v = std::is_same_v<T, half> && is_exact_pieces<Sem>::value;
inline constexpr unsigned kHalfColumnsMost = 256;  // 32 vectors a row
// The matrices these kernels (and reduceHalfColumnExtrema, below) read as one array: dense, 2, 4
// or 8 to 256 (a power of two) 16-bit columns, a 16-byte aligned start, at least one row.
inline bool dense_half_columns_fit(const void* input, const Pieces& p) {
  const bool columns = p.count == 2 || p.count == 4 ||
                       (p.count >= 8 && p.count <= kHalfColumnsMost && (p.count & (p.count - 1)) == 0);
  return !p.offsets && columns && p.stride == p.count && p.length > 0 && reinterpret_cast<std::uintptr_t>(input) % 16 == 0;
}
template <class T, class Sem>
inline bool half_columns_fit(const void* input, const Pieces& p) {
  return half_columns_v<T, Sem> && dense_half_columns_fit(input, p);
}
// Loads in flight a thread, and blocks an SM (bench/colsum_probe, H200): eight loads and three
// blocks up to 64 columns (124.3-125.6 us; four loads and four blocks 124.8-125.7); from 128
// columns, where a block posts more counts, two blocks (256 columns: 128.8 us against 131.6 on
// three, 134.6 on four).
inline constexpr unsigned kHalfColumnLoads = 8;
template <unsigned kCols>
inline constexpr int kHalfColumnBlocksPerSm = kCols >= 128 ? 2 : 3;

// The launch's counters, in the workspace's piece tickets (zero between launches): the ticket,
// then for each column c the low 32 bits of the blocks' counts added up (low[c], at most 2^32
// terms below 2^32), the rest of them (high[c], two's complement) and the OR of their flags.
struct HalfColumnCounts {
  rl::gmem<unsigned> ticket;
  rl::gmem<unsigned long long> low, high, flags;
};
inline constexpr std::size_t kHalfColumnCountBytes = 8 + 3 * 8 * std::size_t(kHalfColumnsMost);
// The counters in `tickets` (8-byte aligned, at least kHalfColumnCountBytes, zero).
inline HalfColumnCounts half_column_counts(unsigned* tickets) {
  auto* words = reinterpret_cast<unsigned long long*>(tickets + 2);
  return HalfColumnCounts{tickets, words, words + kHalfColumnsMost, words + 2 * kHalfColumnsMost};
}
// Calls f.template operator()<kCols>() with kCols = `count` (half_columns_fit's counts).
template <class F>
inline auto with_half_columns(std::uint64_t count, F&& f) {
  switch (count) {
    case 2: return f.template operator()<2>();
    case 4: return f.template operator()<4>();
    case 8: return f.template operator()<8>();
    case 16: return f.template operator()<16>();
    case 32: return f.template operator()<32>();
    case 64: return f.template operator()<64>();
    case 128: return f.template operator()<128>();
    default: return f.template operator()<256>();
  }
}

// The columns a thread of these kernels keeps (all of them, or a vector's), the rows a vector
// holds, and the vectors a row holds.
template <unsigned kCols>
struct DenseHalfColumns {
  static constexpr unsigned kVec = Shape<half>::kVec;
  static constexpr unsigned kHeld = kCols < kVec ? kCols : kVec;
  static constexpr unsigned kPer = kVec / kHeld, kGroups = kCols / kHeld;
  static_assert(kCols <= kHalfColumnsMost && kVec % kHeld == 0, "a vector holds whole rows, or a row whole vectors");
  static_assert(kGroups <= 32 && 32 % kGroups == 0 && kThreads % kGroups == 0, "a thread's vectors hold the same columns");
};
// A thread's share of a dense matrix of kCols 16-bit columns, read as one array: units of kIn
// 16-byte vectors (vector u * kUnit + i * kThreads + threadIdx.x), every gridDim.x-th unit to a
// block, then the vectors past the last whole unit one to a thread, then (a vector holds whole
// rows) the elements past the last whole vector one to a thread. Every vector index a thread takes
// is threadIdx.x modulo kGroups, so element r * kHeld + j of each of its vectors lies in the same
// column. room(k) comes before k more elements of each column, take(v) with each vector,
// take_one(x, column) with each element past the vectors.
template <unsigned kCols, unsigned kIn, class T, class Room, class Take, class TakeOne>
__device__ __forceinline__ void read_dense_half_columns(rl::gmem<const T> input, std::uint64_t rows, Room&& room,
                                                        Take&& take, TakeOne&& take_one) {
  using D = DenseHalfColumns<kCols>;
  const std::uint64_t threads = std::uint64_t(gridDim.x) * kThreads;
  const std::uint64_t t = std::uint64_t(blockIdx.x) * kThreads + threadIdx.x;
  const std::uint64_t n = rows * kCols, vectors = n / D::kVec;
  constexpr std::uint64_t kUnit = std::uint64_t(kThreads) * kIn;
  const std::uint64_t units = vectors / kUnit;
  for (std::uint64_t u = blockIdx.x; u < units; u += gridDim.x) {
    room(kIn * D::kPer);
    Vec<T> v[kIn];
#pragma unroll
    for (unsigned i = 0; i < kIn; ++i) v[i] = load_vec(input, (u * kUnit + i * kThreads + threadIdx.x) * D::kVec);
#pragma unroll
    for (unsigned i = 0; i < kIn; ++i) take(v[i]);
  }
  for (std::uint64_t k = units * kUnit + t; k < vectors; k += threads) {
    room(D::kPer);
    take(load_vec(input, k * D::kVec));
  }
  if constexpr (D::kGroups == 1) {
    if (t < n - vectors * D::kVec) {  // element t past the whole vectors lies in column t % kCols
      room(1);
      const T e = input[vectors * D::kVec + t];
      take_one(e, static_cast<unsigned>(t % kCols));
    }
  }
}

template <class Sem, unsigned kCols, unsigned kIn = kHalfColumnLoads, int kMinBlocks = kHalfColumnBlocksPerSm<kCols>>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    reduceHalfColumns(rl::gmem<const half> input, std::uint64_t rows, HalfColumnCounts counts,
                      rl::gmem<typename Sem::Out> output) {
  using Count = ExactHalfSum128<Sem::kMean>;  // a column's count and flags
  using I = typename Count::Acc;
  static_assert(std::is_same_v<typename Count::Out, typename Sem::Out>, "the counts round to the pieces' result");
  constexpr unsigned kHeld = DenseHalfColumns<kCols>::kHeld, kPer = DenseHalfColumns<kCols>::kPer;
  constexpr unsigned kGroups = DenseHalfColumns<kCols>::kGroups;
  // Thread t's count of its column j at held[j * kThreads + t]; after the lanes' fold, warp w's
  // count of column g * kHeld + j at held[j * kThreads + w * 32 + g].
  __shared__ I held_storage[kHeld * kThreads];
  rl::smem<I> held = held_storage;
  __shared__ unsigned last_storage[1];
  rl::smem<unsigned> am_last = last_storage;
  const unsigned lane = threadIdx.x % 32;

  double s[kHeld];
#pragma unroll
  for (unsigned j = 0; j < kHeld; ++j) s[j] = -0.0, held[j * kThreads + threadIdx.x] = Count::identity();
  unsigned taken = 0;  // elements in each of the thread's doubles
  // Before k more elements a column: the doubles to the counts if they would pass kHalfChain.
  const auto make_room = [&](unsigned k) {
    if (taken + k > kHalfChain) {
#pragma unroll
      for (unsigned j = 0; j < kHeld; ++j) {
        held[j * kThreads + threadIdx.x] = Count::absorb(held[j * kThreads + threadIdx.x], s[j]);
        s[j] = -0.0;
      }
      taken = 0;
    }
    taken += k;
  };
  const auto take = [&](const Vec<half>& v) {  // element r * kHeld + j of a vector is in column j
#pragma unroll
    for (unsigned r = 0; r < kPer; ++r)
#pragma unroll
      for (unsigned j = 0; j < kHeld; ++j) s[j] += static_cast<double>(widen(v.v[r * kHeld + j]));
  };
  read_dense_half_columns<kCols, kIn>(input, rows, make_room, take, [&](half e, unsigned column) {
#pragma unroll
    for (unsigned j = 0; j < kHeld; ++j)
      if (column == j) s[j] += static_cast<double>(widen(e));
  });
  // The lanes that hold the same columns (g, g + kGroups, ...) add their counts; lane g < kGroups
  // ends with them and leaves them in its own slots.
#pragma unroll
  for (unsigned j = 0; j < kHeld; ++j) {
    I c = Count::absorb(held[j * kThreads + threadIdx.x], s[j]);
#pragma unroll
    for (unsigned offset = 16; offset >= kGroups; offset >>= 1) c = Count::combine(c, shuffle_down(c, offset));
    if (lane < kGroups) held[j * kThreads + threadIdx.x] = c;
  }
  __syncthreads();
  // The block's count of column c, from its warps, into the launch's counters.
  for (unsigned c = threadIdx.x; c < kCols; c += kThreads) {
    const unsigned g = c / kHeld, j = c % kHeld;
    I sum = Count::identity();
    for (unsigned w = 0; w < kWarps; ++w) sum = Count::combine(sum, held[j * kThreads + w * 32 + g]);
    const I units = sum >> 3;  // arithmetic: the count of 2^-24
    atomicAdd(&counts.low[c], static_cast<unsigned long long>(units & I(0xffffffffu)));
    atomicAdd(&counts.high[c], static_cast<unsigned long long>(static_cast<long long>(units >> 32)));
    atomicOr(&counts.flags[c], static_cast<unsigned long long>(sum & I(Count::kFlags)));
    __threadfence();  // this thread's additions reach the counters before the block's ticket
  }
  __syncthreads();
  if (threadIdx.x == 0) am_last[0] = take_ticket(counts.ticket) == gridDim.x - 1 ? 1u : 0u;
  __syncthreads();
  if (am_last[0] == 0) return;
  // The last block: each column's count rounded once; the counters cleared for the next launch.
  for (unsigned c = threadIdx.x; c < kCols; c += kThreads) {
    const auto low = atomicExch(&counts.low[c], 0ull), high = atomicExch(&counts.high[c], 0ull);
    const auto flags = atomicExch(&counts.flags[c], 0ull);
    const I units = (static_cast<I>(static_cast<long long>(high)) << 32) + static_cast<I>(low);
    output[c] = Count::finish(units * 8 | static_cast<I>(flags), rows);
  }
  if (threadIdx.x == 0) counts.ticket[0] = 0u;
}

// ---- Minima and maxima of dense half and bfloat16 columns, read as one array -------------------
// The same reading (read_dense_half_columns) for min and max: a thread keeps, for each word of its
// columns (columns 2q and 2q + 1 of the ones it keeps), the largest and smallest order keys seen
// as one 16x2 max and min a word (keys16x2, as Extremum::absorb_words); a NaN's key lies beyond
// the infinities', so the two extremes also tell whether a column saw one. The lanes that hold the
// same columns meet with shuffles, the warps with shared-memory atomic maxima, the blocks with
// global ones into two counters a column (HalfColumnKeys: the largest key plus 2^15 and 2^15 - 1
// minus the smallest, so that zero, the counters' state between launches, is below every key).
// The block that takes the last ticket writes each column's result and clears the counters.
// Launched on as many blocks an SM as the sums (the launchers cap the grid there: more blocks
// post more maxima). Until then these columns were read two a lane as words (PairExtremum) or four
// words a lane.
template <class T, class Op>
inline constexpr bool half_column_extrema_v =
    is_half_like<T> && (std::is_same_v<Op, op::min> || std::is_same_v<Op, op::max>);
struct HalfColumnKeys {
  rl::gmem<unsigned> ticket;
  rl::gmem<unsigned> most, least;  // kHalfColumnsMost each
};
inline constexpr std::size_t kHalfColumnKeyBytes = 8 + 2 * 4 * std::size_t(kHalfColumnsMost);
// The counters in `tickets` (8-byte aligned, at least kHalfColumnKeyBytes, zero).
inline HalfColumnKeys half_column_keys(unsigned* tickets) {
  return HalfColumnKeys{tickets, tickets + 2, tickets + 2 + kHalfColumnsMost};
}

template <class T, bool kMax, unsigned kCols, unsigned kIn = kHalfColumnLoads, int kMinBlocks = kHalfColumnBlocksPerSm<kCols>>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    reduceHalfColumnExtrema(rl::gmem<const T> input, std::uint64_t rows, HalfColumnKeys keys, rl::gmem<T> output) {
  using Column = Extremum<T, kMax>;
  using Key = typename Column::Key;
  constexpr unsigned kHeld = DenseHalfColumns<kCols>::kHeld, kGroups = DenseHalfColumns<kCols>::kGroups;
  constexpr unsigned kWords = kHeld / 2;  // word q of a vector holds columns 2 (q % kWords) and + 1
  __shared__ unsigned block_storage[2 * kCols];  // the block's counters, as the launch's
  rl::smem<unsigned> block_keys = block_storage;
  __shared__ unsigned last_storage[1];
  rl::smem<unsigned> am_last = last_storage;
  for (unsigned c = threadIdx.x; c < 2 * kCols; c += kThreads) block_keys[c] = 0u;
  std::uint32_t most[kWords], least[kWords];
#pragma unroll
  for (unsigned q = 0; q < kWords; ++q) most[q] = 0x80008000u, least[q] = 0x7fff7fffu;
  const auto take_word = [&](unsigned q, std::uint32_t k) {
    most[q] = extreme_s16x2<true>(most[q], k);
    least[q] = extreme_s16x2<false>(least[q], k);
  };
  read_dense_half_columns<kCols, kIn>(
      input, rows, [](unsigned) {},
      [&](const Vec<T>& v) {
#pragma unroll
        for (unsigned q = 0; q < 4; ++q)
          take_word(q % kWords, keys16x2(std::uint32_t(v.v[2 * q].bits) | std::uint32_t(v.v[2 * q + 1].bits) << 16));
      },
      [&](T e, unsigned column) {  // the other half of the word keeps the identities
        const std::uint32_t k = keys16x2(e.bits) & 0xffffu;
#pragma unroll
        for (unsigned q = 0; q < kWords; ++q) {
          if (column / 2 != q) continue;
          if (column % 2 == 0) {
            most[q] = extreme_s16x2<true>(most[q], 0x80000000u | k);
            least[q] = extreme_s16x2<false>(least[q], 0x7fff0000u | k);
          } else {
            most[q] = extreme_s16x2<true>(most[q], k << 16 | 0x8000u);
            least[q] = extreme_s16x2<false>(least[q], k << 16 | 0x7fffu);
          }
        }
      });
  __syncthreads();  // block_keys cleared
  const unsigned lane = threadIdx.x % 32;
#pragma unroll
  for (unsigned q = 0; q < kWords; ++q) {
#pragma unroll
    for (unsigned offset = 16; offset >= kGroups; offset >>= 1) {
      most[q] = extreme_s16x2<true>(most[q], shuffle_down(most[q], offset));
      least[q] = extreme_s16x2<false>(least[q], shuffle_down(least[q], offset));
    }
    if (lane < kGroups) {
#pragma unroll
      for (unsigned h = 0; h < 2; ++h) {
        const unsigned c = lane * kHeld + 2 * q + h;
        const int hi = static_cast<std::int16_t>(most[q] >> (16 * h)), lo = static_cast<std::int16_t>(least[q] >> (16 * h));
        atomicMax(&block_keys[c], static_cast<unsigned>(hi + 0x8000));
        atomicMax(&block_keys[kCols + c], static_cast<unsigned>(0x7fff - lo));
      }
    }
  }
  __syncthreads();
  for (unsigned c = threadIdx.x; c < kCols; c += kThreads) {
    atomicMax(&keys.most[c], block_keys[c]);
    atomicMax(&keys.least[c], block_keys[kCols + c]);
    __threadfence();  // this thread's maxima reach the counters before the block's ticket
  }
  __syncthreads();
  if (threadIdx.x == 0) am_last[0] = take_ticket(keys.ticket) == gridDim.x - 1 ? 1u : 0u;
  __syncthreads();
  if (am_last[0] == 0) return;
  for (unsigned c = threadIdx.x; c < kCols; c += kThreads) {
    const Key hi = static_cast<Key>(static_cast<int>(atomicExch(&keys.most[c], 0u)) - 0x8000);
    const Key lo = static_cast<Key>(0x7fff - static_cast<int>(atomicExch(&keys.least[c], 0u)));
    output[c] = Column::finish(Column::saw_nan(hi, lo) ? Column::nan_key() : kMax ? hi : lo, rows);
  }
  if (threadIdx.x == 0) keys.ticket[0] = 0u;
}

// ---- Exact sums and means of wide half columns, a 16-byte vector of columns a lane -------------
// Columns too many for reduceHalfColumns (or pitched rows) were read a word of two columns a lane
// (reduceColumns over PairSum): each lane kept a double chain and an exact pair per column, 76
// registers, three blocks an SM, and the exact half sums along 16384 x 16384 and 256 x 2^20 ran
// at 85 and 87 % of the read ceiling (H200) where their maxima, four words a lane, ran at 95; this
// way both run at 92 %, as fast as the maxima.
// Here a lane reads 16 bytes of a row (eight columns) and keeps eight plain doubles, each exact
// for up to kHalfChain halves (exact_pair.cuh): a warp takes 32 vectors (a group of 256 columns)
// over a band of at most kHalfChain rows, the block's eight warps every eighth row of it; the
// warps' doubles meet in shared memory (any sum of a band's halves is a double, so the order does
// not matter). A matrix of one band writes each column then; otherwise each band posts its column
// sums as ExactHalfSum64 counts (|sum| < 2^13 * 2^16 in units of 2^-24, below 2^53), and the block
// that takes its group's last ticket adds the group's posts in 128 bits (ExactHalfSum128) and
// rounds each column once. Where that fills the GPU better (half_bands), a warp takes a group over
// every row instead (at most kHalfChain of them), with no block fold, and writes each lane's eight
// results in one store.
inline constexpr unsigned kBandVec = 8;                     // columns a lane: a 16-byte vector of halves
inline constexpr unsigned kBandColumns = 32 * kBandVec;     // columns a group (a warp's 32 vectors)
inline constexpr unsigned kHalfBandLoads = 8;               // vectors in flight a lane
inline constexpr int kHalfBandBlocksPerSm = 4;
struct HalfBands {
  std::uint64_t rows = 0, pitch = 0, cols = 0;  // pitch in halves, a multiple of kBandVec
  std::uint64_t groups = 0, bands = 1, band_rows = 0;
  bool warp_each = false;  // a warp a group, every row (at most kHalfChain of them), no block fold
};
// The bands of a matrix of half columns on `blocks` resident blocks, or bands == 0 where it does
// not fit: whole 16-byte vectors of columns (cols and pitch multiples of 8, a 16-byte aligned
// start), at least a group's worth of columns with at least 3/4 of the groups' lanes busy, and,
// with more than one band, the posts within the workspace's column partials and a ticket a
// group. Of the band counts that fit, the one whose most jobs a block takes times its rows is
// least (the fewest bands on a tie): 16384 x 16384 takes 8 bands of 2048 rows (512 jobs) on 528
// blocks. Up to kHalfChain rows a warp may take a group alone instead, where the most groups a
// warp then takes times the rows is no more than the bands' rounds times a warp's share of a band:
// 256 x 2^20 (4096 groups on 4224 warps, against 4096 jobs of one band, eight rounds of 528
// blocks) took 131.6 us in bands (H200).
inline HalfBands half_bands(const void* input, const Pieces& p, std::uint64_t blocks) {
  HalfBands s;
  s.rows = p.length, s.pitch = p.stride, s.cols = p.count;
  s.bands = 0;
  const std::uint64_t vectors = p.count / kBandVec;
  if (p.offsets || p.count % kBandVec != 0 || p.stride % kBandVec != 0 || p.length == 0 || vectors < 32 ||
      reinterpret_cast<std::uintptr_t>(input) % 16 != 0)
    return s;
  s.groups = (vectors + 31) / 32;
  if (4 * vectors < 3 * 32 * s.groups) return s;
  if (blocks < 1) blocks = 1;
  const std::uint64_t step = std::uint64_t(kWarps) * kHalfBandLoads;  // rows a block covers per round of loads
  const std::uint64_t fewest = (p.length + kHalfChain - 1) / kHalfChain;
  const std::uint64_t posts = kPiecePartialBytes / (p.count * sizeof(long long));
  const std::uint64_t most = s.groups > kPieceTickets ? 1 : std::min<std::uint64_t>(std::max<std::uint64_t>(posts, 1),
                                                                                      (p.length + step - 1) / step);
  if (fewest > most) return s;
  const auto band_rows = [&](std::uint64_t b) { return ((p.length + b - 1) / b + step - 1) / step * step; };
  std::uint64_t best = 0, best_cost = 0;
  for (std::uint64_t b = fewest; b <= most && b <= fewest + 4 * blocks; ++b) {
    const std::uint64_t rows = std::min<std::uint64_t>(band_rows(b), kHalfChain);
    const std::uint64_t bands = (p.length + rows - 1) / rows;
    if (bands > most) continue;
    const std::uint64_t cost = (s.groups * bands + blocks - 1) / blocks * std::min<std::uint64_t>(rows, p.length);
    if (best == 0 || cost < best_cost) best = bands, best_cost = cost, s.band_rows = rows;
  }
  s.bands = best;
  const std::uint64_t warps = blocks * kWarps;
  s.warp_each = p.length <= kHalfChain && (s.groups + warps - 1) / warps * p.length <= best_cost / kWarps;
  if (s.warp_each) s.bands = 1, s.band_rows = p.length;
  return s;
}

template <class Sem, unsigned kLoads = kHalfBandLoads, int kMinBlocks = kHalfBandBlocksPerSm>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    reduceHalfColumnBands(rl::gmem<const half> input, HalfBands shape, rl::gmem<long long> posts,
                          rl::gmem<unsigned> tickets, rl::gmem<typename Sem::Out> output) {
  using Post = ExactHalfSum64<Sem::kMean>;   // a band's sum of a column
  using Count = ExactHalfSum128<Sem::kMean>;  // the column's
  static_assert(std::is_same_v<typename Count::Out, typename Sem::Out>, "the counts round to the pieces' result");
  // Warp w's double of group column c at sums[w * kRow + c + c / 32]: a lane's eight columns go
  // out two lanes a bank pair, and thread t reads column t of every warp without conflicts.
  constexpr unsigned kRow = kBandColumns + kBandColumns / 32;
  __shared__ double sums_storage[kWarps * kRow];
  rl::smem<double> sums = sums_storage;
  __shared__ unsigned last_storage[1];
  rl::smem<unsigned> am_last = last_storage;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::uint64_t vectors = shape.cols / kBandVec, jobs = shape.groups * shape.bands;
  // Rows r, r + step, ... < end of `vector` into s, kLoads loads in flight.
  const auto add_rows = [&](std::uint64_t vector, std::uint64_t r, std::uint64_t end, std::uint64_t step,
                            double (&s)[kBandVec]) {
    const auto take = [&](const std::uint32_t (&w)[4]) {
#pragma unroll
      for (unsigned j = 0; j < kBandVec; ++j) {
        half e;
        e.bits = static_cast<std::uint16_t>(w[j / 2] >> (16 * (j % 2)));
        s[j] += static_cast<double>(widen(e));
      }
    };
    for (; r + (kLoads - 1) * step < end; r += kLoads * step) {
      std::uint32_t w[kLoads][4];
#pragma unroll
      for (unsigned k = 0; k < kLoads; ++k) load_words(input, (r + k * step) * shape.pitch + vector * kBandVec, true, w[k]);
#pragma unroll
      for (unsigned k = 0; k < kLoads; ++k) take(w[k]);
    }
    for (; r < end; r += step) {
      std::uint32_t w[4];
      load_words(input, r * shape.pitch + vector * kBandVec, true, w);
      take(w);
    }
  };
  if (shape.warp_each) {  // lane l sums vector 32 g + l of every row and writes its eight columns
    for (std::uint64_t g = std::uint64_t(blockIdx.x) * kWarps + warp; g < shape.groups; g += std::uint64_t(gridDim.x) * kWarps) {
      const std::uint64_t vector = g * 32 + lane;
      if (vector >= vectors) continue;
      double s[kBandVec];
#pragma unroll
      for (unsigned j = 0; j < kBandVec; ++j) s[j] = -0.0;
      add_rows(vector, 0, shape.rows, 1, s);
      typename Sem::Out o[kBandVec];
#pragma unroll
      for (unsigned j = 0; j < kBandVec; ++j) o[j] = half_chain_result<Sem>(s[j], shape.rows);
      if (misalignment16<typename Sem::Out>(output) == 0) {
        store_results(output, vector * kBandVec, o);
      } else {
#pragma unroll
        for (unsigned j = 0; j < kBandVec; ++j) output[vector * kBandVec + j] = o[j];
      }
    }
    return;
  }
  for (std::uint64_t job = blockIdx.x; job < jobs; job += gridDim.x) {
    // Jobs that run at once take neighbouring groups of the same band: whole rows at a time.
    const std::uint64_t band = job / shape.groups, group = job % shape.groups;
    const std::uint64_t vector = group * 32 + lane;
    const std::uint64_t row_begin = band * shape.band_rows;
    const std::uint64_t row_end = std::min<std::uint64_t>(shape.rows, row_begin + shape.band_rows);
    double s[kBandVec];
#pragma unroll
    for (unsigned j = 0; j < kBandVec; ++j) s[j] = -0.0;  // -0 + x == x, and -0 + -0 stays -0
    if (vector < vectors) add_rows(vector, row_begin + warp, row_end, kWarps, s);
#pragma unroll
    for (unsigned j = 0; j < kBandVec; ++j) {
      const unsigned c = lane * kBandVec + j;
      sums[warp * kRow + c + c / 32] = s[j];
    }
    __syncthreads();
    // Column c of the group: the warps' doubles added (any order: exact).
    const auto band_sum = [&](unsigned c) {
      double total = -0.0;
      for (unsigned w = 0; w < kWarps; ++w) total += sums[w * kRow + c + c / 32];
      return total;
    };
    if (shape.bands == 1) {
      for (unsigned c = threadIdx.x; c < kBandColumns; c += kThreads) {
        const std::uint64_t column = group * kBandColumns + c;
        if (column >= shape.cols) break;
        output[column] = half_chain_result<Sem>(band_sum(c), shape.rows);  // one band: at most kHalfChain rows
      }
      __syncthreads();  // sums is reused by the next job
      continue;
    }
    for (unsigned c = threadIdx.x; c < kBandColumns; c += kThreads) {
      const std::uint64_t column = group * kBandColumns + c;
      if (column >= shape.cols) break;
      posts[band * shape.cols + column] = Post::absorb(Post::identity(), band_sum(c));
    }
    __syncthreads();  // every post written before thread 0's ticket (its release publishes them)
    if (threadIdx.x == 0) am_last[0] = take_ticket(tickets + group) == shape.bands - 1 ? 1u : 0u;
    __syncthreads();
    if (am_last[0] != 0) {  // the group's last band: add its posts, four loads in flight
      for (unsigned c = threadIdx.x; c < kBandColumns; c += kThreads) {
        const std::uint64_t column = group * kBandColumns + c;
        if (column >= shape.cols) break;
        typename Count::Acc all = Count::identity();
        std::uint64_t b = 0;
        for (; b + 4 <= shape.bands; b += 4) {
          long long q[4];
#pragma unroll
          for (unsigned k = 0; k < 4; ++k) q[k] = load_other_block(posts, (b + k) * shape.cols + column);
#pragma unroll
          for (unsigned k = 0; k < 4; ++k) all = Count::combine(all, Count::from(q[k]));
        }
        for (; b < shape.bands; ++b) all = Count::combine(all, Count::from(load_other_block(posts, b * shape.cols + column)));
        output[column] = Count::finish(all, shape.rows);
      }
      if (threadIdx.x == 0) tickets[group] = 0u;
    }
    __syncthreads();
  }
}

}  // namespace reducelab::detail

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

// ---- Long pieces of an order-free operation, a block each --------------------------------------
// The segments longer than a tile that reduceSegmentGroups found, listed in the workspace: the
// piece numbers in `pieces` (kLongSlots of them), their count and this kernel's ticket in
// `counters` (zero between launches). A launch that listed more than the slots hold takes
// every segment again and skips the short ones.
inline constexpr unsigned kLongSlots = 1u << 17;  // the column partials' area (1 MiB), idle for segments
// The slots the kernels use: kLongSlots on the GPU; the SIMT runner can lower it (tests reach the
// overflow with a few long segments).
#if RL_SIMT
inline unsigned simt_long_slots = kLongSlots;
__device__ __forceinline__ unsigned long_slots() { return simt_long_slots < kLongSlots ? simt_long_slots : kLongSlots; }
#else
__device__ __forceinline__ unsigned long_slots() { return kLongSlots; }
#endif

struct LongList {
  rl::gmem<unsigned> counters;
  rl::gmem<unsigned long long> pieces;
  __device__ __forceinline__ void add(std::uint64_t p) const {
    const unsigned slot = atomicAdd(&counters[0], 1u);
    if (slot < long_slots()) pieces[slot] = p;
  }
};

// Whether a matrix's long rows of exact sums, minima or maxima are too few to fill the GPU (fewer
// than `blocks`, the blocks of reduceLongPieces it holds at once): a block then has more than its
// share of a multiprocessor to itself, and its threads keep eight 16-byte loads in flight instead
// of four (reduceLongPieces<T, Sem, true>, a kernel of its own: its registers would cost the float
// and half kernel a block an SM). H200, both in one call: 256 x 2^20 exact double sums 562 -> 501
// us, half 149 -> 137, float 267 -> 251; 16384 x 16384 (rows enough to fill it) double sums 519 ->
// 529 with eight, so they keep four. Maxima of 256 x 2^20, the same kernel with four and with eight
// (bench/longrow_probe, one call): double 496.1 -> 488.2 us, float 251.2 -> 246.5, int32 245.4 ->
// 244.1, half 130.0 -> 126.7.
// The minima and maxima of 4- and 8-byte elements take rounds of sixteen loads a thread there
// (ptxas keeps fewer in flight: 31 to 34 registers, as with eight): 256 x 2^20 maxima a block a
// row (bench/longrow_probe chains, H200, one call), rounds of eight against sixteen: double 498.0
// -> 493.8 us, float 251.7 -> 249.5, int32 250.1 -> 244.2. (The same probe took each round's keys
// in a tree of four levels instead of the chain through the thread's key: double 514.3 and 513.3
// us at eight and sixteen, float 252.1 and 252.7, int32 250.8 and 248.5; no faster anywhere.)
template <class Sem>
inline constexpr bool has_deep_rows_v = is_exact_pieces<Sem>::value || extremum_v<Sem>;
template <class T, class Sem>
inline constexpr unsigned kDeepLoads = extremum_v<Sem> && sizeof(T) >= 4 ? 16 : 8;
template <class T, class Sem>
inline bool deep_rows_fit(const Pieces& p, std::uint64_t blocks) {
  return has_deep_rows_v<Sem> && !p.offsets && p.stride == 1 && p.count < blocks;
}

// Rows longer than a tile, and segments longer than a tile (pieces.skip_short; `longs` lists
// them when it could hold them all): the block's threads take the piece's vectors in turn
// (lane_fold_free; strided pieces element by element), four loads in flight each (rounds of
// kDeepLoads for kDeep: deep_rows_fit), and the block folds.
// Exact float and double sums and means end the call here (long_pieces_redo_v): the blocks also
// sum again, with digits (redo_piece), the pieces the kernels before listed in `redo` and those
// whose pairs lost part of their sum here, so that no reduceRedoPieces launch follows. A block
// notes its own lost pieces (up to kLongRedoNotes at a time) and sums them again between runs of
// its loop over the long pieces, not inside it, where the call would hold the loop's registers.
// Each launch after the warp-a-segment kernel, even over empty lists, added 1.3 to 1.9 us to a
// call (H200, 2^26 doubles in segments of 1 to 4096 elements, bench/segwarp_probe links).
// Float and double sums and means only (half sums took 42 -> 48 registers with it: five blocks
// an SM instead of six), and not with eight loads a thread (kDeep: a few long rows, where one
// launch more is little); those keep reduceRedoPieces after them. Float and double sums keep four
// blocks an SM (56 and 64 registers, against 59 and 54), exact float means go from five to four
// (54 registers against 48).
template <class T, class Sem>
inline constexpr bool long_pieces_redo_v = is_exact_pieces<Sem>::value && sizeof(T) >= 4;
inline constexpr unsigned kLongRedoNotes = 8;
// One long piece by the whole block: the block's threads take its vectors in turn (strided
// pieces element by element), and the block folds (thread 0 ends with the result). The block
// must call it uniformly (block_fold has a barrier).
template <class T, class Sem, bool kDeep>
__device__ __forceinline__ typename Sem::Acc fold_long_piece(rl::gmem<const T> x, std::uint64_t length,
                                                             std::uint64_t stride, rl::smem<typename Sem::Acc> slots) {
  using Acc = typename Sem::Acc;
  constexpr unsigned kIn = 4;
  Acc acc;
  if (stride == 1) {
    acc = lane_fold_free<T, Sem, kDeep ? kDeepLoads<T, Sem> : 4, false>(x, length, kThreads, threadIdx.x);
  } else {
    RunningFold<T, Sem> run(length / kThreads + 1);  // the most one thread takes
    std::uint64_t e = threadIdx.x;
    for (; e + (kIn - 1) * kThreads < length; e += kIn * kThreads) {
      T v[kIn];
#pragma unroll
      for (unsigned u = 0; u < kIn; ++u) v[u] = x[(e + u * kThreads) * stride];
      run.template take<kIn>(v, [&](unsigned u) { return e + u * kThreads; });
    }
    for (; e < length; e += kThreads) run.take_one(x[e * stride], e);
    acc = run.result();
  }
  return block_fold<Sem>(acc, slots);
}

// The long-piece kernel of exact float and double sums and means (long_pieces_redo_v, above).
template <class T, class Sem>
__device__ __forceinline__ void long_pieces_and_redo(rl::gmem<const T> input, const Pieces& pieces,
                                                     rl::gmem<const std::int64_t> begin, rl::gmem<const std::int64_t> end,
                                                     rl::gmem<typename Sem::Out> output, rl::gmem<unsigned long long> redo,
                                                     LongList longs) {
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[kWarps];
  rl::smem<Acc> slots = slot_storage;
  __shared__ unsigned listed_storage[1];  // the long list's count
  rl::smem<unsigned> listed_at = listed_storage;
  __shared__ unsigned long long redo_listed_storage[1];  // the redo list's count
  rl::smem<unsigned long long> redo_listed = redo_listed_storage;
  __shared__ unsigned long long note_storage[kLongRedoNotes + 1];  // the block's lost pieces: the count, then the pieces
  rl::smem<unsigned long long> notes = note_storage;
  // One read of each count per block, shared; no thread reads them after the last block cleared them.
  if (threadIdx.x == 0) {
    listed_at[0] = pieces.skip_short ? longs.counters[0] : 0u;
    redo_listed[0] = redo[0];
    notes[0] = 0ull;
  }
  __syncthreads();
  std::uint64_t todo = pieces.count;
  bool from_list = false;
  if (pieces.skip_short && listed_at[0] <= long_slots()) todo = listed_at[0], from_list = true;
  // The loop over the long pieces, left whenever the notes are full to sum those pieces again.
  std::uint64_t i = blockIdx.x;
  for (;;) {
    for (; i < todo; i += gridDim.x) {
      const std::uint64_t p = from_list ? static_cast<std::uint64_t>(longs.pieces[i]) : i;
      std::uint64_t first = 0, length = 0;
      piece_extent(pieces, begin, end, p, &first, &length);
      if (pieces.skip_short && length <= Shape<T>::kTile) continue;  // the same for the whole block
      const Acc acc = fold_long_piece<T, Sem, false>(input + first, length, pieces.stride, slots);
      if (threadIdx.x == 0) store_or_list<Sem>(output, p, acc, length, [&](std::uint64_t q) { notes[1 + notes[0]++] = q; });
      __syncthreads();  // slots are reused by the next piece; the notes are read below
      if (notes[0] == kLongRedoNotes) {  // the same for the whole block
        i += gridDim.x;
        break;
      }
    }
    const unsigned noted = static_cast<unsigned>(notes[0]);
    for (unsigned k = 0; k < noted; ++k) {
      const std::uint64_t p = notes[1 + k];
      std::uint64_t first = 0, length = 0;
      piece_extent(pieces, begin, end, p, &first, &length);
      redo_piece_in_block<T, Sem>(input + first, pieces.stride, length, output + p);
#if RL_SIMT
      if (threadIdx.x == 0) ++simt_redone_in_blocks;
#endif
    }
    __syncthreads();  // every thread has read the notes
    if (threadIdx.x == 0) notes[0] = 0ull;
    __syncthreads();
    if (i >= todo) break;
  }
  // The pieces the kernels before listed (they have ended: the count is final), or every piece
  // when the list overflowed, as reduceRedoPieces takes them.
  const unsigned long long listed = redo_listed[0];
  const bool every = listed > redo_slots();
  const std::uint64_t count = every ? pieces.count : listed;
  for (std::uint64_t k = blockIdx.x; k < count; k += gridDim.x) {
    const std::uint64_t p = every ? k : static_cast<std::uint64_t>(redo[2 + k]);
    std::uint64_t first = 0, length = 0;
    piece_extent(pieces, begin, end, p, &first, &length);
    redo_piece_in_block<T, Sem>(input + first, pieces.stride, length, output + p);
  }
  // The last block clears the lists for the next call; over empty ones, no ticket (below).
  if ((listed_at[0] != 0 || listed != 0) && threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&longs.counters[1], 1u) == gridDim.x - 1u) longs.counters[0] = 0u, longs.counters[1] = 0u, redo[0] = 0ull;
  }
}

template <class T, class Sem, bool kDeep = false>
__global__ void __launch_bounds__(kThreads)
    reduceLongPieces(rl::gmem<const T> input, Pieces pieces, rl::gmem<const std::int64_t> begin,
                     rl::gmem<const std::int64_t> end, rl::gmem<typename Sem::Out> output,
                     rl::gmem<unsigned long long> redo, LongList longs) {
  wait_for_producer();
  let_consumer_start();  // the kernel after it may take its places: it waits for this one to end
  if constexpr (long_pieces_redo_v<T, Sem> && !kDeep) {
    long_pieces_and_redo<T, Sem>(input, pieces, begin, end, output, redo, longs);
  } else {
    using Acc = typename Sem::Acc;
    __shared__ Acc slot_storage[kWarps];
    rl::smem<Acc> slots = slot_storage;
    __shared__ unsigned listed_storage[1];
    rl::smem<unsigned> listed_at = listed_storage;
    std::uint64_t todo = pieces.count;
    bool from_list = false;
    if (pieces.skip_short) {
      // One read of the count per block, shared; no thread reads it after the last block cleared it.
      if (threadIdx.x == 0) listed_at[0] = longs.counters[0];
      __syncthreads();
      const unsigned listed = listed_at[0];
      if (listed <= long_slots()) todo = listed, from_list = true;
    }
    for (std::uint64_t i = blockIdx.x; i < todo; i += gridDim.x) {
      const std::uint64_t p = from_list ? static_cast<std::uint64_t>(longs.pieces[i]) : i;
      std::uint64_t first = 0, length = 0;
      piece_extent(pieces, begin, end, p, &first, &length);
      if (pieces.skip_short && length <= Shape<T>::kTile) continue;  // the same for the whole block
      const Acc acc = fold_long_piece<T, Sem, kDeep>(input + first, length, pieces.stride, slots);
      if (threadIdx.x == 0) store_piece<Sem>(output, p, acc, length, redo);
      __syncthreads();  // slots are reused by the next piece
    }
    // The last block clears the list for the next call. Over an empty list (every block read the
    // same count: 0) there is nothing to clear and no ticket to take: the blocks leave at once, and
    // the few hundred blocks the GPU holds do not queue for one counter at the end of the call.
    if (pieces.skip_short && threadIdx.x == 0 && listed_at[0] != 0) {
      __threadfence();
      if (atomicAdd(&longs.counters[1], 1u) == gridDim.x - 1u) longs.counters[0] = 0u, longs.counters[1] = 0u;
    }
  }
}

// ---- Few long rows of minima and maxima, a thread-block cluster a row --------------------------
// With fewer rows than twice the SMs, a block a row (reduceLongPieces, sixteen loads a thread)
// leaves most of each SM idle: two blocks of eight warps where it holds eight blocks. Here each row
// is cut into as many parts as its cluster has blocks (whole vectors; the last part takes what is
// left), each block folds its part, and the cluster's first block folds the parts, rank by rank,
// through its shared memory (cluster.cuh). Minima and maxima are order-free: any cut, the same
// bits. The launcher makes clusters of kSplitRowBlocks; SIMT's clusters are one block (a block a
// row, the same code). NVIDIA H200, rows of 2^20, cold, a cluster of two against a block a row
// (bench/split_probe): 256 rows double max 496.9 -> 478.8 us (CUB 491.8), float 251.6 -> 240.7,
// int32 243.3 -> 240.4, half 130.0 -> 123.6; 132 rows double 333.2 -> 260.0 (CUB 330.3), float
// 167.0 -> 131.5; but 384 rows double 711.9 -> 718.2, half 183.6 -> 187.7, and 600 rows (more
// blocks than fit at once) double 1135.3 -> 1230.8. Clusters of four or eight a row over 256 rows
// were slower than two (double 523.1 and 492.2 us). Exact sums keep a block a row: they hold three
// or four blocks an SM, and two a row took 256 x 2^20 double sums 479.2 -> 513.7 us, half sums
// 129.5 -> 130.6.
template <class Sem>
inline constexpr bool split_rows_v = extremum_v<Sem>;
inline constexpr unsigned kSplitRowBlocks = 2;
// Whether reduceSplitRows takes a call's long rows: a dense matrix's rows of minima or maxima, at
// most a quarter as many as the blocks of it the GPU holds (`held`: 2 * SMs at eight an SM).
template <class T, class Sem>
inline bool split_rows_fit(const Pieces& p, std::uint64_t held) {
  return split_rows_v<Sem> && !p.offsets && p.stride == 1 && p.count <= held / 4;
}
// Launch with kThreads threads in clusters along x, a grid that is a multiple of the cluster, as
// many launches as it takes: cluster c of the grid takes row first + c alone (a loop over rows
// took ptxas from 32 registers to 48, five blocks an SM instead of eight).
template <class T, class Sem>
__global__ void __launch_bounds__(kThreads)
    reduceSplitRows(rl::gmem<const T> input, Pieces pieces, std::uint64_t first, rl::gmem<typename Sem::Out> output) {
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[kWarps];
  rl::smem<Acc> slots = slot_storage;
  __shared__ Acc part_storage[kMaxClusterBlocks];
  rl::smem<Acc> parts = part_storage;
  wait_for_producer();
  let_consumer_start();
  const unsigned k = cluster_blocks(), rank = cluster_rank();
  const std::uint64_t r = first + blockIdx.x / k;
  if (r >= pieces.count) return;  // the whole cluster
  cluster_arrive_relaxed();  // waited for before the write into the first block
  const std::uint64_t n = pieces.length, per = (n / Shape<T>::kVec + k - 1) / k * Shape<T>::kVec;
  const std::uint64_t b = std::min(n, rank * per), e = rank + 1 == k ? n : std::min(n, b + per);
  const Acc part = block_fold<Sem>(
      lane_fold_free<T, Sem, kDeepLoads<T, Sem>, false>(input + r * pieces.step + b, e - b, kThreads, threadIdx.x), slots);
  cluster_wait();  // the first block has started: its shared memory exists
  if (threadIdx.x == 0) in_cluster_leader(parts)[rank] = part;
  cluster_arrive();  // release: the part
  cluster_wait();    // only the first block's shared memory is read, by that block, after this
  if (rank != 0 || threadIdx.x != 0) return;
  Acc row = parts[0];
  for (unsigned i = 1; i < k; ++i) row = Sem::combine(row, parts[i]);
  output[r] = Sem::finish(row, n);
}

// Exact sums and means of a dense matrix's long rows, a block a row: reduceLongPieces without the
// segments' long list and the strided path, whose registers cost a block an SM (exact double sums
// 54 registers there, 48 here: 4 blocks an SM against 5). Launch with kThreads threads, a block
// for every row (as many launches as it takes): block b sums row first + b alone. H200, 16384 x
// 16384 double sums: 478.3 us this way, 501.3 a warp a row (reduceWarpRows), 462.7 for the same
// reads and lanes' arithmetic with no fold at all (bench/longrow_probe tail).
// Float, half and bfloat16 lanes sum a window a round (WindowFold), as the warps do, where
// reduceLongPieces keeps a window a thread: 38 registers against 54 for floats (six blocks an SM,
// not four), and the H200 took 16384 x 16384 float sums 256.8 -> 242.0 us, 32768 x 16384 493.6 ->
// 473.9, half sums 144.6 -> 143.5 (bench/split_probe warps, one call).
// Double lanes take rounds of eight loads (68 registers, three blocks an SM, against 48 and five
// with four): H200, bench/split_probe blocks, two calls, 16384 x 16384 double sums 479.3-480.4 ->
// 475.7-476.6 us (CUB 472.0-472.3), 8192 x 32768 480.3-480.8 -> 475.9-476.4 (CUB 475.1-475.8);
// six loads (61 registers, four an SM) took 514.7-518.4 and 479.8-479.9, sixteen (116, two an SM)
// 477.0-477.9 and 474.7-475.1. Float lanes keep four: eight took 16384 x 16384 float sums 242.0 ->
// 253.9 us.
template <class T, class Sem>
inline constexpr bool block_rows_v = is_exact_pieces<Sem>::value;
template <class T, class Sem>
inline constexpr unsigned kBlockRowLoads = cut_sums_v<T, Sem> ? 8 : 4;
// Whether reduceBlockRows takes a call's long pieces (those reduceWarpRows and the eight-load
// reduceLongPieces leave): a dense matrix's rows of exact sums or means.
template <class T, class Sem>
inline bool block_rows_fit(const Pieces& p) {
  return block_rows_v<T, Sem> && !p.offsets && p.stride == 1;
}
// Float rows whose pair lost part of the sum are summed again by their block's first warp
// (redo_piece, out of line), so that no reduceRedoPieces launch follows; the other warps leave
// after the fold as they do without it, so no barrier is added to the rows' ends (the kernel
// keeps its 38 registers). H200, 16384 x 16384 float sums, every listed shape's run before and
// two after: 240.3 -> 237.9 and 239.1 us (CUB 237.7, then 237.4 and 239.5). Doubles keep the
// list: the redo in their kernel took ptxas from 68 registers to 108 (two blocks an SM), bound to
// three blocks an SM to 80, and 16384 x 16384 double sums 476.5 -> 477.4 us; half and bfloat16
// keep it too.
template <class T, class Sem>
inline constexpr bool block_rows_redo_v = block_rows_v<T, Sem> && std::is_same_v<T, float>;
template <class T, class Sem>
__global__ void __launch_bounds__(kThreads)
    reduceBlockRows(rl::gmem<const T> input, Pieces pieces, std::uint64_t first, rl::gmem<typename Sem::Out> output,
                    rl::gmem<unsigned long long> redo) {
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[kWarps];
  rl::smem<Acc> slots = slot_storage;
  wait_for_producer();
  let_consumer_start();  // the redo kernel (if any) may take its places: it waits for this one to end
  const std::uint64_t r = first + blockIdx.x;
  if (r >= pieces.count) return;  // the whole block
  const rl::gmem<const T> row = input + r * pieces.step;
  const Acc acc = block_fold<Sem>(lane_fold_free<T, Sem, kBlockRowLoads<T, Sem>>(row, pieces.length, kThreads, threadIdx.x), slots);
  if constexpr (block_rows_redo_v<T, Sem>) {
    if (threadIdx.x >= 32) return;  // block_fold leaves the row's pair in thread 0
    bool lost = false;              // written, or lost: then the warp sums the row again
    if (threadIdx.x == 0) store_or_list<Sem>(output, r, acc, pieces.length, [&](std::uint64_t) { lost = true; });
    if (__shfl_sync(kFullMask, lost ? 1 : 0, 0) == 0) return;
    __shared__ unsigned long long digit_storage[ExactTraits<T>::kDigits];
    __shared__ unsigned misc_storage[1];  // the row's flags
    redo_piece<T, typename Sem::Out, Sem::kMean, 32>(row, 1, pieces.length, digit_storage, misc_storage, output + r);
#if RL_SIMT
    if (threadIdx.x == 0) ++simt_redone_in_blocks;
#endif
  } else {
    if (threadIdx.x == 0) store_piece<Sem>(output, r, acc, pieces.length, redo);
  }
}

// ---- Long rows of exact sums, a warp each -------------------------------------------------------
// reduceLongPieces folds a row with its whole block, and each row ends with a block fold and a
// pair merge per thread: for rows of 16384 halves that is 64 elements a thread between two such
// ends, and the ends cost as much as the elements (16384 x 16384 half sums at 60 % of the read
// ceiling, 14 warp instructions per element under Nsight Compute, H200). When there are at least
// as many rows as warps the GPU holds, a warp takes a row (warp_fold_free: 512 elements a lane
// for rows of 16384) and the rows' ends are a warp fold. H200, cold, both builds in one call:
// 16384 x 16384 half sums 199.7 -> 137.7 us, float sums 285.9 -> 249.8, the bits the same; double
// sums (bench/longrow_probe, the probe's launch against reduce_axis): 32768 x 8192 589.6 -> 481.1,
// 16384 x 16384 510.0 -> 501.6 (docs/performance.md).
template <class T, class Sem>
inline constexpr bool warp_rows_v = is_exact_pieces<Sem>::value;

// Whether reduceWarpRows takes a call's long pieces instead of a block a row (reduceBlockRows):
// rows of a matrix of up to kWarpRowBytes, at least `warps` of them (the warps a launch holds at
// once). Longer rows spread a block's ends over enough elements. H200, the same call, a warp a
// row against a block a row: double sums of 65536 x 4096 (32 KiB rows) 485.9 against 621.5 us,
// of 32768 x 8192 (64 KiB) 487.6 against 514.2, of 16384 x 16384 (128 KiB) 508.3 against 488.4;
// float sums of 16384 x 16384 (64 KiB) 247.9 against 267.2 (bench/longrow_probe tail).
// Float rows of 64 KiB read faster a block a row since that kernel sums windows of a round: H200,
// 16384 x 16384 float sums 244.1 and 244.0 us a warp a row, 242.0 and 243.0 a block a row, 32768 x
// 16384 478.8 and 479.6 against 473.9 and 473.9 (bench/split_probe warps, one call); so float rows
// take a warp up to 32 KiB. Half rows of 32 KiB stay a warp each (126.3 against 143.5 us).
inline constexpr std::uint64_t kWarpRowBytes = 65536;
template <class T, class Sem>
inline bool warp_rows_fit(const Pieces& p, std::uint64_t warps) {
  constexpr std::uint64_t most = std::is_same_v<T, float> ? kWarpRowBytes / 2 : kWarpRowBytes;
  return warp_rows_v<T, Sem> && !p.offsets && p.stride == 1 && p.length * sizeof(T) <= most && p.count >= warps;
}

// Launch with kThreads threads, as many launches as it takes: warp w of the grid sums row first +
// w alone, as reduceSegmentsWarpEach takes its segments (the launcher's grid has a warp for every
// row; a test's smaller grid takes several launches). Four blocks an SM (64 registers): doubles'
// CutFold took 74 with a bound of three, and 16384 x 16384 double sums 523.6 us against 514.1
// with four (H200).
// Rows of kRotatedRowBytes or more start their rounds at round r (fold_contiguous's `rotate`), so
// that the warps' loads at one time lie at different offsets of their rows. H200, cold, the same
// call (bench/longrow_probe rotate), in order against rotated, µs: 16384 x 16384 float sums 245.9
// -> 243.9, 32768 x 8192 double sums 486.3 -> 483.2 (64 KiB rows); 16384 x 16384 double sums
// 503.8 -> 486.5 and 8192 x 32768 float sums 261.4 -> 247.6 (128 KiB rows, which reduceBlockRows
// takes, 488.6 and 248.7); but 16384 x 16384 half sums 128.0 -> 129.6 and 32768 x 8192 float sums
// 244.9 -> 246.1 (32 KiB rows). Rows longer than kWarpRowBytes (also 64 KiB) take a block each,
// so only rows of exactly 64 KiB rotate. (kRotate false: the probe's rounds in order.)
inline constexpr std::uint64_t kRotatedRowBytes = kWarpRowBytes;
template <class T, class Sem, bool kRotate = true>
__global__ void __launch_bounds__(kThreads, 4)
    reduceWarpRows(rl::gmem<const T> input, Pieces pieces, std::uint64_t first, rl::gmem<typename Sem::Out> output,
                   rl::gmem<unsigned long long> redo) {
  const std::uint64_t r = first + std::uint64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (r >= pieces.count) return;  // the whole warp
  const bool rotated = kRotate && pieces.length * sizeof(T) >= kRotatedRowBytes;
  const typename Sem::Acc acc = warp_fold_free<T, Sem>(input + r * pieces.step, pieces.length, rotated ? r : 0);
  if (threadIdx.x % 32 == 0) store_piece<Sem>(output, r, acc, pieces.length, redo);
}
}  // namespace reducelab::detail

namespace reducelab::detail {

// Which kernels one reduce_axis / reduce_segments call runs (the GPU and the SIMT runner share
// this choice). Order-free operations (exact sums and means of floating-point pieces among them):
// columns read coalesced (reduceColumns), short rows a few lanes each (reduceRowGroups; exact
// double sums of rows of up to 256 elements, reduceCutRows), columns of at most one vector a
// thread each, longer rows and segments a block each (reduceLongPieces), segments of up to a
// tile a warp per group of them (reduceSegmentGroups).
// Floating-point products and user operations keep each piece's fixed order (piece_kernels).
struct PiecePlan {
  bool columns = false;      // reduceColumns
  bool row_groups = false;   // reduceRowGroups, `lanes` lanes per row
  bool cut_rows = false;     // reduceCutRows, `lanes` lanes per row
  unsigned lanes = 1;
  bool long_pieces = false;  // reduceLongPieces
  bool segment_groups = false;  // reduceSegmentGroups, then reduceSegmentWarps (or reduceSegmentsWarpEach alone)
  PieceKernels fixed;        // reduceTinyPieces / reduceShortPieces / reduceSegments
};
template <class T, class Sem>
inline PiecePlan plan_pieces(Pieces* p) {
  PiecePlan plan;
  if constexpr (Sem::order_free) {
    if (columns_fit<T, Sem>(*p)) {
      plan.columns = true;
    } else if (!p->offsets && p->length == 1) {  // one element a row: a thread per row
      plan.fixed.threads = true;
    } else if (row_groups_fit<T, Sem>(*p)) {
      if constexpr (cut_rows_v<T, Sem>) {
        if (p->length <= kRowCutElements) {  // exact double sums of short rows: reduceCutRows
          plan.cut_rows = true;
          plan.lanes = cut_row_lanes(p->length);
          return plan;
        }
      }
      plan.row_groups = true;
      plan.lanes = packed_order_free_v<T, Sem> ? free_row_lanes<T>(p->length) : row_group_lanes<T>(p->length);
      // Exact double sums of rows longer than the cut takes (reduceCutRows): each level of a row's
      // shuffle tree merges pairs (four TwoSums a lane), so fewer lanes per row, each folding more
      // elements, do less work: a lane takes at least 16 vectors, or the row has 4 lanes
      // (docs/performance.md).
      if constexpr (cut_rows_v<T, Sem>) {
        const unsigned vectors = static_cast<unsigned>((p->length + Shape<T>::kVec - 1) / Shape<T>::kVec);
        plan.lanes = std::min(plan.lanes, std::max(kDoubleRowLanes, vectors / 16));
      }
    } else if (!p->offsets && p->length <= Shape<T>::kVec) {
      plan.fixed.threads = true;
    } else if (!p->offsets) {
      plan.long_pieces = true;
    } else {
      plan.segment_groups = true;
      plan.long_pieces = true;
      p->skip_short = true;
    }
    return plan;
  }
  plan.fixed = piece_kernels<T>(p);
  return plan;
}

// Exact float, half and bfloat16 sums along rows of more than kWarpRowsFrom elements, which
// reduceRowGroups would take (up to 8192 elements), read faster a warp a row when there are at
// least as many rows as warps the launch holds: H200, rows of 2048, 4096 and 8192 halves
// 406.9 -> 168.2, 360.4 -> 138.2 and 345.6 -> 131.6 us, floats 303.5 -> 247.2, 283.8 -> 242.8
// and 305.2 -> 239.0 (2^28 elements each); rows of 1024 keep the row groups (float 250.9 against
// 266.4 us a warp a row, half 164.5 against 232.3). The launchers ask before they launch.
inline constexpr std::uint64_t kWarpRowsFrom = 1024;
template <class T, class Sem>
inline void prefer_warp_rows(PiecePlan* plan, const Pieces& p, std::uint64_t warps) {
  if (window_sums_v<T, Sem> && plan->row_groups && p.length > kWarpRowsFrom && warp_rows_fit<T, Sem>(p, warps)) {
    plan->row_groups = false;
    plan->long_pieces = true;
  }
}

}  // namespace reducelab::detail
