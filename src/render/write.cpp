#include "render/write.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "fmt/format.h"
#include "lab/errors.hpp"

namespace rl::render {

void check_writable(const std::string& path, const std::string& flag) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) throw lab::UsageError(fmt::format("{} {}: is a folder; name a file", flag, path));
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) throw lab::UsageError(fmt::format("{} {}: no folder {}", flag, path, dir.string()));
  const fs::path probe = dir / fmt::format(".{}.probe", p.filename().string());
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  if (!f) throw lab::UsageError(fmt::format("{} {}: cannot write there ({})", flag, path, std::strerror(errno)));
  std::fclose(f);
  fs::remove(probe, ec);
}

void write_file(const std::string& path, const std::string& text, const std::string& flag) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const fs::path tmp = (p.has_parent_path() ? p.parent_path() : fs::path(".")) / fmt::format(".{}.tmp", p.filename().string());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw lab::UsageError(fmt::format("{} {}: cannot write it", flag, path));
    }
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw lab::UsageError(fmt::format("{} {}: cannot write it ({})", flag, path, ec.message()));
  }
}

}  // namespace rl::render
