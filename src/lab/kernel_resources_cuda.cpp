// The CUDA runtime's view of a launched kernel (lab/kernel_resources.hpp).
#include <cuda_runtime.h>

#include <stdexcept>
#include <string_view>

#include "fmt/format.h"
#include "lab/kernel_resources.hpp"

namespace rl::lab {
namespace {

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(fmt::format("{} failed: {} ({})", what, cudaGetErrorName(e), cudaGetErrorString(e)));
}
#define RL_RESOURCES_CHECK(call) cuda_ok((call), #call)

// Bookkeeping launches of the gallery (final_pass.cuh), not the kernel being explained.
bool bookkeeping(std::string_view name) { return name == "finalPass" || name == "initIdentity"; }

}  // namespace

KernelResources kernel_resources(const LaunchRecord& r) {
  KernelResources k;
  k.name = r.name;
  k.grid = r.grid[0] * r.grid[1] * r.grid[2];
  k.block = r.block[0] * r.block[1] * r.block[2];
  k.dynamic_shared = r.shared_bytes;
  k.explained = !bookkeeping(r.name);
  cudaFuncAttributes a{};
  RL_RESOURCES_CHECK(cudaFuncGetAttributes(&a, r.kernel));
  k.registers = a.numRegs;
  k.static_shared = a.sharedSizeBytes;
  k.local_bytes = a.localSizeBytes;
  RL_RESOURCES_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&k.max_blocks_per_sm, r.kernel,
                                                                 static_cast<int>(k.block), r.shared_bytes));
  int device = 0, threads_per_sm = 0;
  RL_RESOURCES_CHECK(cudaGetDevice(&device));
  RL_RESOURCES_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  const double warps = static_cast<double>(k.max_blocks_per_sm) * ((k.block + 31) / 32);
  k.occupancy = threads_per_sm ? warps / (threads_per_sm / 32) : 0;
  return k;
}

}  // namespace rl::lab
