#pragma once
// Pieces whose exact sums are known by construction (tests/core/exact_cases.hpp's cases, plus
// pieces that defeat a pair of doubles), laid out as segments, as the rows and as the columns
// of a matrix (padded with -0, which changes no sum), for the CPU, SIMT and GPU tests.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../core/exact_cases.hpp"
#include "reducelab/segments.hpp"

namespace rltest {

template <class T>
struct PieceCases {
  std::vector<ExactCase<T>> cases;
  std::vector<T> flat;  // the cases one after another
  std::vector<std::int64_t> begin, end;
  std::uint64_t longest = 0;
};

// Pieces a running pair a + b cannot hold: a huge value that cancels at the end, with a small
// and a much smaller one in between (the smaller one's TwoSum remainder is lost by the pair).
template <class T>
void add_pair_defeating_cases(std::vector<ExactCase<T>>& cases) {
  using R = result_t<T, op::sum>;
  if constexpr (std::is_same_v<T, half>) {
    return;  // half's range (2^-24 .. 2^16) always fits the pair
  } else {
    constexpr bool kDouble = std::is_same_v<T, double>;
    const double huge = kDouble ? 0x1p600 : 0x1p100;
    const double small = kDouble ? 0x1p-300 : 0x1p-100;
    cases.push_back({"1 and a tiny value under a cancelling huge one",
                     {from_double<T>(huge), T(from_double<T>(1.0)), from_double<T>(small), from_double<T>(-huge)},
                     static_cast<R>(1.0), 0.25});
    // 1 + half an ulp of the result + something far below: just above halfway, rounds up.
    constexpr int p = std::is_same_v<R, float> ? 24 : 53;
    const double half_ulp = std::ldexp(1.0, -p);
    if (representable<T>(half_ulp))
      cases.push_back({"just above halfway under a cancelling huge one",
                       {from_double<T>(huge), from_double<T>(1.0), from_double<T>(half_ulp), from_double<T>(small),
                        from_double<T>(-huge)},
                       static_cast<R>(1.0 + 2 * half_ulp), std::nullopt});
  }
}

template <class T>
PieceCases<T> piece_cases(std::uint64_t n, std::uint64_t seed) {
  PieceCases<T> p;
  p.cases = exact_cases<T>(n, seed);
  for (auto& c : edge_cases<T>()) p.cases.push_back(std::move(c));
  add_pair_defeating_cases(p.cases);
  for (const auto& c : p.cases) {
    p.begin.push_back(static_cast<std::int64_t>(p.flat.size()));
    p.flat.insert(p.flat.end(), c.x.begin(), c.x.end());
    p.end.push_back(static_cast<std::int64_t>(p.flat.size()));
    p.longest = std::max<std::uint64_t>(p.longest, c.x.size());
  }
  return p;
}

// Case i as row i of a cases x longest matrix (axis 1), or as column i of a longest x cases
// matrix (axis 0), padded with -0.
template <class T>
std::vector<T> as_matrix(const PieceCases<T>& p, int axis) {
  const std::uint64_t count = p.cases.size(), len = p.longest;
  std::vector<T> x(count * len, negated(T(from_double<T>(0.0))));
  for (std::uint64_t i = 0; i < count; ++i)
    for (std::uint64_t k = 0; k < p.cases[i].x.size(); ++k) (axis == 1 ? x[i * len + k] : x[k * count + i]) = p.cases[i].x[k];
  return x;
}
template <class T>
Matrix matrix_of(const PieceCases<T>& p, int axis) {
  return axis == 1 ? Matrix{p.cases.size(), p.longest, 0} : Matrix{p.longest, p.cases.size(), 0};
}

}  // namespace rltest
