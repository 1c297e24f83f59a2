// The CPU references, including the seed bugs they fix.
#include <gtest/gtest.h>

#include <cfloat>
#include <numeric>
#include <vector>

#include "core/reference.hpp"

namespace {
using rl::core::adjacent_pair_reduce;
using rl::core::exact_sum;
using rl::core::recursive_reduce;

std::vector<long long> iota_values(std::size_t n) {
  std::vector<long long> v(n);
  std::iota(v.begin(), v.end(), 1);  // 1..n, sum n(n+1)/2
  return v;
}

TEST(RecursiveReduce, EmptyArraySumsToZero) {
  std::vector<long long> v;
  EXPECT_EQ(recursive_reduce(v), 0);
}

TEST(RecursiveReduce, SingleElement) {
  std::vector<long long> v{42};
  EXPECT_EQ(recursive_reduce(v), 42);
}

// Seed 000's version halves with stride = size / 2 and never looks at data[size-1] when the
// size is odd: for 1..5 it returns 10, never reading data[4] = 5.
TEST(RecursiveReduce, OddLengthKeepsTheLastElement) {
  for (std::size_t n : {3u, 5u, 7u, 31u, 33u, 1001u}) {
    auto v = iota_values(n);
    EXPECT_EQ(recursive_reduce(v), static_cast<long long>(n * (n + 1) / 2)) << "n = " << n;
  }
}

TEST(RecursiveReduce, PowerOfTwoMatchesSerialSum) {
  auto v = iota_values(1 << 12);
  EXPECT_EQ(recursive_reduce(v), (1LL << 12) * ((1LL << 12) + 1) / 2);
}

TEST(AdjacentPairReduce, EveryLengthUpTo100) {
  for (std::size_t n = 0; n <= 100; ++n) {
    auto v = iota_values(n);
    EXPECT_EQ(adjacent_pair_reduce(v), static_cast<long long>(n * (n + 1) / 2)) << "n = " << n;
  }
}

// 2^24 values of 255 sum to 4278190080, past INT_MAX (seed 000/002's int sum overflows here).
TEST(ExactSum, IntegerSumDoesNotOverflow) {
  std::vector<int> v(1 << 24, 255);
  const auto s = exact_sum(std::span<const int>(v));
  EXPECT_EQ(static_cast<long long>(s.integer), 4278190080LL);
  EXPECT_GT(static_cast<long long>(s.integer), static_cast<long long>(INT32_MAX));
}

TEST(ExactSum, NegativeIntegersCancel) {
  std::vector<int> v{INT32_MIN, INT32_MAX, 1, -5};
  EXPECT_EQ(static_cast<long long>(exact_sum(std::span<const int>(v)).integer), -5);
}

// A float sum whose serial float evaluation loses everything: 1e8, then 1.0 a million times,
// then -1e8. The exact answer is 1e6; a naive float loop gives 0.
TEST(ExactSum, FloatCancellationIsExact) {
  std::vector<float> v;
  v.push_back(1e8f);
  v.insert(v.end(), 1000000, 1.0f);
  v.push_back(-1e8f);
  float naive = 0;
  for (float x : v) naive += x;
  EXPECT_NE(naive, 1e6f);
  EXPECT_EQ(static_cast<double>(exact_sum(std::span<const float>(v)).real), 1e6);
}

TEST(ExactSum, DoubleMixedMagnitudes) {
  std::vector<double> v{1e16, 1.0, -1e16, 1.0};
  EXPECT_EQ(static_cast<double>(exact_sum(std::span<const double>(v)).real), 2.0);
}

TEST(ReduceSerial, MinMax) {
  std::vector<float> v{3, -1, 7, 2};
  EXPECT_EQ((rl::core::reduce_serial<float, reducelab::Min>(v)), -1.0f);
  EXPECT_EQ((rl::core::reduce_serial<float, reducelab::Max>(v)), 7.0f);
  std::vector<int> empty;
  EXPECT_EQ((rl::core::reduce_serial<int, reducelab::Max>(empty)), INT32_MIN);  // identity
}

TEST(FloatTolerance, GrowsWithDepthAndMagnitude) {
  EXPECT_EQ(rl::core::tree_depth(1), 0u);
  EXPECT_EQ(rl::core::tree_depth(2), 1u);
  EXPECT_EQ(rl::core::tree_depth(1 << 24), 24u);
  EXPECT_EQ(rl::core::tree_depth((1 << 24) + 1), 25u);
  const double t = rl::core::float_tolerance(1 << 24, 1e9L, 0x1p-24);
  EXPECT_NEAR(t, (2 * 24 + 64 + 4096) * 0x1p-24 * 1e9, 1e-6);
}
}  // namespace
