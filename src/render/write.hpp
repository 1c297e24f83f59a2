#pragma once
// Writing what render/ produced: whole files or nothing.
#include <string>

namespace rl::render {

// Throws lab::UsageError naming `flag` and the path when it cannot be created (missing folder,
// no permission), without leaving a file behind.
void check_writable(const std::string& path, const std::string& flag);
// Writes `text` to a temporary file beside `path` and renames it into place, so a reader never
// sees half a file. Throws lab::UsageError naming `flag` and the path on failure.
void write_file(const std::string& path, const std::string& text, const std::string& flag);

}  // namespace rl::render
