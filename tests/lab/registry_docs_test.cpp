// README, docs and `reducelab list` are read from the registry or checked against it: a kernel
// added, renamed or removed in one place and not the others fails here.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "gallery/registry.hpp"
#include "lab/report.hpp"

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Rows of the table between <!-- gallery:begin --> and <!-- gallery:end -->: `id` | `name` | ...
std::vector<std::pair<std::string, std::string>> gallery_rows(const std::string& text) {
  const auto begin = text.find("<!-- gallery:begin -->"), end = text.find("<!-- gallery:end -->");
  std::vector<std::pair<std::string, std::string>> rows;
  if (begin == std::string::npos || end == std::string::npos) return rows;
  const std::string table = text.substr(begin, end - begin);
  const std::regex row(R"(\|\s*`([a-z0-9-]+)`\s*\|\s*`([A-Za-z0-9_<>:]+)`)");
  for (auto it = std::sregex_iterator(table.begin(), table.end(), row); it != std::sregex_iterator(); ++it)
    rows.emplace_back((*it)[1], (*it)[2]);
  return rows;
}

// The source tree whose docs to read, wherever this binary runs: $REDUCELAB_SOURCE_DIR, the tree
// it was built from, or a folder above the working directory or above the binary that holds
// README.md and docs/gallery.md. Empty when none is found (a binary copied to another machine).
std::filesystem::path source_dir() {
  namespace fs = std::filesystem;
  auto holds_docs = [](const fs::path& d) {
    std::error_code ec;
    return !d.empty() && fs::is_regular_file(d / "README.md", ec) && fs::is_regular_file(d / "docs" / "gallery.md", ec);
  };
  if (const char* env = std::getenv("REDUCELAB_SOURCE_DIR"); env && *env) return holds_docs(env) ? fs::path(env) : fs::path();
  if (holds_docs(RL_SOURCE_DIR)) return RL_SOURCE_DIR;
  std::error_code ec;
  for (const fs::path& start : {fs::current_path(ec), fs::read_symlink("/proc/self/exe", ec).parent_path()})
    for (fs::path d = start; !d.empty(); d = d.parent_path()) {
      if (holds_docs(d)) return d;
      if (d == d.parent_path()) break;
    }
  return {};
}

void expect_matches_registry(const std::string& file) {
  const auto dir = source_dir();
  if (dir.empty())
    GTEST_SKIP() << "no source tree with " << file << " found (set REDUCELAB_SOURCE_DIR to the reducelab checkout; "
                 << "looked in " << RL_SOURCE_DIR << ", above the working directory and above this binary)";
  const auto rows = gallery_rows(slurp((dir / file).string()));
  ASSERT_FALSE(rows.empty()) << file << " has no gallery table between the markers";
  const auto& reg = rl::gallery::registry();
  ASSERT_EQ(rows.size(), reg.size()) << file << " lists a different number of kernels than the registry";
  for (std::size_t i = 0; i < reg.size(); ++i) {
    EXPECT_EQ(rows[i].first, reg[i].id) << file << " row " << i;
    EXPECT_EQ(rows[i].second, reg[i].name) << file << " row " << i;
  }
}

TEST(RegistryDocs, ReadmeTableMatchesRegistry) { expect_matches_registry("README.md"); }
TEST(RegistryDocs, GalleryDocMatchesRegistry) { expect_matches_registry("docs/gallery.md"); }

// The text between the markers is exactly `reducelab list --format markdown`: regenerate it with
//   scripts/gallery-table
std::string between_markers(const std::string& text) {
  const std::string begin = "<!-- gallery:begin -->\n", end = "<!-- gallery:end -->";
  const auto b = text.find(begin), e = text.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b) return {};
  return text.substr(b + begin.size(), e - b - begin.size());
}
TEST(RegistryDocs, ReadmeTableIsGenerated) {
  EXPECT_EQ(between_markers(slurp(std::string(RL_SOURCE_DIR) + "/README.md")), rl::lab::gallery_markdown())
      << "README.md's gallery table differs from `reducelab list --format markdown`; run scripts/gallery-table";
}
TEST(RegistryDocs, GalleryDocTableIsGenerated) {
  EXPECT_EQ(between_markers(slurp(std::string(RL_SOURCE_DIR) + "/docs/gallery.md")), rl::lab::gallery_markdown())
      << "docs/gallery.md's gallery table differs from `reducelab list --format markdown`; run scripts/gallery-table";
}

TEST(RegistryDocs, ListJsonHasEveryEntry) {
  const auto j = rl::lab::registry_json(rl::lab::open_simt_device()->info());
  EXPECT_EQ(j["command"], "list");
  EXPECT_EQ(j["device"]["backend"], "simt");
  ASSERT_EQ(j["kernels"].size(), rl::gallery::registry().size());
  std::set<std::string> ids;
  for (const auto& k : j["kernels"]) ids.insert(k["id"].get<std::string>());
  EXPECT_EQ(ids.size(), rl::gallery::registry().size()) << "duplicate ids";
}

TEST(Registry, EveryEntryIsComplete) {
  for (const auto& e : rl::gallery::registry()) {
    EXPECT_FALSE(e.name.empty()) << e.id;
    EXPECT_FALSE(e.seed.empty()) << e.id;
    EXPECT_FALSE(e.technique.empty()) << e.id;
    EXPECT_FALSE(e.still_slow.empty()) << e.id;
    EXPECT_FALSE(e.final_pass.empty()) << e.id;
    EXPECT_NE(e.bytes_read, nullptr) << e.id;
    EXPECT_EQ(rl::gallery::find(e.id), &e);
    if (e.constraints.gpu_only) {
      EXPECT_FALSE(e.constraints.gpu_only_reason.empty()) << e.id;
    } else {
      EXPECT_NE(rl::gallery::launcher(e, rl::gallery::Backend::simt), nullptr) << e.id << " has no SIMT launcher";
    }
#if RL_WITH_CUDA
    EXPECT_NE(rl::gallery::launcher(e, rl::gallery::Backend::cuda), nullptr) << e.id << " has no CUDA launcher";
#endif
  }
}

}  // namespace
