#pragma once
// The kernel of reducelab's exact floating-point sums and means (exact_sum.cuh has the
// arithmetic) of float, bfloat16 and double; halves are summed as integers by the order-free kernel
// (exact_half.cuh) and come here only from an address that is not a multiple of 2. One launch:
//   1. blocks walk the tiles of the array (a grid-stride loop over 32 KiB tiles, 16 KiB for
//      bfloat16 from 2^18 to 2^25: exact_mid_shape); each thread
//      sums its part of a tile in double when that is exact (the exponents lie close together;
//      doubles are cut on one grid into two exact sums), and carries the running total as a
//      TwoSum pair; what the pair cannot hold exactly goes to the block's digits in shared
//      memory (integer atomics);
//   2. at the end each thread hands its pair to the block's digits, and the block adds its
//      digits into the launch's digits in global memory (integer atomics again: any order gives
//      the same integers);
//   3. the last block to finish (a ticket) rounds the digits once, writes the result and zeroes
//      the digits for the next launch.
// A small launch (one block, or one cluster of blocks with a tile each: cluster.cuh) skips the
// digits as well as the ticket: the pairs themselves are merged exactly, with shuffles in a
// warp and through the first block's shared memory across the cluster, and the final pair is
// rounded once. Only what a pair cannot hold (rare) goes to the digits.
// Nothing here depends on the grid or on which block ran what: the result is the exact sum,
// rounded, on every GPU and for every split.
#include <bit>
#include <cstdint>

#include "reducelab/detail/agent_reduce.cuh"
#include "reducelab/detail/cluster.cuh"
#include "reducelab/detail/exact_sum.cuh"
#include "reducelab/detail/reduce_order.hpp"
#include "reducelab/detail/portable.cuh"

namespace reducelab::detail {

// Digits in the workspace: kMaxExactDigits digits, then the flags word.
inline constexpr unsigned kExactWords = kMaxExactDigits + 1;
// A block moves its shared digits to global memory at least every kFlushTiles tiles, so no
// int64 digit can overflow: <= 2^24 elements between flushes, each adding < 9 pieces of < 2^32.
inline constexpr std::uint64_t kFlushTiles = 2048;

template <class T>
__device__ __forceinline__ double exact_value(T x) {
  return static_cast<double>(widen(x));
}

// How a value enters the block's digits in shared memory (three integer atomics at most).
template <class T>
__device__ __forceinline__ void add_to_block_digits(rl::smem<unsigned long long> digits, double v) {
  if (v == 0) return;
  const DigitPieces q = pieces_of(v, ExactTraits<T>::kBase);
#pragma unroll
  for (int j = 0; j < 3; ++j)
    if (q.p[j] != 0) atomicAdd(&digits[q.digit + j], static_cast<unsigned long long>(q.p[j]));
}
// The same as a call: the rare paths that take it then cost the kernel a call instruction
// each instead of a copy of this code (small launches: agent_exact.cuh's kSmall).
template <class T>
__device__ __noinline__ void add_to_block_digits_call(rl::smem<unsigned long long> digits, double v) {
  add_to_block_digits<T>(digits, v);
}
// The block's digits as the spill of ExactCarry: inline, or (kCall) through the call above.
template <class T, bool kCall = false>
struct BlockDigits {
  rl::smem<unsigned long long> digits;
  __device__ __forceinline__ void operator()(double v) const {
    if constexpr (kCall) add_to_block_digits_call<T>(digits, v);
    else add_to_block_digits<T>(digits, v);
  }
};

// Moves the block's digits into the launch's (low 32 bits to digit d, the signed rest to d + 1)
// and zeroes them. Called by the whole block between barriers.
template <class T>
__device__ __forceinline__ void flush_digits(rl::smem<unsigned long long> shared, rl::gmem<unsigned long long> global) {
  constexpr int kD = ExactTraits<T>::kDigits;
  const int d = static_cast<int>(threadIdx.x);
  if (d < kD) {
    const unsigned long long v = shared[d];
    if (v != 0) {
      const auto s = static_cast<long long>(v);
      if (d + 1 < kD) {
        atomicAdd(&global[d], static_cast<unsigned long long>(s & 0xffffffffll));
        const long long high = s >> 32;
        if (high != 0) atomicAdd(&global[d + 1], static_cast<unsigned long long>(high));
      } else {
        atomicAdd(&global[d], v);
      }
      shared[d] = 0ull;
    }
  }
}

// The largest split_magnitude of N vectors of doubles and the smallest non-zero one minus one
// (zeros wrap to the top): what double_split and split_holds take.
template <unsigned N>
__device__ __forceinline__ void split_magnitude_range(const Vec<double>* v, std::uint32_t* most, std::uint32_t* least) {
  std::uint32_t hi = 0, lo = 0xffffffffu;
#pragma unroll
  for (unsigned i = 0; i < N; ++i)
#pragma unroll
    for (unsigned j = 0; j < 2; ++j) {
      const std::uint32_t m = split_magnitude(v[i].v[j]);
      hi = m > hi ? m : hi;
      lo = m - 1u < lo ? m - 1u : lo;
    }
  *most = hi;
  *least = lo;
}

// N vectors of doubles split on the grid of `sigma` (split_add) into the running sums of their
// grid parts (s1) and rests (s2), even and odd elements in separate chains.
template <unsigned N>
__device__ __forceinline__ void split_add_vectors(double sigma, const Vec<double>* v, double (&s1)[2], double (&s2)[2]) {
#pragma unroll
  for (unsigned i = 0; i < N; ++i) {
    split_add(sigma, v[i].v[0], s1[0], s2[0]);
    split_add(sigma, v[i].v[1], s1[1], s2[1]);
  }
}

// -0 of T: what pads a partial tile (adding -0 changes no sum, not even the sign of a zero).
template <class T>
__device__ __forceinline__ T negative_zero() {
  if constexpr (is_half_like<T>) return T{0x8000};
  else return -T(0);
}

// One thread's part of one tile (kLoads vectors, kItems unless named, of kVec elements, thread t owns vector t of
// each row) into `carry`. Every load is issued before the first add, in a partial tile (the
// array's last) too, padded with -0, instead of one dependent round trip per element. kSmall:
// the small launch's instantiation (reduceExact below), whose partial tiles read differently.
template <class T, unsigned kChains, bool kSmall = false, unsigned kLoads = kItems, class Spill>
__device__ __forceinline__ void fold_tile_exact(rl::gmem<const T> input, std::uint64_t tile, std::uint64_t n,
                                                bool aligned, ExactCarry& carry, const Spill& spill) {
  constexpr unsigned kVec = Shape<T>::kVec;
  constexpr std::uint64_t kTile = std::uint64_t(kThreads) * kVec * kLoads;
  const std::uint64_t base = tile + std::uint64_t(threadIdx.x) * kVec;
  // The small launch reads an aligned partial tile of 16-bit elements as whole rows (below):
  // one-block half and bf16 sums of 1000 to 8192 elements took 0.2-1.3 us less on an H100.
  // Floats gained nothing and took 0.1 us longer; doubles gained 0.4-1.0 us where a row ends
  // mid-tile (2048, 3000) but lost 0.1-0.2 us at every whole tile (4096 to 16384), so both read
  // as before. The large kernels too: with rows past n skipped there, 2^26 half sums took
  // 0.5-0.9 % longer.
  constexpr bool kWholeRows = kSmall && sizeof(T) == 2;
  Vec<T> v[kLoads];
  if (aligned && tile + kTile <= n) {
#pragma unroll
    for (unsigned i = 0; i < kLoads; ++i) v[i] = load_vec(input, base + std::uint64_t(i) * kThreads * kVec);
  } else if (kWholeRows && aligned) {
    // The small launch's partial tile (most inputs below a tile): whole rows as vectors under
    // predicates, all issued back to back, rows past n as -0, and only the one thread whose row
    // holds n's last element reads that row element by element. (In the large kernels this cost
    // registers: the float one spilled, 2^26 float sums 93.6 -> 95.8 us on an H100, and the
    // multi-GPU half kernel spilled too.)
    constexpr unsigned kRowStride = kThreads * kVec;
    const std::uint64_t left = n > base ? n - base : 0;  // < kLoads * kRowStride in a partial tile
#pragma unroll
    for (unsigned i = 0; i < kLoads; ++i) {
      Vec<T> x;
#pragma unroll
      for (unsigned j = 0; j < kVec; ++j) x.v[j] = negative_zero<T>();
      if (i * kRowStride + kVec <= left) x = load_vec(input, base + i * kRowStride);
      v[i] = x;
    }
    const unsigned within = static_cast<unsigned>(left % kRowStride);
    if (within != 0 && within < kVec) {  // row left / kRowStride crosses n after `within` elements
      const unsigned cross = static_cast<unsigned>(left / kRowStride);
      const rl::gmem<const T> p = input + base;
#pragma unroll
      for (unsigned i = 0; i < kLoads; ++i)
        if (i == cross)
#pragma unroll
          for (unsigned j = 0; j < kVec; ++j)
            if (j < within) v[i].v[j] = p[i * kRowStride + j];
    }
  } else {
    // Whole rows still as vectors when aligned; element loads only for the row that crosses n
    // (or an unaligned input), at constant offsets from one pointer. 64 separate 16-bit loads
    // with 64-bit addresses took the 16-bit kernels from 48 to 80 registers (3 blocks per SM
    // instead of 5; half sums at 2^30 on an H100 went from 702 to 722-770 us).
    constexpr unsigned kRowStride = kThreads * kVec;
    const rl::gmem<const T> p = input + base;
    const std::uint64_t left = n > base ? n - base : 0;
#pragma unroll
    for (unsigned i = 0; i < kLoads; ++i) {
      const unsigned row = i * kRowStride;
      if (aligned && row + kVec <= left) {
        v[i] = load_vec(input, base + row);
      } else {
#pragma unroll
        for (unsigned j = 0; j < kVec; ++j) {
          T x = negative_zero<T>();
          if (row + j < left) x = p[row + j];
          v[i].v[j] = x;
        }
      }
    }
  }
  if constexpr (std::is_same_v<T, double>) {
    // The tile's doubles split on one shared grid (double_split, exact_sum.cuh): x = q + (x - q)
    // with q on the grid of the tile's largest exponent, so the q's and the rests each sum
    // exactly in plain double when the tile's exponents span at most 44 binades (checked from
    // their high words), and the pair takes two values a tile instead of one per element. Four
    // additions an element and a few integer operations, where a cut on two grids took six
    // additions and a comparison (the FP64 pipe was the tile's busiest). Even and odd elements in
    // separate chains (small n is latency-bound); the chains add up exactly as well.
    std::uint32_t most = 0, least = 0;
    split_magnitude_range<kLoads>(v, &most, &least);
    const DoubleSplit grid = double_split(most, kLoads * kVec);
    if (split_holds(grid, least)) {
      double s1[2] = {0.0, 0.0}, s2[2] = {0.0, 0.0};
      split_add_vectors<kLoads>(grid.sigma, v, s1, s2);
      carry.add(s1[0] + s1[1], spill);
      carry.add(s2[0] + s2[1], spill);
    } else if (most == 0) {  // zeros only: their plain sum is -0 only if every one is
      double zeros = -0.0;
#pragma unroll
      for (unsigned i = 0; i < kLoads; ++i) zeros += v[i].v[0] + v[i].v[1];
      carry.add(zeros, spill);
    } else {  // rare on most data: an infinity or NaN, a wide span of exponents, the range's ends.
      // The elements one by one into the pair, read again (from L1) in a loop that is not
      // unrolled: sixteen inlined copies of the pair's addition cost the common path its speed.
#pragma unroll 1
      for (unsigned i = 0; i < kLoads; ++i)
#pragma unroll 1
        for (unsigned j = 0; j < kVec; ++j) {
          const std::uint64_t at = base + std::uint64_t(i) * kThreads * kVec + j;
          if (at < n) carry.add(input[at], spill);
        }
    }
  } else {
    // The tile's exponent range: the largest magnitude and (one low, cheaply) the smallest
    // non-zero one; zeros wrap to 0xffffffff and drop out of the minimum. 64 halves always sum
    // exactly in double (2^-24 <= |x| < 2^16), so half only looks for infinities and NaN.
    std::uint32_t most = 0, least = 0xffffffffu;
    if constexpr (is_half_like<T>) {
      // Two elements per 32-bit word, with the 16x2 SIMD min/max: bf16 was integer-bound with one
      // element at a time (H100, 2^30: 794 us against half's 697). Half needs only the maximum.
      std::uint32_t w[kLoads * 4];
      memcpy(w, v, sizeof w);
      magnitude_range16<kLoads * 4, std::is_same_v<T, bfloat16>>(w, &most, &least);
    } else {
#pragma unroll
      for (unsigned i = 0; i < kLoads; ++i)
#pragma unroll
        for (unsigned j = 0; j < kVec; ++j) {
          const std::uint32_t m = ExactBits<T>::magnitude(v[i].v[j]);
          most = m > most ? m : most;
          least = m - 1u < least ? m - 1u : least;
        }
    }
    static_assert((kVec * kLoads & (kVec * kLoads - 1)) == 0, "a thread's elements per tile: a power of two");
    constexpr int kLog2Count = std::countr_zero(kVec * kLoads);
    const int emax = static_cast<int>(most >> ExactBits<T>::kShift);
    const int emin = static_cast<int>(least >> ExactBits<T>::kShift);
    if (emax < static_cast<int>(ExactBits<T>::kSpecial) && tile_sum_is_exact<T>(emin, emax, kLog2Count)) {
      // Every partial sum is a double, in any order: kChains chains of additions, since a small
      // launch waits on them (-0 + -0 is -0, so the sum is -0 only if every element is).
      double part[kChains];
#pragma unroll
      for (unsigned c = 0; c < kChains; ++c) part[c] = -0.0;
#pragma unroll
      for (unsigned i = 0; i < kLoads; ++i)
#pragma unroll
        for (unsigned j = 0; j < kVec; ++j) part[(i * kVec + j) % kChains] += exact_value(v[i].v[j]);
#pragma unroll
      for (unsigned width = kChains / 2; width > 0; width /= 2)
#pragma unroll
        for (unsigned c = 0; c < width; ++c) part[c] += part[c + width];
      carry.add(part[0], spill);
    } else {  // rare: a wide exponent range, or an infinity or NaN. The elements are read again
      // (from L1) rather than indexed in v, which would move v to local memory on every tile.
#pragma unroll 1
      for (unsigned i = 0; i < kLoads; ++i)
#pragma unroll 1
        for (unsigned j = 0; j < kVec; ++j) {
          const std::uint64_t at = base + std::uint64_t(i) * kThreads * kVec + j;
          if (at < n) {
            const T x = input[at];
            carry.add(exact_value(x), spill);
          }
        }
    }
  }
}

// The warp's sums of one double per lane (v, zero for none) as pieces of the block's digits: the
// lanes whose pieces fall within four digits of the warp's lowest sum them across the warp, and
// every lane gets the four sums w of digits *low, *low + 1, ... (*low = 0xffffffff: no lane has
// anything); a lane further up (rare: values of very different size) adds its own pieces to
// `digits` with atomics. (Every lane adding its own pieces meant 32-way conflicting 64-bit
// atomics on shared memory: about 12 us per block on an H100.)
template <class T>
__device__ __forceinline__ void warp_digit_sums(double v, rl::smem<unsigned long long> digits, unsigned* low,
                                                long long (&w)[4]) {
  constexpr unsigned kAll = 0xffffffffu;
  DigitPieces q{0, {0, 0, 0}};
  if (v != 0) q = pieces_of(v, ExactTraits<T>::kBase);
  const unsigned d = v != 0 ? static_cast<unsigned>(q.digit) : kAll;
  *low = __reduce_min_sync(kAll, d);
#pragma unroll
  for (int j = 0; j < 4; ++j) w[j] = 0;
  if (*low == kAll) return;  // uniform: no lane has anything
  const bool near = d != kAll && d - *low <= 1;
  if (near) {
    const bool up = d != *low;
#pragma unroll
    for (int j = 0; j < 3; ++j) {
      w[j] += up ? 0 : q.p[j];
      w[j + 1] += up ? q.p[j] : 0;
    }
  } else if (d != kAll) {
#pragma unroll
    for (int j = 0; j < 3; ++j)
      if (q.p[j] != 0) atomicAdd(&digits[q.digit + j], static_cast<unsigned long long>(q.p[j]));
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
#pragma unroll
    for (int j = 0; j < 4; ++j) w[j] += __shfl_xor_sync(kAll, w[j], offset);
}
// The same, the sums added to the block's digits by lane 0.
template <class T>
__device__ __forceinline__ void warp_spill(double v, rl::smem<unsigned long long> digits) {
  unsigned low;
  long long w[4];
  warp_digit_sums<T>(v, digits, &low, w);
  if (low != 0xffffffffu && threadIdx.x % 32 == 0) {
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (w[j] != 0) atomicAdd(&digits[low + j], static_cast<unsigned long long>(w[j]));
  }
}

// Two windows a warp (its lanes' a's and b's): what the exact double kernels' ends hand
// over without atomics on the block's digits. A window is four digit sums from its first digit
// (low, 0xffffffff for none): kBlockWindows first digits, then 4 * kBlockWindows sums.
inline constexpr unsigned kBlockWindows = 2 * kWarps;
static_assert(kBlockWindows <= 32, "one warp merges the windows");
struct BlockWindows {
  rl::smem<unsigned> low;   // kBlockWindows
  rl::smem<long long> sum;  // 4 * kBlockWindows
};

// The flags of the warp's carries (exact_sum.cuh's), in every lane.
__device__ __forceinline__ unsigned warp_flags(const ExactCarry& carry) {
  constexpr unsigned kAll = 0xffffffffu;
  const bool only_negative_zeros = carry.a == 0 && (bits_of_double(carry.a) >> 63) != 0;
  const unsigned seen = carry.flags | (only_negative_zeros ? 0u : kSawNonNegZero);
  unsigned warp_seen = 0;
#pragma unroll
  for (unsigned bit = 1; bit <= kSawNonNegZero; bit <<= 1)
    if (__ballot_sync(kAll, (seen & bit) != 0) != 0) warp_seen |= bit;
  return warp_seen;
}
// The end of a thread's work: its pair goes to the block's digits (warp by warp, above); returns
// the warp's flags, in every lane.
template <class T>
__device__ __forceinline__ unsigned warp_finish(const ExactCarry& carry, rl::smem<unsigned long long> digits) {
  warp_spill<T>(carry.a, digits);
  warp_spill<T>(carry.b, digits);
  return warp_flags(carry);
}
// The same into the warp's two windows instead of atomics on the digits: 64-bit atomics on
// shared memory are compare-and-swap loops, and eight warps adding to the same few digits cost
// exact double sums 0.5-0.6 us a launch, of which the windows win back 0.1-0.2 (H200,
// docs/performance.md). Exact float sums were 0.1-0.3 us slower with the windows, so their
// kernels keep warp_finish.
template <class T>
__device__ __forceinline__ unsigned warp_finish_to_windows(const ExactCarry& carry, rl::smem<unsigned long long> digits,
                                                           const BlockWindows& windows) {
  const unsigned warp = threadIdx.x / 32;
  unsigned low;
  long long w[4];
#pragma unroll
  for (unsigned k = 0; k < 2; ++k) {
    warp_digit_sums<T>(k == 0 ? carry.a : carry.b, digits, &low, w);
    if (threadIdx.x % 32 == 0) {
      const unsigned slot = 2 * warp + k;
      windows.low[slot] = low;
#pragma unroll
      for (unsigned j = 0; j < 4; ++j) windows.sum[4 * slot + j] = w[j];
    }
  }
  return warp_flags(carry);
}
// After a barrier, by the block's first warp: the windows into the digits. Lane k adds up digit
// base + k of every window (base: the lowest window's first digit) and adds it once, with a plain
// addition, or an atomic one (kAtomic) where other blocks may be adding to the same digits (in a
// cluster); a window reaching past digit base + 31 (rare) is added with atomics by the lane that
// holds it.
template <bool kAtomic = false>
__device__ __forceinline__ void merge_windows(const BlockWindows& windows, rl::smem<unsigned long long> digits) {
  constexpr unsigned kAll = 0xffffffffu;
  const unsigned lane = threadIdx.x % 32;
  const unsigned mine = lane < kBlockWindows ? static_cast<unsigned>(windows.low[lane]) : kAll;
  const unsigned base = __reduce_min_sync(kAll, mine);
  if (base == kAll) return;  // uniform: nothing to add
  long long s = 0;
#pragma unroll 4
  for (unsigned i = 0; i < kBlockWindows; ++i) {
    const unsigned low = windows.low[i];
    const unsigned r = base + lane - low;  // wraps for windows that start above this lane's digit
    if (low != kAll && low + 3 <= base + 31 && r < 4) s += windows.sum[4 * i + r];
  }
  if (s != 0) {
    if constexpr (kAtomic) atomicAdd(&digits[base + lane], static_cast<unsigned long long>(s));
    else digits[base + lane] += static_cast<unsigned long long>(s);
  }
  __syncwarp();
  if (mine != kAll && mine + 3 > base + 31)
#pragma unroll
    for (unsigned j = 0; j < 4; ++j) {
      const long long v = windows.sum[4 * lane + j];
      if (v != 0) atomicAdd(&digits[mine + j], static_cast<unsigned long long>(v));
    }
}

// The block's threads' pairs into its digits through the warps' windows (in the caller's shared
// memory), and its flags into misc[0]: the exact double kernels' ends, called by the whole block.
// kAtomic: the first warp's merge adds atomically (a cluster's other blocks may be adding to
// these digits already). The digits are final after the caller's next barrier.
template <class T, bool kAtomic = false>
__device__ __forceinline__ void hand_over_through_windows(const ExactCarry& carry, rl::smem<unsigned long long> digits,
                                                          rl::smem<unsigned> misc, const BlockWindows& windows) {
  const unsigned seen = warp_finish_to_windows<T>(carry, digits, windows);
  if (threadIdx.x % 32 == 0 && seen != 0) atomicOr(&misc[0], seen);
  __syncthreads();
  if (threadIdx.x < 32) merge_windows<kAtomic>(windows, digits);
}

// One step of a warp's tree of exact pairs: lane l (l < offset) takes lane l + offset's pair,
// and what the two doubles cannot hold exactly goes to the block's digits. The two halves are
// added side by side (a + qa and b + qb), then the first sum's error joins the second: three
// TwoSums, two of them independent, where ExactCarry::merge chains four.
template <class T>
__device__ __forceinline__ void merge_pair_down(double& a, double& b, unsigned offset,
                                                rl::smem<unsigned long long> digits) {
  constexpr unsigned kAll = 0xffffffffu;
  const double qa = __shfl_down_sync(kAll, a, offset), qb = __shfl_down_sync(kAll, b, offset);
  double s, e, u, r1, t, r2;
  two_sum(a, qa, s, e);
  two_sum(b, qb, u, r1);
  two_sum(u, e, t, r2);
  if (r1 != 0 || r2 != 0) {  // rare (NaN compares unequal too): only lanes whose sum is used spill
    if (threadIdx.x % 32 < offset) {
      const BlockDigits<T, true> spill{digits};
      if (!finite_double(s) || !finite_double(t)) {  // a double sum past DBL_MAX: hand all four over
        spill(a);
        spill(b);
        spill(qa);
        spill(qb);
        s = 0.0;
        t = 0.0;
      } else {
        spill(r1);
        spill(r2);
      }
    }
  }
  a = s;
  b = t;
}
// The pairs of lanes [0, kWidth) summed exactly into lane 0's (kWidth a power of two; lanes
// from kWidth on hold zeros). When the doubles' exponents lie close enough together that every
// partial sum is a double (pair_window_holds), plain additions do it, one per step; otherwise
// each step merges TwoSum pairs (merge_pair_down).
template <class T, unsigned kWidth>
__device__ __forceinline__ void warp_sum_pairs(double& a, double& b, rl::smem<unsigned long long> digits,
                                               unsigned width = kWidth) {
  constexpr unsigned kAll = 0xffffffffu;
  const PairWindow w = pair_window(a, b);
  const int lsb = __reduce_min_sync(kAll, w.lsb);
  const int top = __reduce_max_sync(kAll, w.top);
  if (pair_window_holds(lsb, top, 2 * kWidth)) {
    double s = a + b;
#pragma unroll
    for (unsigned offset = kWidth / 2; offset > 0; offset >>= 1) s += __shfl_down_sync(kAll, s, offset);
    a = s;
    b = 0.0;
    return;
  }
  // Only the steps the lanes in use need (width <= kWidth: a cluster of fewer blocks).
#pragma unroll
  for (unsigned offset = kWidth / 2; offset > 0; offset >>= 1)
    if (offset < width) merge_pair_down<T>(a, b, offset, digits);
}

// Lane 0 writes the result from the block's digits (shared memory, kD of them; final when the
// warp calls this) and flags; the whole warp calls it (the span of non-zero digits is found
// with ballots, not by one thread).
template <class T, class Out, bool kMean>
__device__ __forceinline__ void warp_write_result(rl::smem<unsigned long long> digits, unsigned flags, std::uint64_t n,
                                                  rl::gmem<Out> output) {
  constexpr int kD = ExactTraits<T>::kDigits;
  const unsigned lane = threadIdx.x % 32;
  int first = -1, last = -1;
#pragma unroll
  for (int w = 0; w < (kD + 31) / 32; ++w) {
    const int d = 32 * w + static_cast<int>(lane);
    const unsigned mask = __ballot_sync(0xffffffffu, d < kD && digits[d] != 0);
    if (mask == 0) continue;
    if (first < 0) first = 32 * w + __ffs(static_cast<int>(mask)) - 1;
    last = 32 * w + highest_bit(mask);
  }
  if (lane == 0) {
    std::uint32_t words[kD + 4];
    output[0] = n == 0 ? (kMean ? std::numeric_limits<Out>::quiet_NaN() : Out(0))
                       : exact_result<T, Out, kMean>(digits, first, last, flags, kMean ? n : 1, words);
  }
}
// The same, called by the whole block (its first warp does the work).
template <class T, class Out, bool kMean>
__device__ __forceinline__ void write_result(rl::smem<unsigned long long> digits, unsigned flags, std::uint64_t n,
                                             rl::gmem<Out> output) {
  if (threadIdx.x < 32) warp_write_result<T, Out, kMean>(digits, flags, n, output);
}

// What a block of a cluster other than the first adds into the first block's: its digits that
// are not zero and its flags. Threads t, t + kStride, ... take the digits; thread t == 0 the flags.
template <class T, unsigned kStride>
__device__ __forceinline__ void send_to_leader(rl::smem<unsigned long long> digits, rl::smem<unsigned> misc,
                                               unsigned t) {
#pragma unroll
  for (unsigned d = t; d < static_cast<unsigned>(ExactTraits<T>::kDigits); d += kStride) {
    const unsigned long long v = digits[d];
    if (v != 0) atomicAdd(in_cluster_leader(digits + d), v);
  }
  if (t == 0 && misc[0] != 0) atomicOr(in_cluster_leader(misc + 0), static_cast<unsigned>(misc[0]));
}

// The end of a small launch (kSmall below: at most one cluster, a tile per block; on SIMT, one
// block). No digits unless a pair cannot hold something: each warp merges its lanes' pairs with
// shuffles, the first warp merges the warps' pairs, each block puts its pair in a slot of the
// cluster's first block, and that block's first warp merges the slots and rounds the pair once.
// Only when some step left a remainder (the digits are not all zero) is the pair added to the
// digits and the digits rounded, as the large launch does. The pairs are exact, so the result
// is the same whatever the grouping.
template <class T, class Out, bool kMean>
__device__ __forceinline__ void small_launch_end(const ExactCarry& carry, rl::smem<unsigned long long> digits,
                                                 rl::smem<unsigned> misc, std::uint64_t n, rl::gmem<Out> output) {
  constexpr unsigned kAll = 0xffffffffu;
  constexpr unsigned kD = ExactTraits<T>::kDigits;
  constexpr unsigned kWarps = kThreads / 32;
  __shared__ double warp_storage[2 * kWarps];
  __shared__ double block_storage[2 * kMaxClusterBlocks];
  rl::smem<double> warp_pairs = warp_storage;
  rl::smem<double> block_pairs = block_storage;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const bool many = gridDim.x > 1;  // the grid is one cluster
  const unsigned rank = many ? cluster_rank() : 0u;
  double a = carry.a, b = carry.b;
  const unsigned seen = warp_flags(carry);
  warp_sum_pairs<T, 32>(a, b, digits);
  if (lane == 0) {
    warp_pairs[2 * warp] = a;
    warp_pairs[2 * warp + 1] = b;
    if (seen != 0) atomicOr(&misc[0], seen);
  }
  __syncthreads();
  if (warp == 0) {
    a = lane < kWarps ? static_cast<double>(warp_pairs[2 * lane]) : 0.0;
    b = lane < kWarps ? static_cast<double>(warp_pairs[2 * lane + 1]) : 0.0;
    warp_sum_pairs<T, kWarps>(a, b, digits);
    if (many) {
      __syncwarp();    // this warp's remainders are in the digits before they are read
      cluster_wait();  // every block of the cluster has started: its shared memory exists
      if (lane == 0) {
        const rl::smem<double> slot = in_cluster_leader(block_pairs + 2 * rank);
        slot[0] = a;
        slot[1] = b;
      }
      if (rank != 0) send_to_leader<T, 32>(digits, misc, lane);
    }
  } else if (many) {
    cluster_wait();
  }
  if (many) {
    cluster_arrive();  // release: the slots, flags and digits above
    cluster_wait();
    if (rank != 0) return;
  }
  if (warp != 0) return;
  if (many) {
    a = lane < gridDim.x ? static_cast<double>(block_pairs[2 * lane]) : 0.0;
    b = lane < gridDim.x ? static_cast<double>(block_pairs[2 * lane + 1]) : 0.0;
    warp_sum_pairs<T, kMaxClusterBlocks>(a, b, digits, gridDim.x);
  }
  __syncwarp();
  const unsigned flags = misc[0];
  bool remainders = false;
  for (unsigned d = lane; d < kD; d += 32) remainders = remainders || digits[d] != 0;
  if (!__any_sync(kAll, remainders)) {
    if (lane == 0) {
      Out r;
      if (n == 0) r = kMean ? std::numeric_limits<Out>::quiet_NaN() : Out(0);
      else if (!special_result(flags, &r)) r = kMean ? pair_mean<T, Out>(a, b, flags, n) : round_pair<Out>(a, b, flags);
      output[0] = r;
    }
    return;
  }
  if (lane == 0) {  // rare: the pair joins the digits
    const BlockDigits<T, true> spill{digits};
    spill(a);
    spill(b);
  }
  __syncwarp();
  warp_write_result<T, Out, kMean>(digits, flags, n, output);
}

// The end of a cluster of double sums: every thread's pair goes to its block's digits, each block
// adds its digits into the first block's with shared-memory atomics, and that block rounds them.
// Pairs of doubles with full 53-bit significands leave remainders when merged across warps and
// blocks, and merging them was slower here than the digits: on an H100, 2^14 and 2^16 doubles
// took 9.3-9.9 us with small_launch_end's pairs and 8.8-9.2 with this (cold). Measured again
// after the tiles' cut (fold_tile_exact's double path), on data whose pairs merge with no
// remainder: still slower, 7.75 -> 7.89 us at 2^14 and 8.01 -> 8.22 at 2^16.
template <class T, class Out, bool kMean>
__device__ __forceinline__ void cluster_digits_end(const ExactCarry& carry, rl::smem<unsigned long long> digits,
                                                   rl::smem<unsigned> misc, std::uint64_t n, rl::gmem<Out> output) {
  __shared__ unsigned window_low[kBlockWindows];
  __shared__ long long window_sum[4 * kBlockWindows];
  hand_over_through_windows<T, true>(carry, digits, misc, {window_low, window_sum});  // the other blocks may be adding already
  __syncthreads();
  const unsigned rank = cluster_rank();
  cluster_wait();  // every block of the cluster has started: its shared memory exists
  if (rank != 0) send_to_leader<T, kThreads>(digits, misc, threadIdx.x);
  cluster_arrive();
  cluster_wait();
  if (rank != 0) return;
  write_result<T, Out, kMean>(digits, misc[0], n, output);
}

// Blocks per SM the large kernels are compiled for (0: ptxas's choice, for the small launch).
// Left to itself, ptxas moved between register counts with small changes of the code (float 48
// or 64, double 62 to 70, some with spills); these give the counts measured fastest: 48
// registers for 4-byte elements, 80 for 2-byte and 64 for double.
template <class T, bool kSmall>
inline constexpr int kExactBlocksPerSM = kSmall ? 0 : sizeof(T) == 4 ? 5 : sizeof(T) == 2 ? 3 : 4;

// The mid-size shape of bfloat16 sums: tiles of 4 vectors a thread (8192 elements) and 4 blocks an
// SM (48 registers), from 2^18 to 2^25 elements, where the 8-vector tiles of the large kernel
// leave most SMs idle (2^20 elements: 64 tiles) or fill them unevenly. It was measured on half
// sums, when halves still came here (H100, bench/exact_probe shapes, cold): 2^18 7.33-7.49 ->
// 7.07-7.14 us, 2^20 8.03 -> 7.58, 2^24 18.6-18.8 -> 18.4; from 2^26 the 8-vector tiles were as fast or faster (2^28 178.0 against 181.0-183.7), and
// for float and double no mid-size shape tried was faster at every size it would cover.
inline constexpr unsigned kExactMidLoads = 4;
inline constexpr int kExactMidBlocksPerSM = 4;
template <class T>
inline constexpr bool kHasExactMidShape = std::is_same_v<T, bfloat16>;
template <class T>
inline constexpr std::uint64_t kExactMidTile = std::uint64_t(kThreads) * Shape<T>::kVec * kExactMidLoads;
template <class T>
inline bool exact_mid_shape(std::uint64_t n) {
  return kHasExactMidShape<T> && n >= (std::uint64_t(1) << 18) && n < (std::uint64_t(1) << 25);
}

// reduceExact — see the file comment. Out is float or double; kMean divides by n before the
// one rounding. `exact` (kExactWords words) and `ticket` are zero before and after a launch.
// kSmall: the instantiation for small launches, one block or one cluster of blocks with a tile
// each (on SIMT, one block of at most kFlushTiles tiles), which ends with small_launch_end; the
// other one has none of that code, which cost it 3-5% from 2^18 up when the cluster code was
// there (float sum at 2^26 on an H100: 95.1 -> 99.4 us, cold).
template <class T, class Out, bool kMean, bool kSmall = false, unsigned kLoads = kItems,
          int kBlocksPerSM = kExactBlocksPerSM<T, kSmall>>
__global__ void __launch_bounds__(kThreads, kBlocksPerSM)
    reduceExact(rl::gmem<const T> input, std::uint64_t n, unsigned flags, rl::gmem<unsigned long long> exact,
                rl::gmem<unsigned> ticket, rl::gmem<Out> output) {
  constexpr int kD = ExactTraits<T>::kDigits;
  constexpr std::uint64_t kTile = std::uint64_t(kThreads) * Shape<T>::kVec * kLoads;
  __shared__ unsigned long long digit_storage[kD];
  rl::smem<unsigned long long> digits = digit_storage;
  __shared__ unsigned misc_storage[2];  // the block's flags, whether it is the last block
  rl::smem<unsigned> misc = misc_storage;
  if (threadIdx.x < static_cast<unsigned>(kD)) digits[threadIdx.x] = 0ull;
  if (threadIdx.x == 0) misc[0] = 0u;
  __syncthreads();
  if (kSmall && gridDim.x > 1) cluster_arrive();  // release: the zeroed digits before other blocks add to them
  if (!kSmall && !RL_SIMT && blockIdx.x == 0 && gridDim.x > 1) {
    // Every block ends with atomics on the launch's digits and on the ticket: block 0 has L2 fetch
    // their lines now, so that in a call after an L2 flush none of those atomics waits for DRAM.
    constexpr unsigned kLines = (static_cast<unsigned>(kD) + 1) * 8 / 128 + 2;  // the digits may straddle a line
    if (threadIdx.x < kLines) rl::prefetch_l2(exact + threadIdx.x * 16);
    if (threadIdx.x == kLines) rl::prefetch_l2(ticket);
  }
  wait_for_producer();

  const bool aligned = (flags & kAligned) != 0;
  // Four chains of additions per tile where that costs no block per SM (16-bit elements in the
  // large kernel would go from 80 to 93 registers: two blocks an SM instead of three).
  constexpr unsigned kFoldChains = kSmall || sizeof(T) == 4 ? 4 : 1;
  const BlockDigits<T, kSmall> spill{digits};
  ExactCarry carry;
  const std::uint64_t tiles = (n + kTile - 1) / kTile;
  std::uint64_t since_flush = 0;
  bool flushed = false;
  for (std::uint64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    fold_tile_exact<T, kFoldChains, kSmall, kLoads>(input, t * kTile, n, aligned, carry, spill);
    if (!kSmall && ++since_flush == kFlushTiles) {  // the same count in every thread of the block
      since_flush = 0;
      flushed = true;
      __syncthreads();
      flush_digits<T>(digits, exact);
      __syncthreads();
    }
  }
  let_consumer_start();
  if constexpr (kSmall) {
    if constexpr (std::is_same_v<T, double>) {
      if (gridDim.x > 1) {
        cluster_digits_end<T, Out, kMean>(carry, digits, misc, n, output);
        return;
      }
    }
    small_launch_end<T, Out, kMean>(carry, digits, misc, n, output);
    return;
  }
  if constexpr (std::is_same_v<T, double>) {  // float sums were slower with the windows
    __shared__ unsigned window_low[kBlockWindows];
    __shared__ long long window_sum[4 * kBlockWindows];
    hand_over_through_windows<T>(carry, digits, misc, {window_low, window_sum});
  } else {
    const unsigned seen = warp_finish<T>(carry, digits);
    if (threadIdx.x % 32 == 0 && seen != 0) atomicOr(&misc[0], seen);
  }
  __syncthreads();
  if (gridDim.x == 1 && !flushed) {  // one block (small n): its digits are the answer
    const unsigned seen_flags = misc[0];
    write_result<T, Out, kMean>(digits, seen_flags, n, output);
    return;
  }
  flush_digits<T>(digits, exact);
  if (threadIdx.x == 0 && misc[0] != 0) atomicOr(&exact[kMaxExactDigits], static_cast<unsigned long long>(misc[0]));
  // The barrier orders every thread's digit atomics before thread 0's ticket, whose release
  // half (take_ticket) makes them visible to the last block before it sees the ticket: no fence
  // in each of the kD threads (each waited for its own atomics to reach L2).
  __syncthreads();

  if (gridDim.x > 1) {
    if (threadIdx.x == 0) misc[1] = take_ticket(ticket) == gridDim.x - 1 ? 1u : 0u;
    __syncthreads();
    const unsigned last = misc[1];
    if (last == 0) return;  // uniform across the block
  }
  // The last block: read the launch's digits, round once, zero them for the next launch.
  if (threadIdx.x < static_cast<unsigned>(kD)) digits[threadIdx.x] = load_other_block(exact, threadIdx.x);
  if (threadIdx.x == 0) misc[0] = static_cast<unsigned>(load_other_block(exact, kMaxExactDigits));
  __syncthreads();
  const unsigned seen_flags = misc[0];
  if (threadIdx.x < static_cast<unsigned>(kD)) exact[threadIdx.x] = 0ull;
  if (threadIdx.x == 0) {
    exact[kMaxExactDigits] = 0ull;
    ticket[0] = 0u;
  }
  write_result<T, Out, kMean>(digits, seen_flags, n, output);
}

}  // namespace reducelab::detail
