#pragma once
// The lab reads and prints sizes through core's parser (core/sizes.hpp), by their short names.
#include "core/sizes.hpp"

namespace rl::lab {
using core::bytes_text;
using core::kMaxSize;
using core::parse_size;
using core::size_text;
}  // namespace rl::lab
