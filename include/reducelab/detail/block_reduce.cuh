#pragma once
// Step 2 of the fixed order (reduce_order.hpp): a warp folds its 32 values with shuffle-down
// steps of 16, 8, 4, 2 and 1 lanes, and a block folds its warps' results the same way in warp 0.
// The tree is the same on every GPU; cpu_reduce.hpp replays it lane by lane.
#include <cstdint>
#include <type_traits>

#include "reducelab/detail/exact_sum.cuh"
#include "reducelab/detail/reduce_order.hpp"
#include "reducelab/types.hpp"
#include "reducelab/detail/portable.cuh"

namespace reducelab::detail {

inline constexpr unsigned kFullMask = 0xffffffffu;

// An accumulator through one warp shuffle, word by word: `shfl(x)` moves one value of up to 8
// bytes (the whole warp must call it).
template <class A, class Shfl>
__device__ __forceinline__ A shuffle_words(A v, Shfl shfl) {
  if constexpr (sizeof(A) <= 8 && std::is_trivially_copyable_v<A> && !std::is_class_v<A>) {
    return shfl(v);
  } else if constexpr (sizeof(A) == 16 && !std::is_class_v<A>) {  // a 128-bit integer: two halves
    const auto lo = shfl(static_cast<unsigned long long>(v));
    const auto hi = shfl(static_cast<unsigned long long>(v >> 64));
    return (static_cast<A>(hi) << 64) | static_cast<A>(lo);
  } else if constexpr (std::is_same_v<A, half> || std::is_same_v<A, bfloat16>) {
    A r;
    r.bits = static_cast<std::uint16_t>(shfl(static_cast<unsigned>(v.bits)));
    return r;
  } else if constexpr (requires { v.s; v.most; v.least; }) {  // a WindowSum (exact piece sums)
    A r;
    r.s = shfl(v.s);
    r.most = shfl(v.most);
    r.least = shfl(v.least);
    return r;
  } else if constexpr (requires { A::kWords; v.w[0]; }) {  // a wide integer (exact_wide.cuh): word by word
    A r;
#pragma unroll
    for (unsigned k = 0; k < A::kWords; ++k) r.w[k] = shfl(v.w[k]);
    return r;
  } else if constexpr (requires { A::kTwoDoubles; }) {  // a pair of doubles (exact piece sums)
    A r;
    r.a = shfl(v.a);
    r.b = shfl(v.b);
    return r;
  } else {  // ArgResult<T>: value and index travel separately
    A r;
    r.value = shuffle_words(v.value, shfl);
    r.index = shfl(v.index);
    return r;
  }
}

template <class A>
__device__ __forceinline__ A shuffle_down(A v, unsigned offset) {
  return shuffle_words(v, [&](auto x) { return __shfl_down_sync(kFullMask, x, offset); });
}
// Lane `from`'s accumulator.
template <class A>
__device__ __forceinline__ A shuffle_from(A v, unsigned from) {
  return shuffle_words(v, [&](auto x) { return __shfl_sync(kFullMask, x, from); });
}

// A warp's exact pairs (accumulators of two doubles whose sum is exact: the exact piece sums)
// summed on one grid instead of merged pair by pair down the tree: the warp's largest and smallest
// magnitudes by redux, each lane's two doubles split on the grid (split_add, exact_sum.cuh), the
// grid parts and the rests in two plain double sums down the shuffle tree (exact: the grid is made
// for the warp's 64 values), and lane 0's TwoSum of the two. Where the values lie farther apart
// than the grid reaches, or are zeros only, or a pair is special (an infinity, NaN or a lost sum:
// its first double is NaN), returns false in every lane and leaves v as it was.
template <class A>
__device__ __forceinline__ bool warp_split_fold(A& v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  (void)v;
  return false;  // no redux before sm_80: the tree
#else
  const bool special = v.a != v.a;
  const std::uint32_t ma = split_magnitude(v.a), mb = split_magnitude(v.b);
  const std::uint32_t most = special ? 0xffffffffu : (ma > mb ? ma : mb);  // special: no usable grid
  const std::uint32_t la = ma - 1u, lb = mb - 1u;                           // zeros wrap to the top
  const DoubleSplit grid = double_split(__reduce_max_sync(kFullMask, most), 2 * 32);
  if (!split_holds(grid, __reduce_min_sync(kFullMask, la < lb ? la : lb))) return false;
  double s1 = 0.0, s2 = 0.0;
  split_add(grid.sigma, v.a, s1, s2);
  split_add(grid.sigma, v.b, s1, s2);
#pragma unroll
  for (unsigned offset = 16; offset > 0; offset >>= 1) {
    s1 += __shfl_down_sync(kFullMask, s1, offset);
    s2 += __shfl_down_sync(kFullMask, s2, offset);
  }
  two_sum(s1, s2, v.a, v.b);
  return true;
#endif
}

// Lane 0 ends with combine over the warp in the fixed tree; other lanes hold partial folds. Exact
// pairs that ask for it (Sem::kSplitWarpFold) are summed on one grid first (warp_split_fold): any
// grouping of an exact sum gives the same bits.
template <class Sem>
__device__ __forceinline__ typename Sem::Acc warp_fold(typename Sem::Acc v) {
  if constexpr (requires { Sem::kSplitWarpFold; }) {
    if constexpr (Sem::kSplitWarpFold) {
      if (warp_split_fold(v)) return v;
    }
  }
#pragma unroll
  for (unsigned offset = 16; offset > 0; offset >>= 1) v = Sem::combine(v, shuffle_down(v, offset));
  return v;
}

// The fold of a wide integer: an accumulator of A::kWords 64-bit words, two's complement, whose
// low Sem::kOrBits bits are flags that combine by OR (the exact float sums, exact_wide.cuh).
// Shuffled, it moved 2 * kWords 32-bit words per step, ten steps a block (on an H100 its blocks
// folded 0.3 us later than the int32 sum's). Here it goes through shared memory as 32-bit limbs:
// the sum of the threads' limb j is a sum of 32-bit numbers, kept whole in 64 bits, which warp
// j % kWarps adds as two sums of 16-bit halves (kThreads of them stay below 2^24: one redux each);
// thread 0 then carries the limb sums into the words once. Two barriers; thread 0 ends with the
// block's fold. Its shared memory is its own, free again after the second barrier.
template <class Sem>
__device__ __forceinline__ typename Sem::Acc block_fold_limbs(typename Sem::Acc v) {
  using A = typename Sem::Acc;
  constexpr unsigned kLimbs = 2 * A::kWords;
  static_assert(kThreads <= 256, "16-bit halves of kThreads limbs must sum below 2^24");
  __shared__ std::uint32_t limb_storage[kLimbs * kThreads];
  __shared__ unsigned long long sum_storage[kLimbs];
  __shared__ unsigned flag_storage[kWarps];
  rl::smem<std::uint32_t> limbs = limb_storage;
  rl::smem<unsigned long long> sums = sum_storage;
  rl::smem<unsigned> flags = flag_storage;
  const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
  const auto f = static_cast<unsigned>(v.w[0] & Sem::kOrBits);
  v.w[0] &= ~static_cast<std::uint64_t>(Sem::kOrBits);
#pragma unroll
  for (unsigned k = 0; k < A::kWords; ++k) {
    limbs[(2 * k) * kThreads + t] = static_cast<std::uint32_t>(v.w[k]);
    limbs[(2 * k + 1) * kThreads + t] = static_cast<std::uint32_t>(v.w[k] >> 32);
  }
  unsigned warp_flags = 0;
#pragma unroll
  for (unsigned b = 1; b <= Sem::kOrBits; b <<= 1)
    if (__any_sync(kFullMask, (f & b) != 0)) warp_flags |= b;
  if (lane == 0) flags[warp] = warp_flags;
  __syncthreads();
  for (unsigned j = warp; j < kLimbs; j += kWarps) {
    unsigned lo = 0, hi = 0;
#pragma unroll
    for (unsigned i = 0; i < kThreads / 32; ++i) {
      const std::uint32_t x = limbs[j * kThreads + lane + 32 * i];
      lo += x & 0xffffu;
      hi += x >> 16;
    }
    lo = __reduce_add_sync(kFullMask, lo);
    hi = __reduce_add_sync(kFullMask, hi);
    if (lane == 0) sums[j] = lo + (static_cast<unsigned long long>(hi) << 16);
  }
  __syncthreads();
  A r = Sem::identity();
  if (t == 0) {
    unsigned long long carry = 0;
#pragma unroll
    for (unsigned j = 0; j < kLimbs; ++j) {
      const unsigned long long s = sums[j] + carry;
      const auto limb = static_cast<std::uint64_t>(static_cast<std::uint32_t>(s));
      if (j % 2 == 0) r.w[j / 2] = limb;
      else r.w[j / 2] |= limb << 32;
      carry = s >> 32;
    }
    unsigned all = 0;
#pragma unroll
    for (unsigned w = 0; w < kWarps; ++w) all |= flags[w];
    r.w[0] |= all;
  }
  return r;
}

// Thread 0 ends with the block's fold. `slots` holds kBlockWarps accumulators in shared memory
// (the block's warps: kWarps, or fewer for a smaller block). The block must call it uniformly (it
// has a barrier); it leaves `slots` free to reuse after a barrier. A wide integer (Sem::kOrBits)
// folds through block_fold_limbs instead (blocks of kThreads only).
template <class Sem, unsigned kBlockWarps = kWarps>
__device__ __forceinline__ typename Sem::Acc block_fold(typename Sem::Acc v, rl::smem<typename Sem::Acc> slots) {
  static_assert(kBlockWarps >= 1 && kBlockWarps <= 32, "a block of 1 to 32 warps");
  if constexpr (requires { Sem::kOrBits; }) {
    static_assert(kBlockWarps == kWarps, "block_fold_limbs folds blocks of kThreads");
    (void)slots;
    return block_fold_limbs<Sem>(v);
  }
  using Acc = typename Sem::Acc;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_fold<Sem>(v);
  if (lane == 0) slots[warp] = v;
  __syncthreads();
  if (warp == 0) {
    Acc w = Sem::identity();
    if (lane < kBlockWarps) w = slots[lane];
    v = warp_fold<Sem>(w);
  }
  return v;
}

}  // namespace reducelab::detail
