#pragma once
// What each operation of reducelab::reduce means, element by element: the accumulator it
// carries, its identity, how an element enters it (lift), how two accumulators combine and how
// the last one becomes the result (finish). Read by nvcc (the kernels), by g++ (the CPU backend
// and the SIMT build), so the GPU and the CPU combine with the very same code.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

#include "reducelab/config.hpp"
#include "reducelab/reduce.hpp"
#include "reducelab/types.hpp"

namespace reducelab::detail {

// An element as the number it stands for: 16-bit floats widen to float (the hardware converter
// on the GPU, the exact bit-level conversion on the CPU: both give the same float).
RL_HD_INLINE float widen(half x) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(x.bits));
#else
  return to_float(x);
#endif
}
RL_HD_INLINE float widen(bfloat16 x) { return to_float(x); }
template <class T>
RL_HD_INLINE T widen(T x) {
  return x;
}
template <class T>
using widened_t = decltype(widen(T{}));

template <class T>
RL_HD_INLINE bool is_nan(T x) {
  if constexpr (is_floating<T>) {
    const auto w = widen(x);
    return w != w;
  } else {
    return false;
  }
}

// The quiet NaN every NaN result is reported as: which NaN of the input would win depends on
// the order of combination, so min/max return this one and stay order-independent.
template <class T>
RL_HD_INLINE T canonical_nan() {
  if constexpr (std::is_same_v<T, half>) return half{0x7e00};
  else if constexpr (std::is_same_v<T, bfloat16>) return bfloat16{0x7fc0};
  else return std::numeric_limits<T>::quiet_NaN();
}

template <class T>
RL_HD_INLINE T positive_infinity() {
  if constexpr (std::is_same_v<T, half>) return half{0x7c00};
  else if constexpr (std::is_same_v<T, bfloat16>) return bfloat16{0x7f80};
  else return std::numeric_limits<T>::infinity();
}
template <class T>
RL_HD_INLINE T negative_infinity() {
  if constexpr (std::is_same_v<T, half>) return half{0xfc00};
  else if constexpr (std::is_same_v<T, bfloat16>) return bfloat16{0xff80};
  else return -std::numeric_limits<T>::infinity();
}

template <class T>
RL_HD_INLINE bool sign_bit(T x) {
  if constexpr (is_half_like<T>) return (x.bits & 0x8000u) != 0;
  else return x < T(0) || (x == T(0) && T(1) / x < T(0));
}

// What sums and products carry inside the reduction (may be wider than what they return):
// float and the 16-bit floats carry double, rounded to the result type once, at the end.
template <class T> struct carry { using type = accumulate_t<T>; };
template <> struct carry<float> { using type = double; };
template <> struct carry<half> { using type = double; };
template <> struct carry<bfloat16> { using type = double; };
template <class T>
using carry_t = typename carry<T>::type;

// What a thread sums one tile's elements of T in before adding that to its carry (step 1 of the
// order): small integers in 32 bits (a tile gives a thread at most 128 of them: no overflow), so
// one 64-bit add per tile instead of one per element. 16-bit floats go straight to double, as
// float does: summing a tile's 64 halves in float first was measurably less accurate than
// pairwise summation on adversarial inputs (tests/core/reduce_test.cpp, ReduceAccuracy).
template <class T> struct tile_carry { using type = carry_t<T>; };
template <> struct tile_carry<std::int8_t> { using type = std::int32_t; };
template <> struct tile_carry<std::int16_t> { using type = std::int32_t; };
template <> struct tile_carry<std::uint8_t> { using type = std::uint32_t; };
template <> struct tile_carry<std::uint16_t> { using type = std::uint32_t; };

// Integer arithmetic wraps modulo 2^64 (done in unsigned: signed overflow is undefined in C++).
template <class A>
RL_HD_INLINE A wrap_add(A a, A b) {
  if constexpr (std::is_integral_v<A>)
    return static_cast<A>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
  else return a + b;
}
template <class A>
RL_HD_INLINE A wrap_mul(A a, A b) {
  if constexpr (std::is_integral_v<A>)
    return static_cast<A>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
  else return a * b;
}

// The identity of floating-point addition is -0: (-0) + x == x for every x, +0 included, while
// (+0) + (-0) would turn a sum of negative zeros positive.
template <class A>
RL_HD_INLINE A additive_identity() {
  if constexpr (std::is_floating_point_v<A>) return -A(0);
  else return A(0);
}

// The checks every backend makes before it reduces: an input to read, an element where the
// operation needs one.
template <class Op, class T>
Status check_input(const T* input, std::uint64_t n) {
  if (input == nullptr && n > 0) return Status(Errc::invalid_argument, "reduce: input is null but n = " + std::to_string(n));
  if constexpr (needs_an_element<Op>)
    if (n == 0) return Status(Errc::empty_input, std::string("reduce: ") + op_name<Op>() + " of an empty input (n = 0) has no value");
  return {};
}

template <class T, class Op>
struct Semantics;  // one per built-in op; user functors get UserSemantics below

// order_free: the combine is exactly associative and commutative on every input (integer
// arithmetic mod 2^64, min, max, first-index argmin/argmax), so any grouping gives the same bits
// and the library may split the work however is fastest. Floating-point sums and products are
// not; they follow the fixed order of reduce_order.hpp.

// Every semantics has two levels. Within a tile a thread folds its elements into an Inner
// (lift, inner_combine); the tile's Inner then joins the thread's Acc (absorb); Accs combine in
// the trees (combine). Where Inner is Acc, absorb is combine.
template <class T>
struct Semantics<T, op::sum> {
  using Acc = carry_t<T>;
  using Inner = typename tile_carry<T>::type;
  using Out = result_t<T, op::sum>;
  static constexpr bool order_free = std::is_integral_v<T>;
  static constexpr bool has_atomic_combine = std::is_floating_point_v<Acc>;
  RL_HD_INLINE static Acc identity() { return additive_identity<Acc>(); }
  RL_HD_INLINE static Inner inner_identity() { return additive_identity<Inner>(); }
  RL_HD_INLINE static Inner lift(T x, std::uint64_t) { return static_cast<Inner>(widen(x)); }
  RL_HD_INLINE static Inner inner_combine(Inner a, Inner b) { return wrap_add(a, b); }
  RL_HD_INLINE static Acc absorb(Acc a, Inner b) { return wrap_add(a, static_cast<Acc>(b)); }
  RL_HD_INLINE static Acc combine(Acc a, Acc b) { return wrap_add(a, b); }
  // An empty sum is +0 (the identity -0 is only the fold's starting point).
  RL_HD_INLINE static Out finish(Acc a, std::uint64_t n) { return n == 0 ? Out(0) : static_cast<Out>(a); }
};

// 128-bit integers (a GNU extension that nvcc supports in device code too). Only integer means
// carry them: a sum of n < 2^64 values of at most 64 bits fits in 128 bits, so it cannot wrap.
__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 i128;

// An integer as a 128-bit two's-complement value (sign-extended when signed).
template <class I>
RL_HD_INLINE u128 to_u128(I x) {
  if constexpr (std::is_signed_v<I>) return static_cast<u128>(static_cast<i128>(static_cast<std::int64_t>(x)));
  else return static_cast<u128>(static_cast<std::uint64_t>(x));
}
RL_HD_INLINE u128 to_u128(u128 x) { return x; }

RL_HD_INLINE int bit_length(u128 x) {
  int b = 0;
  for (std::uint64_t hi = static_cast<std::uint64_t>(x >> 64); hi != 0; hi >>= 1) ++b;
  if (b != 0) return b + 64;
  for (std::uint64_t lo = static_cast<std::uint64_t>(x); lo != 0; lo >>= 1) ++b;
  return b;
}

// s / n rounded once to the nearest double (ties to even), for s < 2^127 and n > 0. The quotient
// is computed with at least 55 significant bits; a remainder, or bits dropped to fit 64, set its
// lowest bit (sticky), so the one conversion to double rounds as the exact quotient would.
RL_HD_INLINE double divide_rounded(u128 s, std::uint64_t n) {
  if (s == 0) return 0.0;
  const int need = bit_length(static_cast<u128>(n)) + 55 - bit_length(s);
  const int k = need > 0 ? need : 0;  // s << k < 2^(bits(n) + 56) <= 2^120: no overflow
  const u128 scaled = s << k;
  u128 q = scaled / n;
  bool sticky = scaled % n != 0;
  int up = 0;
  if (const int bits = bit_length(q); bits > 64) {
    up = bits - 64;
    sticky = sticky || (q & ((static_cast<u128>(1) << up) - 1)) != 0;
    q >>= up;
  }
  const std::uint64_t q64 = static_cast<std::uint64_t>(q) | (sticky ? 1u : 0u);
#if defined(__CUDA_ARCH__)
  const double d = __ull2double_rn(q64);
#else
  const double d = static_cast<double>(q64);
#endif
  return ldexp(d, up - k);
}

// mean. Integers: the exact sum, carried in 128 bits, divided by n and rounded once to double
// (tile sums stay narrow where they cannot overflow: a thread adds at most 128 elements of a
// tile). Floating point: the sum as op::sum computes it, divided by n in double.
template <class T, bool kInteger = std::is_integral_v<T>>
struct MeanSemantics : Semantics<T, op::sum> {
  using Out = double;
  RL_HD_INLINE static Out finish(typename Semantics<T, op::sum>::Acc a, std::uint64_t n) {
    return n == 0 ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(a) / static_cast<double>(n);
  }
};
template <class T>
struct MeanSemantics<T, true> {
  using Acc = u128;
  using Inner = std::conditional_t<sizeof(T) == 8, u128, typename Semantics<T, op::sum>::Inner>;
  using Out = double;
  static constexpr bool order_free = true;
  static constexpr bool has_atomic_combine = false;
  RL_HD_INLINE static Acc identity() { return 0; }
  RL_HD_INLINE static Inner inner_identity() { return 0; }
  RL_HD_INLINE static Inner lift(T x, std::uint64_t) {
    if constexpr (sizeof(T) == 8) return to_u128(x);
    else return static_cast<Inner>(x);
  }
  RL_HD_INLINE static Inner inner_combine(Inner a, Inner b) {
    if constexpr (sizeof(T) == 8) return a + b;
    else return wrap_add(a, b);
  }
  RL_HD_INLINE static Acc absorb(Acc a, Inner b) { return a + to_u128(b); }
  RL_HD_INLINE static Acc combine(Acc a, Acc b) { return a + b; }
  RL_HD_INLINE static Out finish(Acc a, std::uint64_t n) {
    if (n == 0) return std::numeric_limits<double>::quiet_NaN();
    const bool negative = std::is_signed_v<T> && static_cast<i128>(a) < 0;
    const double m = divide_rounded(negative ? static_cast<u128>(0) - a : a, n);
    return negative ? -m : m;
  }
};
template <class T>
struct Semantics<T, op::mean> : MeanSemantics<T> {};

template <class T>
struct Semantics<T, op::prod> {
  using Acc = carry_t<T>;
  using Out = result_t<T, op::prod>;
  static constexpr bool order_free = std::is_integral_v<T>;
  static constexpr bool has_atomic_combine = false;
  using Inner = Acc;
  RL_HD_INLINE static Acc identity() { return Acc(1); }
  RL_HD_INLINE static Inner inner_identity() { return identity(); }
  RL_HD_INLINE static Acc lift(T x, std::uint64_t) { return static_cast<Acc>(widen(x)); }
  RL_HD_INLINE static Acc combine(Acc a, Acc b) { return wrap_mul(a, b); }
  RL_HD_INLINE static Acc inner_combine(Acc a, Acc b) { return combine(a, b); }
  RL_HD_INLINE static Acc absorb(Acc a, Acc b) { return combine(a, b); }
  RL_HD_INLINE static Out finish(Acc a, std::uint64_t) { return static_cast<Out>(a); }
};

// Floating-point values as integers that sort the same way (-0 below +0, NaNs at the ends):
// flip every bit but the sign of the negatives. min/max then become one integer min/max per
// element, the same instruction on every GPU and every CPU.
template <class T> struct order_key { using type = std::int32_t; };
template <> struct order_key<double> { using type = std::int64_t; };
template <class T>
RL_HD_INLINE typename order_key<T>::type key_of(T x) {
  if constexpr (is_half_like<T>) {
    const std::int32_t b = static_cast<std::int16_t>(x.bits);
    return b ^ ((b >> 15) & 0x7fff);
  } else if constexpr (std::is_same_v<T, float>) {
    const std::int32_t b = static_cast<std::int32_t>(bits_of_float(x));
    return b ^ ((b >> 31) & 0x7fffffff);
  } else {
    std::int64_t b;
#if defined(__CUDA_ARCH__)
    b = __double_as_longlong(x);
#else
    std::memcpy(&b, &x, sizeof b);
#endif
    return b ^ ((b >> 63) & 0x7fffffffffffffffLL);
  }
}
template <class T>
RL_HD_INLINE T value_of_key(typename order_key<T>::type k) {
  if constexpr (is_half_like<T>) {
    const std::int32_t b = k ^ ((k >> 15) & 0x7fff);
    T r;
    r.bits = static_cast<std::uint16_t>(b);
    return r;
  } else if constexpr (std::is_same_v<T, float>) {
    return float_from_bits(static_cast<std::uint32_t>(k ^ ((k >> 31) & 0x7fffffff)));
  } else {
    const std::int64_t b = k ^ ((k >> 63) & 0x7fffffffffffffffLL);
    double d;
#if defined(__CUDA_ARCH__)
    d = __longlong_as_double(b);
#else
    std::memcpy(&d, &b, sizeof d);
#endif
    return d;
  }
}

// min and max. Integers compare as themselves. Floating-point values travel as order keys (above)
// with every NaN mapped to the key that wins (the lowest for min, the highest for max), so a NaN
// anywhere gives NaN, as in NumPy, reported as the canonical quiet NaN; between -0 and +0, min
// takes -0 and max +0. Either way the result does not depend on the order.
// Per 16-bit lane signed max (kMax) or min of two words (PTX max.s16x2 / min.s16x2: one
// instruction from sm_90 on), as the host computes them.
template <bool kMax>
RL_HD_INLINE std::uint32_t extreme_s16x2(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  std::uint32_t d;
  if constexpr (kMax) asm("max.s16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  else asm("min.s16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
#else
  const auto lane = [&](int shift) {
    const std::int16_t x = static_cast<std::int16_t>(a >> shift), y = static_cast<std::int16_t>(b >> shift);
    return static_cast<std::uint32_t>(static_cast<std::uint16_t>((x > y) == kMax ? x : y)) << shift;
  };
  return lane(0) | lane(16);
#endif
}

// key_of of both 16-bit floats (half or bfloat16) of a word, each in its own half: four
// integer operations for two elements.
RL_HD_INLINE std::uint32_t keys16x2(std::uint32_t w) { return w ^ (((w >> 15) & 0x00010001u) * 0x7fffu); }

// Bit 15 of each 16-bit lane of a word of two half (or bfloat16) elements set where that element
// is a NaN, every other bit clear: adding 0x7fff minus infinity's bits to a lane's magnitude
// carries into its bit 15 exactly when the magnitude lies above infinity's, and never past it.
template <class T>
  requires is_half_like<T>
RL_HD_INLINE std::uint32_t nans16x2(std::uint32_t w) {
  constexpr std::uint32_t kInfinity = std::is_same_v<T, half> ? 0x7c00u : 0x7f80u;
  return ((w & 0x7fff7fffu) + (0x7fffu - kInfinity) * 0x00010001u) & 0x80008000u;
}
// Each lane of w that nans16x2 marks (in `nans`) replaced by the canonical quiet NaN.
template <class T>
  requires is_half_like<T>
RL_HD_INLINE std::uint32_t canonical_nans16x2(std::uint32_t w, std::uint32_t nans) {
  const std::uint32_t mask = (nans >> 15) * 0xffffu;
  return (w & ~mask) | (std::uint32_t(canonical_nan<T>().bits) * 0x00010001u & mask);
}

template <class T, bool kMax>
struct Extremum {
  using Key = std::conditional_t<is_floating<T>, typename order_key<T>::type, T>;
  using Acc = Key;
  using Inner = Key;
  using Out = T;
  static constexpr bool order_free = true;
  static constexpr bool has_atomic_combine = false;
  RL_HD_INLINE static Key nan_key() {
    return kMax ? std::numeric_limits<Key>::max() : std::numeric_limits<Key>::lowest();
  }
  RL_HD_INLINE static Acc identity() {
    if constexpr (is_floating<T>) return key_of(kMax ? negative_infinity<T>() : positive_infinity<T>());
    else return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
  RL_HD_INLINE static Inner inner_identity() { return identity(); }
  RL_HD_INLINE static Inner lift(T x, std::uint64_t) {
    if constexpr (is_floating<T>) return is_nan(x) ? nan_key() : key_of(x);
    else return x;
  }
  RL_HD_INLINE static Acc combine(Acc a, Acc b) { return kMax ? (b > a ? b : a) : (b < a ? b : a); }
  RL_HD_INLINE static Acc inner_combine(Acc a, Acc b) { return combine(a, b); }
  RL_HD_INLINE static Acc absorb(Acc a, Acc b) { return combine(a, b); }
  RL_HD_INLINE static Out finish(Acc a, std::uint64_t) {
    if constexpr (is_floating<T>) return a == nan_key() ? canonical_nan<T>() : value_of_key<T>(a);
    else return a;
  }
  // Whether the largest and smallest keys seen (straight from key_of, NaNs not lifted to
  // nan_key) include a NaN's: a NaN's key lies beyond the infinities' (above +inf's for a
  // positive NaN, below -inf's for a negative one).
  RL_HD_INLINE static bool saw_nan(Key most, Key least)
    requires is_floating<T>
  {
    return most > key_of(positive_infinity<T>()) || least < key_of(negative_infinity<T>());
  }
  // N (even) half or bfloat16 elements at once, two per 32-bit word: both keys of a word come
  // from four integer operations, and the word's keys join the batch's largest and smallest with
  // one 16x2 max and min; the two extremes also tell whether a NaN was seen (saw_nan).
  // Elementwise, the same took a float conversion and a compare for the NaN test per element.
  template <unsigned N>
    requires(is_half_like<T> && N % 2 == 0)
  RL_HD_INLINE static Acc absorb_batch(Acc acc, const T* v) {
    std::uint32_t w[N / 2];
#pragma unroll
    for (unsigned j = 0; j < N; j += 2) w[j / 2] = std::uint32_t(v[j].bits) | (std::uint32_t(v[j + 1].bits) << 16);
    return absorb_words<N / 2>(acc, w);
  }
  // The same from W words as loaded (element 2j in the low half of word j). Kernels that load
  // 16-bit elements for min and max pass the words on whole: split into elements first, each
  // loaded vector was unpacked into eight registers by the instructions after the load, which
  // waited for it, so a thread had one load in flight instead of its four or eight.
  template <unsigned W>
    requires is_half_like<T>
  RL_HD_INLINE static Acc absorb_words(Acc acc, const std::uint32_t* w) {
    std::uint32_t most = 0x80008000u, least = 0x7fff7fffu;
#pragma unroll
    for (unsigned j = 0; j < W; ++j) {
      const std::uint32_t k = keys16x2(w[j]);
      most = extreme_s16x2<true>(most, k);
      least = extreme_s16x2<false>(least, k);
    }
    const auto lane = [](std::uint32_t x, int shift) { return static_cast<Key>(static_cast<std::int16_t>(x >> shift)); };
    const Key hi = lane(most, 0) > lane(most, 16) ? lane(most, 0) : lane(most, 16);
    const Key lo = lane(least, 0) < lane(least, 16) ? lane(least, 0) : lane(least, 16);
    if (saw_nan(hi, lo)) return nan_key();
    return combine(acc, kMax ? hi : lo);
  }
};
template <class T> struct Semantics<T, op::min> : Extremum<T, false> {};
template <class T> struct Semantics<T, op::max> : Extremum<T, true> {};

// argmin/argmax carry (value, index). Values compare in min/max's order (-0 below +0), a NaN
// beats every number and the lower index breaks ties (equal values, two NaNs): a total order, so
// the result is the same in any order and names the element min/max return.
// The identity's index is the largest int64, so a real element always beats it.
template <class T, bool kMax>
struct ArgExtremum {
  using Acc = ArgResult<T>;
  using Out = ArgResult<T>;
  static constexpr bool order_free = true;
  static constexpr bool has_atomic_combine = false;
  static constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
  RL_HD_INLINE static Acc identity() {
    if constexpr (is_floating<T>) return Acc{kMax ? negative_infinity<T>() : positive_infinity<T>(), kNone};
    else return Acc{kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max(), kNone};
  }
  using Inner = Acc;
  RL_HD_INLINE static Inner inner_identity() { return identity(); }
  RL_HD_INLINE static Acc lift(T x, std::uint64_t i) { return Acc{x, static_cast<std::int64_t>(i)}; }
  RL_HD_INLINE static Acc inner_combine(Acc a, Acc b) { return combine(a, b); }
  RL_HD_INLINE static Acc absorb(Acc a, Acc b) { return combine(a, b); }
  RL_HD_INLINE static Acc combine(Acc a, Acc b) {
    const bool an = is_nan(a.value), bn = is_nan(b.value);
    if (an || bn) {
      if (an && bn) return a.index < b.index ? a : b;
      return an ? a : b;
    }
    // min and max's order: floating-point values by their order keys, so -0 < +0.
    if constexpr (is_floating<T>) {
      const auto ka = key_of(a.value), kb = key_of(b.value);
      if (ka == kb) return a.index < b.index ? a : b;
      return ((kb < ka) != kMax) ? b : a;
    } else {
      if (a.value == b.value) return a.index < b.index ? a : b;
      return ((b.value < a.value) != kMax) ? b : a;
    }
  }
  RL_HD_INLINE static Out finish(Acc a, std::uint64_t) {
    if (a.index == kNone) a.index = -1;  // n == 0
    return a;
  }
};
template <class T> struct Semantics<T, op::argmin> : ArgExtremum<T, false> {};
template <class T> struct Semantics<T, op::argmax> : ArgExtremum<T, true> {};

// A user functor: value_type carries, identity() and operator() combine. Nothing is known about
// its associativity, so it follows the fixed order.
template <class T, class Op>
struct UserSemantics {
  using Acc = typename Op::value_type;
  using Out = Acc;
  static constexpr bool order_free = false;
  static constexpr bool has_atomic_combine = false;
  RL_HD_INLINE static Acc identity() { return Op{}.identity(); }
  using Inner = Acc;
  RL_HD_INLINE static Inner inner_identity() { return identity(); }
  RL_HD_INLINE static Acc lift(T x, std::uint64_t) { return static_cast<Acc>(widen(x)); }
  RL_HD_INLINE static Acc combine(Acc a, Acc b) { return Op{}(a, b); }
  RL_HD_INLINE static Acc inner_combine(Acc a, Acc b) { return combine(a, b); }
  RL_HD_INLINE static Acc absorb(Acc a, Acc b) { return combine(a, b); }
  RL_HD_INLINE static Out finish(Acc a, std::uint64_t) { return a; }
};

template <class T, class Op>
using semantics_t = std::conditional_t<is_builtin_op<Op>, Semantics<T, Op>, UserSemantics<T, Op>>;

}  // namespace reducelab::detail
