#pragma once
// Exact sums and means of halves as integers. Every finite half is an integer multiple of 2^-24
// (the smallest subnormal) below 2^16 in magnitude, so in units of 2^-24 each one is an integer
// below 2^40, and the sum of n of them an integer below n * 2^40. Integer addition is associative,
// so the exact sum of halves is an order-free reduction (agent_order_free.cuh: any split, no
// digits, no ticket) whose one rounding, at the end, gives the bits the digits of exact_sum.cuh
// give on the CPU backend: both round the same exact value once. (bfloat16 and float span 2^-149
// to 2^128: a 320-bit integer for their sums of one tile + 1 to 2^20 elements, exact_wide.cuh, the digits
// of agent_exact.cuh otherwise.)
//
// A thread first sums a unit's halves (32 or 64) in one chain of double additions, exact there
// (every partial sum a multiple of 2^-24 below 2^22); an infinity or NaN shows in that double's
// value and raises a flag instead of entering the integer, and so does anything but -0 (the sign
// of an exact zero: +0 unless every element is -0). The accumulator holds the sum shifted up by
// three bits and the flags in those three (exact_sum.cuh's kLow*), so two combine with one integer
// addition of the sums and an OR of the flags:
//   - ExactHalfSum<long long> where no block sums more than 2^20 elements (|sum| < 2^60 units):
//     a block's post is then one 16-byte store (posted_results.cuh), and the collector adds the
//     posts in 128 bits (Collect); one block, or one cluster, sums at most 2^17;
//   - ExactHalfSum<i128> where a block would sum more (|sum| < 2^104 units for any 64-bit n).
// What the choices measured on an H100 is in docs/performance.md ("Exact half sums as integers"):
// the 64-bit accumulator is the faster one wherever blocks post their results (0.5-1.6 us from
// 2^18 to 2^24 elements); flags kept in tag values instead of low bits (a branch in every combine)
// cost 0.4 us at one block or one cluster; four chains of additions a unit instead of one, and
// the unit's halves absorbed vector by vector in a partial unit, were slower.
#include <cstdint>

#include "reducelab/config.hpp"
#include "reducelab/detail/exact_sum.cuh"
#include "reducelab/detail/reduce_ops.cuh"
#include "reducelab/types.hpp"

namespace reducelab::detail {

template <class I, bool kMean>
struct ExactHalfSum {
  using Acc = I;
  using Inner = double;
  using Out = std::conditional_t<kMean, double, float>;
  static constexpr bool order_free = true;
  static constexpr bool has_atomic_combine = false;
  static constexpr Acc kFlags = kLowFlags;
  // The most elements whose sum the accumulator holds: |sum| < n * 2^40 units below 2^(bits - 4).
  static constexpr std::uint64_t kMaxElements = sizeof(Acc) == 8 ? std::uint64_t(1) << 20 : ~std::uint64_t(0);
  // What the order-free kernel's collector adds the blocks' posts in (agent_order_free.cuh), where
  // their sum may not fit: more than kMaxElements elements in all. (Folding every launch's posts in
  // 128 bits cost 0.7 us from 2^18 to 2^22 on an H100, bench/half_probe.)
  using Collect = ExactHalfSum<i128, kMean>;
  RL_HD_INLINE static bool collect_wide(std::uint64_t n) { return n > kMaxElements; }
  template <class J>
  RL_HD_INLINE static Acc from(J a) { return static_cast<Acc>(a); }  // the same layout, wider

  RL_HD_INLINE static Acc identity() { return 0; }  // a sum of nothing, or of -0 only
  RL_HD_INLINE static Inner inner_identity() { return -0.0; }  // -0 + x == x, and -0 + -0 stays -0
  RL_HD_INLINE static Inner lift(half x, std::uint64_t) { return static_cast<double>(widen(x)); }
  RL_HD_INLINE static Inner inner_combine(Inner a, Inner b) { return a + b; }
  RL_HD_INLINE static Acc combine(Acc a, Acc b) { return ((a & ~kFlags) + (b & ~kFlags)) | ((a | b) & kFlags); }
  // A unit's double sum (at most 64 halves: exact) joins the accumulator.
  RL_HD_INLINE static Acc absorb(Acc a, Inner s) {
    Acc term = low_bits_of_sum(s);
    if (finite_double(s)) {
#if defined(__CUDA_ARCH__)
      const long long units = __double2ll_rn(s * 16777216.0);  // exact: a multiple of 2^-24 below 2^22
#else
      const auto units = static_cast<long long>(s * 16777216.0);
#endif
      term |= static_cast<Acc>(static_cast<Acc>(units) * 8);
    }
    return combine(a, term);
  }
  // The exact sum (or mean) rounded once.
  RL_HD_INLINE static Out finish(Acc a, std::uint64_t n) {
    if (n == 0) return kMean ? std::numeric_limits<Out>::quiet_NaN() : Out(0);
    const unsigned flags = flags_of_low_bits(static_cast<unsigned>(a & kFlags));
    if (Out r; special_result(flags, &r)) return r;
    const Acc value = a >> 3;  // arithmetic: the sum in units of 2^-24
    if (value == 0) return (flags & kSawNonNegZero) ? Out(0) : -Out(0);
    if constexpr (!kMean)  // below 2^62: one rounding to float, then 2^-24 exactly
      if (sizeof(Acc) == 8 || (value < (Acc(1) << 62) && value > -(Acc(1) << 62)))
        return static_cast<Out>(static_cast<long long>(value)) * Out(1.0 / 16777216.0);
    const bool negative = value < 0;
    const u128 magnitude = static_cast<u128>(negative ? -static_cast<i128>(value) : static_cast<i128>(value));
    Out r;
    if constexpr (kMean) r = ldexp(divide_rounded(magnitude, n), -24);  // >= 2^-88: the scaling is exact
    else r = round_u128<Out>(magnitude, -24, false);
    return negative ? -r : r;
  }
};

// Exact sums and means of T that the order-free kernel takes, as integers (halves only), and the
// accumulator it takes for n elements.
template <class T, class Op>
inline constexpr bool exact_as_integer_v = std::is_same_v<T, half> && exact_sum_v<T, Op>;
template <bool kMean>
using ExactHalfSum64 = ExactHalfSum<long long, kMean>;
template <bool kMean>
using ExactHalfSum128 = ExactHalfSum<i128, kMean>;

}  // namespace reducelab::detail
