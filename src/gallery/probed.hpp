#pragma once
// The instrumented CUDA build of the gallery: the same kernel sources compiled by nvcc with
// RL_PROBES_ON_GPU=1 (bind_cuda_probed.cu), so that every rl::probe::Step counts active lanes
// on the GPU into analysis::GpuProbeCounters. A separate copy: the timed build carries no probe
// cost. Instantiated for int32 input summed in int64 only; which lanes reach a step depends on
// indices and n, never on the element type or the op, so one instantiation serves every dtype.
#include <string_view>

#include "analysis/gpu_counters.hpp"
#include "gallery/registry.hpp"

namespace rl::gallery {

// The instrumented launcher of a registry id, or nullptr (built without CUDA, or an entry left
// out: the nested kernel, which needs relocatable device code, and CUB). It throws
// std::invalid_argument for LaunchArgs other than int32, wide, sum.
LaunchFn cuda_probed_launcher(std::string_view id);

// Points the instrumented kernels' probes at a device buffer (nullptr: stop counting).
void cuda_probes_attach(analysis::GpuProbeCounters* device_counters);

}  // namespace rl::gallery
