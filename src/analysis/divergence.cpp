#include "analysis/divergence.hpp"

#include <stdexcept>

namespace rl::analysis {
namespace {

// Warps of one block whose valid threads are those with x < valid_x and y < valid_y. Threads
// are numbered x-fastest (threadIdx.x + threadIdx.y * blockDim.x) and cut into warps of
// warp_size consecutive threads, the last warp possibly partial, as the hardware does.
void count_block(Extent2 block, std::uint64_t valid_x, std::uint64_t valid_y, unsigned warp_size,
                 std::uint64_t& divergent, std::uint64_t& idle) {
  const std::uint64_t threads = block.x * block.y;
  divergent = idle = 0;
  for (std::uint64_t first = 0; first < threads; first += warp_size) {
    const std::uint64_t last = std::min(threads, first + warp_size);
    bool any_in = false, any_out = false;
    for (std::uint64_t t = first; t < last; ++t) {
      const bool in = t % block.x < valid_x && t / block.x < valid_y;
      (in ? any_in : any_out) = true;
    }
    if (any_in && any_out) ++divergent;
    if (!any_in) ++idle;
  }
}

}  // namespace

DivergenceReport boundary_divergence(Extent2 extent, Extent2 block, unsigned warp_size) {
  if (extent.x == 0 || extent.y == 0)
    throw std::invalid_argument("--extent " + std::to_string(extent.x) + "x" + std::to_string(extent.y) +
                                ": both dimensions must be at least 1");
  if (block.x == 0 || block.y == 0 || block.x * block.y > 1024)
    throw std::invalid_argument("--block " + std::to_string(block.x) + "x" + std::to_string(block.y) +
                                ": a block has 1..1024 threads");
  DivergenceReport r;
  r.extent = extent;
  r.block = block;
  r.grid = {(extent.x + block.x - 1) / block.x, (extent.y + block.y - 1) / block.y};
  r.warps_per_block = static_cast<unsigned>((block.x * block.y + warp_size - 1) / warp_size);

  // The last column and row of blocks hold the remainders; everything else is full.
  const std::uint64_t rem_x = extent.x - (r.grid.x - 1) * block.x;  // 1..block.x
  const std::uint64_t rem_y = extent.y - (r.grid.y - 1) * block.y;
  const bool partial_x = rem_x < block.x, partial_y = rem_y < block.y;
  struct Class {
    const char* name;
    std::uint64_t blocks, valid_x, valid_y;
  };
  // A grid one block wide whose only column is partial is all "right edge" (and corner).
  const std::uint64_t full_cols = partial_x ? r.grid.x - 1 : r.grid.x;
  const std::uint64_t full_rows = partial_y ? r.grid.y - 1 : r.grid.y;
  const Class classes[] = {
      {"interior", full_cols * full_rows, block.x, block.y},
      {"right edge", partial_x ? full_rows : 0, rem_x, block.y},
      {"bottom edge", partial_y ? full_cols : 0, block.x, rem_y},
      {"corner", std::uint64_t{partial_x && partial_y}, rem_x, rem_y},
  };
  for (const Class& c : classes) {
    if (c.blocks == 0) continue;
    std::uint64_t divergent = 0, idle = 0;
    count_block(block, c.valid_x, c.valid_y, warp_size, divergent, idle);
    RegionCount rc{c.name, c.blocks, c.blocks * r.warps_per_block, c.blocks * divergent, c.blocks * idle};
    r.total_warps += rc.warps;
    r.divergent_warps += rc.divergent_warps;
    r.regions.push_back(rc);
  }
  return r;
}

}  // namespace rl::analysis
