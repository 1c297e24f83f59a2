// The CPU backend, compiled for every built-in type and operation.
#include "reducelab/detail/cpu_reduce.hpp"

#include <cmath>
#include <cstring>

#define REDUCELAB_CPU_INSTANTIATE_(T, OP)                                                       \
  template reducelab::Result<reducelab::result_t<T, reducelab::op::OP>> reducelab::cpu::reduce<T, reducelab::op::OP>( \
      const T*, std::uint64_t, reducelab::op::OP, unsigned);
#define REDUCELAB_CPU_INSTANTIATE_TYPE_(T) REDUCELAB_FOR_EACH_OP(REDUCELAB_CPU_INSTANTIATE_, T)
REDUCELAB_FOR_EACH_TYPE(REDUCELAB_CPU_INSTANTIATE_TYPE_)

namespace reducelab {
namespace {
// Round a float to the nearest value with `keep` mantissa bits, ties to even; the result's bits.
template <int kKeep>
std::uint32_t round_mantissa(std::uint32_t u) {
  constexpr int drop = 23 - kKeep;
  const std::uint32_t lsb = (u >> drop) & 1u;
  return u + ((1u << (drop - 1)) - 1u) + lsb;
}
}  // namespace

bfloat16 to_bfloat16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return bfloat16{static_cast<std::uint16_t>((u >> 16) | 0x40u)};
  return bfloat16{static_cast<std::uint16_t>(round_mantissa<7>(u) >> 16)};
}

half to_half(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const float a = std::fabs(f);
  if (std::isnan(f)) return half{static_cast<std::uint16_t>(sign | 0x7e00u)};
  if (a >= 65520.0f) return half{static_cast<std::uint16_t>(sign | 0x7c00u)};  // rounds to inf
  if (a < 6.103515625e-05f) {
    // Subnormal half: a multiple of 2^-24; nearbyint rounds ties to even.
    const auto m = static_cast<std::uint16_t>(std::nearbyint(a * 16777216.0f));
    return half{static_cast<std::uint16_t>(sign | m)};
  }
  std::uint32_t r = round_mantissa<10>(u & 0x7fffffffu);
  const std::uint32_t exp = (r >> 23) - 112u;
  return half{static_cast<std::uint16_t>(sign | (exp << 10) | ((r >> 13) & 0x3ffu))};
}
}  // namespace reducelab
