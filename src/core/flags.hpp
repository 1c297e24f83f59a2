#pragma once
// Element types, operations and lists as flags name them, read through the tables of
// core/dtype.hpp and core/ops.hpp: one parser for every command (the lab's and `bench --gpus`).
// A name that is not in the table (or not in the subset the command takes) is a UsageError
// (core/usage_error.hpp) "FLAG VALUE: unknown dtype; choose ...".
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/ops.hpp"

namespace rl::core {

// Which rows a flag takes: every row, or the gallery's dtypes and the lab's ops.
enum class Rows { all, lab };

// The non-empty items of a comma-separated list ("a,,b" -> a, b).
std::vector<std::string> split_list(const std::string& text, char sep = ',');

Dtype dtype_flag(const std::string& flag, const std::string& typed, Rows rows);
OpKind op_flag(const std::string& flag, const std::string& typed, Rows rows);
// A comma-separated list, each named once (a repeat is dropped); an empty list is refused.
std::vector<Dtype> dtype_list_flag(const std::string& flag, const std::string& text, Rows rows);
std::vector<OpKind> op_list_flag(const std::string& flag, const std::string& text, Rows rows);

// A whole number lo..hi; otherwise UsageError "FLAG TEXT: give LO..HI WHAT".
int count_flag(const std::string& flag, const std::string& text, int lo, int hi, const std::string& what);

}  // namespace rl::core
