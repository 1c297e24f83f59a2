#pragma once
// Shared by the library's CPU/SIMT tests and its GPU tests: inputs, exact references and bit
// comparisons for every element type and operation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "reducelab/detail/reduce_ops.cuh"
#include "reducelab/detail/reduce_order.hpp"
#include "reducelab/reduce.hpp"

namespace rltest {

using namespace reducelab;
using half = reducelab::half;  // CUDA's headers declare a global ::half too
using bfloat16 = reducelab::bfloat16;

using AllTypes = ::testing::Types<std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t,
                                  std::uint16_t, std::uint32_t, std::uint64_t, half, bfloat16, float, double>;

template <class T>
std::string type_name() {
  if constexpr (std::is_same_v<T, half>) return "half";
  else if constexpr (std::is_same_v<T, bfloat16>) return "bf16";
  else if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else return (std::is_signed_v<T> ? "int" : "uint") + std::to_string(sizeof(T) * 8);
}

template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, half>) return to_half(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, bfloat16>) return to_bfloat16(static_cast<float>(v));
  else return static_cast<T>(v);
}
template <class T>
long double as_long_double(T x) {
  return static_cast<long double>(detail::widen(x));
}

// Random elements: integers over their whole range (sums wrap or not as the type says), floats
// in [-1, 1) with a few exact repeats so that argmin/argmax meet ties.
template <class T>
std::vector<T> random_input(std::uint64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> x(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T>) {
      x[i] = static_cast<T>(rng());
    } else {
      const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53 * 2.0 - 1.0;
      x[i] = from_double<T>(u);
    }
  }
  if (n > 8) x[n / 2] = x[n / 3];  // a tie for argmin/argmax to break by index
  return x;
}

// Products of random integers are zero after a few dozen even factors; keep them odd or +-1.
template <class T>
std::vector<T> product_input(std::uint64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> x(n);
  for (auto& v : x) {
    if constexpr (std::is_integral_v<T>) v = static_cast<T>(rng() | 1u);
    else v = from_double<T>((rng() & 1) ? 1.0 + std::ldexp(double(rng() % 16), -8) : -1.0);
  }
  return x;
}

// Exact references, each from its definition, in the simplest order.
template <class T>
result_t<T, op::sum> exact_sum(const std::vector<T>& x) {
  if constexpr (std::is_integral_v<T>) {
    unsigned __int128 s = 0;
    for (T v : x) s += static_cast<unsigned __int128>(static_cast<__int128>(v));
    return static_cast<result_t<T, op::sum>>(static_cast<std::uint64_t>(s));
  } else {
    long double s = 0, c = 0;  // Neumaier
    for (T v : x) {
      const long double y = as_long_double(v), t = s + y;
      c += std::fabs(s) >= std::fabs(y) ? (s - t) + y : (y - t) + s;
      s = t;
    }
    return static_cast<result_t<T, op::sum>>(s + c);
  }
}
template <class T>
long double abs_sum(const std::vector<T>& x) {
  long double s = 0;
  for (T v : x) s += std::fabs(as_long_double(v));
  return s;
}

template <class T, class Op>
result_t<T, Op> serial(const std::vector<T>& x, Op) {
  using Sem = detail::semantics_t<T, Op>;
  typename Sem::Acc a = Sem::identity();
  for (std::uint64_t i = 0; i < x.size(); ++i) a = Sem::combine(a, Sem::lift(x[i], i));
  return Sem::finish(a, x.size());
}

// Bitwise equality of results (fields, not padding).
template <class T>
bool same_bits(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) return a.bits == b.bits;
  else if constexpr (std::is_arithmetic_v<T>) return std::memcmp(&a, &b, sizeof(T)) == 0;
  else return same_bits(a.value, b.value) && a.index == b.index;
}
template <class T>
std::string show(const T& a) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
    return std::to_string(detail::widen(a)) + " (bits " + std::to_string(a.bits) + ")";
  else if constexpr (std::is_arithmetic_v<T>) {
    char buf[64];
    if constexpr (std::is_floating_point_v<T>) std::snprintf(buf, sizeof buf, "%a", static_cast<double>(a));
    else std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(a));
    return buf;
  } else {
    return "{" + show(a.value) + ", index " + std::to_string(a.index) + "}";
  }
}

// The sizes every test walks: empty, one element, around a warp, around a tile (32 KiB of any
// type: 8192 floats), several chunks.
template <class T>
std::vector<std::uint64_t> awkward_sizes() {
  const std::uint64_t tile = detail::Shape<T>::kTile;
  return {0, 1, 2, 31, 33, 1000, tile - 1, tile, tile + 1, 3 * tile + 17};
}

// Inputs whose min and max turn on special values, for the 16-bit floats (whose kernels take
// two keys per 32-bit word): each a random array of n elements with infinities, NaNs (quiet,
// signalling, negative) or signed zeros planted first, in the middle and last (the tail past the
// last whole vector), named for the failure message.
template <class T>
std::vector<std::pair<std::string, std::vector<T>>> special_extrema_inputs(std::uint64_t n, std::uint64_t seed) {
  static_assert(is_half_like<T>);
  const bool is_half = std::is_same_v<T, half>;
  const auto bits = [](std::uint16_t b) {
    T t;
    t.bits = b;
    return t;
  };
  const T pinf = bits(is_half ? 0x7c00 : 0x7f80), ninf = bits(is_half ? 0xfc00 : 0xff80);
  const T qnan = bits(is_half ? 0x7e00 : 0x7fc0), snan = bits(is_half ? 0x7c01 : 0x7f81);
  const T neg_nan = bits(is_half ? 0xfe00 : 0xffc0);
  const T pz = bits(0x0000), nz = bits(0x8000);
  std::vector<std::pair<std::string, std::vector<T>>> out;
  const std::uint64_t at[] = {0, n / 2, n - 1};
  auto plant = [&](const std::string& name, std::initializer_list<T> values, bool zeros) {
    std::vector<T> x = zeros ? std::vector<T>(n, pz) : random_input<T>(n, seed);
    unsigned k = 0;
    for (T v : values) x[at[k++ % 3]] = v;
    out.emplace_back(name, std::move(x));
  };
  plant("+inf and -inf", {pinf, ninf}, false);
  plant("quiet NaN first", {qnan}, false);
  plant("NaN in the middle", {pinf, qnan}, false);
  plant("signalling NaN last", {ninf, pinf, snan}, false);
  plant("negative NaN last", {pz, pz, neg_nan}, false);
  plant("signed zeros", {nz, pz, nz}, true);
  return out;
}

}  // namespace rltest
