#include "lab/verify.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "fmt/format.h"

namespace rl::lab {
namespace {

template <class T>
std::string value_text(T v) {
  if constexpr (reducelab::is_half_like<T>) return fmt::format("{:.9g}", reducelab::to_float(v));
  else if constexpr (std::is_same_v<T, float>) return fmt::format("{:.9g}", v);
  else if constexpr (std::is_same_v<T, double>) return fmt::format("{:.17g}", v);
  else return std::to_string(v);
}

std::string int128_text(__int128 v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  unsigned __int128 u = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u) {
    s += static_cast<char>('0' + static_cast<int>(u % 10));
    u /= 10;
  }
  if (neg) s += '-';
  return {s.rbegin(), s.rend()};
}

template <class R>
R read(const void* bytes) {
  R r;
  std::memcpy(&r, bytes, sizeof r);
  return r;
}

// The unit roundoff of a floating-point sum's result type.
template <class R>
double unit_roundoff() {
  return std::is_same_v<R, float> ? 0x1p-24 : 0x1p-53;
}

}  // namespace

std::string expected_text(const Expected& e) {
  return core::with_dtype(e.result, [&]<class R>() -> std::string {
    if (e.op != OpKind::sum) return value_text(read<R>(e.folded.data()));
    if constexpr (std::is_integral_v<R>) return e.wraps ? value_text(static_cast<R>(e.integer)) : int128_text(e.integer);
    else if constexpr (std::is_floating_point_v<R>) return value_text(static_cast<R>(e.real));
    else throw std::invalid_argument("verify: no sum is stored as " + std::string(core::name(e.result)));
  });
}

Expected expect(const HostArray& in, OpKind op, Accumulate acc) {
  Expected e;
  core::with_gallery_dtype(in.dtype, [&]<class T>() {
    core::Exact<T> truth;
    extend(truth, in.as<T>(), in.n);
    e = expect(truth, op, gallery::accumulator_dtype(in.dtype, acc));
  });
  return e;
}

Verdict judge(const Expected& e, const void* got, const void* same_bits, std::string_view same_bits_name) {
  return core::with_dtype(e.result, [&]<class R>() {
    Verdict v;
    const R r = read<R>(got);
    v.result = value_text(r);
    v.expected = e.text;
    if (e.op != OpKind::sum) {
      v.ok = std::memcmp(&r, e.folded.data(), sizeof r) == 0;
      v.check = "equal bits";
    } else if constexpr (std::is_integral_v<R>) {
      v.ok = r == static_cast<R>(e.integer);
      v.check = e.wraps ? fmt::format("exact modulo 2^{}", 8 * sizeof(R)) : "exact (128-bit reference)";
    } else if constexpr (std::is_floating_point_v<R>) {
      const double bound = core::float_tolerance(e.n, e.abs_sum, unit_roundoff<R>());
      const long double err = std::fabs(static_cast<long double>(r) - e.real);
      const bool close = err <= bound;  // false for NaN
      v.check = fmt::format("|error| {:.2e} <= {:.2e}", static_cast<double>(err), bound);
      v.ok = close;
      if (same_bits) {
        const R want = read<R>(same_bits);
        v.expected = value_text(want);
        v.ok = std::memcmp(&r, &want, sizeof r) == 0 && close;
        v.check = fmt::format("bits equal {}; {}", same_bits_name, v.check);
      }
      if (!close) v.check = fmt::format("|error| {:.2e} OVER the bound {:.2e}", static_cast<double>(err), bound);
    } else {
      throw std::invalid_argument("verify: no sum is stored as " + std::string(core::name(e.result)));
    }
    return v;
  });
}

}  // namespace rl::lab
