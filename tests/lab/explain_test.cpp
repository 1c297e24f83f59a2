// Exact counts for the seeds' cases, executed on the SIMT backend. Each expectation is derived
// in the comments from the kernel's indexing, not copied from the seeds' prose; where the seed's
// hand derivation differs, the comment says where.
#include <gtest/gtest.h>

#include "lab/errors.hpp"
#include "lab/explain.hpp"

namespace {
using namespace rl;

lab::ExplainReport explain(const char* id, std::size_t n, unsigned block,
                           rl::core::Dtype dtype = rl::core::Dtype::float32) {  // 4-byte elements, as the seeds count
  lab::Plan p;
  p.kernels = {gallery::find(id)};
  p.n = n;
  p.block = block;
  p.dtype = dtype;
  auto r = lab::explain(p);
  EXPECT_EQ(r.row.status, "ok") << id;
  EXPECT_TRUE(r.probed) << id;
  return r;
}

// PMPP 10.3, N = 256: one block of 128 threads (4 warps), thread t owns element 2t, strides
// 1, 2, ..., 128. At stride s the threads with t % s == 0 work: 128/s of them. For s <= 32 every
// warp still holds one such thread (t = 32w is a multiple of s), so all 4 warps run: 6 steps
// x 4 warps; then s = 64 (t = 0, 64: 2 warps) and s = 128 (1 warp). Active threads 255 = N - 1;
// warp executions 24 + 2 + 1 = 27; lane slots 27 x 32 = 864; utilization 255/864 = 0.295.
// PMPP counts every warp active for the first *five* steps only and gets 23 warps, 736 slots,
// 0.35: its own memory-request formula (below) counts the sixth step with all warps, as here.
TEST(ExplainSeed004, SimpleKernelUtilizationAt256) {
  const auto r = explain("pmpp-simple", 256, 128);
  ASSERT_EQ(r.counts.steps.size(), 8u);
  EXPECT_EQ(r.counts.totals.active_threads, 255u);
  EXPECT_EQ(r.counts.totals.active_warps, 27u);
  EXPECT_EQ(r.counts.totals.lane_slots, 864u);
  EXPECT_NEAR(r.counts.totals.simd_utilization, 255.0 / 864.0, 1e-12);
  EXPECT_EQ(r.counts.steps[5].step, 32u);  // the sixth step: still 4 warps of 1 lane
  EXPECT_EQ(r.counts.steps[5].active_warps, 4u);
  EXPECT_EQ(r.counts.steps[5].divergent_warps, 4u);
}

// PMPP 10.4, N = 256: strides 128, 64, ..., 1, threads t < s work. s = 128, 64, 32 fill 4, 2,
// 1 whole warps; s = 16 .. 1 run one warp partly (5 steps). Warp executions 4+2+1+5 = 12,
// lane slots 384, utilization 255/384 = 0.664 (PMPP: 0.66). Divergent: only the last 5.
TEST(ExplainSeed004, ConvergentKernelUtilizationAt256) {
  const auto r = explain("pmpp-convergent", 256, 128);
  EXPECT_EQ(r.counts.totals.active_threads, 255u);
  EXPECT_EQ(r.counts.totals.active_warps, 12u);
  EXPECT_EQ(r.counts.totals.lane_slots, 384u);
  EXPECT_EQ(r.counts.totals.divergent_warps, 5u);
}

// PMPP 10.5, N = 2048 (block 1024, 32 warps), requests = distinct 128-byte lines per warp
// access; each working thread reads in[i], in[i+s] and writes in[i]: 3 accesses.
// Simple: for s = 1..16 a warp's working lanes touch elements 2t (+s) of a 64-element (256 B)
// span: 2 lines per access, 6 per warp, 32 warps: 5 x 192. For s = 32 one lane per warp: 3
// requests x 32 warps = 96; then 48, 24, 12, 6, 3. Total 960 + 189 = 1149 (PMPP: 1149).
// Convergent: s = 1024 .. 32 run 32, 16, .., 1 full warps, each access one line: 3 x 63 = 189;
// s = 16 .. 1 one partial warp whose elements t and t+s lie in the first line: 5 x 3 = 15.
// Total 204 (PMPP: 204).
TEST(ExplainSeed004, MemoryRequestsAt2048) {
  EXPECT_EQ(explain("pmpp-simple", 2048, 1024).counts.totals.global_requests, 1149u);
  EXPECT_EQ(explain("pmpp-convergent", 2048, 1024).counts.totals.global_requests, 204u);
}

// Seed 001, block 512, 4-byte words. BC_addKernel: at step i lane k of warp 0 reads word
// 2*i*k. While all 32 lanes work (i <= 8, index < 512), the 32 addresses are 2i words apart and
// fall into 32/(2i) banks, 2i words each: 2-, 4-, 8-, 16-way. At i = 16 only lanes 0..15 work
// (index = 32k < 512), all in bank 0: 16-way. NBC_addKernel2: lane k reads word k (+i): 32
// consecutive words, one per bank, at every step: 1-way.
TEST(ExplainSeed001, BankConflicts) {
  const auto bc = explain("bc-add", 512, 512);
  const unsigned want_ways[] = {2, 4, 8, 16, 16, 8, 4, 2, 1};
  ASSERT_EQ(bc.counts.steps.size(), 9u);
  for (std::size_t k = 0; k < 9; ++k) EXPECT_EQ(bc.counts.steps[k].bank_conflict_ways, want_ways[k]) << "step " << k;
  const auto nbc = explain("nbc-add", 512, 512);
  EXPECT_EQ(nbc.counts.totals.bank_conflict_ways, 1u);
}

// Seed 000, reduceNeighboredLess, block 512: at stride s the threads with 2*s*tid < 512 work,
// 256/s of them. Whole warps for s <= 8 (256, 128, 64, 32 threads: 8, 4, 2, 1 warps); the last
// five steps (16, 8, 4, 2, 1 threads) run one partly active warp: divergence in exactly those.
// reduceNeighbored instead keeps every warp busy while s < 32 (tid % 2s == 0 hits each warp).
TEST(ExplainSeed000, NeighboredLessDivergesOnlyInTheLastFiveSteps) {
  const auto less = explain("neighbored-less", 512, 512);
  ASSERT_EQ(less.counts.steps.size(), 9u);
  EXPECT_EQ(less.counts.totals.divergent_warps, 5u);
  EXPECT_EQ(less.counts.totals.active_warps, 8u + 4 + 2 + 1 + 5);
  const auto neighbored = explain("neighbored", 512, 512);
  EXPECT_EQ(neighbored.counts.steps[0].active_warps, 16u);   // s = 1: 256 threads, every warp
  EXPECT_EQ(neighbored.counts.steps[4].active_warps, 16u);   // s = 16: 16 threads, one per warp
  EXPECT_EQ(neighbored.counts.steps[4].divergent_warps, 16u);
  EXPECT_GT(neighbored.counts.totals.lane_slots, less.counts.totals.lane_slots);
}

TEST(Explain, KernelWithoutProbesSaysSoAndCudaOnlyIsRefused) {
  lab::Plan p;
  p.kernels = {gallery::find("nested")};  // its steps are grid launches, not probed lanes
  p.n = 4096;
  p.block = 256;
  const auto r = lab::explain(p);
  EXPECT_FALSE(r.probed);
  EXPECT_GT(r.counts.outside.global_accesses, 0u);
  p.kernels = {gallery::find("cub")};
  EXPECT_THROW(lab::explain(p), lab::UsageError);
}

// Professional CUDA C 3.5.2, reduceUnrollWarps8 at n = 4096, block 256: a block covers 8 x 256
// elements, so 2 blocks. The tree runs strides 128 and 64 (threads tid < s: 4 and 2 whole warps
// per block), then warp 0 finishes with strides 32 .. 1 and ALL 32 lanes work at each of those
// six steps (tid + s < 256 holds for every tid < 32): no divergence anywhere. Active threads
// 2 x (128 + 64 + 6 x 32) = 768, warp executions 2 x (4 + 2 + 6) = 24, utilization 1. Of the 192
// lane slots per block in the warp steps only 32 + 16 + ... + 1 = 63 add something the result
// needs: the unrolled warp trades divergence for redundant lanes. The complete unroll (3.5.4)
// executes exactly the same lanes, its steps written out instead of looped.
TEST(ExplainUnrolling, LastWarpHasNoDivergenceButRedundantLanes) {
  for (const char* id : {"unroll-warps8", "complete-unroll-warps8", "complete-unroll"}) {
    const auto r = explain(id, 4096, 256);
    ASSERT_EQ(r.counts.steps.size(), 8u) << id;
    const unsigned strides[] = {128, 64, 32, 16, 8, 4, 2, 1};
    for (std::size_t k = 0; k < 8; ++k) EXPECT_EQ(r.counts.steps[k].step, strides[k]) << id;
    EXPECT_EQ(r.counts.totals.active_threads, 768u) << id;
    EXPECT_EQ(r.counts.totals.active_warps, 24u) << id;
    EXPECT_EQ(r.counts.totals.divergent_warps, 0u) << id;
    EXPECT_EQ(r.counts.steps[2].lanes_histogram[32], 2u) << id;  // stride 32: one full warp per block
  }
  // reduceUnrolling8 keeps the looped tree to stride 1: its last five steps diverge in warp 0.
  const auto u8 = explain("unroll8", 4096, 256);
  EXPECT_EQ(u8.counts.totals.divergent_warps, 2u * 5);
}

// The modern rungs at n = 4096, block 256: 8 elements per thread, so 2 blocks of 8 warps (16
// warps). Shuffles: five steps (offsets 16 .. 1) in every warp, 32 lanes each: 5 x 16 = 80
// executions; then warp 0 of each block folds the 8 warp sums in five more steps, probed as
// strides 512 .. 32 (offset x 32 threads): 10 executions. Totals 90 warps, 2880 lanes, nothing
// divergent. Shared memory: 8 one-lane writes of warp sums and 1 read by warp 0 per block: 18
// accesses, conflict-free. __reduce_add_sync does an integer warp in one step: 16 + 2
// executions; for float it has no instruction and the kernel falls back to the shuffles.
TEST(ExplainModern, WarpLevelStepsUseEveryLane) {
  const auto shuffle = explain("warp-shuffle", 4096, 256);
  ASSERT_EQ(shuffle.counts.steps.size(), 10u);
  EXPECT_EQ(shuffle.counts.steps[0].step, 16u);
  EXPECT_EQ(shuffle.counts.steps[5].step, 512u);
  EXPECT_EQ(shuffle.counts.totals.active_warps, 90u);
  EXPECT_EQ(shuffle.counts.totals.active_threads, 2880u);
  EXPECT_EQ(shuffle.counts.totals.divergent_warps, 0u);
  EXPECT_EQ(shuffle.counts.outside.shared_accesses, 18u);
  EXPECT_EQ(shuffle.counts.outside.bank_conflict_ways, 1u);
  const auto redux = explain("warp-reduce-sync", 4096, 256, rl::core::Dtype::int32);
  ASSERT_EQ(redux.counts.steps.size(), 2u);
  EXPECT_EQ(redux.counts.steps[0].active_warps, 16u);
  EXPECT_EQ(redux.counts.steps[1].active_warps, 2u);
  EXPECT_EQ(explain("warp-reduce-sync", 4096, 256).counts.steps.size(), 10u);  // float: shuffles
  // The single pass's last block reduces the partials too; that pass is bookkeeping, left out,
  // so its counts are the shuffle kernel's.
  const auto single = explain("single-pass", 4096, 256);
  EXPECT_EQ(single.counts.totals.active_warps, 90u);
}
}  // namespace
