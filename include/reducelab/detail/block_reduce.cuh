#pragma once
// Step 2 of the fixed order (reduce_order.hpp): a warp folds its 32 values with shuffle-down
// steps of 16, 8, 4, 2 and 1 lanes, and a block folds its warps' results the same way in warp 0.
// The tree is the same on every GPU; cpu_reduce.hpp replays it lane by lane.
#include <cstdint>
#include <type_traits>

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

// Lane 0 ends with combine over the warp in the fixed tree; other lanes hold partial folds.
template <class Sem>
__device__ __forceinline__ typename Sem::Acc warp_fold(typename Sem::Acc v) {
#pragma unroll
  for (unsigned offset = 16; offset > 0; offset >>= 1) v = Sem::combine(v, shuffle_down(v, offset));
  return v;
}

// Thread 0 ends with the block's fold. `slots` holds kWarps accumulators in shared memory. The
// block must call it uniformly (it has a barrier); it leaves `slots` free to reuse after a
// barrier.
template <class Sem>
__device__ __forceinline__ typename Sem::Acc block_fold(typename Sem::Acc v, rl::smem<typename Sem::Acc> slots) {
  using Acc = typename Sem::Acc;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_fold<Sem>(v);
  if (lane == 0) slots[warp] = v;
  __syncthreads();
  if (warp == 0) {
    Acc w = Sem::identity();
    if (lane < kWarps) w = slots[lane];
    v = warp_fold<Sem>(w);
  }
  return v;
}

}  // namespace reducelab::detail
