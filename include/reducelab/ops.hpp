#pragma once
// Reduction operators: an associative, commutative combine with an identity (PMPP 10.1).
// Each op is a class template over its value type so that call sites convert their arguments
// (the SIMT backend hands kernels proxy references, which a deduced template would reject).
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "reducelab/config.hpp"

namespace reducelab {

enum class OpKind { sum, min, max };

inline constexpr OpKind kAllOps[] = {OpKind::sum, OpKind::min, OpKind::max};

constexpr std::string_view name(OpKind op) {
  switch (op) {
    case OpKind::sum: return "sum";
    case OpKind::min: return "min";
    case OpKind::max: return "max";
  }
  return "?";
}

std::optional<OpKind> parse_op(std::string_view s);
std::string op_choices();

template <class T>
struct Sum {
  using value_type = T;
  static constexpr OpKind kind = OpKind::sum;
  RL_HD_INLINE static constexpr T identity() { return T(0); }
  RL_HD_INLINE T operator()(T a, T b) const { return a + b; }
};

template <class T>
struct Min {
  using value_type = T;
  static constexpr OpKind kind = OpKind::min;
  RL_HD_INLINE static constexpr T identity() {
    return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::max();
  }
  RL_HD_INLINE T operator()(T a, T b) const { return b < a ? b : a; }
};

template <class T>
struct Max {
  using value_type = T;
  static constexpr OpKind kind = OpKind::max;
  RL_HD_INLINE static constexpr T identity() {
    return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::lowest();
  }
  RL_HD_INLINE T operator()(T a, T b) const { return b > a ? b : a; }
};

}  // namespace reducelab
