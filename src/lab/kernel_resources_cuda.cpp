// The CUDA runtime's view of a launched kernel (lab/kernel_resources.hpp).
#include <cuda_runtime.h>

#include "lab/kernel_resources.hpp"
#include "simt/cuda_check.hpp"

namespace rl::lab {

KernelResources kernel_resources(const LaunchRecord& r) {
  KernelResources k;
  k.name = r.name;
  k.grid = r.grid[0] * r.grid[1] * r.grid[2];
  k.block = r.block[0] * r.block[1] * r.block[2];
  k.dynamic_shared = r.shared_bytes;
  k.explained = !r.helper;  // the gallery marks its final pass and identity launches
  cudaFuncAttributes a{};
  RL_CUDA_CHECK(cudaFuncGetAttributes(&a, r.kernel));
  k.registers = a.numRegs;
  k.static_shared = a.sharedSizeBytes;
  k.local_bytes = a.localSizeBytes;
  RL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&k.max_blocks_per_sm, r.kernel,
                                                                 static_cast<int>(k.block), r.shared_bytes));
  int device = 0, threads_per_sm = 0;
  RL_CUDA_CHECK(cudaGetDevice(&device));
  RL_CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  const double warps = static_cast<double>(k.max_blocks_per_sm) * ((k.block + 31) / 32);
  k.occupancy = threads_per_sm ? warps / (threads_per_sm / 32) : 0;
  return k;
}

}  // namespace rl::lab
