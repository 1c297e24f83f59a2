// Boundary-check divergence, pinned for seed 003's cases. Each expected count is derived in the
// comments from the launch geometry, not taken from the seed's prose.
#include <gtest/gtest.h>

#include <stdexcept>

#include "analysis/divergence.hpp"

namespace {
using rl::analysis::boundary_divergence;

const rl::analysis::RegionCount* region(const rl::analysis::DivergenceReport& r, const char* name) {
  for (const auto& c : r.regions)
    if (c.region == name) return &c;
  return nullptr;
}

// 1003 elements, 64-thread blocks: 16 blocks of 2 warps. Blocks 0..14 are full. Block 15 holds
// elements 960..1002, 43 valid threads: its warp 0 (threads 0..31) is all valid, its warp 1
// (32..63) has 11 valid lanes and 21 invalid ones: the only divergent warp of 32.
TEST(BoundaryDivergence, Seed003OneDimensional) {
  const auto r = boundary_divergence({1003, 1}, {64, 1});
  EXPECT_EQ(r.grid.x, 16u);
  EXPECT_EQ(r.total_warps, 32u);
  EXPECT_EQ(r.divergent_warps, 1u);
  ASSERT_NE(region(r, "right edge"), nullptr);
  EXPECT_EQ(region(r, "right edge")->divergent_warps, 1u);
  EXPECT_EQ(region(r, "interior")->blocks, 15u);
}

// 62x76 picture, 16x16 blocks: grid 4x5 = 20 blocks of 8 warps (each warp is two 16-wide rows).
// 62 = 3*16 + 14: the right column of blocks has 14 valid columns, so every warp there has two
// invalid lanes per row: 4 right-edge blocks x 8 = 32 divergent. 76 = 4*16 + 12: bottom blocks
// have 12 valid rows = warps 0..5 whole, warps 6..7 wholly invalid: no divergence there. The
// corner block has both: warps 0..5 diverge (columns), 6..7 are idle: 6. Total 38 of 160.
TEST(BoundaryDivergence, Seed003Picture62x76) {
  const auto r = boundary_divergence({62, 76}, {16, 16});
  EXPECT_EQ(r.total_warps, 160u);
  EXPECT_EQ(r.divergent_warps, 38u);
  EXPECT_EQ(region(r, "interior")->divergent_warps, 0u);
  EXPECT_EQ(region(r, "right edge")->divergent_warps, 32u);
  EXPECT_EQ(region(r, "bottom edge")->divergent_warps, 0u);
  EXPECT_EQ(region(r, "bottom edge")->idle_warps, 3u * 2u);
  EXPECT_EQ(region(r, "corner")->divergent_warps, 6u);
}

// 200x150, 16x16 blocks: grid 13x10 = 130 blocks, 1040 warps. 200 = 12*16 + 8: 9 right-edge
// blocks with 8 valid columns, every warp divergent: 72. 150 = 9*16 + 6: bottom blocks have rows
// 0..5 = warps 0..2 valid, warps 3..7 idle: none divergent. Corner: warps 0..2 diverge. 75.
TEST(BoundaryDivergence, Seed003Picture200x150) {
  const auto r = boundary_divergence({200, 150}, {16, 16});
  EXPECT_EQ(r.total_warps, 1040u);
  EXPECT_EQ(r.divergent_warps, 75u);
  EXPECT_EQ(region(r, "right edge")->divergent_warps, 72u);
  EXPECT_EQ(region(r, "corner")->divergent_warps, 3u);
}

// A block narrower than a warp: 8x8 blocks put four rows in one warp. 10x10 extent, grid 2x2.
// Right-edge block (x 8..15, 2 valid columns; rows 0..7 valid): both warps mix valid and invalid
// lanes. Bottom-edge block (rows 8..15, 2 valid): warp 0 = rows 0..3, rows 0..1 valid -> divergent;
// warp 1 = rows 4..7 idle. Corner: warp 0 divergent, warp 1 idle. 2 + 1 + 1 = 4 of 8.
TEST(BoundaryDivergence, BlockNarrowerThanAWarp) {
  const auto r = boundary_divergence({10, 10}, {8, 8});
  EXPECT_EQ(r.total_warps, 8u);
  EXPECT_EQ(r.divergent_warps, 4u);
}

TEST(BoundaryDivergence, ExactFitHasNoDivergence) {
  const auto r = boundary_divergence({1024, 1024}, {32, 8});
  EXPECT_EQ(r.divergent_warps, 0u);
  ASSERT_EQ(r.regions.size(), 1u);
  EXPECT_EQ(r.regions[0].region, "interior");
}

TEST(BoundaryDivergence, RejectsZeroExtentAndOversizedBlock) {
  EXPECT_THROW(boundary_divergence({0, 5}, {16, 16}), std::invalid_argument);
  EXPECT_THROW(boundary_divergence({5, 5}, {64, 32}), std::invalid_argument);
  try {
    boundary_divergence({7, 0}, {16, 16});
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--extent 7x0"), std::string::npos);
  }
}
}  // namespace
