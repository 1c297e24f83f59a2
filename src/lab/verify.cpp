#include "lab/verify.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>

#include "core/reference.hpp"
#include "fmt/format.h"

namespace rl::lab {
namespace {

std::string show(long double v, Dtype dtype) {
  if (dtype == Dtype::int32) return fmt::format("{}", static_cast<long long>(v));
  // Enough digits to round-trip the type: 9 for float, 17 for double.
  return fmt::format("{:.{}g}", static_cast<double>(v), dtype == Dtype::float32 ? 9 : 17);
}

template <class T>
Expected expect_typed(std::span<const T> x, OpKind op, Dtype dtype, Accumulate acc) {
  Expected e;
  switch (op) {
    case OpKind::sum: {
      const auto exact = core::exact_sum(x);
      if constexpr (std::is_integral_v<T>) {
        if (acc == Accumulate::wrap) {
          e.wraps = true;
          e.value = static_cast<std::int32_t>(static_cast<std::uint32_t>(exact.integer));
        } else {
          e.value = static_cast<long double>(exact.integer);
        }
      } else {
        e.value = exact.real;
        const double u = std::is_same_v<T, float> ? 0x1p-24 : 0x1p-53;
        e.tolerance = core::float_tolerance(x.size(), exact.abs_sum, u);
      }
      break;
    }
    case OpKind::min: e.value = core::reduce_serial<T, reducelab::Min>(x); break;
    case OpKind::max: e.value = core::reduce_serial<T, reducelab::Max>(x); break;
  }
  e.text = show(e.value, dtype);
  return e;
}

}  // namespace

Expected expect(const HostArray& in, OpKind op, Accumulate acc) {
  switch (in.dtype) {
    case Dtype::int32: return expect_typed(std::span(in.as<int>(), in.n), op, in.dtype, acc);
    case Dtype::float32: return expect_typed(std::span(in.as<float>(), in.n), op, in.dtype, acc);
    case Dtype::float64: return expect_typed(std::span(in.as<double>(), in.n), op, in.dtype, acc);
  }
  return {};
}

Verdict check(const Expected& e, const void* bytes, Dtype dtype, Accumulate acc) {
  Verdict v;
  switch (dtype) {
    case Dtype::int32:
      if (acc == Accumulate::wrap) {
        std::int32_t r;
        std::memcpy(&r, bytes, sizeof r);
        v.value = r;
      } else {
        long long r;
        std::memcpy(&r, bytes, sizeof r);
        v.value = static_cast<long double>(r);
      }
      break;
    case Dtype::float32: {
      float r;
      std::memcpy(&r, bytes, sizeof r);
      v.value = r;
      break;
    }
    case Dtype::float64: {
      double r;
      std::memcpy(&r, bytes, sizeof r);
      v.value = r;
      break;
    }
  }
  v.text = show(v.value, dtype);
  v.ok = std::isfinite(static_cast<double>(v.value)) || !std::isfinite(static_cast<double>(e.value))
             ? std::fabs(v.value - e.value) <= e.tolerance
             : false;
  return v;
}

}  // namespace rl::lab
