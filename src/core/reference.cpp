#include "core/reference.hpp"

#include <bit>
#include <cmath>

namespace rl::core {

long long recursive_reduce(std::span<long long> data) {
  std::size_t size = data.size();
  if (size == 0) return 0;
  while (size > 1) {
    const std::size_t upper = (size + 1) / 2;  // the odd element, if any, stays at upper-1
    for (std::size_t i = 0; i < size / 2; ++i) data[i] += data[i + upper];
    size = upper;
  }
  return data[0];
}

long long adjacent_pair_reduce(std::span<const long long> data) {
  if (data.empty()) return 0;
  std::vector<long long> level(data.begin(), data.end());
  while (level.size() > 1) {
    std::vector<long long> next((level.size() + 1) / 2);
    for (std::size_t i = 0; i < level.size() / 2; ++i) next[i] = level[2 * i] + level[2 * i + 1];
    if (level.size() % 2) next.back() = level.back();
    level.swap(next);
  }
  return level[0];
}

namespace {

template <class T>
ExactSum exact_sum_of(std::span<const T> x) {
  Exact<T> e;
  e.add(x);
  ExactSum r;
  r.integer = e.integer;
  r.real = e.value();
  r.abs_sum = e.abs_sum;
  return r;
}

}  // namespace

ExactSum exact_sum(std::span<const int> x) { return exact_sum_of(x); }
ExactSum exact_sum(std::span<const float> x) { return exact_sum_of(x); }
ExactSum exact_sum(std::span<const double> x) { return exact_sum_of(x); }

std::size_t tree_depth(std::size_t n) {
  return n <= 1 ? 0 : static_cast<std::size_t>(std::bit_width(n - 1));
}

double float_tolerance(std::size_t n, long double abs_sum, double unit_roundoff) {
  const double depth = 2.0 * static_cast<double>(tree_depth(n)) + 64.0 + std::ceil(std::sqrt(static_cast<double>(n)));
  return depth * unit_roundoff * static_cast<double>(abs_sum);
}

}  // namespace rl::core
