#pragma once
// Sizes as users type them and as the lab prints them; one parser for every flag that takes one
// (the lab's and `bench --gpus`). Errors are core::UsageError (core/usage_error.hpp).
#include <cstddef>
#include <string>

namespace rl::core {

// The largest size a flag takes: 2^62 elements (far beyond any memory, and n x 2 bytes still
// fits in 64 bits).
inline constexpr std::size_t kMaxSize = std::size_t(1) << 62;

// One size: 1000003, 2^24, 1<<24, 16M (k, M and G are binary: 2^10, 2^20, 2^30), at most 2^62.
// Throws UsageError "FLAG WHOLE: not a size; ..." where WHOLE is what the user typed (a range or
// a list the term came from; the term itself when `whole` is empty).
std::size_t parse_size(const std::string& flag, const std::string& term, const std::string& whole = {});

// 2^k for powers of two from 1024 up, the decimal digits otherwise.
std::string size_text(std::size_t n);
// 512 B, 4 KiB, 1.5 MiB, ...
std::string bytes_text(std::size_t bytes);

}  // namespace rl::core
