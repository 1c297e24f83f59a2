#include "core/flags.hpp"

#include <algorithm>
#include <sstream>

#include "fmt/format.h"
#include "core/usage_error.hpp"

namespace rl::core {

std::vector<std::string> split_list(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

Dtype dtype_flag(const std::string& flag, const std::string& typed, Rows rows) {
  if (auto d = parse_dtype(typed, rows == Rows::lab)) return *d;
  throw UsageError(fmt::format("{} {}: unknown dtype; choose {}", flag, typed, dtype_choices(rows == Rows::lab)));
}

OpKind op_flag(const std::string& flag, const std::string& typed, Rows rows) {
  if (auto o = parse_op(typed, rows == Rows::lab)) return *o;
  throw UsageError(fmt::format("{} {}: unknown op; choose {}", flag, typed, op_choices(rows == Rows::lab)));
}

namespace {
template <class Parse>
auto list_flag(const std::string& flag, const std::string& text, const char* what, Parse parse) {
  std::vector<decltype(parse(std::string()))> out;
  for (const auto& item : split_list(text)) {
    const auto v = parse(item);
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  if (out.empty()) throw UsageError(fmt::format("{} {}: no {} given", flag, text, what));
  return out;
}
}  // namespace

std::vector<Dtype> dtype_list_flag(const std::string& flag, const std::string& text, Rows rows) {
  return list_flag(flag, text, "dtype", [&](const std::string& s) { return dtype_flag(flag, s, rows); });
}

std::vector<OpKind> op_list_flag(const std::string& flag, const std::string& text, Rows rows) {
  return list_flag(flag, text, "op", [&](const std::string& s) { return op_flag(flag, s, rows); });
}

int count_flag(const std::string& flag, const std::string& text, int lo, int hi, const std::string& what) {
  std::size_t pos = 0;
  long v = 0;
  try {
    v = std::stol(text, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (pos == 0 || pos != text.size() || v < lo || v > hi)
    throw UsageError(fmt::format("{} {}: give {}..{} {}", flag, text, lo, hi, what));
  return static_cast<int>(v);
}

}  // namespace rl::core
