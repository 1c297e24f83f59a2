#pragma once
// The element types the library reduces, and what each reduces into.
//
// half and bfloat16 are 16-bit storage types with the bit layout of CUDA's __half and
// __nv_bfloat16, so device buffers of either can be passed as these (reinterpret the pointer).
// They convert to float exactly; arithmetic happens in the accumulator type, never in 16 bits.
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "reducelab/config.hpp"

namespace reducelab {

struct half {
  std::uint16_t bits = 0;
};
struct bfloat16 {
  std::uint16_t bits = 0;
};
static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2);

namespace detail {
RL_HD_INLINE float float_from_bits(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}
RL_HD_INLINE std::uint32_t bits_of_float(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}
}  // namespace detail

// Exact widening conversions (every half and every bfloat16 is a float).
RL_HD_INLINE float to_float(bfloat16 x) { return detail::float_from_bits(std::uint32_t(x.bits) << 16); }
RL_HD_INLINE float to_float(half x) {
  const std::uint32_t sign = std::uint32_t(x.bits & 0x8000u) << 16;
  const std::uint32_t exp = (x.bits >> 10) & 0x1fu;
  std::uint32_t mant = x.bits & 0x3ffu;
  if (exp == 0x1f) return detail::float_from_bits(sign | 0x7f800000u | (mant << 13));  // inf, NaN
  if (exp != 0) return detail::float_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return detail::float_from_bits(sign);  // +-0
  // Subnormal half: normalise into a float.
  std::uint32_t e = 113;
  while ((mant & 0x400u) == 0) {
    mant <<= 1;
    --e;
  }
  return detail::float_from_bits(sign | (e << 23) | ((mant & 0x3ffu) << 13));
}

// Rounding conversions (round to nearest, ties to even), for tests and for callers that fill
// buffers on the host.
half to_half(float f);
bfloat16 to_bfloat16(float f);

// What a sum or product of T accumulates in and returns. Small integers widen to 64 bits so a
// sum of int32 cannot overflow below 2^32 elements; 16-bit floats accumulate in float. float
// sums and products are carried in double inside the reduction and rounded to float once, at
// the end (see docs/performance.md, "Accuracy").
template <class T> struct accumulate;
template <> struct accumulate<std::int8_t> { using type = std::int64_t; };
template <> struct accumulate<std::int16_t> { using type = std::int64_t; };
template <> struct accumulate<std::int32_t> { using type = std::int64_t; };
template <> struct accumulate<std::int64_t> { using type = std::int64_t; };
template <> struct accumulate<std::uint8_t> { using type = std::uint64_t; };
template <> struct accumulate<std::uint16_t> { using type = std::uint64_t; };
template <> struct accumulate<std::uint32_t> { using type = std::uint64_t; };
template <> struct accumulate<std::uint64_t> { using type = std::uint64_t; };
template <> struct accumulate<half> { using type = float; };
template <> struct accumulate<bfloat16> { using type = float; };
template <> struct accumulate<float> { using type = float; };
template <> struct accumulate<double> { using type = double; };
template <class T>
using accumulate_t = typename accumulate<T>::type;

template <class T>
inline constexpr bool is_half_like = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;
template <class T>
inline constexpr bool is_floating = std::is_floating_point_v<T> || is_half_like<T>;

// argmin/argmax result: the value and the index of its first occurrence.
template <class T>
struct ArgResult {
  T value{};
  std::int64_t index = -1;
};

}  // namespace reducelab
