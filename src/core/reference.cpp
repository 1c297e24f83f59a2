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

ExactSum exact_sum(std::span<const int> x) {
  ExactSum r;
  for (int v : x) {
    r.integer += v;
    r.abs_sum += std::fabs(static_cast<long double>(v));
  }
  r.real = static_cast<long double>(r.integer);
  return r;
}

namespace {
template <class T>
ExactSum neumaier(std::span<const T> x) {
  long double sum = 0, compensation = 0, abs_sum = 0;
  for (T v : x) {
    const long double y = v;
    const long double t = sum + y;
    if (std::fabs(sum) >= std::fabs(y))
      compensation += (sum - t) + y;
    else
      compensation += (y - t) + sum;
    sum = t;
    abs_sum += std::fabs(y);
  }
  ExactSum r;
  r.real = sum + compensation;
  r.abs_sum = abs_sum;
  return r;
}
}  // namespace

ExactSum exact_sum(std::span<const float> x) { return neumaier(x); }
ExactSum exact_sum(std::span<const double> x) { return neumaier(x); }

std::size_t tree_depth(std::size_t n) {
  return n <= 1 ? 0 : static_cast<std::size_t>(std::bit_width(n - 1));
}

double float_tolerance(std::size_t n, long double abs_sum, double unit_roundoff) {
  const double depth = 2.0 * static_cast<double>(tree_depth(n)) + 64.0 + std::ceil(std::sqrt(static_cast<double>(n)));
  return depth * unit_roundoff * static_cast<double>(abs_sum);
}

}  // namespace rl::core
