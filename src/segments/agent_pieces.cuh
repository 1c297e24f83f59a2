#pragma once
// What the kernels of reduce_axis and reduce_segments share (agent_segments.cuh has the map): a
// strided piece's chunks in reducelab::reduce's fixed order, a piece's extent, the order-free
// folds of a contiguous piece by a lane or a warp (fold_contiguous, lane_fold_free,
// warp_fold_free), one-element results, and the kernels that take pieces of one element or keep
// each piece's fixed order (reduceSingles, reduceTinyPieces, reduceShortPieces, reduceSegments).
// Read by nvcc and by g++ (SIMT).
#include <algorithm>
#include <cstdint>

#include "reducelab/detail/agent_reduce.cuh"
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

// A lane's round of kIn vectors into `run`: a CutFold takes it as one group, other folds vector by
// vector (vector u's element j is element first + u * stride + j of the piece) and a WindowFold
// settles its window after the round.
template <class T, unsigned kIn, class Fold, class Index>
__device__ __forceinline__ void fold_round(Fold& run, const Vec<T> (&v)[kIn], Index first, Index stride) {
  constexpr unsigned kVec = Shape<T>::kVec;
  if constexpr (requires { run.template take_round<kIn>(v); }) {
    run.template take_round<kIn>(v);
  } else {
#pragma unroll
    for (unsigned u = 0; u < kIn; ++u) run.template take<kVec>(v[u].v, [&](unsigned j) { return first + u * stride + j; });
    if constexpr (requires { run.settle(); }) run.settle();  // a WindowFold's window: a round at most
  }
}

// ---- a thread's own asynchronous copies into shared memory ----------------------------------
// copy_vec_async starts the copy of the 16-byte vector at element `at` (16-byte aligned) into
// *dst in shared memory and goes on (cp.async, sm_80 and later: no register waits for it);
// copies_commit closes the group of copies the thread started since its last commit, and
// copies_wait<N> waits until at most the N latest of its groups are still in flight. Only the
// thread that started a copy reads what it wrote, so no barrier is needed. The copies go through
// L1 (.ca): bypassing it (.cg), plain double sums along 16384 x 16384 rows through such copies
// moved 75 % of DRAM bandwidth instead of 97 % (H200, Nsight Compute; docs/performance.md). On
// SIMT, and built for a GPU before sm_80, the copy is done at once and the commit and the wait
// have nothing left to do.
#if !RL_SIMT && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800)
#define RL_ASYNC_COPIES 1
#else
#define RL_ASYNC_COPIES 0
#endif
template <class T>
__device__ __forceinline__ void copy_vec_async(rl::smem<Vec<T>> dst, rl::gmem<const T> input, std::uint64_t at) {
#if RL_ASYNC_COPIES
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(dst))),
               "l"(input + at)
               : "memory");
#else
  dst[0] = load_vec(input, at);
#endif
}
__device__ __forceinline__ void copies_commit() {
#if RL_ASYNC_COPIES
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void copies_wait() {
#if RL_ASYNC_COPIES
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
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

// fold_contiguous (neither kShort nor rotated) with each of the lane's whole rounds of kIn vectors
// copied into shared memory (copy_vec_async) kDepth rounds ahead of the round it folds, so that
// no register waits for a load and the next rounds stay in flight while the lane folds one.
// `ring` holds kDepth rounds of kIn vectors for each of the `lanes` threads, the lane's vector u of
// slot d at ring[(d * kIn + u) * lanes + lane] (a warp reads 512 neighbouring bytes at once). A
// slot is copied into again only after its round is folded: the fold has read it by then, in the
// same thread, so no barrier is needed. The lane's whole rounds are fold_contiguous's; the vectors
// and elements after them are read as fold_contiguous reads them.
template <class T, unsigned kIn, unsigned kDepth, class Fold>
__device__ __forceinline__ void fold_contiguous_staged(Fold& run, rl::gmem<const T> x, std::uint64_t n, unsigned lanes,
                                                       unsigned lane, rl::smem<Vec<T>> ring) {
  static_assert(kDepth >= 1, "at least the round being folded");
  constexpr unsigned kVec = Shape<T>::kVec;
  const std::uint64_t head = std::min<std::uint64_t>(n, (16 - misalignment16(x)) % 16 / sizeof(T));
  for (std::uint64_t e = lane; e < head; e += lanes) run.take_one(x[e], e);
  const rl::gmem<const T> body = x + head;
  const std::uint64_t vectors = (n - head) / kVec;
  const std::uint64_t step = std::uint64_t(kIn) * lanes;
  // The lane's whole rounds: vectors lane + i * step + u * lanes (u < kIn) for i < rounds.
  const std::uint64_t top = lane + std::uint64_t(kIn - 1) * lanes;  // the last vector of its first round
  const std::uint64_t rounds = vectors > top ? (vectors - top - 1) / step + 1 : 0;
  const auto copy_round = [&](std::uint64_t i, unsigned d) {
    if (i < rounds)
#pragma unroll
      for (unsigned u = 0; u < kIn; ++u)
        copy_vec_async(ring + (d * kIn + u) * lanes + lane, body, (lane + i * step + u * lanes) * kVec);
    copies_commit();  // a group for every round, empty past the last: the wait below counts them
  };
#pragma unroll
  for (unsigned d = 0; d < kDepth; ++d) copy_round(d, d);
  unsigned d = 0;  // the slot of round i
#pragma unroll 1
  for (std::uint64_t i = 0; i < rounds; ++i) {
    copies_wait<kDepth - 1>();  // round i is in (the kDepth - 1 after it may still be in flight)
    Vec<T> v[kIn];
#pragma unroll
    for (unsigned u = 0; u < kIn; ++u) {
      const Vec<T> w = ring[(d * kIn + u) * lanes + lane];
      v[u] = w;
    }
    fold_round<T, kIn>(run, v, head + (lane + i * step) * kVec, std::uint64_t(lanes) * kVec);
    copy_round(i + kDepth, d);
    d = d + 1 == kDepth ? 0 : d + 1;
  }
  for (std::uint64_t k = lane + rounds * step; k < vectors; k += lanes) {
    const Vec<T> v = load_vec(body, k * kVec);
    run.template take<kVec>(v.v, [&](unsigned j) { return head + k * kVec + j; });
  }
  for (std::uint64_t e = head + vectors * kVec + lane; e < n; e += lanes) run.take_one(x[e], e);
}

// A lane's exact sum of its share of x[0, n) in rounds of kIn loads: read(first) folds the share
// into `first` (a CutFold for doubles, a window a round for the others), which vouches for the
// sum or not; a lane whose fold does not folds its elements again with pairs, a load in flight
// (rare, and few registers for it).
template <class T, class Sem, unsigned kIn, class Read>
__device__ __forceinline__ typename Sem::Acc exact_lane_fold(rl::gmem<const T> x, std::uint64_t n, unsigned lanes,
                                                             unsigned lane, Read&& read) {
  static_assert(cut_sums_v<T, Sem> || window_sums_v<T, Sem>, "exact sums that settle a round at a time");
  using First = std::conditional_t<cut_sums_v<T, Sem>, CutFold, WindowFold<T>>;
  First first = [] {
    if constexpr (cut_sums_v<T, Sem>) return CutFold{};
    else return WindowFold<T>(kIn * Shape<T>::kVec + 2);  // a round, and a head or tail element
  }();
  read(first);
  first.settle();  // the last window, or the grid's open sums
  if (first.exact) return typename Sem::Acc{first.a, first.b};
  PairFold<T, Sem> p;
  fold_contiguous<T, 1>(p, x, n, lanes, lane);
  return p.acc;
}

// One of `lanes` threads' fold of its share of an order-free operation over the contiguous
// elements x[0, n) (fold_contiguous, kIn loads in flight), before the warp's or block's fold.
// Exact sums of float, half and bfloat16 fold each lane's elements in plain double windows of a
// round of loads each, settled into a pair (WindowFold); exact double sums split up to eight
// rounds on one grid (CutFold); exact_lane_fold reads a lane's elements again where they do not
// vouch for its sum. Against RunningFold, in a warp a segment, segments of 1 to 4096 floats took
// 107.2 -> 78.6 us on an H200, halves 92.9 -> 70.3 us (docs/performance.md). Other operations, and window sums with
// kRoundWindows false (one window a thread, which reduceLongPieces keeps: few rows of 2^20 halves
// a block each took 133.3 -> 151.9 us with a window a round, floats 244.2 -> 254.8, H200):
// RunningFold.
template <class T, class Sem, unsigned kIn, bool kRoundWindows = true, bool kShort = false>
__device__ __forceinline__ typename Sem::Acc lane_fold_free(rl::gmem<const T> x, std::uint64_t n, unsigned lanes,
                                                            unsigned lane, std::uint64_t rotate = 0) {
  if constexpr ((window_sums_v<T, Sem> && kRoundWindows) || cut_sums_v<T, Sem>) {
    return exact_lane_fold<T, Sem, kIn>(x, n, lanes, lane,
                                        [&](auto& first) { fold_contiguous<T, kIn, kShort>(first, x, n, lanes, lane, rotate); });
  } else {
    RunningFold<T, Sem> run(contiguous_share<T>(n, lanes));
    fold_contiguous<T, kIn, kShort>(run, x, n, lanes, lane, rotate);
    return run.result();
  }
}

// lane_fold_free for exact sums (CutFold for doubles, a window a round for the others) with the
// lane's rounds staged in shared memory (fold_contiguous_staged: kDepth rounds of kIn loads a
// lane in `ring`).
template <class T, class Sem, unsigned kIn, unsigned kDepth>
__device__ __forceinline__ typename Sem::Acc lane_fold_staged(rl::gmem<const T> x, std::uint64_t n, unsigned lanes,
                                                              unsigned lane, rl::smem<Vec<T>> ring) {
  return exact_lane_fold<T, Sem, kIn>(x, n, lanes, lane,
                                      [&](auto& first) { fold_contiguous_staged<T, kIn, kDepth>(first, x, n, lanes, lane, ring); });
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
