#pragma once
// CPU references. The seeds' two host reductions, fixed for every length, and the exact
// reference that every kernel of the lab is verified against.
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "core/ops.hpp"
#include "reducelab/types.hpp"

namespace rl::core {

// Seed 000's recursiveReduce: interleaved pairs, data[i] += data[i + stride], halving the
// length each round. The seed drops the last element of an odd length; here the upper half
// starts at ceil(size/2), so an odd element is carried into the next round. Reduces in place
// (as the seed does) and returns the sum; an empty array sums to 0.
long long recursive_reduce(std::span<long long> data);

// Seed 002's neighbored pairs on the CPU: out[i] = in[2i] + in[2i+1] each round; an odd last
// element is carried over unpaired. Returns the sum; an empty array sums to 0.
long long adjacent_pair_reduce(std::span<const long long> data);

// Exact references: the true value of the reduction, independent of any order.
//   integers: accumulated in 128 bits, so no n a machine can hold overflows;
//   floating point: Neumaier's compensated sum in long double, whose error is far below one
//   rounding of the float/double result it checks.
struct ExactSum {
  __int128 integer = 0;       // for integer input
  long double real = 0;       // for floating-point input
  long double abs_sum = 0;    // sum of |x|, for error bounds
};

// The value type core::Exact folds a lab operation's combine in: integers widened to 64 bits of
// their own signedness (the gallery's widest accumulator; a narrower accumulator holds the same
// fold truncated, for the ring operations and the order operations alike), half and bfloat16 as
// float (every one is a float, exactly), float and double as themselves.
template <class T>
using fold_t = std::conditional_t<
    std::is_integral_v<T>, std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>,
    std::conditional_t<reducelab::is_half_like<T>, float, T>>;

// The exact reduction of any of the library's twelve element types under every lab operation,
// built up from pieces (threads may each take a range and merge). The sum is the one operation
// that rounds, so it has a reference of its own: integers summed in 128 bits, floating point
// (half and bfloat16 through float) in Neumaier's compensated long double sum, plus sum |x| for
// the rounding bound. Every other lab row of RL_OP_TABLE (min, max, and any row added there) is
// exact in any order, as the lab requires of it, and its reference is the serial fold of the
// row's own combine over the values widened to fold_t<T> (NaN-free input assumed).
template <class T>
struct Exact {
  using F = fold_t<T>;
  std::size_t n = 0;
  __int128 integer = 0;
  long double sum = 0, compensation = 0, abs_sum = 0;
  std::array<F, std::size(kOps)> folds = identities();  // by OpKind; the lab rows but sum

  static long double real(T x) {
    if constexpr (reducelab::is_half_like<T>) return reducelab::to_float(x);
    else return static_cast<long double>(x);
  }
  static F widen(T x) {
    if constexpr (reducelab::is_half_like<T>) return reducelab::to_float(x);
    else return static_cast<F>(x);
  }
  static void neumaier(long double& s, long double& c, long double x) {
    const long double t = s + x;
    c += std::fabs(s) >= std::fabs(x) ? (s - t) + x : (x - t) + s;
    s = t;
  }
  // The fold of lab operation op (not sum) so far; the row's identity while n == 0.
  F fold(OpKind op) const { return folds[static_cast<std::size_t>(op)]; }

  void add(std::span<const T> x) {
    for (const T v : x) {
      fold_in(widen(v));
      ++n;
      if constexpr (std::is_integral_v<T>) {
        integer += v;
        abs_sum += std::fabs(static_cast<long double>(v));
      } else {
        neumaier(sum, compensation, real(v));
        abs_sum += std::fabs(real(v));
      }
    }
  }
  void merge(const Exact& o) {
    if (o.n == 0) return;
    for_each_folded([&]<class Tag>(F& f) { f = Combine<Tag, F>{}(f, o.fold(op_of<Tag>)); });
    integer += o.integer;
    neumaier(sum, compensation, o.sum);
    compensation += o.compensation;
    abs_sum += o.abs_sum;
    n += o.n;
  }
  // The exact sum as a long double (integers: exact up to 2^64).
  long double value() const {
    if constexpr (std::is_integral_v<T>) return static_cast<long double>(integer);
    else return sum + compensation;
  }

 private:
  // Calls f.template operator()<Tag>(fold) for each lab row but sum.
  template <class G>
  void for_each_folded(G&& g) {
    for_each_lab_op([&]<class Tag>() {
      if constexpr (op_of<Tag> != OpKind::sum) g.template operator()<Tag>(folds[static_cast<std::size_t>(op_of<Tag>)]);
    });
  }
  void fold_in(F x) {
    for_each_folded([&]<class Tag>(F& f) { f = Combine<Tag, F>{}(f, x); });
  }
  static constexpr std::array<F, std::size(kOps)> identities() {
    std::array<F, std::size(kOps)> a{};
    for_each_lab_op([&]<class Tag>() { a[static_cast<std::size_t>(op_of<Tag>)] = Combine<Tag, F>::identity(); });
    return a;
  }
};

ExactSum exact_sum(std::span<const int> x);
ExactSum exact_sum(std::span<const float> x);
ExactSum exact_sum(std::span<const double> x);

// min/max are exact in any order; these are plain loops (NaN-free input assumed by the lab).
template <class T, template <class> class Op>
T reduce_serial(std::span<const T> x) {
  Op<T> op;
  T acc = Op<T>::identity();
  for (T v : x) acc = op(acc, v);
  return acc;
}

// Largest error a floating-point reduction of n terms may show against the exact sum, when
// each term passes through at most `depth` roundings: depth * unit roundoff * sum|x|
// (Higham, Accuracy and Stability, 4.2). The lab uses depth = 2*ceil(log2 n) + 64 + ceil(sqrt n):
// a tree of any fan-in, plus serial stretches (a thread's grid-stride run, a chain of atomic
// adds into one result) of up to sqrt(n) terms.
double float_tolerance(std::size_t n, long double abs_sum, double unit_roundoff);
std::size_t tree_depth(std::size_t n);

}  // namespace rl::core
