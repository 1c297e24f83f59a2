// The names users type for dtypes and ops, read from the tables of core/dtype.hpp and core/ops.hpp.
#include <algorithm>
#include <cctype>
#include <string>

#include "core/dtype.hpp"
#include "core/ops.hpp"

namespace rl::core {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Whether `word` is one of the space-separated words of `list`.
bool listed(std::string_view list, std::string_view word) {
  while (!list.empty()) {
    const auto space = list.find(' ');
    if (list.substr(0, space) == word) return true;
    if (space == std::string_view::npos) break;
    list.remove_prefix(space + 1);
  }
  return false;
}

template <class Row, class Keep>
std::string choices(const Row& rows, Keep keep) {
  std::string out;
  for (const auto& row : rows)
    if (keep(row)) out += (out.empty() ? "" : ", ") + std::string(row.name);
  return out;
}

}  // namespace

std::optional<Dtype> parse_dtype(std::string_view typed, bool gallery_only) {
  const std::string v = lower(typed);
  for (const auto& row : kDtypes)
    if ((!gallery_only || row.gallery) && (v == row.name || listed(row.aliases, v))) return row.id;
  return std::nullopt;
}

std::string dtype_choices(bool gallery_only) {
  return choices(kDtypes, [&](const DtypeInfo& row) { return !gallery_only || row.gallery; });
}

std::optional<Dtype> dtype_of_numpy(std::string_view code) {
  for (const auto& row : kDtypes)
    if (!row.numpy.empty() && row.numpy == code) return row.id;
  return std::nullopt;
}

std::optional<OpKind> parse_op(std::string_view typed, bool lab_only) {
  const std::string v = lower(typed);
  for (const auto& row : kOps)
    if ((!lab_only || row.lab) && v == row.name) return row.id;
  return std::nullopt;
}

std::string op_choices(bool lab_only) {
  return choices(kOps, [&](const OpInfo& row) { return !lab_only || row.lab; });
}

}  // namespace rl::core
