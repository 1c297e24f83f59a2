#pragma once
// Exact sums and means of float (and bfloat16) as one 320-bit integer. Every finite float (and
// every bfloat16, which is a float) is an integer multiple of 2^-149, the smallest float subnormal,
// below 2^128: in those units an integer below 2^277, and the sum of n of them an integer below
// n * 2^277. So the exact sum fits five 64-bit words (two's complement) for any n below 2^39,
// integer addition makes it order-free, and the order-free kernel (agent_order_free.cuh: any split,
// no ticket) sums floats as it sums int32, rounding once at the end. The digits of exact_sum.cuh
// hold the same value on the CPU backend and round it to the same bits. The library takes this
// road for float sums of more than 8192 and up to 2^20 elements, and bfloat16 sums of more than
// 16384 and up to 2^20 (exact_wide_taken,
// agent_order_free.cuh), where it measured faster than the digits' kernel (agent_exact.cuh), which
// takes the others; halves
// take 64 or 128 bits (exact_half.cuh), doubles (2^-1074 to 2^1024) the digits.
//
// A thread turns a unit of elements (16 floats or 32 bfloat16 values) into one term of the wide
// integer:
//   - fast path: when the unit's exponents lie close enough together (tile_sum_is_exact: an integer
//     max and min of the magnitudes per element), its plain double sum is exact, and that double
//     becomes a 53-bit integer shifted into place (a few selects and a carry chain per unit);
//   - rare path: otherwise (a wider span of exponents, an infinity or a NaN) the unit is cut on a
//     grid shared by its elements, as exact_sum.cuh cuts doubles: with sigma = 2^(top + l) above
//     every magnitude, q = (sigma + x) - sigma keeps each element's bits down to sigma's last bit
//     and the q's sum exactly in double; the remainders x - q are floats again, below that bit,
//     and go through the next level of the cut. About 46 binades a level: at most seven levels for
//     the whole float range. On an H100 this took 8.9 us for 2^16 floats with random exponents
//     over the whole range, where the digits' kernel took 107 us (bench/wide_probe).
// The integer is held shifted up three bits, with the flags in those three (exact_sum.cuh's kLow*,
// as the half sums keep them), so two accumulators combine with one five-word addition and an OR.
#include <bit>
#include <cstdint>
#include <type_traits>

#include "reducelab/config.hpp"
#include "reducelab/detail/exact_sum.cuh"
#include "reducelab/detail/reduce_ops.cuh"
#include "reducelab/types.hpp"

// The rare path and the rounding are calls, not inlined: the kernel's code shrank by two thirds
// and a cold call of up to 2^16 floats took 0.2-0.3 us less on an H100 (docs/performance.md,
// "Exact float sums as one wide integer").
#if defined(__CUDACC__)
#define RL_WIDE_OUT_OF_LINE __host__ __device__ __noinline__
#else
#define RL_WIDE_OUT_OF_LINE inline
#endif

namespace reducelab::detail {

// A 320-bit two's complement integer, least significant word first.
struct Wide320 {
  static constexpr unsigned kWords = 5;
  std::uint64_t w[kWords];
};

RL_HD_INLINE Wide320 add_wide(const Wide320& a, const Wide320& b) {
  Wide320 r;
#if defined(__CUDA_ARCH__)
  asm("add.cc.u64 %0, %5, %10;\n\t"
      "addc.cc.u64 %1, %6, %11;\n\t"
      "addc.cc.u64 %2, %7, %12;\n\t"
      "addc.cc.u64 %3, %8, %13;\n\t"
      "addc.u64 %4, %9, %14;"
      : "=l"(r.w[0]), "=l"(r.w[1]), "=l"(r.w[2]), "=l"(r.w[3]), "=l"(r.w[4])
      : "l"(a.w[0]), "l"(a.w[1]), "l"(a.w[2]), "l"(a.w[3]), "l"(a.w[4]), "l"(b.w[0]), "l"(b.w[1]), "l"(b.w[2]),
        "l"(b.w[3]), "l"(b.w[4]));
#else
  unsigned carry = 0;
  for (unsigned k = 0; k < Wide320::kWords; ++k) {
    const std::uint64_t s = a.w[k] + b.w[k];
    const unsigned c1 = s < a.w[k];
    r.w[k] = s + carry;
    carry = c1 | (r.w[k] < s);
  }
#endif
  return r;
}

// A finite double that is an integer multiple of 2^-149 and below 2^166 in magnitude, times 8 in
// units of 2^-149, as a Wide320 (the flags' bits left zero). Zeros of either sign give 0.
RL_HD_INLINE Wide320 wide_of(double s) {
  const std::uint64_t u = bits_of_double(s);
  const int e = static_cast<int>((u >> 52) & 0x7ff);
  std::uint64_t m = s == 0 ? 0 : (u & 0xfffffffffffffull) | (1ull << 52);
  // s = m * 2^(e - 1075) = (m << p) * 2^-152 with p = e - 923; a negative p drops only zero bits
  // (s is a multiple of 2^-149, so m has at least 3 - p trailing zeros).
  int p = e - 923;
  if (p < 0) {
    m >>= (-p < 63 ? -p : 63);
    p = 0;
  }
  const unsigned q = static_cast<unsigned>(p) >> 6, r = static_cast<unsigned>(p) & 63u;
  std::uint64_t lo = m << r, hi = r == 0 ? 0 : m >> (64 - r);
  const bool negative = (u >> 63) != 0 && m != 0;
  if (negative) {  // two's complement of hi:lo; the words above are all ones
    hi = ~hi + (lo == 0 ? 1u : 0u);
    lo = ~lo + 1;
  }
  const std::uint64_t ext = negative ? ~std::uint64_t(0) : 0;
  Wide320 t;
#pragma unroll
  for (unsigned k = 0; k < Wide320::kWords; ++k) t.w[k] = k < q ? 0 : k == q ? lo : k == q + 1 ? hi : ext;
  return t;
}

// Two accumulators' sum: the integers added, the flags ORed.
RL_HD_INLINE Wide320 combine_wide(Wide320 a, Wide320 b) {
  const std::uint64_t flags = (a.w[0] | b.w[0]) & kLowFlags;
  a.w[0] &= ~std::uint64_t(kLowFlags);
  b.w[0] &= ~std::uint64_t(kLowFlags);
  Wide320 r = add_wide(a, b);
  r.w[0] |= flags;
  return r;
}

// A magnitude m (units of 2^-152, flags stripped): the index of its top non-zero word (-1 for
// zero), that word, the word below it, and whether any word further down is non-zero. Found from
// the bottom word up with constant indices only: written as a search for the top index, the
// compiler had put the words in local memory to index them.
struct WideTop {
  int t = -1;
  std::uint64_t hi = 0, lo = 0;
  bool sticky = false;
};
RL_HD_INLINE WideTop wide_top(const Wide320& m) {
  WideTop r;
  std::uint64_t prev = 0, below = 0;  // word k - 1, and the words under it ORed
#pragma unroll
  for (int k = 0; k < static_cast<int>(Wide320::kWords); ++k) {
    if (m.w[k] != 0) {
      r.t = k;
      r.hi = m.w[k];
      r.lo = prev;
      r.sticky = below != 0;
    }
    below |= prev;
    prev = m.w[k];
  }
  return r;
}
RL_HD_INLINE Wide320 negate_wide(Wide320 a) {  // two's complement: ~a + 1
  Wide320 one{};
  one.w[0] = 1;
#pragma unroll
  for (unsigned k = 0; k < Wide320::kWords; ++k) a.w[k] = ~a.w[k];
  return add_wide(a, one);
}

// The usual float sum, rounded through one conversion: the magnitude's 64 bits from its leading one
// down, with a sticky bit for every bit below them in bit 0, convert to float rounding to nearest
// even (64 bits leave 40 below the float's last bit, so the sticky bit decides a tie as the exact
// value would), and a power of two scales the result exactly. False, leaving *out alone, for a zero
// magnitude or a result that would be subnormal or within a factor of two of overflow: the 128-bit
// path takes those. On an H100 the collector's rounding took 0.45 us through the 128-bit path alone
// (a `%globaltimer` trace of 2^20 floats, bench/wide_probe; docs/performance.md).
RL_HD_INLINE bool wide_round_fast(const WideTop& m, float* out) {
  if (m.t < 0) return false;
#if defined(__CUDA_ARCH__)
  const int z = __clzll(static_cast<long long>(m.hi));
#else
  const int z = __builtin_clzll(m.hi);
#endif
  const int top = 64 * m.t + 63 - z - 152;  // the exponent of the leading one
  if (top < -126 || top > 126) return false;
  const std::uint64_t sig = z == 0 ? m.hi : (m.hi << z) | (m.lo >> (64 - z));
  const std::uint64_t rest = z == 0 ? m.lo : m.lo << z;  // the bits of lo below sig
  const float f = static_cast<float>(sig | std::uint64_t(rest != 0 || m.sticky));
  *out = static_cast<float>(static_cast<double>(f) * pow2(top - 63));
  return true;
}
// Every float sum's rounding: the 128 bits from the top non-zero word down, the words below as a
// sticky bit, through exact_sum.cuh's round_u128.
RL_HD_INLINE float wide_round_general(const WideTop& m) {
  const int low = m.t > 0 ? m.t - 1 : 0;  // the weight of the window's bit 0, in words
  const unsigned __int128 window = m.t > 0 ? (static_cast<unsigned __int128>(m.hi) << 64) | m.lo : m.hi;
  return round_u128<float>(window, -152 + 64 * low, m.sticky);
}

// The exact sum (or, kMean, the mean of n elements) an accumulator holds, rounded once (Out: float
// for a sum, double for a mean), every case: a sum rounds through wide_round_general (wide_result
// has tried the short path first), a mean through exact_sum.cuh's digits, for the division.
template <class Out, bool kMean>
RL_WIDE_OUT_OF_LINE Out wide_result_general(Wide320 a, std::uint64_t n) {
  if (n == 0) return kMean ? std::numeric_limits<Out>::quiet_NaN() : Out(0);
  const unsigned flags = flags_of_low_bits(static_cast<unsigned>(a.w[0] & kLowFlags));
  if (Out r; special_result(flags, &r)) return r;
  a.w[0] &= ~std::uint64_t(kLowFlags);  // now the sum in units of 2^-152
  const bool negative = static_cast<std::int64_t>(a.w[4]) < 0;
  if (negative) a = negate_wide(a);  // the magnitude
  Out r;
  if constexpr (!kMean) {
    static_assert(std::is_same_v<Out, float>);
    const WideTop m = wide_top(a);
    if (m.t < 0) return (flags & kSawNonNegZero) ? Out(0) : -Out(0);
    r = wide_round_general(m);
  } else {
    // exact_sum.cuh's digits (32 bits each, weighted from 2^-149 up) of the magnitude: >> 3 first.
    std::int64_t digits[ExactTraits<float>::kDigits] = {};
    int first = -1, last = -1;
    for (int i = 0; i < 2 * static_cast<int>(Wide320::kWords); ++i) {
      const int bit = 32 * i + 3;  // digit i is bits [bit, bit + 32) of the integer in 2^-152 units
      const std::uint64_t below = a.w[bit / 64] >> (bit % 64);
      const std::uint64_t above = bit % 64 > 32 && bit / 64 + 1 < static_cast<int>(Wide320::kWords)
                                      ? a.w[bit / 64 + 1] << (64 - bit % 64) : 0;
      digits[i] = static_cast<std::int64_t>(static_cast<std::uint32_t>(below | above));
      if (digits[i] != 0) {
        if (first < 0) first = i;
        last = i;
      }
    }
    std::uint32_t words[ExactTraits<float>::kDigits + 4];
    r = exact_result<float, Out>(digits, first, last, flags, n, words);
  }
  return negative ? -r : r;
}

// The same, with the usual sum (no infinity or NaN among the elements, a result wide_round_fast
// takes) rounded inline: through the call, its 40-byte argument went through local memory.
template <class Out, bool kMean>
RL_HD_INLINE Out wide_result(const Wide320& a, std::uint64_t n) {
  if constexpr (!kMean) {
    if (n != 0 && (a.w[0] & (kLowPosInf | kLowNegInf)) == 0) {
      Wide320 m = a;
      m.w[0] &= ~std::uint64_t(kLowFlags);
      const bool negative = static_cast<std::int64_t>(m.w[4]) < 0;
      if (negative) m = negate_wide(m);
      float r;
      if (wide_round_fast(wide_top(m), &r)) return negative ? -r : r;
    }
  }
  return wide_result_general<Out, kMean>(a, n);
}

// The rare path's elements, as floats (every bfloat16 is one), passed by value to the call.
template <unsigned N>
struct WideUnit {
  float x[N];
};

// The rare path: N elements cut on shared grids, level by level (see the top of this file), into
// the accumulator, with their flags.
template <unsigned N>
RL_WIDE_OUT_OF_LINE Wide320 wide_cut(Wide320 acc, WideUnit<N> u) {
  constexpr int kLevel = std::countr_zero(N) + 1;  // N <= 2^(kLevel - 1)
  std::uint64_t flags = 0;
  std::uint32_t most = 0;
#pragma unroll
  for (unsigned j = 0; j < N; ++j) {
    const std::uint32_t b = bits_of_float(u.x[j]);
    const std::uint32_t m = b & 0x7fffffffu;
    if (b != 0x80000000u) flags |= kLowNotOnlyNegativeZeros;
    if (m >= 0x7f800000u) {  // an infinity or a NaN: a flag, and 0 in the sum
      flags |= m > 0x7f800000u ? kLowPosInf | kLowNegInf : (b >> 31) != 0 ? kLowNegInf : kLowPosInf;
      u.x[j] = 0.0f;
    } else {
      most = m > most ? m : most;
    }
  }
  // Every finite magnitude is below 2^top.
  int top = static_cast<int>(most >> 23) - 126;
  if (top < -125) top = -125;
  for (;;) {
    const double sigma = pow2(top + kLevel);
    double s = 0;
    bool rest = false;
#pragma unroll
    for (unsigned j = 0; j < N; ++j) {
      const double e = static_cast<double>(u.x[j]);
      const double q = (sigma + e) - sigma;  // e on the grid 2^(top + kLevel - 53), exactly
      const double p = e - q;                // exact, below that grid step, and a float again
      s += q;                                // N values on the grid below 2^(top + kLevel - 1): exact
      u.x[j] = static_cast<float>(p);
      rest = rest || p != 0;
    }
    acc = combine_wide(acc, wide_of(s));
    if (!rest) break;
    top += kLevel - 52;
  }
  acc.w[0] |= flags;
  return acc;
}

template <class T, bool kMean>
struct ExactWideSum {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, bfloat16>);
  using Acc = Wide320;
  using Inner = Wide320;  // the head and tail's few elements (agent_order_free.cuh) go one by one
  using Out = std::conditional_t<kMean, double, float>;
  static constexpr bool order_free = true;
  static constexpr bool has_atomic_combine = false;
  // The low bits that hold flags, combined by OR, not added: a block folds the rest as one integer
  // through shared memory (block_reduce.cuh, block_fold_limbs).
  static constexpr std::uint64_t kOrBits = kLowFlags;

  RL_HD_INLINE static Acc identity() { return Acc{}; }  // a sum of nothing, or of -0 only
  RL_HD_INLINE static Inner inner_identity() { return Acc{}; }
  RL_HD_INLINE static Inner lift(T x, std::uint64_t) {
    const T one[1] = {x};
    return absorb_batch<1>(identity(), one);
  }
  // What the order-free kernel fills a partial unit with: -0 adds nothing, and raises no flag.
  template <class E>
  RL_HD_INLINE static E padding() {
    if constexpr (std::is_same_v<E, float>) return -0.0f;
    else return E{0x8000};
  }
  RL_HD_INLINE static Inner inner_combine(const Inner& a, const Inner& b) { return combine(a, b); }
  RL_HD_INLINE static Acc absorb(const Acc& a, const Inner& b) { return combine(a, b); }
  RL_HD_INLINE static Acc combine(const Acc& a, const Acc& b) { return combine_wide(a, b); }

  // N elements (in registers: every index is a constant once unrolled) into the accumulator.
  template <unsigned N>
  RL_HD_INLINE static Acc absorb_batch(const Acc& acc, const T* v) {
    static_assert((N & (N - 1)) == 0, "a power of two");
    constexpr int kLog2N = std::countr_zero(N);
    std::uint32_t most = 0, least = 0xffffffffu;  // the largest magnitude, the smallest non-zero one minus one
    if constexpr (std::is_same_v<T, bfloat16> && N % 2 == 0) {
      std::uint32_t w[N / 2];
#pragma unroll
      for (unsigned k = 0; k < N / 2; ++k) w[k] = std::uint32_t(v[2 * k].bits) | (std::uint32_t(v[2 * k + 1].bits) << 16);
      magnitude_range16<N / 2, true>(w, &most, &least);
    } else {
#pragma unroll
      for (unsigned j = 0; j < N; ++j) {
        const std::uint32_t m = ExactBits<T>::magnitude(v[j]);
        most = m > most ? m : most;
        least = m - 1u < least ? m - 1u : least;
      }
    }
    const int emax = static_cast<int>(most >> ExactBits<T>::kShift);
    const int emin = static_cast<int>(least >> ExactBits<T>::kShift);
    if (emax < static_cast<int>(ExactBits<T>::kSpecial) && tile_sum_is_exact<T>(emin, emax, kLog2N)) {
      double s = -0.0;  // -0 + -0 is -0: the sum is -0 only if every element is
#pragma unroll
      for (unsigned j = 0; j < N; ++j) s += static_cast<double>(as_float(v[j]));
      Acc t = wide_of(s);
      t.w[0] |= low_bits_of_sum(s);
      return combine(acc, t);
    }
    return absorb_cut<N>(acc, v);
  }

  // The exact sum (or mean) rounded once.
  RL_HD_INLINE static Out finish(const Acc& a, std::uint64_t n) { return wide_result<Out, kMean>(a, n); }

 private:
  RL_HD_INLINE static float as_float(T x) {
    if constexpr (std::is_same_v<T, float>) return x;
    else return to_float(x);
  }
  template <unsigned N>
  RL_HD_INLINE static Acc absorb_cut(const Acc& acc, const T* v) {
    WideUnit<N> u;
#pragma unroll
    for (unsigned j = 0; j < N; ++j) u.x[j] = as_float(v[j]);
    return wide_cut<N>(acc, u);
  }
};

// Exact sums and means of T that the library takes as one wide integer (float and bfloat16, at the
// sizes exact_wide_taken names, agent_order_free.cuh).
template <class T, class Op>
inline constexpr bool exact_as_wide_v = (std::is_same_v<T, float> || std::is_same_v<T, bfloat16>) && exact_sum_v<T, Op>;

}  // namespace reducelab::detail
