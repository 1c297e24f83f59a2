// Parsing the names users type for dtypes and ops.
#include <algorithm>
#include <cctype>
#include <string>

#include "reducelab/dtype.hpp"
#include "reducelab/ops.hpp"

namespace reducelab {
namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}
}  // namespace

std::optional<Dtype> parse_dtype(std::string_view s) {
  const std::string v = lower(s);
  if (v == "int32" || v == "int" || v == "i32") return Dtype::int32;
  if (v == "float" || v == "float32" || v == "f32") return Dtype::float32;
  if (v == "double" || v == "float64" || v == "f64") return Dtype::float64;
  return std::nullopt;
}

std::string dtype_choices() {
  std::string out;
  for (Dtype d : kAllDtypes) out += (out.empty() ? "" : ", ") + std::string(name(d));
  return out;
}

std::optional<OpKind> parse_op(std::string_view s) {
  const std::string v = lower(s);
  for (OpKind op : kAllOps)
    if (v == name(op)) return op;
  return std::nullopt;
}

std::string op_choices() {
  std::string out;
  for (OpKind op : kAllOps) out += (out.empty() ? "" : ", ") + std::string(name(op));
  return out;
}

}  // namespace reducelab
