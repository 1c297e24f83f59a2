#pragma once
#include "core/usage_error.hpp"

namespace rl::lab {
// Bad input from the user (core/usage_error.hpp): the CLI prints the one-line message and exits
// with status 2.
using UsageError = core::UsageError;
}  // namespace rl::lab
