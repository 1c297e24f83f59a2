// Exact floating-point sums and means: the CPU backend and the kernel on SIMT give the correctly
// rounded exact result on inputs built so that the exact result is known (exact_cases.hpp).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <random>

#include "core/simt_reduce.hpp"
#include "reducelab/detail/agent_exact.cuh"
#include "reducelab/detail/agent_order_free.cuh"
#include "reducelab/detail/exact_half.cuh"
#include "reducelab/detail/exact_wide.cuh"
#include "exact_cases.hpp"

namespace rltest {
namespace {

using ExactTypes = ::testing::Types<half, bfloat16, float, double>;
template <class T>
class ExactSum : public ::testing::Test {};
TYPED_TEST_SUITE(ExactSum, ExactTypes);

template <class T>
void expect_exact(const ExactCase<T>& c, bool simt) {
  const std::uint64_t n = c.x.size();
  const auto sum = cpu::reduce(c.x.data(), n, op::sum{}).value;
  EXPECT_TRUE(same_result(sum, c.sum)) << type_name<T>() << " " << c.name << ": cpu " << sum << " expected " << c.sum;
  EXPECT_TRUE(same_result(cpu::reduce(c.x.data(), n, op::sum{}, 1).value, c.sum)) << c.name << " on one thread";
  const double mean = cpu::reduce(c.x.data(), n, op::mean{}).value;
  if (c.mean) EXPECT_TRUE(same_result(mean, *c.mean)) << type_name<T>() << " " << c.name << ": cpu mean " << mean << " expected " << *c.mean;
  if (!simt) return;
  for (unsigned grid : {0u, 1u, 7u})
    for (unsigned offset : {0u, 1u}) {
      const auto s = detail::simt_reduce(c.x.data(), n, op::sum{}, grid, offset);
      EXPECT_TRUE(same_result(s, c.sum)) << type_name<T>() << " " << c.name << " simt grid " << grid << " offset " << offset
                                         << ": " << s << " expected " << c.sum;
    }
  EXPECT_TRUE(same_result(detail::simt_reduce(c.x.data(), n, op::mean{}, 3, 0), mean)) << c.name << " simt mean";
  if constexpr (!std::is_same_v<T, double>) {
    // The other shape, forced: halves' 128-bit integers; small float sums' digits instead of the
    // wide integer; bf16's mid-size tiles (4 vectors a thread).
    for (unsigned grid : {1u, 7u})
      for (unsigned offset : {0u, 1u}) {
        const auto s = detail::simt_reduce(c.x.data(), n, op::sum{}, grid, offset, true, /*other_shape=*/true);
        EXPECT_TRUE(same_result(s, c.sum)) << type_name<T>() << " " << c.name << " simt other shape, grid " << grid
                                           << " offset " << offset << ": " << s << " expected " << c.sum;
      }
    EXPECT_TRUE(same_result(detail::simt_reduce(c.x.data(), n, op::mean{}, 3, 0, true, true), mean))
        << c.name << " simt mean, other shape";
  }
}

// Which exact sums take the mid-size shape on the GPU: bfloat16 from 2^18 up to 2^25 (halves are
// summed as integers by the order-free kernel, exact_half.cuh).
TEST(ExactSum, MidSizeShapeOnlyForBfloat16) {
  using detail::exact_mid_shape;
  constexpr std::uint64_t k18 = std::uint64_t(1) << 18, k25 = std::uint64_t(1) << 25;
  EXPECT_FALSE(exact_mid_shape<bfloat16>(k18 - 1));
  EXPECT_TRUE(exact_mid_shape<bfloat16>(k18));
  EXPECT_FALSE(exact_mid_shape<half>(k18));
  EXPECT_TRUE(exact_mid_shape<bfloat16>(k25 - 1));
  EXPECT_FALSE(exact_mid_shape<bfloat16>(k25));
  EXPECT_FALSE(exact_mid_shape<float>(std::uint64_t(1) << 20));
  EXPECT_FALSE(exact_mid_shape<double>(std::uint64_t(1) << 20));
}

TYPED_TEST(ExactSum, CorrectlyRoundedOnConstructedInputs) {
  using T = TypeParam;
  std::size_t count = 0;
  for (std::uint64_t n : {1ull, 2ull, 3ull, 31ull, 33ull, 1000ull, 8193ull, 70001ull})
    for (const auto& c : exact_cases<T>(n, 1000 + n)) {
      expect_exact(c, /*simt=*/n <= 8193);
      ++count;
    }
  for (const auto& c : edge_cases<T>()) {
    expect_exact(c, true);
    ++count;
  }
  std::printf("[ exact    ] %s: %zu cases, each the correctly rounded exact sum\n", type_name<T>().c_str(), count);
}

TYPED_TEST(ExactSum, LargeInputsOnTheCpu) {
  for (const auto& c : exact_cases<TypeParam>((1ull << 24) + 3, 7)) expect_exact(c, false);
}

TYPED_TEST(ExactSum, SimtWithManyBlocksAndTheCpuAgree) {
  using T = TypeParam;
  for (const auto& c : exact_cases<T>(300001, 11)) {
    const auto s = detail::simt_reduce(c.x.data(), c.x.size(), op::sum{}, 0, 0);
    EXPECT_TRUE(same_result(s, c.sum)) << type_name<T>() << " " << c.name;
  }
}

// A partial tile is read as whole rows of vectors and rows past n as -0, the row that crosses n
// element by element: n ending in every row of the tile, on a vector's first, second and last
// element and on a row's end, aligned or not, gives the CPU backend's bits, in the small launch
// (one tile, one block) and in the large kernel's last tile (a whole tile before it, two blocks),
// and for 16-bit elements in the mid-size shape's tiles as well.
// The elements are +-2^k (k < 11, a pattern of period 33) and the sum is an integer far below
// 2^24, so an element dropped, read twice or taken from another row changes even a float result.
TYPED_TEST(ExactSum, PartialTilesEndingInEveryRowHaveTheCpuBits) {
  using T = TypeParam;
  constexpr std::uint64_t kVec = detail::Shape<T>::kVec, kRow = detail::Shape<T>::kRow;
  // n elements through the kernel (in its other shape if asked), aligned and not, against the CPU.
  auto check = [](std::uint64_t n, unsigned grid, bool other_shape) {
    std::vector<T> x(n);
    for (std::uint64_t i = 0; i < n; ++i)
      x[i] = from_double<T>(std::ldexp((i % 3 == 0) ? -1.0 : 1.0, static_cast<int>(i % 11)));
    const auto want = cpu::reduce(x.data(), n, op::sum{}).value;
    for (unsigned offset : {0u, 1u}) {
      const auto got = detail::simt_reduce(x.data(), n, op::sum{}, grid, offset, true, other_shape);
      EXPECT_TRUE(same_result(got, want)) << type_name<T>() << (other_shape ? " mid-size shape" : "") << " n=" << n
                                          << " offset=" << offset << ": simt " << got << ", cpu " << want;
    }
  };
  for (std::uint64_t before : {std::uint64_t(0), detail::Shape<T>::kTile})
    for (std::uint64_t r = 0; r < detail::kItems; ++r)
      for (std::uint64_t w : {std::uint64_t(1), std::uint64_t(2), kVec - 1, kVec, kRow - 1, kRow})
        check(before + r * kRow + 37 * kVec + w, before ? 2 : 1, false);
  if constexpr (detail::kHasExactMidShape<T>) {  // the same in the mid-size shape's tiles of 4 rows
    for (std::uint64_t before : {std::uint64_t(0), detail::kExactMidTile<T>})
      for (std::uint64_t r = 0; r < detail::kExactMidLoads; ++r)
        for (std::uint64_t w : {std::uint64_t(1), kVec - 1, kVec, kRow - 1})
          check(before + r * kRow + 37 * kVec + w, before ? 2 : 1, true);
  }
}

// The digits' short rounding path (round_digits_fast: one integer-to-float conversion of the top
// 64 bits and a sticky bit) against the general one (normalise, round_words) on random digits:
// spans of one to five digits anywhere in the range, magnitudes of 8 to 62 bits, either sign,
// zeros between. Every case the short path takes must give the general path's bits.
template <class T, class Out>
void expect_short_rounding_matches_general(std::uint64_t seed) {
  constexpr int kD = detail::ExactTraits<T>::kDigits;
  std::mt19937_64 g(seed);
  long taken = 0;
  for (int c = 0; c < 200000; ++c) {
    long long d[detail::kMaxExactDigits] = {};
    const int span = 1 + static_cast<int>(g() % 5);
    const int first = static_cast<int>(g() % (kD - span + 1)), last = first + span - 1;
    const int bits = std::array<int, 5>{8, 33, 42, 52, 62}[g() % 5];
    for (int i = first; i <= last; ++i) {
      const auto v = static_cast<long long>(g() >> (64 - bits));
      d[i] = g() % 4 == 0 ? 0 : (g() & 1) ? -v : v;
    }
    if (d[first] == 0 || g() % 3 == 0) d[first] = (g() & 1) ? 1 : -1;
    if (d[last] == 0) d[last] = 7;
    Out fast;
    if (!detail::round_digits_fast<T, Out>(d, first, last, &fast)) continue;
    ++taken;
    std::uint32_t words[detail::kMaxExactDigits + 8] = {};
    const int count = (last + 3 < kD ? last + 3 : kD) - first;
    const bool negative = detail::normalise(d, first, count, words + 4);
    const Out general = detail::round_words<Out>(words, count + 4, detail::ExactTraits<T>::kBase + 32 * (first - 4), false);
    ASSERT_TRUE(same_bits(fast, negative ? -general : general))
        << type_name<T>() << " digits " << first << ".." << last << ": short " << fast << ", general " << general;
  }
  EXPECT_GT(taken, 50000) << type_name<T>();
}
TEST(ExactSum, ShortRoundingPathMatchesTheGeneralOne) {
  expect_short_rounding_matches_general<float, float>(1);
  expect_short_rounding_matches_general<bfloat16, float>(2);
  expect_short_rounding_matches_general<half, float>(3);
  expect_short_rounding_matches_general<double, double>(4);
}

// The wide integer's short rounding path (wide_round_fast) against its 128-bit one on random
// magnitudes: a top word anywhere in the five, 1 to 64 bits in it, the words below random, zero,
// or zero but for one low bit (a sticky bit only), and exact ties (a half at the round bit and
// nothing below). Every case the short path takes must give the 128-bit path's bits, and it must
// take most of them.
TEST(ExactSum, WideIntegerShortRoundingMatchesTheGeneralOne) {
  std::mt19937_64 g(41);
  long taken = 0;
  for (int c = 0; c < 200000; ++c) {
    detail::Wide320 m{};
    const int t = static_cast<int>(g() % 5), bits = 1 + static_cast<int>(g() % 64);
    m.w[t] = (g() >> (64 - bits)) | (std::uint64_t(1) << (bits - 1));
    for (int k = 0; k < t; ++k) {
      const int kind = static_cast<int>(g() % 4);
      m.w[k] = kind == 0 ? 0 : kind == 1 ? std::uint64_t(1) : g();
    }
    if (g() % 8 == 0) {  // an exact tie: the bit below the float's last one set, nothing below it
      const int lead = 64 * t + bits - 1, round = lead - 24;
      for (int k = 0; k < t; ++k) m.w[k] = 0;
      if (round >= 0) {
        for (int b = 0; b < round; ++b) m.w[b / 64] &= ~(std::uint64_t(1) << (b % 64));
        m.w[round / 64] |= std::uint64_t(1) << (round % 64);
      }
    }
    const detail::WideTop top = detail::wide_top(m);
    float fast;
    if (!detail::wide_round_fast(top, &fast)) continue;
    ++taken;
    const float general = detail::wide_round_general(top);
    ASSERT_TRUE(same_bits(fast, general)) << "top word " << t << ", " << bits << " bits: short " << fast << ", general "
                                          << general;
  }
  EXPECT_GT(taken, 100000);
}

// Halves summed as integers of 2^-24 units (exact_half.cuh), on accumulators built directly: the
// largest sum each accumulator is used for (2^20 halves of 65504 in 64 bits, 2^36 of them in 128,
// past 64 bits) keeps every bit and cancels down to the smallest subnormal; ties round to even and
// a sticky bit up; infinities, NaN and the sign of an exact zero survive every combine.
template <class S, class M>
void expect_half_integer_sums(int doublings) {
  const auto doubled = [](double unit_sum, int times) {  // unit_sum * 2^times, through combines
    typename S::Acc a = S::absorb(S::identity(), unit_sum);
    for (int i = 0; i < times; ++i) a = S::combine(a, a);
    return a;
  };
  const double most = 65504.0 * 64;  // 64 of the largest half: one unit's largest sum
  const auto big = doubled(most, doublings), minus_big = doubled(-most, doublings);
  EXPECT_EQ(S::finish(big, 1), static_cast<float>(std::ldexp(most, doublings)));
  EXPECT_EQ(S::finish(minus_big, 1), -static_cast<float>(std::ldexp(most, doublings)));
  const auto tiny = S::absorb(S::identity(), std::ldexp(1.0, -24));
  EXPECT_EQ(S::finish(S::combine(S::combine(big, tiny), minus_big), 3), std::ldexp(1.0f, -24));
  // 2^30 + 64 lies halfway between the floats 2^30 and 2^30 + 128: even wins; 2^-24 more goes up.
  const auto half_way = S::combine(doubled(1.0, 30), S::absorb(S::identity(), 64.0));
  EXPECT_EQ(S::finish(half_way, 2), std::ldexp(1.0f, 30));
  EXPECT_EQ(S::finish(S::combine(half_way, tiny), 3), std::ldexp(1.0f, 30) + 128.0f);
  EXPECT_EQ(S::finish(S::combine(S::combine(half_way, tiny), S::absorb(S::identity(), -0.0)), 3),
            std::ldexp(1.0f, 30) + 128.0f);
  EXPECT_EQ(M::finish(half_way, 3), 1073741888.0 / 3.0);  // one correctly rounded division
  EXPECT_EQ(M::finish(minus_big, 7), -std::ldexp(most, doublings) / 7.0);
  // The flags: infinities and NaN absorb every finite sum, in either order.
  const double inf = std::numeric_limits<double>::infinity();
  const auto pos = S::combine(big, S::absorb(S::identity(), inf)), neg = S::absorb(S::identity(), -inf);
  EXPECT_EQ(S::finish(pos, 5), std::numeric_limits<float>::infinity());
  EXPECT_EQ(S::finish(S::combine(tiny, neg), 5), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(S::finish(S::combine(pos, S::combine(neg, tiny)), 9)));
  EXPECT_TRUE(std::isnan(S::finish(S::absorb(big, std::nan("")), 2)));
  // An exact zero is -0 only when every element was -0.
  const auto negative_zero = S::absorb(S::identity(), -0.0);
  EXPECT_TRUE(std::signbit(S::finish(S::combine(negative_zero, negative_zero), 2)));
  EXPECT_FALSE(std::signbit(S::finish(S::combine(negative_zero, S::absorb(S::identity(), 0.0)), 2)));
  EXPECT_FALSE(std::signbit(S::finish(S::combine(big, minus_big), 2)));  // x + -x is +0
  EXPECT_EQ(S::finish(S::identity(), 0), 0.0f);
  EXPECT_TRUE(std::isnan(M::finish(M::identity(), 0)));
}
// The 64-bit accumulator's blocks each sum at most 2^20 halves; the sum of their posts can pass
// 2^60 units, and the collector adds them in 128 bits. 1.5 * 2^20 halves of 65504 in two blocks
// (2^60.6 units in all), with one 2^-24 that only a 128-bit total keeps: on SIMT, against the CPU.
TEST(ExactSum, HalfPostsPast64BitsMeetIn128) {
  const std::uint64_t n = (std::uint64_t(3) << 19) + 1;
  std::vector<half> x(n, half{0x7bff});  // 65504
  x[n / 2] = half{0x0001};               // 2^-24
  std::vector<half> cancel = x;          // the second block's halves negated: the exact sum is 2^-24
  for (std::uint64_t i = n / 2 + 1; i < n; ++i) cancel[i] = half{0xfbff};
  ASSERT_LE(detail::most_per_block<half>(detail::free_shape<half>(n, nullptr, 2), detail::kFreeLoads),
            detail::ExactHalfSum64<false>::kMaxElements);  // two blocks: the 64-bit accumulator
  for (const auto* v : {&x, &cancel}) {
    const float want = cpu::reduce(v->data(), n, op::sum{}).value;
    EXPECT_TRUE(same_result(detail::simt_reduce(v->data(), n, op::sum{}, 2, 0), want)) << want;
    EXPECT_TRUE(same_result(detail::simt_reduce(v->data(), n, op::mean{}, 2, 0), cpu::reduce(v->data(), n, op::mean{}).value));
  }
  EXPECT_EQ(cpu::reduce(cancel.data(), n, op::sum{}).value, std::ldexp(1.0f, -24));
}

TEST(ExactSum, HalvesAsIntegersKeepEveryBitAndTheirFlags) {
  expect_half_integer_sums<detail::ExactHalfSum64<false>, detail::ExactHalfSum64<true>>(14);
  expect_half_integer_sums<detail::ExactHalfSum128<false>, detail::ExactHalfSum128<true>>(30);
}

// Floats and bfloat16 values summed as one 320-bit integer of 2^-149 units (exact_wide.cuh), on
// accumulators built directly. Units of 16 elements (a float unit of the order-free kernel) whose
// exponents span the whole range take the cut path, level by level, and the others the plain double
// sum; either gives the words the same elements give one by one, combined forwards or backwards,
// and rounds to the CPU backend's sum and mean. 2^24 copies of the largest finite value (2^152,
// into the top word) give +inf as a sum and that value as a mean, and cancel back to the smallest
// subnormal; infinities, NaN and the sign of an exact zero survive every combine.
template <class T>
T element_of(float f) {
  if constexpr (std::is_same_v<T, float>) return f;
  else return to_bfloat16(f);  // exact for the values below: every one is a bfloat16
}
template <class T>
void expect_wide_integer_sums(std::uint64_t seed) {
  using S = detail::ExactWideSum<T, false>;
  using M = detail::ExactWideSum<T, true>;
  using Unit = std::array<T, 16>;
  const auto sum_of = [](const Unit& u) { return S::template absorb_batch<16>(S::identity(), u.data()); };
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 400; ++round) {
    // Exponents over the whole range: the cut. Eight binades: the plain sum in double. 32
    // binades: bfloat16's plain sum, float's cut.
    const unsigned span = round % 3 == 0 ? 254 : round % 3 == 1 ? 8 : 32;
    Unit v;
    for (T& x : v) {
      const std::uint32_t sign = static_cast<std::uint32_t>(rng() & 1u) << 31;
      const auto e = static_cast<std::uint32_t>(span == 254 ? rng() % 254 : 100 + rng() % span);
      x = element_of<T>(detail::float_from_bits(sign | (e << 23) | (static_cast<std::uint32_t>(rng()) & 0x7fffffu)));
    }
    if (round % 5 == 0) v[3] = v[9] = element_of<T>(0.0f);
    const auto unit = sum_of(v);
    auto forwards = S::identity(), backwards = S::identity();
    for (unsigned j = 0; j < 16; ++j) forwards = S::combine(forwards, S::lift(v[j], j));
    for (unsigned j = 16; j-- > 0;) backwards = S::combine(S::lift(v[j], j), backwards);
    for (unsigned k = 0; k < detail::Wide320::kWords; ++k) {
      ASSERT_EQ(unit.w[k], forwards.w[k]) << "word " << k << ", round " << round;
      ASSERT_EQ(unit.w[k], backwards.w[k]) << "word " << k << ", round " << round;
    }
    const float want = cpu::reduce(v.data(), v.size(), op::sum{}).value;
    EXPECT_TRUE(same_result(S::finish(unit, 16), want)) << round << ": " << S::finish(unit, 16) << ", cpu " << want;
    EXPECT_TRUE(same_result(M::finish(unit, 16), cpu::reduce(v.data(), v.size(), op::mean{}).value)) << round;
  }
  const float largest = std::is_same_v<T, float> ? std::numeric_limits<float>::max() : 0x1.fep127f;
  const float smallest = std::is_same_v<T, float> ? 0x1p-149f : 0x1p-133f;
  const auto filled = [](float f) {
    Unit u;
    u.fill(element_of<T>(f));
    return u;
  };
  const auto doubled = [&](const Unit& u, int times) {
    auto a = sum_of(u);
    for (int i = 0; i < times; ++i) a = S::combine(a, a);
    return a;
  };
  const auto big = doubled(filled(largest), 20), minus_big = doubled(filled(-largest), 20);
  const std::uint64_t count = std::uint64_t(1) << 24;
  EXPECT_EQ(S::finish(big, count), std::numeric_limits<float>::infinity());
  EXPECT_EQ(M::finish(big, count), static_cast<double>(largest));
  EXPECT_EQ(M::finish(minus_big, count), -static_cast<double>(largest));
  Unit tiny = filled(0.0f);
  tiny[7] = element_of<T>(smallest);
  EXPECT_EQ(S::finish(S::combine(S::combine(big, sum_of(tiny)), minus_big), 2 * count + 16), smallest);
  Unit special = tiny;
  special[5] = element_of<T>(std::numeric_limits<float>::infinity());
  EXPECT_EQ(S::finish(S::combine(minus_big, sum_of(special)), 9), std::numeric_limits<float>::infinity());
  special[6] = element_of<T>(-std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(S::finish(sum_of(special), 16)));
  special[6] = element_of<T>(std::nanf(""));
  EXPECT_TRUE(std::isnan(M::finish(S::combine(big, sum_of(special)), 16)));
  const auto negative_zeros = sum_of(filled(-0.0f));
  EXPECT_TRUE(std::signbit(S::finish(S::combine(negative_zeros, negative_zeros), 32)));
  EXPECT_FALSE(std::signbit(S::finish(S::combine(negative_zeros, sum_of(filled(0.0f))), 32)));
  EXPECT_FALSE(std::signbit(S::finish(S::combine(big, minus_big), 32)));  // x + -x is +0
  EXPECT_EQ(S::finish(S::identity(), 0), 0.0f);
  EXPECT_TRUE(std::isnan(M::finish(M::identity(), 0)));
}

TEST(ExactSum, FloatsAsOneWideIntegerKeepEveryBitAndTheirFlags) {
  expect_wide_integer_sums<float>(21);
  expect_wide_integer_sums<bfloat16>(22);
}

// On SIMT, float sums of 8193 to 2^20 elements and bfloat16 sums of 16385 to 2^20 take the wide
// integer (blocks posting at 2^20), and the others the digits; both give the CPU's bits on values
// with random exponents over the whole range below 2^73 (no overflow), and the wide integer also at
// a grid a test forces.
template <class T>
void expect_wide_and_digits_meet(std::uint64_t least) {
  const std::uint64_t most = std::uint64_t(1) << 20;
  EXPECT_FALSE(detail::exact_wide_taken<T>(least - 1));
  EXPECT_TRUE(detail::exact_wide_taken<T>(least));
  EXPECT_TRUE(detail::exact_wide_taken<T>(most));
  EXPECT_FALSE(detail::exact_wide_taken<T>(most + 1));
  std::mt19937_64 rng(31);
  std::vector<T> x(most + 1);
  for (T& v : x) {
    const std::uint64_t r = rng();
    const float f =
        detail::float_from_bits(static_cast<std::uint32_t>(((r >> 32) & 0x80000000u) | ((r % 200) << 23) | ((r >> 8) & 0x7fffffu)));
    if constexpr (std::is_same_v<T, float>) v = f;
    else v.bits = static_cast<std::uint16_t>(detail::bits_of_float(f) >> 16);
  }
  for (const std::uint64_t n : {least - 1, least, most, most + 1}) {
    const float want = cpu::reduce(x.data(), n, op::sum{}).value;
    for (unsigned grid : {0u, 5u})
      EXPECT_TRUE(same_result(detail::simt_reduce(x.data(), n, op::sum{}, grid, 0), want))
          << type_name<T>() << " " << n << " grid " << grid;
    EXPECT_TRUE(same_result(detail::simt_reduce(x.data(), n, op::mean{}, 0, 1), cpu::reduce(x.data(), n, op::mean{}).value))
        << type_name<T>() << " " << n;
  }
}
TEST(ExactSum, WideIntegerAndDigitsMeetAtTheirBoundaries) {
  expect_wide_and_digits_meet<float>(8193);
  expect_wide_and_digits_meet<bfloat16>(16385);
}

// The wide integer's flags through the kernel: an infinity, infinities of both signs, a NaN or
// signed zeros among 70001 elements (the wide integer's range for float and bf16), in a block
// that posts, in the collector's own block and in the tail, at the library's grid and at five
// posting blocks: the flags pass each block's fold (ORed apart from the sum) and the posts, and
// the result is the CPU backend's.
template <class T>
void expect_wide_flags_survive() {
  constexpr std::uint64_t n = 70001;
  ASSERT_TRUE(detail::exact_wide_taken<T>(n));
  const double inf = std::numeric_limits<double>::infinity();
  std::mt19937_64 rng(43);
  std::vector<T> finite(n);
  for (T& v : finite) v = from_double<T>(std::ldexp(static_cast<double>(rng() % 2001) - 1000.0, -static_cast<int>(rng() % 20)));
  const auto with = [&](std::initializer_list<std::pair<std::uint64_t, double>> at) {
    std::vector<T> x = finite;
    for (const auto& [i, v] : at) x[i] = from_double<T>(v);
    return x;
  };
  std::vector<std::pair<std::string, std::vector<T>>> cases = {
      {"+inf in a posting block", with({{n / 2, inf}})},
      {"-inf in the tail", with({{n - 1, -inf}})},
      {"+inf and -inf in two blocks", with({{100, inf}, {n - 300, -inf}})},
      {"NaN in the first block", with({{7, std::nan("")}})},
      {"-0 everywhere", std::vector<T>(n, from_double<T>(-0.0))},
      {"-0 everywhere but one +0", [&] {
         std::vector<T> x(n, from_double<T>(-0.0));
         x[n / 3] = from_double<T>(0.0);
         return x;
       }()},
  };
  for (const auto& [name, x] : cases) {
    const float want = cpu::reduce(x.data(), n, op::sum{}).value;
    for (unsigned grid : {0u, 5u})
      EXPECT_TRUE(same_result(detail::simt_reduce(x.data(), n, op::sum{}, grid, 0), want))
          << type_name<T>() << " " << name << " grid " << grid << ": expected " << want;
    EXPECT_TRUE(same_result(detail::simt_reduce(x.data(), n, op::mean{}, 0, 0), cpu::reduce(x.data(), n, op::mean{}).value))
        << type_name<T>() << " " << name << " mean";
  }
}
TEST(ExactSum, WideIntegerFlagsSurviveTheBlocksAndThePosts) {
  expect_wide_flags_survive<float>();
  expect_wide_flags_survive<bfloat16>();
}

// The example that motivates exactness: float sums that cancel catastrophically.
TEST(ExactSum, CancellationThatDefeatsPairwiseSummation) {
  std::vector<float> x;
  for (int i = 0; i < 1000; ++i)
    for (float v : {1e30f, 1.0f, -1e30f, 3.0f}) x.push_back(v);
  EXPECT_EQ(cpu::reduce(x.data(), x.size(), op::sum{}).value, 4000.0f);
  EXPECT_EQ(detail::simt_reduce(x.data(), x.size(), op::sum{}, 5, 1), 4000.0f);
  EXPECT_EQ(cpu::reduce(x.data(), x.size(), op::mean{}).value, 1.0);
}

// A small launch (one block on SIMT) sums its lanes' pairs with plain doubles where the exponents
// allow it, with TwoSum pairs where they do not, and with the digits where a pair cannot hold a
// remainder or a double sum passes DBL_MAX. Each array below takes one of those ways in some
// warps and another in the rest; the exact sums are known. Five copies of each also go through
// the large launch.
TEST(ExactSum, SmallLaunchPlainPairsAndDigits) {
  const double big = std::ldexp(1.0, 1023);
  struct Case {
    const char* name;
    std::vector<double> x;
    double sum;
  };
  std::vector<Case> cases;
  {  // small integers everywhere: the plain sums (exact: 4096 * 4095 / 2)
    Case c{"integers", {}, 0};
    for (int i = 0; i < 4096; ++i) c.x.push_back(i);
    c.sum = 4096.0 * 4095.0 / 2.0;
    cases.push_back(c);
  }
  {  // +-2^60 in two lanes of one warp (threads 50 and 51 hold elements 100 and 102): that warp
     // merges pairs, the others add plainly; 2^-40 in warp 6 makes the block's step take pairs
    Case c{"wide lanes", std::vector<double>(4096, 1.0), 0};
    c.x[100] = std::ldexp(1.0, 60);
    c.x[102] = -std::ldexp(1.0, 60);
    c.x[3000] = std::ldexp(1.0, -40);
    c.sum = 4093.0 + std::ldexp(1.0, -40);  // three ones replaced; a double holds it
    cases.push_back(c);
  }
  {  // 2^1023 in lanes 0 and 1 of warp 0 (threads 0 and 1 hold elements 0 and 2), -2^1023 in
     // warp 1, 2^1000 in warp 7: warp 0's plain sum would pass DBL_MAX at its last step, so the
     // window must refuse it; its pairs overflow instead and hand both to the digits
    Case c{"past DBL_MAX", std::vector<double>(4096, 0.0), big + std::ldexp(1.0, 1000)};
    c.x[0] = big;
    c.x[2] = big;
    c.x[64] = -big;
    c.x[4095] = std::ldexp(1.0, 1000);
    cases.push_back(c);
  }
  {  // 1 beside +-2^100 in every lane, and 2^-1000: remainders no pair holds go to the digits
    Case c{"remainders", {}, 0};
    for (int i = 0; i < 4095; ++i) c.x.push_back(i % 3 == 0 ? std::ldexp(1.0, 100) : i % 3 == 1 ? 1.0 : -std::ldexp(1.0, 100));
    c.x.push_back(std::ldexp(1.0, -1000));
    c.sum = 1365.0;  // 1365 + 2^-1000, rounded
    cases.push_back(c);
  }
  for (const Case& c : cases) {
    EXPECT_EQ(cpu::reduce(c.x.data(), c.x.size(), op::sum{}).value, c.sum) << c.name << " cpu";
    EXPECT_EQ(detail::simt_reduce(c.x.data(), c.x.size(), op::sum{}, 1, 0), c.sum) << c.name << " simt, one block";
    EXPECT_EQ(detail::simt_reduce(c.x.data(), c.x.size(), op::sum{}, 3, 0), c.sum) << c.name << " simt, three blocks";
    const std::vector<float> f(c.x.begin(), c.x.end());
    if (std::isfinite(f[0]) && std::isfinite(f[1]))
      EXPECT_EQ(detail::simt_reduce(f.data(), f.size(), op::sum{}, 1, 0), cpu::reduce(f.data(), f.size(), op::sum{}).value)
          << c.name << " float";
    // Five copies (five tiles of doubles) over five blocks and over two: the large launch, whose
    // blocks send their digits to the last one.
    std::vector<double> x5;
    for (int k = 0; k < 5; ++k) x5.insert(x5.end(), c.x.begin(), c.x.end());
    const double want = cpu::reduce(x5.data(), x5.size(), op::sum{}).value;
    EXPECT_EQ(detail::simt_reduce(x5.data(), x5.size(), op::sum{}, 5, 0), want) << c.name << " x5, a block per tile";
    EXPECT_EQ(detail::simt_reduce(x5.data(), x5.size(), op::sum{}, 2, 0), want) << c.name << " x5, two blocks";
    EXPECT_EQ(detail::simt_reduce(x5.data(), x5.size(), op::mean{}, 5, 0), cpu::reduce(x5.data(), x5.size(), op::mean{}).value)
        << c.name << " x5 mean";
  }
}

// A tile's doubles are split on one grid (exact_sum.cuh's double_split): with 16 doubles a thread
// and the largest below 2^1, the split holds while every non-zero element lies within 44 binades
// of the largest; an element further down sends the thread's tile through the pair one element at
// a time. Thread 0 owns elements 0, 1, 512, 513, ... of each 4096-element tile; its 1 and -1 cancel
// and leave the small element s = (1 + 2^-52) 2^low alone, whose last bit lies 52 binades below
// its first: on the grid (low -43 and -44) that bit is the rest's sum, so dropping the rest, or
// any bit of the element-by-element path (-45 and below), changes the sum 4s.
TEST(ExactSum, DoubleTilesSplitOnOneGrid) {
  for (const int low : {-43, -44, -45, -90, -200}) {
    std::vector<double> x(4 * 4096, 0.0);
    const double s = std::ldexp(1.0 + std::ldexp(1.0, -52), low);
    for (int tile = 0; tile < 4; ++tile) {
      double* t = x.data() + tile * 4096;
      t[0] = 1.0;
      t[513] = s;
      t[3585] = -1.0;
    }
    EXPECT_EQ(cpu::reduce(x.data(), x.size(), op::sum{}).value, 4 * s) << low;
    for (const unsigned grid : {1u, 3u, 4u})
      for (const std::uint64_t n : {std::uint64_t(4096), std::uint64_t(4 * 4096)}) {
        const double w = n == 4096 ? s : 4 * s;
        EXPECT_EQ(detail::simt_reduce(x.data(), n, op::sum{}, grid, 0), w) << "2^" << low << ", grid " << grid << ", n " << n;
      }
  }
}

// More than 2^31 elements on the CPU backend: 64-bit counts and no digit overflow.
TEST(ExactSum, MoreThanTwoBillionHalves) {
  const std::uint64_t n = (1ull << 31) + 5;
  std::vector<half> x;
  try {
    x.resize(n);
  } catch (const std::bad_alloc&) {
    GTEST_SKIP() << "needs 4 GiB of host memory";
  }
  const half pattern[4] = {to_half(60000.f), to_half(1.f), to_half(-60000.f), to_half(3.f)};
  for (std::uint64_t i = 0; i < n; ++i) x[i] = pattern[i % 4];
  // 2^29 + 1 whole groups of 4 sum to 4 each; one element (60000) is left.
  const double exact = 4.0 * static_cast<double>((n - 1) / 4) + 60000.0;
  EXPECT_EQ(cpu::reduce(x.data(), n, op::sum{}).value, static_cast<float>(exact));
  EXPECT_EQ(cpu::reduce(x.data(), n, op::mean{}).value, exact / static_cast<double>(n));
}

}  // namespace
}  // namespace rltest

namespace rltest {
namespace {

// The rounding of four to six digits (registers: the top three in 128 bits, the rest a carry and a
// sticky fraction) against the general path over normalised 32-bit words, on random unnormalised
// digits of either sign up to 2^62, with cancellations that leave few bits and ties.
template <class T, class Out>
void expect_short_spans_round_as_the_general_path(std::uint64_t seed) {
  using X = detail::ExactTraits<T>;
  std::mt19937_64 rng(seed);
  int checked = 0;
  for (int trial = 0; trial < 100000; ++trial) {
    std::array<unsigned long long, X::kDigits> d{};
    const int span = 4 + static_cast<int>(rng() % 3);
    const int first = static_cast<int>(rng() % (X::kDigits - span + 1));
    const int last = first + span - 1;
    for (int i = first; i <= last; ++i) {
      const int bits = static_cast<int>(rng() % 63);
      auto v = static_cast<std::int64_t>(rng() >> (64 - bits - 1) >> 1);
      if (rng() % 4 == 0) v = static_cast<std::int64_t>(rng() % 3);  // small digits: carries, ties
      d[i] = static_cast<unsigned long long>(rng() % 2 ? -v : v);
    }
    if (d[first] == 0) d[first] = 1;
    if (d[last] == 0) d[last] = rng() % 2 ? 1ull : ~0ull;
    if (rng() % 8 == 0) {  // the top digits cancel: few bits left in the top three
      const std::int64_t top = rng() % 2 ? 1 : -2;
      d[last] = static_cast<unsigned long long>(top);
      d[last - 1] = static_cast<unsigned long long>(-top * (std::int64_t(1) << 32) + static_cast<std::int64_t>(rng() % 5) - 2);
    }
    std::uint32_t words[X::kDigits + 8];
    const Out got = detail::exact_result<T, Out>(d, first, last, detail::kSawNonNegZero, 1, words);
    constexpr int kExtra = 4;
    std::uint32_t w[X::kDigits + 8] = {};
    const int count = (last + 3 < X::kDigits ? last + 3 : X::kDigits) - first;
    const bool negative = detail::normalise(d, first, count, w + kExtra);
    Out want = Out(0);
    if (detail::top_word(w, count + kExtra) >= 0) {
      want = detail::round_words<Out>(w, count + kExtra, X::kBase + 32 * first - 32 * kExtra, false);
      if (negative) want = -want;
    }
    ASSERT_TRUE(same_result(got, want)) << "trial " << trial << " first " << first << " last " << last << ": " << got
                                        << " against " << want;
    ++checked;
  }
  EXPECT_EQ(checked, 100000);
}

TEST(ExactResult, FourToSixDigitsRoundAsTheGeneralPath) {
  expect_short_spans_round_as_the_general_path<float, float>(3);
  expect_short_spans_round_as_the_general_path<double, double>(4);
}

}  // namespace
}  // namespace rltest
