#pragma once
// Control divergence from boundary checks (seed 003, PMPP 4.5): a launch whose threads test
// `x < width && y < height` before working. A warp diverges when some of its lanes pass the test
// and some fail. Counted exactly, per region of the grid, without running anything: every block
// of a region has the same pattern of valid threads, so one block per region is enumerated.
#include <cstdint>
#include <string>
#include <vector>

namespace rl::analysis {

struct Extent2 {
  std::uint64_t x = 1, y = 1;
};

struct RegionCount {
  std::string region;             // interior, right edge, bottom edge, corner
  std::uint64_t blocks = 0;
  std::uint64_t warps = 0;        // warps in those blocks
  std::uint64_t divergent_warps = 0;
  std::uint64_t idle_warps = 0;   // every lane fails the test: no divergence, no work
};

struct DivergenceReport {
  Extent2 extent, block, grid;
  unsigned warps_per_block = 0;
  std::uint64_t total_warps = 0;
  std::uint64_t divergent_warps = 0;
  std::vector<RegionCount> regions;  // only the regions the grid has
};

// Throws std::invalid_argument naming the bad value (an extent or block of 0, a block of more
// than 1024 threads).
DivergenceReport boundary_divergence(Extent2 extent, Extent2 block, unsigned warp_size = 32);

}  // namespace rl::analysis
