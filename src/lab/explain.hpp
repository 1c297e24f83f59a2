#pragma once
// `reducelab explain`: runs one gallery kernel with the probes recording and returns its counts
// per step, verified like a `run` row.
//   simt: the SIMT backend's recorder (analysis/recorder.hpp): lanes, requests, sectors, banks.
//   cuda: on the GPU, the kernel's resources (registers, shared memory, occupancy from
//         cudaOccupancyMaxActiveBlocksPerMultiprocessor) and the active-lane counts of the
//         instrumented build (gallery/probed.hpp); beside them the SIMT counts when n is small
//         enough for the emulator (kSimtCompareMaxN).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "analysis/recorder.hpp"
#include "gallery/registry.hpp"
#include "lab/device.hpp"
#include "lab/kernel_resources.hpp"
#include "lab/run.hpp"

namespace rl::lab {

struct GpuExplain {
  DeviceInfo device;
  std::vector<KernelResources> launches;  // in launch order
  bool instrumented = false;  // the kernel has an instrumented build; `lanes` holds its counts
  analysis::Counts lanes;     // active-lane fields only (no addresses on the GPU)
  std::uint64_t irregular_probes = 0;
  Row instrumented_row;       // the instrumented run, verified
  // The SIMT counts of the same plan ran too (n <= kSimtCompareMaxN) and their lane fields
  // equal the GPU's, step by step.
  bool simt_compared = false;
  bool lanes_equal = false;
};

struct ExplainReport {
  Plan plan;            // one kernel
  gallery::Backend backend = gallery::Backend::simt;
  DeviceInfo device;    // where it ran (the emulator, or the GPU)
  analysis::Counts counts;  // SIMT counts (empty when they were not run)
  analysis::Trace trace;    // block 0, warp by warp, lane by lane (for pictures); SIMT only
  bool simt_ran = false;
  Row row;              // result, expected, status (the timed build on cuda)
  bool probed = false;  // the kernel has probes in its reduction steps
  std::optional<GpuExplain> gpu;
};

// The largest n for which `explain --backend cuda` also runs the SIMT recorder to compare.
inline constexpr std::size_t kSimtCompareMaxN = std::size_t(1) << 20;

// Throws UsageError for a plan `validate` rejects, and for a kernel with no SIMT launcher.
ExplainReport explain(const Plan& plan);
// On the GPU (`device` is a cuda device). Throws UsageError where `explain` would, and for a
// kernel the CUDA backend lacks.
ExplainReport explain_cuda(const Plan& plan, Device& device);

// Runs the instrumented build of the plan's kernel once on the GPU (int32 input of the plan's n
// and seed, summed wide) and returns its active-lane counts; *row gets the verification.
// Throws UsageError when the kernel has no instrumented build.
analysis::Counts instrumented_lane_counts(const Plan& plan, Device& device, Row* row = nullptr,
                                          std::uint64_t* irregular = nullptr);

// Whether two counts agree on every lane field (steps in the same order with the same stride,
// active threads and warps, divergent warps, lane slots, histogram); `why` names the first
// difference.
bool same_lane_counts(const analysis::Counts& a, const analysis::Counts& b, std::string* why = nullptr);

}  // namespace rl::lab
