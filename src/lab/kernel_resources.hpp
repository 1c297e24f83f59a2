#pragma once
// What the CUDA runtime says about a kernel that a launcher started (seen through
// rl::launch_observer): registers, shared and local memory, and occupancy. The implementation
// (kernel_resources_cuda.cpp) is the only lab file besides device_cuda.cpp that includes the
// CUDA runtime; this header includes nothing of it, so SIMT headers may sit beside it.
#include <cstddef>
#include <string>

#include "simt/launch_observer.hpp"

namespace rl::lab {

// One kernel a launcher started, with what the CUDA runtime says about it.
struct KernelResources {
  std::string name;
  unsigned grid = 0, block = 0;   // x dimensions (the gallery's launches are 1-D)
  int registers = 0;              // per thread
  std::size_t static_shared = 0;  // bytes per block
  std::size_t dynamic_shared = 0; // bytes per block, of this launch
  std::size_t local_bytes = 0;    // per thread (spills)
  int max_blocks_per_sm = 0;      // cudaOccupancyMaxActiveBlocksPerMultiprocessor
  double occupancy = 0;           // max_blocks_per_sm x warps per block / max warps per SM
  bool explained = false;         // the kernel being explained (false: finalPass, initIdentity)
};

// Throws std::runtime_error naming the failed CUDA call.
KernelResources kernel_resources(const LaunchRecord& launch);

}  // namespace rl::lab
