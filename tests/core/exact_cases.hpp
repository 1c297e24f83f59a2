#pragma once
// Inputs whose exact sum is known by construction, for the exact floating-point sums: random
// values across the whole exponent range (subnormals included) together with their negatives
// and a residual, sums that fall exactly halfway between two results, many equal values,
// overflow, infinities, NaN and signed zeros. The expected sum and mean are computed without the
// library: a residual is one element (exact in the result type), n equal values multiply
// exactly in double, and a division of two doubles is correctly rounded by IEEE 754.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "reducelab/detail/exact_sum.cuh"
#include "reduce_support.hpp"

namespace rltest {

template <class T>
struct ExactCase {
  std::string name;
  std::vector<T> x;
  result_t<T, op::sum> sum;
  std::optional<double> mean;  // the exact mean rounded once, where the construction knows it
};

// A random finite element of T with an exponent drawn uniformly over T's whole range.
template <class T>
T random_any_exponent(std::mt19937_64& rng) {
  if constexpr (std::is_same_v<T, double>) {
    std::uint64_t b;
    do b = rng(); while (((b >> 52) & 0x7ff) == 0x7ff);
    return detail::double_from_bits(b);
  } else if constexpr (std::is_same_v<T, float>) {
    std::uint32_t b;
    do b = static_cast<std::uint32_t>(rng()); while (((b >> 23) & 0xff) == 0xff);
    return detail::float_from_bits(b);
  } else {
    const unsigned special = std::is_same_v<T, half> ? 0x7c00u : 0x7f80u;
    std::uint16_t b;
    do b = static_cast<std::uint16_t>(rng()); while ((b & special) == special);
    T r;
    r.bits = b;
    return r;
  }
}

template <class T>
T negated(T x) {
  if constexpr (is_half_like<T>) {
    x.bits ^= 0x8000u;
    return x;
  } else {
    return -x;
  }
}

template <class T>
double value(T x) {
  return static_cast<double>(detail::widen(x));
}

// Whether v is exactly an element of T.
template <class T>
bool representable(double v) {
  return value(from_double<T>(v)) == v;
}

template <class T>
std::vector<ExactCase<T>> exact_cases(std::uint64_t n, std::uint64_t seed) {
  using R = result_t<T, op::sum>;
  std::mt19937_64 rng(seed);
  std::vector<ExactCase<T>> cases;
  const auto add = [&](std::string name, std::vector<T> x, R sum, std::optional<double> mean) {
    cases.push_back({std::move(name) + " n=" + std::to_string(x.size()), std::move(x), sum, mean});
  };
  // Pairs x, -x over the whole exponent range plus residual elements: the sum is the residual's.
  const auto cancelling = [&](std::vector<T> residual, bool shuffle) {
    std::vector<T> x;
    const std::uint64_t pairs = n > residual.size() ? (n - residual.size()) / 2 : 0;
    for (std::uint64_t i = 0; i < pairs; ++i) {
      const T v = random_any_exponent<T>(rng);
      x.push_back(v);
      x.push_back(negated(v));
    }
    x.insert(x.begin() + static_cast<std::ptrdiff_t>(x.size() / 2), residual.begin(), residual.end());
    if (shuffle) std::shuffle(x.begin(), x.end(), rng);
    return x;
  };
  {
    const T r = random_any_exponent<T>(rng);
    std::vector<T> x = cancelling({r}, true);
    const double m = value(r) / static_cast<double>(x.size());
    add("cancelling across the exponent range", std::move(x), static_cast<R>(value(r)), m);
  }
  {
    const T r = random_any_exponent<T>(rng);
    std::vector<T> x = cancelling({r}, false);  // x, -x side by side: an alternating series
    const double m = value(r) / static_cast<double>(x.size());
    add("alternating", std::move(x), static_cast<R>(value(r)), m);
  }
  // Halfway between two results: a, a * 2^-p (p = the result's precision) ties to even; a third
  // element far below breaks the tie upwards.
  {
    constexpr int p = std::is_same_v<R, float> ? 24 : 53;
    const double a = std::is_same_v<T, half> ? 2048.0 : 1.0;
    const double half_ulp = std::ldexp(a, -p), tiny = std::is_same_v<T, half> ? 0x1p-24 : 0x1p-120;
    if (representable<T>(half_ulp) && representable<T>(tiny)) {
      std::vector<T> x = cancelling({from_double<T>(a), from_double<T>(half_ulp)}, true);
      add("halfway, ties to even", std::move(x), static_cast<R>(a), std::nullopt);
      x = cancelling({from_double<T>(a), from_double<T>(half_ulp), from_double<T>(tiny)}, true);
      add("just above halfway", std::move(x), static_cast<R>(a + 2 * half_ulp), std::nullopt);
      const double odd = a + 2 * half_ulp;  // an odd last bit: the tie rounds up
      if (representable<T>(odd)) {
        x = cancelling({from_double<T>(odd), from_double<T>(half_ulp)}, true);
        add("halfway, odd", std::move(x), static_cast<R>(odd + 2 * half_ulp), std::nullopt);
      }
    }
  }
  // n equal values: n * v is exact in double (v has at most 30 significant bits).
  {
    double v = value(random_any_exponent<T>(rng));
    if constexpr (std::is_same_v<T, double>) v = std::ldexp(static_cast<double>(rng() >> 34), static_cast<int>(rng() % 1600) - 1100);
    const T e = from_double<T>(v);
    std::vector<T> x(n, e);
    const double total = value(e) * static_cast<double>(n);
    add("equal values", std::move(x), static_cast<R>(total), value(e));
  }
  {
    std::vector<T> x(n, from_double<T>(std::is_same_v<T, double> ? 0x1p-1074
                                                                  : (std::is_same_v<T, half> ? 0x1p-24 : 0x1p-149)));
    if constexpr (is_half_like<T>) x.assign(n, T{1});  // the smallest subnormal of the type
    const double total = value(x[0]) * static_cast<double>(n);
    add("smallest subnormals", std::move(x), static_cast<R>(total), value(x[0]));
  }
  return cases;
}

// Edge cases that do not depend on n.
template <class T>
std::vector<ExactCase<T>> edge_cases() {
  using R = result_t<T, op::sum>;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  std::vector<ExactCase<T>> cases;
  const auto add = [&](std::string name, std::vector<double> v, double sum, double mean) {
    std::vector<T> x;
    for (double d : v) x.push_back(from_double<T>(d));
    cases.push_back({std::move(name), std::move(x), static_cast<R>(sum), mean});
  };
  const double big = value(std::numeric_limits<T>::max());
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    add("overflow", {big, big}, inf, big);                      // the rounded sum overflows; the mean does not
    add("overflow then back", {big, big, -big}, big, big / 3);  // an intermediate over the range is still exact
  }
  add("inf", {1.0, inf, 2.0}, inf, inf);
  add("-inf", {1.0, -inf}, -inf, -inf);
  add("inf - inf", {inf, -inf}, nan, nan);
  add("NaN", {1.0, nan, 2.0}, nan, nan);
  add("-0 + -0", {-0.0, -0.0}, -0.0, -0.0);
  add("-0 + +0", {-0.0, 0.0}, 0.0, 0.0);
  add("1 - 1", {1.0, -1.0}, 0.0, 0.0);
  add("[1e30, 1, -1e30, 3] x 1000", {}, 4000.0, 1.0);
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    auto& c = cases.back();
    for (int i = 0; i < 1000; ++i)
      for (double d : {1e30, 1.0, -1e30, 3.0}) c.x.push_back(from_double<T>(d));
  } else {
    cases.pop_back();
  }
  if constexpr (std::is_same_v<T, double>) {
    // The tile's split on one grid (agent_exact.cuh) at its edge: in a 4096-element tile the GPU's
    // thread 0 owns elements 0, 513 and 3585; 1 and -1 cancel and leave s = (1 + 2^-52) 2^low,
    // whose last bit is the rest's sum on the grid (low -43, -44: within 44 binades of 1) or goes
    // through the pair (-45 and below).
    for (const int low : {-43, -44, -45, -90}) {
      const double s = std::ldexp(1.0 + std::ldexp(1.0, -52), low);
      std::vector<double> v(4096, 0.0);
      v[0] = 1.0;
      v[513] = s;
      v[3585] = -1.0;
      add("tile split edge 2^" + std::to_string(low), std::move(v), s, std::ldexp(s, -12));
    }
  }
  return cases;
}

// Equal bits, with every NaN equal to every NaN.
template <class R>
bool same_result(R a, R b) {
  if (a != a && b != b) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace rltest
