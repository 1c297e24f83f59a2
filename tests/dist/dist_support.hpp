#pragma once
// Splits and inputs shared by the dist tests (CPU backend, MPI, GPUs).
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "../core/reduce_support.hpp"

namespace rltest {

// A random split of n elements over `ranks` shards: some empty, some tiny, uneven; returns the
// offsets (ranks + 1 of them, the last n).
inline std::vector<std::uint64_t> random_split(std::uint64_t n, int ranks, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> cut(ranks - 1);
  for (auto& c : cut) {
    switch (rng() % 4) {
      case 0: c = 0; break;                          // an empty shard at the front
      case 1: c = n; break;                          // an empty shard at the back
      default: c = n == 0 ? 0 : rng() % (n + 1);
    }
  }
  std::sort(cut.begin(), cut.end());
  std::vector<std::uint64_t> off{0};
  off.insert(off.end(), cut.begin(), cut.end());
  off.push_back(n);
  return off;
}

// Factors near 1 whose products round (so the order of a product shows in its bits), a few
// negative, never overflowing for the sizes the tests use.
template <class T>
std::vector<T> rounding_product_input(std::uint64_t n, std::uint64_t seed) {
  if constexpr (std::is_integral_v<T>) {
    return product_input<T>(n, seed);
  } else {
    std::mt19937_64 rng(seed);
    std::vector<T> x(n);
    for (auto& v : x) {
      double f;
      if constexpr (std::is_same_v<T, half>) f = 1.0 + (double(rng() % 17) - 8.0) * 0x1p-10;
      else if constexpr (std::is_same_v<T, bfloat16>) f = 1.0 + (double(rng() % 5) - 2.0) * 0x1p-7;
      else if constexpr (std::is_same_v<T, float>) f = 1.0 + (double(rng() % 2049) - 1024.0) * 0x1p-20;
      else f = 1.0 + (double(rng() >> 12) - 0x1p51) * 0x1p-60;
      if (rng() % 64 == 0) f = -f;
      v = from_double<T>(f);
    }
    return x;
  }
}

// The input a test reduces with op: products that round, sums with special values now and then
// (-0, an infinity, a NaN, at a seed-dependent place so that any rank may hold them), ties for
// argmin/argmax.
template <class T, class Op>
std::vector<T> dist_input(std::uint64_t n, std::uint64_t seed) {
  if constexpr (std::is_same_v<Op, op::prod>) return rounding_product_input<T>(n, seed);
  auto x = random_input<T>(n, seed);
  if constexpr (is_floating<T>) {
    if (n > 10 && seed % 3 == 0) x[(seed * 7919) % n] = from_double<T>(-0.0);
    if (n > 10 && seed % 4 == 1) x[(seed * 104729) % n] = from_double<T>(seed % 8 == 1 ? INFINITY : -INFINITY);
    if (n > 10 && seed % 10 == 7) x[(seed * 15485863) % n] = from_double<T>(NAN);
  }
  return x;
}

}  // namespace rltest
