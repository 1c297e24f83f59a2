#pragma once
#include <stdexcept>

namespace rl::core {
// Bad input from the user: the CLI prints the one-line message and exits with status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
}  // namespace rl::core
