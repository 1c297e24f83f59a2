#pragma once
// Exact sums: the real sum of floating-point inputs, rounded once. Read by nvcc (the kernel,
// agent_exact.cuh) and by g++ (the CPU backend and the SIMT build), so every backend rounds the
// same exact value with the same code.
//
// The exact value lives in a fixed-point accumulator of 32-bit digits: digit i weighs
// 2^(32 i + kBase), where 2^kBase is the smallest non-zero magnitude of the element type (every
// element, and every exact sum of elements, is an integer multiple of it). Digits are int64, so
// each holds a 32-bit digit plus a signed carry: adding a piece never propagates, and any number
// of digit additions up to 2^31 per digit is exact in any order. That is what makes the result
// independent of how the work was split: integer addition is associative.
//
// Most elements never reach the digits. Two error-free steps in front of them do the work:
//   - a tile's elements are first summed in plain double when their exponents lie close enough
//     together that every partial sum is a double (tile_sum_is_exact below);
//   - a thread carries what it has summed as an unevaluated pair a + b of doubles, updated with
//     TwoSum: a + b + x == a' + b' + e exactly, and only a non-zero e (rare) goes to the digits.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "reducelab/config.hpp"
#include "reducelab/reduce.hpp"
#include "reducelab/types.hpp"

namespace reducelab::detail {

// The operations computed exactly: sums and means of floating-point elements.
template <class T, class Op>
inline constexpr bool exact_sum_v = is_floating<T> && (std::is_same_v<Op, op::sum> || std::is_same_v<Op, op::mean>);

// Per element type: the digit layout, and what decides that a tile's plain double sum is exact.
template <class T>
struct ExactTraits;
template <>
struct ExactTraits<float> {
  static constexpr int kBase = -149;  // the smallest float subnormal
  static constexpr int kDigits = 13;  // |sum| < 2^64 * 2^128, with room for carries and sign
  static constexpr int kMantissa = 24;
};
template <>
struct ExactTraits<bfloat16> {
  static constexpr int kBase = -149;  // bf16 subnormals are multiples of 2^-133; 2^-149 keeps float's layout
  static constexpr int kDigits = 13;
  static constexpr int kMantissa = 8;
};
template <>
struct ExactTraits<half> {
  static constexpr int kBase = -24;  // the smallest half subnormal
  static constexpr int kDigits = 6;  // |sum| < 2^64 * 2^16
  static constexpr int kMantissa = 11;
};
template <>
struct ExactTraits<double> {
  static constexpr int kBase = -1074;  // the smallest double subnormal
  static constexpr int kDigits = 69;   // |sum| < 2^64 * 2^1024
  static constexpr int kMantissa = 53;
};
inline constexpr int kMaxExactDigits = 69;

// Flags that travel beside the digits (ORed together across threads and blocks).
enum : unsigned {
  kSawNaN = 1u,
  kSawPosInf = 2u,
  kSawNegInf = 4u,
  kSawNonNegZero = 8u,  // an element other than -0: an exact zero sum is then +0, else -0
};

RL_HD_INLINE std::uint64_t bits_of_double(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(d));
#else
  std::uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
#endif
}
RL_HD_INLINE double double_from_bits(std::uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
#endif
}

RL_HD_INLINE bool finite_double(double x) { return (bits_of_double(x) & 0x7ff0000000000000ull) != 0x7ff0000000000000ull; }

// The sums held as integers (exact_half.cuh, exact_wide.cuh) keep their flags in the integer's three
// low bits, the integer shifted up past them, so that two accumulators combine with one addition
// and one OR: an element other than -0, +inf, -inf (a NaN sets both: +inf and -inf give NaN).
enum : unsigned { kLowNotOnlyNegativeZeros = 1u, kLowPosInf = 2u, kLowNegInf = 4u, kLowFlags = 7u };
// The low bits' flags as the flags above.
RL_HD_INLINE unsigned flags_of_low_bits(unsigned low) {
  return (low & (kLowPosInf | kLowNegInf)) | ((low & kLowNotOnlyNegativeZeros) != 0 ? kSawNonNegZero : 0u);
}
// The low bits of a double that is a sum of elements: an infinity's or a NaN's flags, else whether
// it is anything but -0.
RL_HD_INLINE unsigned low_bits_of_sum(double s) {
  if (s != s) return kLowPosInf | kLowNegInf;
  if (!finite_double(s)) return s > 0 ? kLowPosInf : kLowNegInf;
  return s == 0 && (bits_of_double(s) >> 63) != 0 ? 0u : kLowNotOnlyNegativeZeros;
}

// The flag an infinite or NaN element raises.
RL_HD_INLINE unsigned special_flag(double x) {
  if (x != x) return kSawNaN;
  return x > 0 ? kSawPosInf : kSawNegInf;
}

// Splits a finite non-zero double (an integer multiple of 2^base) into three signed 32-bit pieces
// and the index of the digit the lowest one goes to: x == sign * (p0 + p1 2^32 + p2 2^64) 2^(32 i + base).
struct DigitPieces {
  int digit;
  std::int64_t p[3];
};
RL_HD_INLINE DigitPieces pieces_of(double x, int base) {
  const std::uint64_t u = bits_of_double(x);
  const int e = static_cast<int>((u >> 52) & 0x7ff);
  std::uint64_t m = u & 0xfffffffffffffull;
  int k;  // x = m * 2^k
  if (e == 0) {
    k = -1074;
  } else {
    m |= 1ull << 52;
    k = e - 1075;
  }
  int p = k - base;
  if (p < 0) {  // only zero bits fall off: x is a multiple of 2^base
    m >>= -p;
    p = 0;
  }
  const int o = p & 31;
  const std::uint64_t lo = m << o;                          // bits 0..63 of m * 2^o
  const std::uint64_t hi = o == 0 ? 0 : m >> (64 - o);      // bits 64..84
  DigitPieces r;
  r.digit = p >> 5;
  const bool neg = (u >> 63) != 0;
  const std::int64_t s0 = static_cast<std::int64_t>(lo & 0xffffffffu), s1 = static_cast<std::int64_t>(lo >> 32),
                     s2 = static_cast<std::int64_t>(hi);
  r.p[0] = neg ? -s0 : s0;
  r.p[1] = neg ? -s1 : s1;
  r.p[2] = neg ? -s2 : s2;
  return r;
}

// Adds a finite double into plain digits (host, or one thread's private array).
RL_HD_INLINE void add_to_digits(std::int64_t* digits, double x, int base) {
  if (x == 0) return;
  const DigitPieces q = pieces_of(x, base);
  for (int j = 0; j < 3; ++j) digits[q.digit + j] += q.p[j];
}

// TwoSum: s + e == a + b exactly, for any finite a, b whose sum does not overflow.
RL_HD_INLINE void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

// Adds x to the pair a + b with two bare TwoSums (no branches) and says whether nothing was left
// over: false when the pair cannot hold the sum, or when x, the sum or the pair's low part is not
// finite (NaN compares unequal). a and b take the new pair either way.
RL_HD_INLINE bool pair_add_held(double& a, double& b, double x) {
  double s, e, t, r;
  two_sum(a, x, s, e);
  two_sum(b, e, t, r);
  a = s, b = t;
  return r == 0;
}

// One thread's running sum: the pair a + b plus whatever it handed to `spill` (a callable taking
// a finite double that must be added to the digits exactly), plus flags.
struct ExactCarry {
  double a = -0.0;  // stays -0 exactly while every element seen is -0
  double b = 0.0;
  unsigned flags = 0;

  // Adds one value: a finite double, or an infinity/NaN (flagged, not added).
  template <class Spill>
  RL_HD_INLINE void add(double x, Spill&& spill) {
    double s, e, t, r;
    two_sum(a, x, s, e);
    two_sum(b, e, t, r);
    if (r != 0) {  // NaN compares unequal too  // rare: the pair cannot hold it, or x, s or t is not finite
      if (!finite_double(x)) {
        flags |= special_flag(x);
        return;  // a and b unchanged
      }
      if (!finite_double(s) || !finite_double(t)) {  // the pair overflowed: hand everything over
        spill(a);
        spill(b);
        spill(x);
        a = 0.0;
        b = 0.0;
        return;
      }
      spill(r);
    }
    a = s;
    b = t;
  }
  // Takes another carry's sum and flags. A zero b is skipped: TwoSum leaves +0 there even when
  // every element was -0, and adding it would lose the sign of an all-(-0) sum.
  template <class Spill>
  RL_HD_INLINE void merge(const ExactCarry& other, Spill&& spill) {
    if (other.b != 0) add(other.b, spill);
    add(other.a, spill);
    flags |= other.flags;
  }
  // Hands the pair over at the end; returns the flags including whether an element was not -0.
  template <class Spill>
  RL_HD_INLINE unsigned finish(Spill&& spill) {
    spill(a);
    spill(b);
    const bool only_negative_zeros = a == 0 && (bits_of_double(a) >> 63) != 0;
    return flags | (only_negative_zeros ? 0u : kSawNonNegZero);
  }
};

// The result the flags alone decide: NaN when a NaN or both infinities were seen, else the
// infinity seen. False when the elements were all finite.
template <class Out>
RL_HD_INLINE bool special_result(unsigned flags, Out* r) {
  constexpr Out kInf = std::numeric_limits<Out>::infinity();
  if ((flags & kSawNaN) || ((flags & kSawPosInf) && (flags & kSawNegInf))) *r = std::numeric_limits<Out>::quiet_NaN();
  else if (flags & kSawPosInf) *r = kInf;
  else if (flags & kSawNegInf) *r = -kInf;
  else return false;
  return true;
}

// ---- plain double sums that are exact ------------------------------------------------------
// The least k with 2^k >= n.
RL_HD_INLINE int ceil_log2(std::uint64_t n) {
#if defined(__CUDA_ARCH__)
  return n <= 1 ? 0 : 64 - __clzll(static_cast<long long>(n - 1));
#else
  return n <= 1 ? 0 : 64 - __builtin_clzll(n - 1);
#endif
}
// A finite non-zero double is a multiple of 2^lowest_bit_exponent(x).
RL_HD_INLINE int lowest_bit_exponent(double x) {
  const std::uint64_t u = bits_of_double(x);
  const int e = static_cast<int>((u >> 52) & 0x7ff);
  std::uint64_t m = u & 0xfffffffffffffull;
  if (e != 0) m |= 1ull << 52;
#if defined(__CUDA_ARCH__)
  const int zeros = __ffsll(static_cast<long long>(m)) - 1;
#else
  const int zeros = __builtin_ctzll(m);
#endif
  return (e != 0 ? e : 1) - 1075 + zeros;
}
// What decides whether some finite doubles sum exactly in plain double, in any order: every one
// is a multiple of 2^lsb (the least lowest_bit_exponent; INT_MAX for zeros only) and below
// 2^(top - 1022) in magnitude (top: the largest exponent field, at least 1).
struct PairWindow {
  int lsb;
  int top;
};
RL_HD_INLINE void widen_window(PairWindow& w, double v) {
  if (v == 0) return;
  const int l = lowest_bit_exponent(v), t = static_cast<int>((bits_of_double(v) >> 52) & 0x7ff);
  w.lsb = l < w.lsb ? l : w.lsb;
  w.top = t > w.top ? t : w.top;
}
RL_HD_INLINE PairWindow pair_window(double a, double b) {
  PairWindow w{std::numeric_limits<int>::max(), 1};
  widen_window(w, a);
  widen_window(w, b);
  return w;
}
// Whether `count` such doubles sum exactly in any order: every partial sum is a multiple of
// 2^lsb below count * 2^(top - 1022) <= 2^(lsb + 53), so a double holds it, and below 2^1024, so
// it is finite.
RL_HD_INLINE bool pair_window_holds(int lsb, int top, unsigned count) {
  if (lsb == std::numeric_limits<int>::max()) return true;  // zeros only
  const int bound = top - 1022 + ceil_log2(count);
  return bound <= lsb + 53 && bound <= 1024;
}

// ---- doubles split on a shared grid ---------------------------------------------------------
// Double elements carry full 53-bit significands, so a plain double sum of them is rarely exact.
// But a group of at most 2^(l-1) doubles, all below 2^e in magnitude, sums exactly as two plain
// double sums when each is split at one place shared by the whole group: with sigma = 2^(e + l),
// q = (sigma + x) - sigma is x rounded to the grid 2^(e + l - 53), and x - q is exact (|x| <=
// sigma: the error of that addition). The q's lie on the grid and together stay below
// 2^(e + l - 1), so they sum exactly in any order. Every rest x - q is a multiple of the smallest
// element's unit 2^(emin - 52) (q lies on a coarser grid) and below 2^(e + l - 53) in magnitude,
// so up to 2^(l-1) of them sum exactly when 2^(l-1) * 2^(e+l-53) <= 2^(emin+1), that is when
// e - emin <= 55 - 2l: whenever the group's exponent fields (read from the high words,
// split_magnitude) span at most 54 - 2l, 44 for 16 elements, whatever the significands. Per
// element: four additions (q, the rest and the two running sums) and a few integer operations;
// a cut on two grids without the exponents' range (bench/cut_probe.cu) took six and a comparison.
struct DoubleSplit {
  double sigma = 0.0;  // 2^(e + l): q = (sigma + x) - sigma
  int field = 0;  // the largest exponent field the grid was made for (every |x| < 2^(field - 1022))
  int reach = 0;  // the widest field span the group may hold: 54 - 2l
  bool usable = false;
};
// The split for up to `count` doubles whose largest magnitude has the high word `most`. Not usable
// for zeros only, an infinity or NaN, or magnitudes near either end of the range.
RL_HD_INLINE DoubleSplit double_split(std::uint32_t most, std::uint64_t count) {
  const int field = static_cast<int>(most >> 20);
  const int l = ceil_log2(count) + 1;
  const int k1 = (field == 0 ? 1 : field) - 1022 + l;
  DoubleSplit s;
  s.field = field;
  s.reach = 54 - 2 * l;
  s.usable = most != 0 && field != 0x7ff && k1 <= 1023 && k1 - 53 >= -1021;
  s.sigma = s.usable ? double_from_bits(static_cast<std::uint64_t>(k1 + 1023) << 52) : 0.0;
  return s;
}
// A double's magnitude as a 32-bit word that orders like it at the exponent's resolution: the high
// word without the sign, with its lowest bit set when the low word is not zero, so that only zeros
// give 0 (a subnormal below 2^-1042 gives 1, field 0: the finest unit).
RL_HD_INLINE std::uint32_t split_magnitude(double x) {
  const std::uint64_t bits = bits_of_double(x);
  const auto low = static_cast<std::uint32_t>(bits);
  return (static_cast<std::uint32_t>(bits >> 32) & 0x7fffffffu) | (low < 1u ? low : 1u);
}
// Whether a group the split was made for, whose smallest non-zero split_magnitude minus one is
// `least` (zeros wrap to the top), sums exactly on it: field - emin's field <= reach.
RL_HD_INLINE bool split_holds(const DoubleSplit& s, std::uint32_t least) {
  return s.usable && s.field - static_cast<int>(least >> 20) <= s.reach;
}
// x into the running sums of its grid part (s1) and the rest (s2).
RL_HD_INLINE void split_add(double sigma, double x, double& s1, double& s2) {
  const double q = (sigma + x) - sigma;
  s1 += q;
  s2 += x - q;
}

// ---- rounding the digits once ---------------------------------------------------------------

// The digit as a signed integer, whatever holds it (an int64 array, or unsigned 64-bit words in
// device memory where the kernel's atomics left them).
template <class Digits>
RL_HD_INLINE std::int64_t digit_at(const Digits& digits, int i) {
  const auto v = static_cast<std::uint64_t>(digits[i]);
  return static_cast<std::int64_t>(v);
}

// The magnitude of digits [first, first + count) as 32-bit words (least significant first) and
// its sign. `words` has room for `count` words.
template <class Digits>
RL_HD_INLINE bool normalise(const Digits& digits, int first, int count, std::uint32_t* words) {
  std::int64_t carry = 0;
  for (int i = 0; i < count; ++i) {
    const std::int64_t v = digit_at(digits, first + i) + carry;
    words[i] = static_cast<std::uint32_t>(v);
    carry = v >> 32;  // arithmetic shift: floor division by 2^32
  }
  const bool negative = carry < 0;
  if (negative) {  // two's complement: negate the words
    std::uint64_t c = 1;
    for (int i = 0; i < count; ++i) {
      const std::uint64_t v = static_cast<std::uint64_t>(static_cast<std::uint32_t>(~words[i])) + c;
      words[i] = static_cast<std::uint32_t>(v);
      c = v >> 32;
    }
  }
  return negative;
}

RL_HD_INLINE int top_word(const std::uint32_t* words, int count) {  // -1 when zero
  for (int i = count - 1; i >= 0; --i)
    if (words[i] != 0) return i;
  return -1;
}
RL_HD_INLINE int highest_bit(std::uint32_t w) {
#if defined(__CUDA_ARCH__)
  return 31 - __clz(w);
#else
  return 31 - __builtin_clz(w);
#endif
}
RL_HD_INLINE std::uint32_t word_or_zero(const std::uint32_t* words, int i) { return i < 0 ? 0u : words[i]; }

// words / divisor in place, enough of it to round: from the top non-zero word t down to word
// t - 5 (the quotient keeps >= 127 significant bits); the words below become zero and what was
// dropped (them and the remainder) comes back as the sticky bit.
RL_HD_INLINE bool divide_words(std::uint32_t* words, int count, std::uint64_t divisor) {
  const int t = top_word(words, count);
  if (t < 0) return false;
  const int stop = t - 5 > 0 ? t - 5 : 0;
  unsigned __int128 rem = 0;
  for (int i = t; i >= stop; --i) {
    const unsigned __int128 cur = (rem << 32) | words[i];
    words[i] = static_cast<std::uint32_t>(cur / divisor);
    rem = cur % divisor;
  }
  bool sticky = rem != 0;
  for (int i = 0; i < stop; ++i) {
    sticky = sticky || words[i] != 0;
    words[i] = 0;
  }
  return sticky;
}

RL_HD_INLINE int highest_bit128(unsigned __int128 m) {  // m != 0
  const auto hi = static_cast<std::uint64_t>(m >> 64), lo = static_cast<std::uint64_t>(m);
#if defined(__CUDA_ARCH__)
  return hi != 0 ? 127 - __clzll(static_cast<long long>(hi)) : 63 - __clzll(static_cast<long long>(lo));
#else
  return hi != 0 ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll(lo);
#endif
}

// m * 2^exp2 (plus `sticky`: something non-zero below m's bit 0) rounded to nearest, ties to
// even, into Out (float or double): subnormals and overflow to infinity included.
template <class Out>
RL_HD_INLINE Out round_u128(unsigned __int128 m, int exp2, bool sticky) {
  constexpr int kP = std::is_same_v<Out, float> ? 24 : 53;
  constexpr int kMinLsb = std::is_same_v<Out, float> ? -149 : -1074;
  if (m == 0) return Out(0);
  const int h = highest_bit128(m);
  int lsb = h - (kP - 1);  // the bit of m that becomes the result's last bit
  if (lsb < kMinLsb - exp2) lsb = kMinLsb - exp2;
  if (lsb <= 0 && !sticky) return static_cast<Out>(ldexp(static_cast<double>(static_cast<std::uint64_t>(m)), exp2));
  if (lsb <= 0) {  // keep the sticky bit below: shift up (m < 2^kP here, so this cannot overflow)
    m <<= 2 - lsb;
    exp2 -= 2 - lsb;
    lsb = 2;
  }
  if (lsb > h + 1) return Out(0);  // under half the smallest subnormal
  std::uint64_t q = lsb >= 128 ? 0 : static_cast<std::uint64_t>(m >> lsb);
  const bool round = ((m >> (lsb - 1)) & 1u) != 0;
  const bool rest = sticky || (m & ((static_cast<unsigned __int128>(1) << (lsb - 1)) - 1)) != 0;
  if (round && (rest || (q & 1u))) ++q;  // q may become 2^kP: still exact in double
  // For float, the double is q * 2^e exactly; the conversion only rounds when it overflows.
  return static_cast<Out>(ldexp(static_cast<double>(q), lsb + exp2));
}

// The magnitude M * 2^base held in words (plus `sticky`), rounded once into Out: the three words
// from the top one down hold every bit that matters (kP <= 53 bits and the round bit); the
// words below only feed the sticky bit.
template <class Out>
RL_HD_INLINE Out round_words(const std::uint32_t* words, int count, int base, bool sticky) {
  const int w = top_word(words, count);
  if (w < 0) return Out(0);
  const unsigned __int128 window = (static_cast<unsigned __int128>(words[w]) << 64) |
                                   (static_cast<unsigned __int128>(word_or_zero(words, w - 1)) << 32) |
                                   word_or_zero(words, w - 2);
  for (int i = 0; i < w - 2 && !sticky; ++i) sticky = words[i] != 0;
  return round_u128<Out>(window, base + 32 * (w - 2), sticky);
}

// 2^e as a double, for -1022 <= e <= 1023.
RL_HD_INLINE double pow2(int e) { return double_from_bits(static_cast<std::uint64_t>(e + 1023) << 52); }

// The usual case of a sum (divisor 1), rounded with one integer-to-float conversion: the non-zero
// digits [first, last] span at most five, so with the carries the exact sum fits eight 32-bit words
// in registers; the 64 bits from its leading one down, with a sticky bit for anything non-zero
// below them, round to nearest-even in the conversion itself (64 significant bits leave at least 11
// below the last bit kept), and a power of two scales the result exactly. Returns false, leaving
// *out alone, for a zero sum, a wider span, or a result that would be subnormal or within a factor
// of two of overflow: exact_result's other paths take those. On an H100 the kernel's last block
// rounded in 0.5 us this way, against 0.7 us through the 128-bit path (docs/performance.md).
template <class T, class Out, class Digits>
RL_HD_INLINE bool round_digits_fast(const Digits& digits, int first, int last, Out* out) {
  constexpr int kWords = 8;
  constexpr int kMinExp = std::is_same_v<Out, float> ? -126 : -1022;  // of the result's leading bit
  constexpr int kMaxExp = std::is_same_v<Out, float> ? 126 : 1022;
  if (last - first > 4) return false;
  std::uint32_t w[kWords];
  std::int64_t carry = 0;
#pragma unroll
  for (int i = 0; i < kWords; ++i) {
    const std::int64_t v = (first + i <= last ? digit_at(digits, first + i) : 0) + carry;
    w[i] = static_cast<std::uint32_t>(v);
    carry = v >> 32;  // floor division: 0 or -1 once past the digits
  }
  const bool negative = carry < 0;
  if (negative) {  // two's complement: negate the words
    std::uint64_t c = 1;
#pragma unroll
    for (int i = 0; i < kWords; ++i) {
      const std::uint64_t v = static_cast<std::uint64_t>(~w[i]) + c;
      w[i] = static_cast<std::uint32_t>(v);
      c = v >> 32;
    }
  }
  int t = -1;  // the top non-zero word
#pragma unroll
  for (int i = 0; i < kWords; ++i)
    if (w[i] != 0) t = i;
  if (t < 0) return false;
  std::uint32_t w0 = 0, w1 = 0, w2 = 0;  // words t, t - 1, t - 2 (selected, not indexed: w stays in registers)
  bool below = false;
#pragma unroll
  for (int i = 0; i < kWords; ++i) {
    if (i == t) w0 = w[i];
    if (i == t - 1) w1 = w[i];
    if (i == t - 2) w2 = w[i];
    if (i < t - 2) below = below || w[i] != 0;
  }
  const int lz = 31 - highest_bit(w0);
  const std::uint64_t top = (static_cast<std::uint64_t>(w0) << 32) | w1;
  const std::uint64_t m = lz == 0 ? top : (top << lz) | (w2 >> (32 - lz));
  const bool sticky = below || static_cast<std::uint32_t>(w2 << lz) != 0;
  const int e = ExactTraits<T>::kBase + 32 * (first + t) - 32 - lz;  // the weight of m's bit 0
  if (e + 63 < kMinExp || e + 63 > kMaxExp) return false;
  const Out rounded = static_cast<Out>(m | (sticky ? 1u : 0u));  // in [2^63, 2^64]
  // times 2^e, exactly (in two steps where 2^e is below the doubles' normal range)
  const double r = e >= -1022 ? static_cast<double>(rounded) * pow2(e)
                              : static_cast<double>(rounded) * pow2(e + 64) * pow2(-64);
  *out = negative ? -static_cast<Out>(r) : static_cast<Out>(r);
  return true;
}

// The final answer from the digits and flags: the exact sum (divisor 1) or the exact mean
// (divisor n), rounded once into Out. `words` is scratch for kDigits + 4 words. Only the span of
// non-zero digits (and two above it, for carries and the sign) is normalised: a few digits for
// real data, where all kDigits would cost a long serial chain on one GPU thread.
template <class T, class Out, bool kMaybeMean = true, class Digits>
RL_HD_INLINE Out exact_result(const Digits& digits, int first, int last, unsigned flags, std::uint64_t divisor,
                              std::uint32_t* words) {
  using X = ExactTraits<T>;
  if (Out r; special_result(flags, &r)) return r;
  if (first < 0) return (flags & kSawNonNegZero) ? Out(0) : -Out(0);
  if (Out r; divisor == 1 && round_digits_fast<T, Out>(digits, first, last, &r)) return r;
  // A caller that only sums (kMaybeMean false: the GPU kernel's sums) goes from the short path
  // straight to the general one: with the 128-bit path inlined as well, the large float kernel
  // needed more than its 48 registers and spilled (2^26 on an H100: 93.8 -> 97.3 us).
  if (kMaybeMean && (last - first < 3 || (divisor == 1 && last - first < 6))) {
    // In registers: the top three digits (all of them when there are at most three, the usual
    // case) in 128 bits; digits below those (real data summed over many blocks: the pairs' low
    // halves land two digits below) fold into a carry into them and a sticky fraction. The
    // general path further down keeps its words in local memory and cost the last block about
    // half a microsecond (docs/performance.md).
    const int split = last - first < 3 ? first : last - 2;
    __int128 low = 0;
    for (int i = split - 1; i >= first; --i) low = low * (static_cast<__int128>(1) << 32) + digit_at(digits, i);
    const int k = 32 * (split - first);                // 0..96 bits
    const __int128 carry = low >> k;                    // floor: the rest below is in [0, 2^k)
    const bool fraction = low != carry * (static_cast<__int128>(1) << k);
    __int128 high = carry;
    for (int i = last; i >= split; --i)
      high += static_cast<__int128>(digit_at(digits, i)) * (static_cast<__int128>(1) << (32 * (i - split)));
    if (high == 0 && !fraction) return (flags & kSawNonNegZero) ? Out(0) : -Out(0);
    const bool negative = high < 0;
    // |sum| = m + f with 0 <= f < 1 units of digit `split`; f > 0 exactly when `fraction`.
    auto m = !negative ? static_cast<unsigned __int128>(high)
                       : static_cast<unsigned __int128>(fraction ? -(high + 1) : -high);
    if (!fraction || m >> 60 != 0) {  // f, if any, is only a sticky bit below the rounding point
      int exp2 = X::kBase + 32 * split;
      bool sticky = fraction;
      if (divisor > 1) {  // (three digits or fewer: no fraction) the quotient keeps >= 63
        const int up = 126 - highest_bit128(m);  // significant bits: m is shifted to 127 bits first
        m <<= up;
        exp2 -= up;
        sticky = m % divisor != 0;
        m /= divisor;
      }
      const Out r = round_u128<Out>(m, exp2, sticky);
      return negative ? -r : r;
    }
  }
  // Four zero words below the digits: a quotient keeps >= 64 bits more than the divisor takes.
  constexpr int kExtra = 4;
  for (int i = 0; i < kExtra; ++i) words[i] = 0;
  const int span = (last + 3 < X::kDigits ? last + 3 : X::kDigits) - first;
  const bool negative = normalise(digits, first, span, words + kExtra);
  const int count = span + kExtra;
  if (top_word(words, count) < 0) return (flags & kSawNonNegZero) ? Out(0) : -Out(0);
  const bool sticky = divisor > 1 && divide_words(words, count, divisor);
  const Out r = round_words<Out>(words, count, X::kBase + 32 * first - 32 * kExtra, sticky);
  return negative ? -r : r;
}
// The same, finding the span of non-zero digits first.
template <class T, class Out, class Digits>
RL_HD_INLINE Out exact_result(const Digits& digits, unsigned flags, std::uint64_t divisor, std::uint32_t* words) {
  int first = -1, last = -1;
  for (int i = 0; i < ExactTraits<T>::kDigits; ++i)
    if (digit_at(digits, i) != 0) {
      if (first < 0) first = i;
      last = i;
    }
  return exact_result<T, Out>(digits, first, last, flags, divisor, words);
}

// ---- an exact pair rounded once -------------------------------------------------------------
// Where no digit was needed, an exact sum is an unevaluated pair a + b of finite doubles (every
// TwoSum step left nothing over). `flags` are those of the elements (special_result decides
// first; kSawNonNegZero gives an exact zero its sign).

// a + b rounded once to nearest-even into Out (float or double). TwoSum gives s + e == a + b with
// s the double nearest; for float, s first moves to the odd neighbour on e's side when e != 0
// (rounding to odd at 53 bits), so the conversion to 24 bits cannot round twice the wrong way.
template <class Out>
RL_HD_INLINE Out round_pair(double a, double b, unsigned flags) {
  double s, e;
  two_sum(a, b, s, e);
  if (s == 0) return (flags & kSawNonNegZero) ? Out(0) : -Out(0);
  if (!finite_double(s)) return static_cast<Out>(s);  // past DBL_MAX: rounds to an infinity
  if constexpr (sizeof(Out) == sizeof(double)) {
    return s;
  } else {
    if (e != 0) {
      std::uint64_t u = bits_of_double(s);
      if ((u & 1u) == 0) u = ((e > 0) == (s > 0)) ? u + 1 : u - 1;
      s = double_from_bits(u);
    }
    return static_cast<Out>(s);
  }
}

// (a + b) / n rounded once: the pair into a few digits, then exact_result, as the digits of a
// whole launch are rounded.
template <class T, class Out>
RL_HD_INLINE Out pair_mean(double a, double b, unsigned flags, std::uint64_t n) {
  using X = ExactTraits<T>;
  if (a == 0 && b == 0) return exact_result<T, Out>(static_cast<const std::int64_t*>(nullptr), -1, -1, flags, n, nullptr);
  std::int64_t digits[X::kDigits];
  std::uint32_t words[X::kDigits + 4];
  const double parts[2] = {a, b};
  int lo = X::kDigits, hi = -1;
  for (int k = 0; k < 2; ++k) {
    const double v = parts[k];
    if (v == 0) continue;
    const DigitPieces q = pieces_of(v, X::kBase);
    lo = q.digit < lo ? q.digit : lo;
    hi = q.digit + 2 > hi ? q.digit + 2 : hi;
  }
  const int top = hi + 3 < X::kDigits ? hi + 3 : X::kDigits;  // exact_result reads up to last + 2
  for (int i = lo; i < top; ++i) digits[i] = 0;
  for (int k = 0; k < 2; ++k) add_to_digits(digits, parts[k], X::kBase);
  int first = -1, last = -1;
  for (int i = lo; i < top; ++i)
    if (digits[i] != 0) {
      if (first < 0) first = i;
      last = i;
    }
  return exact_result<T, Out>(digits, first, last, flags, n, words);
}

template <class T>
struct ExactBits;  // the magnitude bits of a 16- or 32-bit floating-point element
template <>
struct ExactBits<float> {
  static constexpr unsigned kShift = 23, kSpecial = 0xff;  // exponent field position, inf/NaN value
  RL_HD_INLINE static std::uint32_t magnitude(float x) { return bits_of_float(x) & 0x7fffffffu; }
};
template <>
struct ExactBits<bfloat16> {
  static constexpr unsigned kShift = 7, kSpecial = 0xff;
  RL_HD_INLINE static std::uint32_t magnitude(bfloat16 x) { return x.bits & 0x7fffu; }
};
template <>
struct ExactBits<half> {
  static constexpr unsigned kShift = 10, kSpecial = 0x1f;
  RL_HD_INLINE static std::uint32_t magnitude(half x) { return x.bits & 0x7fffu; }
};

// Per 16-bit lane of a 32-bit word: unsigned max, min and wrapping subtraction (the exponent
// ranges of 16-bit elements, two per instruction on the GPU).
RL_HD_INLINE std::uint32_t max_u16x2(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __vmaxu2(a, b);
#else
  const std::uint32_t lo = std::max(a & 0xffffu, b & 0xffffu), hi = std::max(a >> 16, b >> 16);
  return hi << 16 | lo;
#endif
}
RL_HD_INLINE std::uint32_t min_u16x2(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __vminu2(a, b);
#else
  const std::uint32_t lo = std::min(a & 0xffffu, b & 0xffffu), hi = std::min(a >> 16, b >> 16);
  return hi << 16 | lo;
#endif
}
RL_HD_INLINE std::uint32_t sub_u16x2(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __vsub2(a, b);
#else
  return ((((a >> 16) - (b >> 16)) & 0xffffu) << 16) | (((a & 0xffffu) - (b & 0xffffu)) & 0xffffu);
#endif
}

// The magnitude range of kWords 32-bit words of 16-bit floats, two per word, with the 16x2 max and
// min: the largest magnitude in *most and, with kLeast, the smallest non-zero one minus one in
// *least (0xffffffff when every element is a zero). Both are left alone as far as the words do not
// lower or raise them, so a caller can fold several batches into one range.
template <unsigned kWords, bool kLeast>
RL_HD_INLINE void magnitude_range16(const std::uint32_t* word, std::uint32_t* most, std::uint32_t* least) {
  std::uint32_t most2 = 0, least2 = 0xffffffffu;
#pragma unroll
  for (unsigned k = 0; k < kWords; ++k) {
    const std::uint32_t m = word[k] & 0x7fff7fffu;
    most2 = max_u16x2(most2, m);
    if constexpr (kLeast) least2 = min_u16x2(least2, sub_u16x2(m, 0x00010001u));  // zeros wrap to 0xffff
  }
  const std::uint32_t hi = max_u16x2(most2, most2 >> 16) & 0xffffu;
  *most = hi > *most ? hi : *most;
  if constexpr (kLeast) {
    const std::uint32_t lo = min_u16x2(least2, least2 >> 16 | 0xffff0000u) & 0xffffu;
    if (lo != 0xffffu && lo < *least) *least = lo;
  }
}

// Whether a tile's elements, summed one by one in double, give every partial sum exactly:
// m elements (m <= 2^log2m) that are multiples of 2^(emin - bias - mantissa + 1) and below
// 2^(emax - bias + 1) sum below 2^53 units of that grid when log2m + emax - emin <= 53 - mantissa.
// emin/emax are biased exponent fields; emin may be one too low (the caller's cheap estimate),
// which only makes the test stricter.
template <class T>
RL_HD_INLINE bool tile_sum_is_exact(int emin, int emax, int log2m) {
  return log2m + emax - emin <= 53 - ExactTraits<T>::kMantissa;
}

}  // namespace reducelab::detail
