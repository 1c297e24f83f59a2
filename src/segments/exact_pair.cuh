#pragma once
// Exact floating-point sums and means of many pieces at once (reduce_axis, reduce_segments),
// built on exact_sum.cuh's arithmetic. Read by nvcc, by g++ (SIMT) and by the CPU backend.
//
// A piece's running sum is an ExactPair: the unevaluated sum a + b of two doubles, updated with
// ExactCarry's TwoSum steps, which is the exact sum of what it has taken in as long as no step
// leaves a remainder. The pair is an accumulator like any other (identity, lift, combine,
// finish), and since it is exact its combine is associative: the pieces take the order-free
// kernels (columns in bands, rows a few lanes each), and any grouping gives the same bits.
//
// Rarely, a step leaves a remainder the pair cannot hold (values whose exponents lie far
// apart, with cancellation; or a double sum past DBL_MAX on the way). The pair then turns
// "lost", the kernel does not write that piece but lists it in the workspace, and
// reduceRedoPieces (or the call's last kernel, where that is reduceLongPieces of float or double
// sums) sums the listed pieces again with a block each and the full digits of exact_sum.cuh, as
// reducelab::reduce does. If more pieces are lost than the list holds, it redoes every piece.
// Either way the result is the correctly rounded exact sum.
//
// Infinities and NaN travel as a "special" pair (a is NaN, b holds the flags of exact_sum.cuh):
// the result then follows from the flags alone (NaN, or an infinity), as exact_result rules.
#include <cstdint>
#include <limits>
#include <type_traits>

#include "reducelab/detail/exact_sum.cuh"
#include "reducelab/detail/reduce_ops.cuh"

namespace reducelab::detail {

// A pair that lost part of its sum (the piece is redone with digits).
inline constexpr unsigned kPairLost = 16u;

struct ExactPair {
  static constexpr bool kTwoDoubles = true;  // shuffled and loaded as two doubles (block_reduce.cuh)
  double a;
  double b;
};

RL_HD_INLINE bool pair_is_special(const ExactPair& p) { return p.a != p.a; }
RL_HD_INLINE unsigned pair_flags(const ExactPair& p) { return static_cast<unsigned>(p.b); }
RL_HD_INLINE ExactPair special_pair(unsigned flags) {
  return ExactPair{std::numeric_limits<double>::quiet_NaN(), static_cast<double>(flags)};
}

// The flags of an exact pair that is not special: only whether it sums -0 (a stayed -0).
RL_HD_INLINE unsigned pair_zero_flags(double a, double b) {
  const bool only_negative_zeros = a == 0 && (bits_of_double(a) >> 63) != 0 && b == 0;
  return only_negative_zeros ? 0u : kSawNonNegZero;
}
// a + b (an exact pair, not special) rounded once (round_pair).
template <class Out>
RL_HD_INLINE Out round_exact_pair(double a, double b) {
  return round_pair<Out>(a, b, pair_zero_flags(a, b));
}
// (a + b) / n (an exact pair, not special) rounded once (pair_mean).
template <class T, class Out>
RL_HD_INLINE Out exact_pair_mean(double a, double b, std::uint64_t n) {
  return pair_mean<T, Out>(a, b, pair_zero_flags(a, b), n);
}

// ---- The window: a plain double sum that vouches for itself --------------------------------
// A float, half or bfloat16 piece is usually summed exactly by plain double additions: every
// element is a multiple of 2^(emin - bias - mantissa + 1) and below 2^(emax - bias + 1), so while
// log2(n) + emax - emin <= 53 - mantissa every partial sum, in any order, is a double
// (tile_sum_is_exact). A WindowSum carries that sum with the largest and smallest magnitudes' bits
// seen (float and bfloat16; half windows need neither, below): a merge is one double addition and
// two integer comparisons, against the pair's four
// TwoSums, and the row's lanes fold it with three shuffles a step. A piece whose window turns out
// too wide (or holds an infinity or NaN) is summed again with pairs (reduceRowGroups).
struct WindowSum {
  double s;
  std::uint32_t most;   // the largest magnitude's bits
  std::uint32_t least;  // the smallest non-zero magnitude's bits minus one (zeros wrap to the top)
};
RL_HD_INLINE WindowSum window_identity() { return WindowSum{-0.0, 0u, 0xffffffffu}; }
// Half windows track no magnitude: every half is a multiple of 2^-24 (the subnormals' grid) below
// 2^16, so any partial sum of up to kHalfChain = 2^13 finite halves, in any order, is a double
// (below 2^29 on that grid), and an infinity or NaN shows in the sum itself, which turns infinite
// or NaN and stays so (double arithmetic then gives what exact_result rules: NaN for a NaN or for
// both infinities, else the infinity). kLeast: track the smallest magnitude too (float and bfloat16:
// always where a window may be long; a window's pieces all track it, or none does).
inline constexpr unsigned kHalfChain = 8192;
template <class T>
inline constexpr bool kWindowLeast = !std::is_same_v<T, half>;
template <class T, bool kLeast = kWindowLeast<T>>
RL_HD_INLINE void window_add(WindowSum& w, T x) {
  if constexpr (!std::is_same_v<T, half>) {
    const std::uint32_t m = ExactBits<T>::magnitude(x);
    w.most = m > w.most ? m : w.most;
    if constexpr (kLeast) w.least = m - 1u < w.least ? m - 1u : w.least;
  }
  w.s += static_cast<double>(widen(x));
}
// The same for N elements. BFloat16 pairs take their magnitudes' range two at a time (one 32-bit
// word, the 16x2 max and min): the integer work per element halves.
template <unsigned N, bool kLeast, class T>
RL_HD_INLINE void window_add_batch(WindowSum& w, const T* v) {
  if constexpr (std::is_same_v<T, bfloat16> && N % 2 == 0) {
    std::uint32_t word[N / 2];
    memcpy(word, v, sizeof word);
    magnitude_range16<N / 2, kLeast>(word, &w.most, &w.least);
#pragma unroll
    for (unsigned j = 0; j < N; ++j) w.s += static_cast<double>(widen(v[j]));
  } else {
#pragma unroll
    for (unsigned j = 0; j < N; ++j) window_add<T, kLeast>(w, v[j]);
  }
}
template <unsigned N, class T>
RL_HD_INLINE void window_add_batch(WindowSum& w, const T* v) {
  window_add_batch<N, kWindowLeast<T>>(w, v);
}
RL_HD_INLINE WindowSum window_merge(const WindowSum& a, const WindowSum& b) {
  return WindowSum{a.s + b.s, a.most > b.most ? a.most : b.most, a.least < b.least ? a.least : b.least};
}
// The widest span of exponent fields (emax - emin) a window of up to n elements may hold and
// still be exact (tile_sum_is_exact); negative when none is (double elements).
template <class T>
RL_HD_INLINE int window_span(std::uint64_t n) {
  return 53 - ExactTraits<T>::kMantissa - ceil_log2(n);
}
// Whether w's sum is exact for a window allowed `span` (window_span of at most how many elements
// it took in).
template <class T>
RL_HD_INLINE bool window_fits(const WindowSum& w, int span) {
  using B = ExactBits<T>;
  if constexpr (std::is_same_v<T, half>) {  // no magnitudes (window_add): at most kHalfChain, and the sum
    return span >= window_span<half>(kHalfChain) && finite_double(w.s);
  } else {
    const int emax = static_cast<int>(w.most >> B::kShift), emin = static_cast<int>(w.least >> B::kShift);
    return emax < static_cast<int>(B::kSpecial) && emax - emin <= span;  // an infinity or NaN: the pairs flag it
  }
}
// Whether w.s is the exact sum of the n elements it took in (n >= 1).
template <class T>
RL_HD_INLINE bool window_is_exact(const WindowSum& w, std::uint64_t n) {
  return window_fits<T>(w, window_span<T>(n));
}

// The accumulator of exact piece sums (Op is op::sum or op::mean of a floating-point T).
template <class T, class Op>
struct ExactPieceSemantics {
  using Value = T;  // the elements' type
  using Acc = ExactPair;
  using Inner = ExactPair;
  using Out = result_t<T, Op>;
  static constexpr bool order_free = true;  // the pair is exact: any grouping, the same bits
  static constexpr bool has_atomic_combine = false;
  static constexpr bool exact_pieces = true;
  static constexpr bool kMean = std::is_same_v<Op, op::mean>;
  // Warps sum their lanes' pairs on one grid first (warp_split_fold, block_reduce.cuh): float, half
  // and bfloat16 lanes usually hold single doubles a few binades apart. Double lanes' pairs carry a
  // second double some 53 binades below the first, past the grid's reach, so they keep the tree.
  static constexpr bool kSplitWarpFold = !std::is_same_v<T, double>;
  RL_HD_INLINE static Acc identity() { return ExactPair{-0.0, 0.0}; }
  RL_HD_INLINE static Inner inner_identity() { return identity(); }
  RL_HD_INLINE static Inner lift(T x, std::uint64_t) {
    const double v = static_cast<double>(widen(x));
    return finite_double(v) ? ExactPair{v, 0.0} : special_pair(special_flag(v));
  }
  RL_HD_INLINE static Acc combine(Acc p, Acc q) {
    const bool ps = pair_is_special(p), qs = pair_is_special(q);
    if (ps || qs) return special_pair((ps ? pair_flags(p) : 0u) | (qs ? pair_flags(q) : 0u));
    ExactCarry c;
    c.a = p.a;
    c.b = p.b;
    bool lost = false;
    ExactCarry other;
    other.a = q.a;
    other.b = q.b;
    c.merge(other, [&](double v) { lost = lost || v != 0; });
    if (lost) return special_pair(kPairLost);
    return ExactPair{c.a, c.b};
  }
  RL_HD_INLINE static Inner inner_combine(Inner a, Inner b) { return combine(a, b); }
  RL_HD_INLINE static Acc absorb(Acc a, Inner b) { return combine(a, b); }
  // N elements at once, straight into the pair (no inner identity to merge). Float, half and
  // bfloat16 pieces reach the pair only through RunningFold's window (exact_pieces.cuh), which
  // sums batches in plain double where that is exact; double pieces come here.
  template <unsigned N>
  RL_HD_INLINE static Acc absorb_batch(Acc acc, const T* v) {
    for (unsigned j = 0; j < N; ++j) acc = combine(acc, lift(v[j], 0));
    return acc;
  }
  // The same for a thread's run of a long piece (RunningFold): first two bare TwoSums per
  // element (ExactCarry::add without its branches); only if one of them left a remainder (NaN
  // compares unequal too: an infinity, a NaN or an overflow on the way shows there) does the
  // batch go again through absorb_batch, from the pair as it was. Rows of a few elements keep
  // absorb_batch: four rows in flight with both paths cost reduceRowGroups more than the branches
  // (H200, docs/performance.md).
  template <unsigned N>
  RL_HD_INLINE static Acc absorb_run(Acc acc, const T* v) {
    if (!pair_is_special(acc)) {
      double a = acc.a, b = acc.b;
      bool held = true;
#pragma unroll
      for (unsigned j = 0; j < N; ++j) {
        const bool step = pair_add_held(a, b, static_cast<double>(widen(v[j])));
        held = held && step;
      }
      if (held) return ExactPair{a, b};
    }
    return absorb_batch<N>(acc, v);
  }
  // The result of n elements whose exact sum is the double s (a window that vouched for itself):
  // what finish gives for the pair {s, 0}, without its TwoSum and branches (a double rounds to
  // float correctly in one conversion; -0 only when every element was -0).
  RL_HD_INLINE static Out finish_exact(double s, std::uint64_t n) {
    if (n == 0) return kMean ? std::numeric_limits<Out>::quiet_NaN() : Out(0);
    if constexpr (kMean) return exact_pair_mean<T, Out>(s, 0.0, n);
    else return static_cast<Out>(s);
  }
  // Whether the pair lost part of its sum and no infinity or NaN decides the result anyway.
  RL_HD_INLINE static bool needs_redo(const Acc& p) {
    return pair_is_special(p) && pair_flags(p) == kPairLost;
  }
  RL_HD_INLINE static Out finish(Acc p, std::uint64_t n) {
    if (n == 0) return kMean ? std::numeric_limits<Out>::quiet_NaN() : Out(0);
    if (pair_is_special(p)) {
      const unsigned f = pair_flags(p);
      if ((f & kSawNaN) || ((f & kSawPosInf) && (f & kSawNegInf))) return std::numeric_limits<Out>::quiet_NaN();
      if (f & kSawPosInf) return std::numeric_limits<Out>::infinity();
      if (f & kSawNegInf) return -std::numeric_limits<Out>::infinity();
      return std::numeric_limits<Out>::quiet_NaN();  // lost: never written (needs_redo)
    }
    if constexpr (kMean) return exact_pair_mean<T, Out>(p.a, p.b, n);
    else return round_exact_pair<Out>(p.a, p.b);
  }
};

template <class Sem, class = void>
struct is_exact_pieces : std::false_type {};
template <class Sem>
struct is_exact_pieces<Sem, std::void_t<decltype(Sem::exact_pieces)>> : std::bool_constant<Sem::exact_pieces> {};

// The accumulator reduce_axis and reduce_segments use for Op over T: exact pairs for
// floating-point sums and means, reducelab::reduce's semantics for everything else.
template <class T, class Op>
using piece_semantics_t = std::conditional_t<exact_sum_v<T, Op>, ExactPieceSemantics<T, Op>, semantics_t<T, Op>>;

}  // namespace reducelab::detail
