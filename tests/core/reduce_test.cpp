// The library on the CPU backend and its kernel on the SIMT backend (both run in CI): every
// type x operation x awkward n against the definition, and the kernel's bits against the CPU's.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <vector>

#include "reducelab/detail/cpu_reduce.hpp"
#include "reducelab/detail/reduce_order.hpp"
#include "core/simt_reduce.hpp"
#include "reduce_support.hpp"

namespace rltest {
namespace {

template <class T>
class ReduceCpu : public ::testing::Test {};
TYPED_TEST_SUITE(ReduceCpu, AllTypes);

// Operations whose result is exact in any order must equal a serial left-to-right fold.
template <class T, class Op>
void expect_serial(const std::vector<T>& x, Op op) {
  const auto got = cpu::reduce(x.data(), x.size(), op);
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
      EXPECT_EQ(cpu::reduce(x.data(), n, op::sum{}), exact_sum(x)) << "n=" << n;
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
      const R got = cpu::reduce(x.data(), n, op::sum{});
      // Carried in double and rounded once to R: within 2 roundings of R of the exact value.
      const long double per_thread = static_cast<long double>(
          detail::kItems * detail::Shape<T>::kVec * (n / detail::Shape<T>::kTile + 1) + 24);  // per thread
      const long double carried = std::is_same_v<T, double> ? per_thread * 0x1p-53L : 0;
      const long double bound =
          2 * u * std::fabs(exact) + carried * abs_sum(x) + 1e-300L;
      EXPECT_LE(std::fabs(static_cast<long double>(got) - exact), bound) << type_name<T>() << " n=" << n;
      const double mean = cpu::reduce(x.data(), n, op::mean{});
      if (n == 0) EXPECT_TRUE(std::isnan(mean));
      else EXPECT_NEAR(mean, static_cast<double>(got) / n, std::fabs(static_cast<double>(got) / n) * 4 * u + 1e-300);
    }
  }
}

TYPED_TEST(ReduceCpu, EmptyInputGivesTheIdentityAndNoIndex) {
  using T = TypeParam;
  const T* none = nullptr;
  EXPECT_EQ(static_cast<double>(cpu::reduce(none, 0, op::sum{})), 0.0);
  EXPECT_FALSE(std::signbit(static_cast<double>(cpu::reduce(none, 0, op::sum{}))));  // +0, not -0
  EXPECT_EQ(static_cast<double>(cpu::reduce(none, 0, op::prod{})), 1.0);
  EXPECT_TRUE(std::isnan(cpu::reduce(none, 0, op::mean{})));
  EXPECT_EQ(cpu::reduce(none, 0, op::argmin{}).index, -1);
  EXPECT_EQ(cpu::reduce(none, 0, op::argmax{}).index, -1);
}

// NumPy's rules: a NaN anywhere makes min/max NaN and argmin/argmax the index of the first NaN;
// ties go to the first index; -0 < +0 only for the purpose of min/max.
TYPED_TEST(ReduceCpu, NaNAndSignedZerosFollowNumPy) {
  using T = TypeParam;
  if constexpr (is_floating<T>) {
    const std::uint64_t n = 3 * detail::Shape<T>::kTile + 5;
    auto x = random_input<T>(n, 3);
    const T nan = detail::canonical_nan<T>();
    x[n - 10] = nan;
    x[2000 % n] = nan;
    EXPECT_TRUE(detail::is_nan(cpu::reduce(x.data(), n, op::min{})));
    EXPECT_TRUE(detail::is_nan(cpu::reduce(x.data(), n, op::max{})));
    EXPECT_EQ(cpu::reduce(x.data(), n, op::argmin{}).index, static_cast<std::int64_t>(std::min<std::uint64_t>(2000 % n, n - 10)));
    EXPECT_EQ(cpu::reduce(x.data(), n, op::argmax{}).index, static_cast<std::int64_t>(std::min<std::uint64_t>(2000 % n, n - 10)));

    std::vector<T> zeros = {from_double<T>(0.0), from_double<T>(-0.0), from_double<T>(0.0)};
    EXPECT_TRUE(detail::sign_bit(cpu::reduce(zeros.data(), 3, op::min{})));
    EXPECT_FALSE(detail::sign_bit(cpu::reduce(zeros.data(), 3, op::max{})));
    EXPECT_EQ(cpu::reduce(zeros.data(), 3, op::argmin{}).index, 0);  // -0 == +0: first index
    std::vector<T> neg = {from_double<T>(-0.0), from_double<T>(-0.0)};
    EXPECT_TRUE(std::signbit(static_cast<double>(cpu::reduce(neg.data(), 2, op::sum{}))));  // -0 + -0
  }
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
  const float one = cpu::reduce(x.data(), n, op::sum{}, 1);
  for (unsigned threads : {2u, 3u, 8u, 0u}) {
    const float many = cpu::reduce(x.data(), n, op::sum{}, threads);
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
      const R ours = cpu::reduce(x.data(), n, op::sum{});
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
  EXPECT_EQ(cpu::reduce(x.data(), x.size(), MaxAbs{}), want);
}

// --- the kernel on the SIMT backend has the CPU backend's bits ---

template <class T>
class ReduceSimt : public ::testing::Test {};
TYPED_TEST_SUITE(ReduceSimt, AllTypes);

template <class T, class Op>
void expect_simt_matches_cpu(const std::vector<T>& x, Op op, unsigned grid, unsigned offset) {
  const auto want = cpu::reduce(x.data(), x.size(), op);
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
  const float cpu_bits = cpu::reduce(x.data(), x.size(), op::sum{});
  const float atomic = detail::simt_reduce(x.data(), x.size(), op::sum{}, 6, 0, /*deterministic=*/false);
  EXPECT_NEAR(atomic, cpu_bits, std::fabs(cpu_bits) * 1e-6 + 1e-6);
}

}  // namespace
}  // namespace rltest
