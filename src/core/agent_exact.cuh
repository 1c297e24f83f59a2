#pragma once
// The kernel of reducelab's exact floating-point sums and means (exact_sum.cuh has the
// arithmetic). One launch:
//   1. blocks walk the tiles of the array (a grid-stride loop over 32 KiB tiles); each thread
//      sums its part of a tile in double when that is exact (the exponents lie close together),
//      and carries the running total as a TwoSum pair; what the pair cannot hold exactly goes to
//      the block's digits in shared memory (integer atomics);
//   2. at the end each thread hands its pair to the block's digits, and the block adds its
//      digits into the launch's digits in global memory (integer atomics again: any order gives
//      the same integers);
//   3. the last block to finish (a ticket) rounds the digits once, writes the result and zeroes
//      the digits for the next launch.
// Nothing here depends on the grid or on which block ran what: the result is the exact sum,
// rounded, on every GPU and for every split.
#include <cstdint>

#include "core/agent_reduce.cuh"
#include "core/exact_sum.cuh"
#include "core/reduce_order.hpp"
#include "simt/portable.cuh"

namespace reducelab::detail {

// Digits in the workspace: kMaxExactDigits digits, then the flags word.
inline constexpr unsigned kExactWords = kMaxExactDigits + 1;
// A block moves its shared digits to global memory at least every kFlushTiles tiles, so no
// int64 digit can overflow: <= 2^24 elements between flushes, each adding < 9 pieces of < 2^32.
inline constexpr std::uint64_t kFlushTiles = 2048;

template <class T>
struct ExactBits;  // the magnitude bits of a 16- or 32-bit floating-point element
template <>
struct ExactBits<float> {
  static constexpr unsigned kShift = 23, kSpecial = 0xff;  // exponent field position, inf/NaN value
  static __device__ __forceinline__ std::uint32_t magnitude(float x) { return bits_of_float(x) & 0x7fffffffu; }
};
template <>
struct ExactBits<bfloat16> {
  static constexpr unsigned kShift = 7, kSpecial = 0xff;
  static __device__ __forceinline__ std::uint32_t magnitude(bfloat16 x) { return x.bits & 0x7fffu; }
};
template <>
struct ExactBits<half> {
  static constexpr unsigned kShift = 10, kSpecial = 0x1f;
  static __device__ __forceinline__ std::uint32_t magnitude(half x) { return x.bits & 0x7fffu; }
};

template <class T>
__device__ __forceinline__ double exact_value(T x) {
  return static_cast<double>(widen(x));
}

// The block's digits in shared memory and how a value enters them.
template <class T>
struct BlockDigits {
  rl::smem<unsigned long long> digits;
  __device__ __forceinline__ void operator()(double v) const {
    if (v == 0) return;
    const Pieces q = pieces_of(v, ExactTraits<T>::kBase);
#pragma unroll
    for (int j = 0; j < 3; ++j)
      if (q.p[j] != 0) atomicAdd(&digits[q.digit + j], static_cast<unsigned long long>(q.p[j]));
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

// One thread's part of one tile (kItems vectors of kVec elements, thread t owns vector t of
// each row), every element read, into `carry`.
template <class T, class Spill>
__device__ __forceinline__ void fold_tile_exact(rl::gmem<const T> input, std::uint64_t tile, std::uint64_t n,
                                                bool aligned, ExactCarry& carry, const Spill& spill) {
  constexpr unsigned kVec = Shape<T>::kVec;
  constexpr std::uint64_t kTile = Shape<T>::kTile;
  const std::uint64_t base = tile + std::uint64_t(threadIdx.x) * kVec;
  if (aligned && tile + kTile <= n) {
    Vec<T> v[kItems];
#pragma unroll
    for (unsigned i = 0; i < kItems; ++i) v[i] = load_vec(input, base + std::uint64_t(i) * kThreads * kVec);
    if constexpr (std::is_same_v<T, double>) {
#pragma unroll
      for (unsigned i = 0; i < kItems; ++i)
#pragma unroll
        for (unsigned j = 0; j < kVec; ++j) carry.add(v[i].v[j], spill);
    } else {
      // The tile's exponent range: the largest magnitude and (one low, cheaply) the smallest
      // non-zero one; zeros wrap to 0xffffffff and drop out of the minimum.
      std::uint32_t most = 0, least = 0xffffffffu;
#pragma unroll
      for (unsigned i = 0; i < kItems; ++i)
#pragma unroll
        for (unsigned j = 0; j < kVec; ++j) {
          const std::uint32_t m = ExactBits<T>::magnitude(v[i].v[j]);
          most = m > most ? m : most;
          least = m - 1u < least ? m - 1u : least;
        }
      constexpr int kLog2Count = kVec * kItems == 32 ? 5 : 6;
      const int emax = static_cast<int>(most >> ExactBits<T>::kShift);
      const int emin = static_cast<int>(least >> ExactBits<T>::kShift);
      if (emax < static_cast<int>(ExactBits<T>::kSpecial) && tile_sum_is_exact<T>(emin, emax, kLog2Count)) {
        double sum = -0.0;  // every partial sum is a double: this is the tile's exact sum
#pragma unroll
        for (unsigned i = 0; i < kItems; ++i)
#pragma unroll
          for (unsigned j = 0; j < kVec; ++j) sum += exact_value(v[i].v[j]);
        carry.add(sum, spill);
      } else {  // rare: a wide exponent range, or an infinity or NaN
#pragma unroll 1
        for (unsigned i = 0; i < kItems; ++i)
#pragma unroll 1
          for (unsigned j = 0; j < kVec; ++j) carry.add(exact_value(v[i].v[j]), spill);
      }
    }
  } else {  // the array's last tile, or an input that is not 16-byte aligned: element by element
#pragma unroll 1
    for (unsigned i = 0; i < kItems; ++i) {
      const std::uint64_t at = base + std::uint64_t(i) * kThreads * kVec;
#pragma unroll 1
      for (unsigned j = 0; j < kVec && at + j < n; ++j) {
        const T x = input[at + j];
        carry.add(exact_value(x), spill);
      }
    }
  }
}

// reduceExact — see the file comment. Out is float or double; kMean divides by n before the
// one rounding. `exact` (kExactWords words) and `ticket` are zero before and after a launch.
template <class T, class Out, bool kMean>
__global__ void __launch_bounds__(kThreads)
    reduceExact(rl::gmem<const T> input, std::uint64_t n, unsigned flags, rl::gmem<unsigned long long> exact,
                rl::gmem<unsigned> ticket, rl::gmem<Out> output) {
  constexpr int kD = ExactTraits<T>::kDigits;
  constexpr std::uint64_t kTile = Shape<T>::kTile;
  __shared__ unsigned long long digit_storage[kD];
  rl::smem<unsigned long long> digits = digit_storage;
  __shared__ unsigned misc_storage[2];  // the block's flags, whether it is the last block
  rl::smem<unsigned> misc = misc_storage;
  if (threadIdx.x < static_cast<unsigned>(kD)) digits[threadIdx.x] = 0ull;
  if (threadIdx.x == 0) misc[0] = 0u;
  __syncthreads();

  const bool aligned = (flags & kAligned) != 0;
  const BlockDigits<T> spill{digits};
  ExactCarry carry;
  const std::uint64_t tiles = (n + kTile - 1) / kTile;
  std::uint64_t since_flush = 0;
  for (std::uint64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    fold_tile_exact<T>(input, t * kTile, n, aligned, carry, spill);
    if (++since_flush == kFlushTiles) {  // the same count in every thread of the block
      since_flush = 0;
      __syncthreads();
      flush_digits<T>(digits, exact);
      __syncthreads();
    }
  }
  const unsigned seen = carry.finish(spill);
  if (seen != 0) atomicOr(&misc[0], seen);
  __syncthreads();
  flush_digits<T>(digits, exact);
  if (threadIdx.x == 0 && misc[0] != 0) atomicOr(&exact[kMaxExactDigits], static_cast<unsigned long long>(misc[0]));
  __threadfence();  // this block's digits reach the device before its ticket
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
  if (threadIdx.x < static_cast<unsigned>(kD)) exact[threadIdx.x] = 0ull;
  if (threadIdx.x == 0) {
    exact[kMaxExactDigits] = 0ull;
    ticket[0] = 0u;
    std::int64_t d[kD];
    for (int i = 0; i < kD; ++i) {
      const unsigned long long v = digits[i];
      d[i] = static_cast<std::int64_t>(v);
    }
    std::uint32_t words[kD + 4];
    Out r;
    if (n == 0) r = kMean ? std::numeric_limits<Out>::quiet_NaN() : Out(0);
    else r = exact_result<T, Out>(d, misc[0], kMean ? n : 1, words);
    output[0] = r;
  }
}

}  // namespace reducelab::detail
