#pragma once
// The lab reads flags through core's parsers (core/flags.hpp), by their short names.
#include "core/flags.hpp"

namespace rl::lab {
using core::count_flag;
using core::dtype_flag;
using core::dtype_list_flag;
using core::op_flag;
using core::op_list_flag;
using core::Rows;
using core::split_list;
}  // namespace rl::lab
