// Seed 002's demos on the SIMT backend. Sizes are small multiples of the block so that every
// warp is whole; the expected counts are derived from the kernels' indexing in the comments.
#include <gtest/gtest.h>

#include "lab/demos.hpp"
#include "lab/errors.hpp"

namespace {
using namespace rl;

const lab::DemoRow& row(const lab::DemoReport& r, const std::string& id) {
  for (const auto& x : r.rows)
    if (x.id == id) return x;
  throw std::runtime_error("no demo row " + id);
}

lab::DemoReport small_demos() {
  lab::DemoOptions o;
  o.math_n_simt = 4096;  // block 64: 64 blocks of 2 warps = 128 warps
  o.matrix_simt = 64;    // 64 x 64 floats: rows of 256 bytes
  return lab::run_demos(o, nullptr);
}

// mathKernel1 branches on tid % 2: in every warp lanes 0, 2, .. 30 take the if-side and the other
// 16 lanes the else-side, so each of the 128 warps runs both bodies with 16 lanes: 256 body
// executions, 128 divergent warps, 4096 active lanes / (256 x 32) slots = 0.5. mathKernel2
// branches on (tid / 32) % 2: a warp's 32 lanes share tid / 32, so warps 0, 2, 4, .. run the
// if-side whole and the others the else-side: 128 executions, none divergent, utilization 1.
// The branch-free select runs one body in every warp with every lane: the same as mathKernel2.
TEST(Demos, MathKernelsDivergeOnlyOnLaneParity) {
  const auto r = small_demos();
  EXPECT_FALSE(r.timed);
  const auto& k1 = row(r, "lane-parity");
  EXPECT_TRUE(k1.counts_ok);
  EXPECT_EQ(k1.warps, 128u);
  EXPECT_EQ(k1.body_warp_executions, 256u);
  EXPECT_EQ(k1.divergent_warps, 128u);
  EXPECT_DOUBLE_EQ(k1.lane_utilization, 0.5);
  for (const char* id : {"warp-parity", "select"}) {
    const auto& k = row(r, id);
    EXPECT_TRUE(k.counts_ok) << id;
    EXPECT_EQ(k.body_warp_executions, 128u) << id;
    EXPECT_EQ(k.divergent_warps, 0u) << id;
    EXPECT_DOUBLE_EQ(k.lane_utilization, 1.0) << id;
    EXPECT_EQ(k.load_accesses, 0u) << id;
  }
}

// sumMatrixOnGPU2D over 64 x 64 floats, two loads (A[idx], B[idx]) per thread; 4096 threads in
// 128 warps for every shape. A block 32 wide puts a warp on 32 consecutive floats of one row:
// 128 bytes starting at a multiple of 128 (row starts are multiples of 256 bytes, block columns
// of 128), so one line and 4 sectors per access: 256 accesses, 256 requests, 1024 sectors, and
// every byte moved is used (100% in sectors and in lines). A block 16 wide puts a warp on two
// rows, 16 floats (64 bytes, aligned to 64) in each: two lines of 2 sectors each per access, so
// 512 requests and 1024 sectors: still 100% of the sector bytes used, but only 128 of the 256
// bytes of the two lines: 50%, the figure nvprof's gld_efficiency showed on the seed's Fermi-era
// GPU, where a load moved whole 128-byte lines. The y extent changes nothing per warp.
TEST(Demos, HalfWarpWideBlocksTouchTwiceTheLines) {
  const auto r = small_demos();
  for (const char* id : {"matrix-32x32", "matrix-32x16"}) {
    const auto& m = row(r, id);
    EXPECT_TRUE(m.counts_ok) << id;
    EXPECT_EQ(m.warps, 128u) << id;
    EXPECT_EQ(m.divergent_warps, 0u) << id;
    EXPECT_EQ(m.load_accesses, 256u) << id;
    EXPECT_EQ(m.load_requests, 256u) << id;
    EXPECT_EQ(m.load_sectors, 1024u) << id;
    EXPECT_DOUBLE_EQ(m.sectors_per_request, 4.0) << id;
    EXPECT_DOUBLE_EQ(m.load_efficiency, 1.0) << id;
    EXPECT_DOUBLE_EQ(m.line_efficiency, 1.0) << id;
  }
  for (const char* id : {"matrix-16x32", "matrix-16x16"}) {
    const auto& m = row(r, id);
    EXPECT_TRUE(m.counts_ok) << id;
    EXPECT_EQ(m.warps, 128u) << id;
    EXPECT_EQ(m.load_accesses, 256u) << id;
    EXPECT_EQ(m.load_requests, 512u) << id;
    EXPECT_EQ(m.load_sectors, 1024u) << id;
    EXPECT_DOUBLE_EQ(m.requests_per_access, 2.0) << id;
    EXPECT_DOUBLE_EQ(m.sectors_per_request, 2.0) << id;
    EXPECT_DOUBLE_EQ(m.load_efficiency, 1.0) << id;
    EXPECT_DOUBLE_EQ(m.line_efficiency, 0.5) << id;
  }
}

TEST(Demos, BadOptionsAreUsageErrors) {
  lab::DemoOptions o;
  o.repeats = 0;
  EXPECT_THROW(lab::run_demos(o, nullptr), lab::UsageError);
}

}  // namespace
