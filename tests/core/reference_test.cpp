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
  EXPECT_EQ((rl::core::reduce_serial<float, rl::core::Min>(v)), -1.0f);
  EXPECT_EQ((rl::core::reduce_serial<float, rl::core::Max>(v)), 7.0f);
  std::vector<int> empty;
  EXPECT_EQ((rl::core::reduce_serial<int, rl::core::Max>(empty)), INT32_MIN);  // identity
}

TEST(FloatTolerance, GrowsWithDepthAndMagnitude) {
  EXPECT_EQ(rl::core::tree_depth(1), 0u);
  EXPECT_EQ(rl::core::tree_depth(2), 1u);
  EXPECT_EQ(rl::core::tree_depth(1 << 24), 24u);
  EXPECT_EQ(rl::core::tree_depth((1 << 24) + 1), 25u);
  const double t = rl::core::float_tolerance(1 << 24, 1e9L, 0x1p-24);
  EXPECT_NEAR(t, (2 * 24 + 64 + 4096) * 0x1p-24 * 1e9, 1e-6);
}

// The one exact reference covers every element type the library reduces, and pieces merged give
// what one pass gives (bench extends it across threads).
TEST(Exact, EveryTypeSumsExactlyAndMergesLikeOnePass) {
  std::vector<std::int8_t> bytes{127, 127, 127, -128, 5};
  rl::core::Exact<std::int8_t> b;
  b.add(bytes);
  EXPECT_EQ(static_cast<long long>(b.integer), 258);  // no wrap in 8 bits
  EXPECT_EQ(b.fold(rl::core::OpKind::min), -128);
  EXPECT_EQ(b.fold(rl::core::OpKind::max), 127);
  std::vector<std::uint64_t> big{~0ull, ~0ull};
  rl::core::Exact<std::uint64_t> u;
  u.add(big);
  EXPECT_TRUE(u.integer == static_cast<__int128>(~0ull) * 2);  // beyond 64 bits
  // 1 + 2^-60 - 1: a plain double sum loses the 2^-60; the compensated one keeps it.
  std::vector<double> d{1.0, 0x1p-60, -1.0};
  rl::core::Exact<double> whole, a, c;
  whole.add(d);
  EXPECT_EQ(static_cast<double>(whole.value()), 0x1p-60);
  a.add(std::span<const double>(d).first(1));
  c.add(std::span<const double>(d).subspan(1));
  a.merge(c);
  EXPECT_EQ(static_cast<double>(a.value()), 0x1p-60);
  EXPECT_EQ(a.n, 3u);
  EXPECT_EQ(a.fold(rl::core::OpKind::min), -1.0);
  // half and bfloat16 through float: 1.5 + (-0.25)
  std::vector<reducelab::half> h{reducelab::half{0x3e00}, reducelab::half{0xb400}};
  rl::core::Exact<reducelab::half> hs;
  hs.add(h);
  EXPECT_EQ(static_cast<double>(hs.value()), 1.25);
  EXPECT_EQ(hs.fold(rl::core::OpKind::max), 1.5f);  // 0x3e00, folded as float
  EXPECT_EQ(static_cast<double>(hs.abs_sum), 1.75);
  // exact_sum is this same reference.
  std::vector<float> f{1e8f, 1.0f, -1e8f};
  EXPECT_EQ(static_cast<double>(exact_sum(std::span<const float>(f)).real), 1.0);
}

}  // namespace
