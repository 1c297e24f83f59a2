// The instrumented GPU build against the SIMT recorder: on a GPU the active lanes the probes
// count with __activemask()/__popc must equal, step by step, what the emulator recorded for the
// same kernel, n and block. The coverage case runs everywhere the CUDA backend is built.
#include <gtest/gtest.h>

#include "gallery/probed.hpp"
#include "lab/device.hpp"
#include "lab/explain.hpp"

namespace {
using namespace rl;

lab::Plan plan_for(const gallery::Entry& e, std::size_t n, unsigned block) {
  lab::Plan p;
  p.kernels = {&e};
  p.n = n;
  p.block = block;
  p.dtype = rl::core::Dtype::int32;  // what the instrumented build runs: the same control flow
  return p;
}

// Kernels whose lanes both backends can count: a SIMT launcher, deterministic int32 sums.
bool comparable(const gallery::Entry& e) {
  return !e.constraints.gpu_only && !e.constraints.unsafe && gallery::launcher(e, gallery::Backend::simt) &&
         gallery::deterministic(e, rl::core::Dtype::int32, rl::core::OpKind::sum);
}

// Every kernel with probes on simt has an instrumented GPU build, and no instrumented build
// belongs to a kernel without probes (its counts would be empty and the comparison vacuous).
TEST(GpuProbes, InstrumentedBuildCoversEveryProbedKernel) {
#if !RL_WITH_CUDA
  GTEST_SKIP() << "built without the CUDA backend: there is no instrumented GPU build";
#endif
  int probed = 0;
  for (const auto& e : gallery::registry()) {
    if (!comparable(e)) continue;
    const auto r = lab::explain(plan_for(e, 1000, 64));
    EXPECT_EQ(r.probed, gallery::cuda_probed_launcher(e.id) != nullptr)
        << e.id << (r.probed ? ": has probes but no instrumented build" : ": instrumented but has no probes");
    probed += r.probed;
  }
  EXPECT_GE(probed, 11);  // seed 000, 001 and 004 kernels at least
}

// Sizes: one short tail block (1000 = 15 x 64 + 40), an odd n over several blocks, a large
// block with a tail, and one full block of 1024.
TEST(GpuProbes, LaneCountsEqualSimtCounts) {
  std::string why;
  if (!lab::cuda_usable(&why)) GTEST_SKIP() << why;
  auto device = lab::open_cuda_device();
  struct Shape {
    std::size_t n;
    unsigned block;
  };
  const Shape shapes[] = {{1000, 64}, {4099, 256}, {70001, 512}, {2048, 1024}};
  int compared = 0;
  for (const auto& e : gallery::registry()) {
    if (!comparable(e) || !gallery::cuda_probed_launcher(e.id)) continue;
    for (const Shape& s : shapes) {
      const lab::Plan p = plan_for(e, s.n, s.block);
      if (!lab::incompatibility(e, s.block, gallery::Backend::cuda, device->info()).empty()) continue;
      const auto simt = lab::explain(p);
      lab::Row row;
      std::uint64_t irregular = 0;
      const auto gpu = lab::instrumented_lane_counts(p, *device, &row, &irregular);
      EXPECT_EQ(row.status, "ok") << e.id << " n=" << s.n << " block=" << s.block << ": " << row.result;
      EXPECT_EQ(irregular, 0u) << e.id;
      std::string diff;
      EXPECT_TRUE(lab::same_lane_counts(simt.counts, gpu, &diff))
          << e.id << " n=" << s.n << " block=" << s.block << ": simt against GPU: " << diff;
      ++compared;
    }
  }
  EXPECT_GE(compared, 40);
}

}  // namespace
