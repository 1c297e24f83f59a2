// The library on the CPU backend and its kernel on the SIMT backend (both run in CI): every
// type x operation x awkward n against the definition, and the kernel's bits against the CPU's.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "reducelab/detail/agent_order_free.cuh"
#include "reducelab/detail/cpu_reduce.hpp"
#include "reducelab/detail/reduce_order.hpp"
#include "core/simt_reduce.hpp"
#include "simt/core.hpp"
#include "reduce_support.hpp"

namespace rltest {
namespace {

template <class T>
class ReduceCpu : public ::testing::Test {};
TYPED_TEST_SUITE(ReduceCpu, AllTypes);

// Operations whose result is exact in any order must equal a serial left-to-right fold.
template <class T, class Op>
void expect_serial(const std::vector<T>& x, Op op) {
  const auto r = cpu::reduce(x.data(), x.size(), op);
  if (x.empty() && needs_an_element<Op>) {  // no value to compare: the status says so
    EXPECT_EQ(r.status.code(), Errc::empty_input);
    return;
  }
  ASSERT_TRUE(r) << r.status.message();
  const auto got = r.value;
  const auto want = serial(x, op);
  EXPECT_TRUE(same_bits(got, want)) << type_name<T>() << " n=" << x.size() << ": got " << show(got)
                                    << ", want " << show(want);
}

TYPED_TEST(ReduceCpu, OrderFreeOperationsMatchTheSerialFold) {
  using T = TypeParam;
  for (std::uint64_t n : awkward_sizes<T>()) {
    const auto x = random_input<T>(n, 7 + n);
    expect_serial(x, op::min{});
    expect_serial(x, op::max{});
    expect_serial(x, op::argmin{});
    expect_serial(x, op::argmax{});
    if constexpr (std::is_integral_v<T>) {
      expect_serial(x, op::sum{});
      expect_serial(x, op::mean{});
      expect_serial(product_input<T>(n, n), op::prod{});
      // and the sum against 128-bit arithmetic, which knows nothing of the library
      EXPECT_EQ(cpu::reduce(x.data(), n, op::sum{}).value, exact_sum(x)) << "n=" << n;
    }
  }
}

TYPED_TEST(ReduceCpu, FloatingSumsAreWithinAFewRoundingsOfExact) {
  using T = TypeParam;
  if constexpr (is_floating<T>) {
    using R = result_t<T, op::sum>;
    const double u = std::is_same_v<R, double> ? 0x1p-53 : 0x1p-24;  // of the result type
    for (std::uint64_t n : awkward_sizes<T>()) {
      const auto x = random_input<T>(n, 11 + n);
      const long double exact = static_cast<long double>(exact_sum(x));
      const R got = cpu::reduce(x.data(), n, op::sum{}).value;
      // Carried in double and rounded once to R: within 2 roundings of R of the exact value.
      const long double per_thread = static_cast<long double>(
          detail::kItems * detail::Shape<T>::kVec * (n / detail::Shape<T>::kTile + 1) + 24);  // per thread
      const long double carried = std::is_same_v<T, double> ? per_thread * 0x1p-53L : 0;
      const long double bound =
          2 * u * std::fabs(exact) + carried * abs_sum(x) + 1e-300L;
      EXPECT_LE(std::fabs(static_cast<long double>(got) - exact), bound) << type_name<T>() << " n=" << n;
      const double mean = cpu::reduce(x.data(), n, op::mean{}).value;
      if (n == 0) EXPECT_TRUE(std::isnan(mean));
      else EXPECT_NEAR(mean, static_cast<double>(got) / n, std::fabs(static_cast<double>(got) / n) * 4 * u + 1e-300);
    }
  }
}

// sum, prod and mean have a value on no elements; min, max, argmin and argmax say the input was
// empty instead of returning a value a caller could mistake for a result.
TYPED_TEST(ReduceCpu, EmptyInputHasTheDefinedValuesOrSaysItIsEmpty) {
  using T = TypeParam;
  const T* none = nullptr;
  ASSERT_TRUE(cpu::reduce(none, 0, op::sum{}));
  EXPECT_EQ(static_cast<double>(cpu::reduce(none, 0, op::sum{}).value), 0.0);
  EXPECT_FALSE(std::signbit(static_cast<double>(cpu::reduce(none, 0, op::sum{}).value)));  // +0, not -0
  EXPECT_EQ(static_cast<double>(cpu::reduce(none, 0, op::prod{}).value), 1.0);
  EXPECT_TRUE(std::isnan(cpu::reduce(none, 0, op::mean{}).value));
  const T one[1] = {from_double<T>(1.0)};
  auto expect_empty = [&](auto op, const char* name) {
    const auto r = cpu::reduce(one, 0, op);  // a real pointer: only n says it is empty
    EXPECT_FALSE(r) << name;
    EXPECT_EQ(r.status.code(), Errc::empty_input) << name;
    EXPECT_NE(r.status.message().find(std::string(name) + " of an empty input"), std::string::npos)
        << r.status.message();
  };
  expect_empty(op::min{}, "min");
  expect_empty(op::max{}, "max");
  expect_empty(op::argmin{}, "argmin");
  expect_empty(op::argmax{}, "argmax");
  EXPECT_EQ(cpu::reduce(none, 5, op::sum{}).status.code(), Errc::invalid_argument);
}

// NumPy's rules: a NaN anywhere makes min/max NaN and argmin/argmax the index of the first NaN;
// ties go to the first index. -0 < +0 for min/max and argmin/argmax alike (NumPy treats them as
// equal), so argmin/argmax always name the element min/max return.
TYPED_TEST(ReduceCpu, NaNAndSignedZerosFollowNumPy) {
  using T = TypeParam;
  if constexpr (is_floating<T>) {
    const std::uint64_t n = 3 * detail::Shape<T>::kTile + 5;
    auto x = random_input<T>(n, 3);
    const T nan = detail::canonical_nan<T>();
    x[n - 10] = nan;
    x[2000 % n] = nan;
    EXPECT_TRUE(detail::is_nan(cpu::reduce(x.data(), n, op::min{}).value));
    EXPECT_TRUE(detail::is_nan(cpu::reduce(x.data(), n, op::max{}).value));
    EXPECT_EQ(cpu::reduce(x.data(), n, op::argmin{}).value.index, static_cast<std::int64_t>(std::min<std::uint64_t>(2000 % n, n - 10)));
    EXPECT_EQ(cpu::reduce(x.data(), n, op::argmax{}).value.index, static_cast<std::int64_t>(std::min<std::uint64_t>(2000 % n, n - 10)));

    std::vector<T> zeros = {from_double<T>(0.0), from_double<T>(-0.0), from_double<T>(0.0)};
    EXPECT_TRUE(detail::sign_bit(cpu::reduce(zeros.data(), 3, op::min{}).value));
    EXPECT_FALSE(detail::sign_bit(cpu::reduce(zeros.data(), 3, op::max{}).value));
    EXPECT_EQ(cpu::reduce(zeros.data(), 3, op::argmin{}).value.index, 1);  // the -0 min returns
    std::vector<T> neg = {from_double<T>(-0.0), from_double<T>(-0.0)};
    EXPECT_TRUE(std::signbit(static_cast<double>(cpu::reduce(neg.data(), 2, op::sum{}).value)));  // -0 + -0
  }
}

// argmin/argmax agree with min/max on signed zeros, in every position and on every path.
TYPED_TEST(ReduceCpu, ArgExtremaNameTheElementMinAndMaxReturn) {
  using T = TypeParam;
  if constexpr (is_floating<T>) {
    const T pz = from_double<T>(0.0), nz = from_double<T>(-0.0);
    const std::vector<T> up = {nz, pz}, down = {pz, nz};
    EXPECT_FALSE(detail::sign_bit(cpu::reduce(up.data(), 2, op::max{}).value));
    EXPECT_EQ(cpu::reduce(up.data(), 2, op::argmax{}).value.index, 1);
    EXPECT_FALSE(detail::sign_bit(cpu::reduce(up.data(), 2, op::argmax{}).value.value));
    EXPECT_EQ(cpu::reduce(up.data(), 2, op::argmin{}).value.index, 0);
    EXPECT_TRUE(detail::sign_bit(cpu::reduce(down.data(), 2, op::min{}).value));
    EXPECT_EQ(cpu::reduce(down.data(), 2, op::argmin{}).value.index, 1);
    EXPECT_TRUE(detail::sign_bit(cpu::reduce(down.data(), 2, op::argmin{}).value.value));
    EXPECT_EQ(cpu::reduce(down.data(), 2, op::argmax{}).value.index, 0);
    // Across tiles and chunks: zeros of both signs far apart, the kernel on SIMT too.
    const std::uint64_t n = 3 * detail::Shape<T>::kTile + 7;
    std::vector<T> x(n, pz);
    x[n - 3] = nz;
    x[n - 1] = nz;
    EXPECT_EQ(cpu::reduce(x.data(), n, op::argmin{}).value.index, static_cast<std::int64_t>(n - 3));
    EXPECT_EQ(detail::simt_reduce(x.data(), n, op::argmin{}, 3).index, static_cast<std::int64_t>(n - 3));
    std::fill(x.begin(), x.end(), nz);
    x[n - 2] = pz;
    EXPECT_EQ(cpu::reduce(x.data(), n, op::argmax{}).value.index, static_cast<std::int64_t>(n - 2));
    EXPECT_EQ(detail::simt_reduce(x.data(), n, op::argmax{}, 2, 1).index, static_cast<std::int64_t>(n - 2));
  }
}

// Integer means come from a sum that cannot wrap and are rounded once.
TEST(ReduceCpu, IntegerMeanIsTheExactQuotientRoundedOnce) {
  const std::int64_t big[] = {std::int64_t(1) << 62, std::int64_t(1) << 62};
  EXPECT_EQ(cpu::reduce(big, 2, op::mean{}).value, 4611686018427387904.0);
  const std::uint64_t ubig[] = {std::uint64_t(1) << 63, std::uint64_t(1) << 63};
  EXPECT_EQ(cpu::reduce(ubig, 2, op::mean{}).value, 9223372036854775808.0);
  const std::int64_t neg[] = {INT64_MIN, INT64_MIN, INT64_MIN};
  EXPECT_EQ(cpu::reduce(neg, 3, op::mean{}).value, -9223372036854775808.0);
  // (2^53+1 + 2^53+2 + 3) / 3 = (2^54 + 6) / 3 = 6004799503160663.33..: rounding the sum to
  // double first (2^54 + 8) gives 6004799503160664, one unit off the correctly rounded ...663.
  const std::int64_t p53 = std::int64_t(1) << 53;
  const std::int64_t odd[] = {p53 + 1, p53 + 2, 3};
  EXPECT_EQ(cpu::reduce(odd, 3, op::mean{}).value, 6004799503160663.0);
  // A quotient just above a tie rounds up; the sticky remainder decides it.
  const std::uint64_t tie[] = {(std::uint64_t(1) << 54) + 2, 1};  // (2^54 + 3) / 2 = 2^53 + 1.5
  EXPECT_EQ(cpu::reduce(tie, 2, op::mean{}).value, 9007199254740994.0);
  const std::int32_t small[] = {-7, 2};  // -2.5, exactly
  EXPECT_EQ(cpu::reduce(small, 2, op::mean{}).value, -2.5);
  const std::int8_t third[] = {1, 0, 0};  // 1/3 rounded once
  EXPECT_EQ(cpu::reduce(third, 3, op::mean{}).value, 1.0 / 3.0);
  // Many large elements through every tile and chunk, on the CPU and the kernel on SIMT.
  const std::uint64_t n = 100'003;
  std::vector<std::int64_t> x(n, INT64_MAX);
  x[5] = INT64_MAX - 2;
  const double want = 9223372036854775807.0;  // INT64_MAX - 2/n rounds to 2^63
  EXPECT_EQ(cpu::reduce(x.data(), n, op::mean{}).value, want);
  EXPECT_EQ(detail::simt_reduce(x.data(), n, op::mean{}, 3), want);
  std::vector<std::uint32_t> u(n, UINT32_MAX);
  EXPECT_EQ(cpu::reduce(u.data(), n, op::mean{}).value, 4294967295.0);
  EXPECT_EQ(detail::simt_reduce(u.data(), n, op::mean{}, 2, 1), 4294967295.0);
}

// The plan is a function of n alone: chunk counts by the rule of reduce_order.hpp, chunks of
// whole tiles that cover [0, n) without gaps, none more than one tile longer than another.
TEST(ReduceOrder, ChunksFollowTheRule) {
  const std::uint64_t tile = detail::Shape<float>::kTile;  // 8192 floats
  struct Case {
    std::uint64_t n, chunks;
  };
  for (const Case& c : {Case{0, 0}, Case{1, 1}, Case{tile, 1}, Case{tile + 1, 2}, Case{1000 * tile, 1000},
                        Case{1056 * tile, 1056}, Case{1057 * tile, 1056}, Case{2111 * tile, 1056}, Case{2111 * tile + 5, 2112},
                        Case{2112 * tile, 2112}, Case{100000 * tile + 3, 2112}}) {
    const detail::Plan p = detail::fixed_plan<float>(c.n);
    EXPECT_EQ(p.chunks, c.chunks) << "n=" << c.n;
    std::uint64_t shortest = ~0ull, longest = 0;
    for (std::uint64_t k = 0; k < p.chunks; ++k) {
      const std::uint64_t b = p.chunk_begin(k), e = p.chunk_begin(k + 1);
      EXPECT_EQ(b % tile, 0u);
      if (k + 1 < p.chunks) {
        shortest = std::min(shortest, e - b);
        longest = std::max(longest, e - b);
      }
    }
    if (p.chunks > 0) EXPECT_EQ(p.chunk_begin(p.chunks), c.n);
    if (p.chunks > 2) EXPECT_LE(longest - shortest, tile) << "n=" << c.n;
  }
}

TEST(ReduceCpu, ThreadCountDoesNotChangeTheBits) {
  const std::uint64_t n = 20'000'003;  // 2442 tiles of 8192 floats: all 2112 chunks, 1.16 tiles each
  ASSERT_EQ(detail::fixed_plan<float>(n).chunks, detail::kChunks);
  const auto x = random_input<float>(n, 5);
  const float one = cpu::reduce(x.data(), n, op::sum{}, 1).value;
  for (unsigned threads : {2u, 3u, 8u, 0u}) {
    const float many = cpu::reduce(x.data(), n, op::sum{}, threads).value;
    EXPECT_EQ(std::bit_cast<std::uint32_t>(one), std::bit_cast<std::uint32_t>(many)) << threads << " threads";
  }
}

TEST(ReduceCpu, HalfAndBfloat16ConvertExactlyAndRoundToNearestEven) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const half h{static_cast<std::uint16_t>(b)};
    const bfloat16 g{static_cast<std::uint16_t>(b)};
    if (!std::isnan(to_float(h))) EXPECT_EQ(to_half(to_float(h)).bits, b) << std::hex << b;
    if (!std::isnan(to_float(g))) EXPECT_EQ(to_bfloat16(to_float(g)).bits, b) << std::hex << b;
  }
  EXPECT_EQ(to_float(half{0x3c00}), 1.0f);
  EXPECT_EQ(to_float(half{0x0001}), 0x1p-24f);  // the smallest subnormal
  EXPECT_EQ(to_half(1.0f + 0x1p-11f).bits, 0x3c00);  // a tie rounds to even (down)
  EXPECT_EQ(to_half(1.0f + 3 * 0x1p-11f).bits, 0x3c02);  // a tie rounds to even (up)
  EXPECT_EQ(to_half(70000.0f).bits, 0x7c00);
  EXPECT_EQ(to_bfloat16(1.0f + 0x1p-8f).bits, 0x3f80);
  EXPECT_EQ(to_float(bfloat16{0x3f80}), 1.0f);
}

// --- accuracy: at least as good as pairwise summation, on inputs built to hurt ---

// NumPy-style pairwise summation in the result type: halves down to blocks of 8, summed in order.
template <class R, class T>
R pairwise(const T* x, std::size_t n) {
  if (n <= 8) {
    R s = R(0);
    for (std::size_t i = 0; i < n; ++i) s += static_cast<R>(detail::widen(x[i]));
    return s;
  }
  const std::size_t half_n = n / 2;
  return pairwise<R>(x, half_n) + pairwise<R>(x + half_n, n - half_n);
}

// Inputs: (a) huge terms that cancel, leaving the small ones; (b) magnitudes from 2^-20 to 2^20
// with random signs; (c) one large term among many tiny ones; (d) an alternating harmonic-like
// series whose partial sums swing.
template <class T>
std::vector<std::vector<T>> adversarial_inputs(std::uint64_t n) {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double big = std::is_same_v<T, float> ? 1e7 : (std::is_same_v<T, half> ? 1000.0 : 1e6);
  std::vector<std::vector<T>> cases(4, std::vector<T>(n));
  for (std::uint64_t i = 0; i < n; ++i) {
    cases[0][i] = from_double<T>(i % 4 == 0 ? big : i % 4 == 2 ? -big : unit(rng));
    const double mag = std::ldexp(1.0, static_cast<int>(rng() % 41) - 20) * (std::is_same_v<T, half> ? 1e-3 : 1.0);
    cases[1][i] = from_double<T>((rng() & 1) ? mag : -mag);
    cases[2][i] = from_double<T>(i == n / 3 ? big : unit(rng) * 1e-3);
    cases[3][i] = from_double<T>((i % 2 ? -1.0 : 1.0) * (1.0 + 1.0 / static_cast<double>(i % 1000 + 1)));
  }
  return cases;
}

template <class T>
class ReduceAccuracy : public ::testing::Test {};
using SumTypes = ::testing::Types<float, half, bfloat16>;
TYPED_TEST_SUITE(ReduceAccuracy, SumTypes);

TYPED_TEST(ReduceAccuracy, AtLeastAsAccurateAsPairwiseSummation) {
  using T = TypeParam;
  using R = result_t<T, op::sum>;  // float for all three
  const char* names[] = {"cancelling", "mixed magnitudes", "one large", "alternating"};
  for (std::uint64_t n : {std::uint64_t(100'003), std::uint64_t(3'000'017)}) {
    const auto cases = adversarial_inputs<T>(n);
    for (std::size_t k = 0; k < cases.size(); ++k) {
      const auto& x = cases[k];
      const long double exact = static_cast<long double>(exact_sum(x));  // long double: exact enough
      const R ours = cpu::reduce(x.data(), n, op::sum{}).value;
      const R pair = pairwise<R>(x.data(), n);
      const long double scale = std::max<long double>(std::fabs(exact), 1e-30L);
      const long double ours_err = std::fabs(static_cast<long double>(ours) - exact) / scale;
      const long double pair_err = std::fabs(static_cast<long double>(pair) - exact) / scale;
      std::cout << "[ accuracy ] " << type_name<T>() << " n=" << n << " " << names[k] << ": relative error "
                << static_cast<double>(ours_err) << " (pairwise " << static_cast<double>(pair_err) << ")\n";
      // Our sum is carried in double and rounded once to float: within half an ulp of float of
      // the exact value (plus n double roundings), which no float pairwise sum can beat.
      EXPECT_LE(ours_err, 0x1p-24L * 1.0001L) << names[k];
      EXPECT_LE(ours_err, pair_err + 0x1p-24L) << names[k];
    }
  }
}

// A user operation on the CPU backend: the largest magnitude.
struct MaxAbs {
  using value_type = double;
  double identity() const { return 0.0; }
  double operator()(double a, double b) const { return std::max(std::fabs(a), std::fabs(b)); }
};
TEST(ReduceCpu, UserOperationsFollowTheSameOrder) {
  const auto x = random_input<float>(5000, 9);
  double want = 0;
  for (float v : x) want = std::max(want, std::fabs(static_cast<double>(v)));
  EXPECT_EQ(cpu::reduce(x.data(), x.size(), MaxAbs{}).value, want);
}

// --- the kernel on the SIMT backend has the CPU backend's bits ---

template <class T>
class ReduceSimt : public ::testing::Test {};
TYPED_TEST_SUITE(ReduceSimt, AllTypes);

template <class T, class Op>
void expect_simt_matches_cpu(const std::vector<T>& x, Op op, unsigned grid, unsigned offset) {
  if (x.empty() && needs_an_element<Op>) return;  // no value: the backends return empty_input first
  const auto want = cpu::reduce(x.data(), x.size(), op).value;
  const auto got = detail::simt_reduce(x.data(), x.size(), op, grid, offset);
  EXPECT_TRUE(same_bits(got, want)) << type_name<T>() << " n=" << x.size() << " grid=" << grid
                                    << " offset=" << offset << ": kernel " << show(got) << ", cpu " << show(want);
}

TYPED_TEST(ReduceSimt, KernelHasTheCpuBitsForEveryOperationGridAndAlignment) {
  using T = TypeParam;
  struct Config {
    unsigned grid, offset;
  };
  const Config configs[] = {{0, 0}, {1, 0}, {3, 0}, {0, 1}, {2, 3}};
  for (std::uint64_t n : awkward_sizes<T>()) {
    const auto x = random_input<T>(n, 100 + n);
    const auto p = product_input<T>(n, 200 + n);
    for (const Config& c : configs) {
      expect_simt_matches_cpu(x, op::sum{}, c.grid, c.offset);
      expect_simt_matches_cpu(p, op::prod{}, c.grid, c.offset);
      expect_simt_matches_cpu(x, op::min{}, c.grid, c.offset);
      expect_simt_matches_cpu(x, op::max{}, c.grid, c.offset);
      expect_simt_matches_cpu(x, op::mean{}, c.grid, c.offset);
      expect_simt_matches_cpu(x, op::argmin{}, c.grid, c.offset);
      expect_simt_matches_cpu(x, op::argmax{}, c.grid, c.offset);
    }
  }
}

// When the order-free kernel takes its large-input shape: 8 vectors a thread for elements of up to
// 4 bytes from 2^24 on a GPU with wide memory only (an H200, not an H100: agent_order_free.cuh),
// contiguous runs of units for 8-byte elements from 2^27 on every GPU.
TEST(ReduceOrder, LargeShapeForSmallElementsOnlyWithWideMemory) {
  using detail::free_large;
  EXPECT_TRUE(free_large<float>(std::uint64_t(1) << 24, true));
  EXPECT_FALSE(free_large<float>((std::uint64_t(1) << 24) - 1, true));
  EXPECT_FALSE(free_large<float>(std::uint64_t(1) << 24, false));
  EXPECT_FALSE(free_large<std::int32_t>(std::uint64_t(1) << 31, false));
  EXPECT_TRUE(free_large<half>(std::uint64_t(1) << 30, true));
  EXPECT_TRUE(free_large<double>(std::uint64_t(1) << 27, false));
  EXPECT_TRUE(free_large<double>(std::uint64_t(1) << 27, true));
  EXPECT_FALSE(free_large<double>((std::uint64_t(1) << 27) - 1, true));
}

// The order-free kernel's large-input shape (8 vectors per thread for small elements, contiguous
// runs of units for 8-byte ones), forced at small n: the same bits as the CPU backend for every
// order-free operation, grid and alignment, including grids that do not divide the units.
TYPED_TEST(ReduceSimt, LargeInputShapeHasTheCpuBits) {
  using T = TypeParam;
  struct Config {
    unsigned grid, offset;
  };
  const Config configs[] = {{1, 0}, {3, 0}, {7, 1}, {64, 3}};
  for (std::uint64_t n : {std::uint64_t(1), std::uint64_t(1000), std::uint64_t(100003)}) {
    const auto x = random_input<T>(n, 300 + n);
    for (const Config& c : configs) {
      auto check = [&](auto op) {
        using Op = decltype(op);
        if constexpr (detail::semantics_t<T, Op>::order_free) {
          const auto want = cpu::reduce(x.data(), x.size(), op).value;
          const auto got = detail::simt_reduce(x.data(), x.size(), op, c.grid, c.offset, true, true);
          EXPECT_TRUE(same_bits(got, want)) << type_name<T>() << " n=" << n << " grid=" << c.grid << " offset=" << c.offset
                                            << ": kernel " << show(got) << ", cpu " << show(want);
        }
      };
      check(op::sum{});
      check(op::min{});
      check(op::max{});
      check(op::argmin{});
      check(op::argmax{});
    }
  }
}

// The min and max of 16-bit floats take two keys per 32-bit word in the order-free kernel: NaNs
// of every kind, infinities and signed zeros give the CPU backend's bits, in whole units, partial
// units and the tail, at both shapes of the kernel.
template <class T>
void expect_special_extrema_match_cpu() {
  for (std::uint64_t n : {std::uint64_t(37), std::uint64_t(1000), std::uint64_t(20000), std::uint64_t(100003)})
    for (const auto& [name, x] : special_extrema_inputs<T>(n, 500 + n))
      for (unsigned grid : {1u, 3u})
        for (unsigned offset : {0u, 1u})
          for (bool large : {false, true}) {
            auto check = [&](auto op) {
              const auto want = cpu::reduce(x.data(), n, op).value;
              const auto got = detail::simt_reduce(x.data(), n, op, grid, offset, true, large);
              EXPECT_TRUE(same_bits(got, want)) << type_name<T>() << " " << name << " n=" << n << " grid=" << grid
                                                << " offset=" << offset << " large=" << large << ": kernel "
                                                << show(got) << ", cpu " << show(want);
            };
            check(op::min{});
            check(op::max{});
          }
}
TEST(ReduceSimt, HalfAndBfloat16ExtremaSeeNaNsInfinitiesAndSignedZeros) {
  expect_special_extrema_match_cpu<half>();
  expect_special_extrema_match_cpu<bfloat16>();
}

// Runs `check` with the SIMT runtime taking the blocks in each of `runs` (an order and a number of
// workers; `seed` shuffles the random order), then restores the default schedule.
struct BlockOrder {
  simt::Schedule schedule;
  unsigned workers;
};
template <class Check>
void in_block_orders(std::initializer_list<BlockOrder> runs, unsigned seed, Check&& check) {
  for (const BlockOrder run : runs) {
    simt::set_schedule(run.schedule, seed);
    simt::set_worker_threads(run.workers);
    SCOPED_TRACE(std::string(simt::name(run.schedule)) + ", " + std::to_string(run.workers) + " worker(s)");
    check();
  }
  simt::set_schedule(simt::Schedule::in_order);
  simt::set_worker_threads(0);
}

// The order-free kernel ends with posted results (posted_results.cuh): every block but one posts
// its fold and the collector waits for the posts. Whatever order the blocks start in and however
// many workers run them, the collector finds every post and the result keeps the CPU backend's
// bits: grids of more blocks than a block has threads (a collector thread waits for two slots),
// and results of 4, 8 and 16 bytes (int32 max, int32 sum, argmin of doubles and the 128-bit
// integer mean: slots of one, two and four words) sharing the slots one launch after another.
TEST(ReduceSimt, PostedResultsReachTheCollectorInAnyBlockOrder) {
  const std::uint64_t grid = detail::kThreads + 4;
  constexpr std::uint64_t kUnitBytes = 16384;  // the kernel's unit: 256 threads x 4 loads of 16 bytes
  const auto ints = random_input<std::int32_t>(grid * kUnitBytes / 4 + 77, 61);
  const auto doubles = random_input<double>(grid * kUnitBytes / 8 + 5, 62);
  in_block_orders({{simt::Schedule::in_order, 1}, {simt::Schedule::reverse, 1}, {simt::Schedule::random, 1},
                   {simt::Schedule::reverse, 3}, {simt::Schedule::random, 3}},
                  7, [&] {
                    for (unsigned g : {3u, unsigned(grid)}) {
                      expect_simt_matches_cpu(ints, op::sum{}, g, 0);
                      expect_simt_matches_cpu(ints, op::max{}, g, 1);
                      expect_simt_matches_cpu(ints, op::mean{}, g, 0);
                      expect_simt_matches_cpu(doubles, op::argmin{}, g, 0);
                      expect_simt_matches_cpu(doubles, op::max{}, g, 0);
                    }
                  });
}

// Exact sums of many blocks, in any block order and on one or several workers: each block adds
// its digits to the launch's, and whichever block ends last rounds them. Floats in [-1, 1) (the
// threads' pairs hold everything), floats over the whole exponent range, floats whose remainders
// decide the sum (they reach the result only through the digits), doubles, means, an infinity
// and -0 alone (the flags), with grids of 3 blocks and of more blocks than a block has threads.
TEST(ReduceSimt, ExactSumsOfManyBlocksInAnyBlockOrder) {
  const std::uint64_t grid = detail::kThreads + 4;
  const std::uint64_t tile = detail::Shape<float>::kTile;
  const auto uniform = random_input<float>(grid * tile + 77, 63);
  std::vector<float> wide(grid * tile + 5);
  std::mt19937_64 rng(64);
  for (float& v : wide) {
    const int e = static_cast<int>(rng() % 250) - 140;
    const float m = 1.0f + static_cast<float>(rng() % (1u << 23)) / static_cast<float>(1u << 23);
    v = std::ldexp(rng() % 2 ? -m : m, e);
  }
  // Remainders that decide the result: a thread's rows alternate (2^100, 2^40, 2^-20, -2^100) and
  // (2^100, -2^40, 0, -2^100); its pair holds the big terms and cancels them, while every 2^-20
  // leaves the pair for the digits. The sum is 2^-20 per first-kind vector, and 0 without them.
  std::vector<float> remainders(grid * tile);
  for (std::size_t v = 0; v < remainders.size() / 4; ++v) {
    const bool first = (v / detail::kThreads) % 2 == 0;
    const float row[4] = {0x1p100f, first ? 0x1p40f : -0x1p40f, first ? 0x1p-20f : 0.0f, -0x1p100f};
    std::copy(row, row + 4, remainders.begin() + 4 * v);
  }
  std::vector<float> with_inf = uniform;
  with_inf[with_inf.size() / 2] = std::numeric_limits<float>::infinity();
  const std::vector<float> negative_zeros(grid * tile, -0.0f);
  const auto doubles = random_input<double>(grid * detail::Shape<double>::kTile + 3, 65);
  const std::initializer_list<BlockOrder> orders = {
      {simt::Schedule::in_order, 1}, {simt::Schedule::reverse, 1}, {simt::Schedule::random, 3}};
  in_block_orders(orders, 9, [&] {
    for (unsigned g : {3u, unsigned(grid)}) {
      expect_simt_matches_cpu(uniform, op::sum{}, g, 0);
      expect_simt_matches_cpu(wide, op::sum{}, g, 1);
      expect_simt_matches_cpu(wide, op::mean{}, g, 0);
      expect_simt_matches_cpu(remainders, op::sum{}, g, 0);
      expect_simt_matches_cpu(with_inf, op::sum{}, g, 0);
      expect_simt_matches_cpu(negative_zeros, op::sum{}, g, 0);
      expect_simt_matches_cpu(doubles, op::sum{}, g, 0);
    }
  });
}

// More chunks than threads in a block: the last block's fold strides over the chunk results.
TEST(ReduceSimt, ManyChunksStillMatchTheCpu) {
  const std::uint64_t n = 2'200'000;  // 269 tiles of 8192 floats: 269 chunks
  ASSERT_GT(detail::fixed_plan<float>(n).chunks, detail::kThreads);
  const auto x = random_input<float>(n, 42);
  for (unsigned grid : {0u, 1u, 7u}) expect_simt_matches_cpu(x, op::sum{}, grid, 0);
  const auto h = random_input<half>(n, 43);
  expect_simt_matches_cpu(h, op::sum{}, 5, 1);
}

// The nondeterministic variant (atomics) lands within rounding of the exact sum; the default
// order lands on the CPU's bits.
TEST(ReduceSimt, AtomicVariantIsCloseButTheDefaultIsExactlyTheCpu) {
  const auto x = random_input<float>(50'000, 8);
  const float cpu_bits = cpu::reduce(x.data(), x.size(), op::sum{}).value;
  const float atomic = detail::simt_reduce(x.data(), x.size(), op::sum{}, 6, 0, /*deterministic=*/false);
  EXPECT_NEAR(atomic, cpu_bits, std::fabs(cpu_bits) * 1e-6 + 1e-6);
}

}  // namespace
}  // namespace rltest
