#pragma once
// Element types reducelab knows, with their names as users type them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace reducelab {

enum class Dtype { int32, float32, float64 };

inline constexpr Dtype kAllDtypes[] = {Dtype::int32, Dtype::float32, Dtype::float64};

constexpr std::string_view name(Dtype d) {
  switch (d) {
    case Dtype::int32: return "int32";
    case Dtype::float32: return "float";
    case Dtype::float64: return "double";
  }
  return "?";
}

constexpr std::size_t size_of(Dtype d) {
  switch (d) {
    case Dtype::int32: return 4;
    case Dtype::float32: return 4;
    case Dtype::float64: return 8;
  }
  return 0;
}

constexpr bool is_integer(Dtype d) { return d == Dtype::int32; }

// Accepts the printed name and the common aliases (int, float32, f32, float64, f64).
std::optional<Dtype> parse_dtype(std::string_view s);
std::string dtype_choices();  // "int32, float, double" for error messages

}  // namespace reducelab
