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

// The input a test reduces with op: products near 1 (no overflow to 0 or inf), sums with a few
// special values now and then, ties for argmin/argmax.
template <class T, class Op>
std::vector<T> dist_input(std::uint64_t n, std::uint64_t seed) {
  if constexpr (std::is_same_v<Op, op::prod>) return product_input<T>(n, seed);
  auto x = random_input<T>(n, seed);
  if constexpr (is_floating<T>) {
    if (n > 100 && seed % 5 == 0) x[seed % n] = from_double<T>(-0.0);
    if (n > 100 && seed % 7 == 0) x[(seed * 3) % n] = from_double<T>(1e30);  // inf in half/bf16? no: bf16 holds it
  }
  return x;
}

}  // namespace rltest
