#include "core/sizes.hpp"

#include <bit>
#include <cmath>
#include <stdexcept>

#include "fmt/format.h"
#include "core/usage_error.hpp"

namespace rl::core {

namespace {

// The digits of s[from, to) as a number; throws when they are not all digits or overflow.
unsigned long long digits(const std::string& s, std::size_t from, std::size_t to, std::size_t* end = nullptr) {
  if (from >= to || !std::isdigit(static_cast<unsigned char>(s[from]))) throw std::invalid_argument("digits");
  std::size_t pos = 0;
  const unsigned long long v = std::stoull(s.substr(from, to - from), &pos);
  if (end) *end = from + pos;
  else if (from + pos != to) throw std::invalid_argument("digits");
  return v;
}

}  // namespace

std::size_t parse_size(const std::string& flag, const std::string& s, const std::string& whole) {
  auto bad = [&] {
    return UsageError(fmt::format("{} {}: not a size; write e.g. 1000003, 2^24, 1<<24 or 16M (at most 2^62)", flag,
                                  whole.empty() ? s : whole));
  };
  try {
    if (auto caret = s.find('^'); caret != std::string::npos) {
      const auto base = digits(s, 0, caret), exp = digits(s, caret + 1, s.size());
      if (base != 2 || exp > 62) throw bad();
      return std::size_t(1) << exp;
    }
    if (auto shift = s.find("<<"); shift != std::string::npos) {
      const auto base = digits(s, 0, shift), exp = digits(s, shift + 2, s.size());
      if (exp > 62 || base > (kMaxSize >> exp)) throw bad();
      return static_cast<std::size_t>(base) << exp;
    }
    std::size_t end = 0;
    const auto v = digits(s, 0, s.size(), &end);
    const std::string suffix = s.substr(end);
    const int shift = suffix.empty() ? 0 : suffix == "k" || suffix == "K" ? 10 : suffix == "M" ? 20 : suffix == "G" ? 30 : -1;
    if (shift < 0 || v > (kMaxSize >> shift)) throw bad();
    return static_cast<std::size_t>(v) << shift;
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception&) {
  }
  throw bad();
}

std::string size_text(std::size_t n) {
  if (std::has_single_bit(n) && n >= 1024) return fmt::format("2^{}", std::countr_zero(n));
  return std::to_string(n);
}

std::string bytes_text(std::size_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.{}f} {}", v, v == std::floor(v) ? 0 : 1, units[u]);
}

}  // namespace rl::core
