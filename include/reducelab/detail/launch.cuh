#pragma once
// How the library launches its kernels, host side: how many blocks of a kernel one multiprocessor
// holds (asked of the CUDA runtime once per device and kernel: reducelab::reduce and
// reduce_axis/reduce_segments size their grids by it on every call), and the launch itself,
// which may overlap the kernel before it (the kernels' side is wait_for_producer and
// let_consumer_start in agent_reduce.cuh). nvcc only.
#include <cuda_runtime.h>

#include <atomic>

#include "reducelab/detail/reduce_order.hpp"
#include "reducelab/detail/workspace.hpp"

namespace reducelab::detail {

// Blocks of `Kernel` (launched with kThreads threads) resident per multiprocessor, asked once
// per device.
template <auto Kernel>
Status resident_blocks(int device, int* blocks) {
  static std::atomic<int> cached[64];
  if (device >= 0 && device < 64) {
    const int c = cached[device].load(std::memory_order_relaxed);
    if (c > 0) {
      *blocks = c;
      return {};
    }
  }
  const cudaError_t e =
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, Kernel, kThreads, 0);
  if (e != cudaSuccess) return cuda_status(e, "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (*blocks < 1) *blocks = 1;
  if (device >= 0 && device < 64) cached[device].store(*blocks, std::memory_order_relaxed);
  return {};
}

// Launches `kernel` on `stream`. With REDUCELAB_OVERLAP_LAUNCH (the default) the launch asks for
// programmatic stream serialization: the kernel may start while the kernel before it in the
// stream is still finishing, and waits (griddepcontrol.wait) before it reads anything.
#ifndef REDUCELAB_OVERLAP_LAUNCH
#define REDUCELAB_OVERLAP_LAUNCH 1
#endif
template <class... Params, class... Args>
cudaError_t launch_kernel(void (*kernel)(Params...), unsigned grid, stream_t stream, Args... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(kThreads);
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  if (REDUCELAB_OVERLAP_LAUNCH) {
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
  }
  return cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...);
}

}  // namespace reducelab::detail
