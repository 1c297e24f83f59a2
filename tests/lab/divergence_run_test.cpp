// The closed-form boundary divergence (analysis/divergence.hpp) and the count from executing
// boundaryCheck2D on the SIMT backend with a probe must agree, for seed 003's cases and for a
// sweep of extents and block shapes (blocks narrower than a warp, partial last warps...).
#include <gtest/gtest.h>

#include "analysis/divergence.hpp"
#include "lab/divergence_run.hpp"

namespace {
using rl::analysis::Extent2;

void expect_agreement(Extent2 extent, Extent2 block) {
  const auto computed = rl::analysis::boundary_divergence(extent, block);
  const auto executed = rl::lab::executed_boundary_divergence(extent, block);
  ASSERT_TRUE(executed.has_value());
  EXPECT_EQ(*executed, computed.divergent_warps)
      << "extent " << extent.x << "x" << extent.y << " block " << block.x << "x" << block.y;
}

TEST(BoundaryDivergenceExecuted, Seed003Cases) {
  expect_agreement({1003, 1}, {64, 1});
  expect_agreement({62, 76}, {16, 16});
  expect_agreement({200, 150}, {16, 16});
}

TEST(BoundaryDivergenceExecuted, SweepOfShapes) {
  const Extent2 blocks[] = {{32, 1}, {16, 16}, {8, 8}, {24, 5}, {7, 9}, {32, 32}, {100, 3}};
  const Extent2 extents[] = {{1, 1}, {33, 1}, {31, 17}, {65, 40}, {129, 3}};
  for (const auto& b : blocks)
    for (const auto& e : extents) expect_agreement(e, b);
}

TEST(BoundaryDivergenceExecuted, TooLargeIsNotExecuted) {
  EXPECT_FALSE(rl::lab::executed_boundary_divergence({1 << 13, 1 << 12}, {16, 16}).has_value());
}
}  // namespace
