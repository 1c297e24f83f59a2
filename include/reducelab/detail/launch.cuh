#pragma once
// How the library launches its kernels, host side: how many blocks of a kernel one multiprocessor
// holds (asked of the CUDA runtime once per device and kernel: reducelab::reduce and
// reduce_axis/reduce_segments size their grids by it on every call), and the launch itself,
// which may overlap the kernel before it (the kernels' side is wait_for_producer and
// let_consumer_start in agent_reduce.cuh) and may make the whole grid one thread-block cluster
// (cluster.cuh). nvcc only.
#include <cuda_runtime.h>

#include <atomic>

#include "reducelab/detail/cluster.cuh"
#include "reducelab/detail/reduce_order.hpp"
#include "reducelab/detail/workspace.hpp"

namespace reducelab::detail {

// What `ask` answers for `device` (a count of at least 1), asked once per device and kept in
// `cache` (devices 0..63; a device past that is asked every time).
template <class Ask>
Status once_per_device(std::atomic<int>* cache, int device, int* value, Ask&& ask) {
  const bool cached = device >= 0 && device < 64;
  if (cached) {
    const int c = cache[device].load(std::memory_order_relaxed);
    if (c > 0) {
      *value = c;
      return {};
    }
  }
  if (Status s = ask(value); !s) return s;
  if (*value < 1) *value = 1;
  if (cached) cache[device].store(*value, std::memory_order_relaxed);
  return {};
}

// Blocks of `Kernel` (launched with kThreads threads) resident per multiprocessor, asked once
// per device.
template <auto Kernel>
Status resident_blocks(int device, int* blocks) {
  static std::atomic<int> cache[64];
  return once_per_device(cache, device, blocks, [](int* value) -> Status {
    const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(value, Kernel, kThreads, 0);
    if (e != cudaSuccess) return cuda_status(e, "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return {};
  });
}

// Lets `Kernel` take `bytes` of dynamic shared memory a block (past the 48 KiB a launch may ask
// for unasked), once per device.
template <auto Kernel>
Status allow_dynamic_shared(int device, std::size_t bytes) {
  static std::atomic<int> cache[64];
  int done = 0;
  return once_per_device(cache, device, &done, [&](int* value) -> Status {
    const cudaError_t e = cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
    if (e != cudaSuccess) return cuda_status(e, "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
    *value = 1;
    return {};
  });
}

// A launch attribute making clusters of `blocks` blocks along x.
inline cudaLaunchAttribute cluster_attribute(unsigned blocks) {
  cudaLaunchAttribute a = {};
  a.id = cudaLaunchAttributeClusterDimension;
  a.val.clusterDim.x = blocks;
  a.val.clusterDim.y = 1;
  a.val.clusterDim.z = 1;
  return a;
}

// The most blocks one cluster of `Kernel` may have on `device`: 16 where the GPU takes that
// non-portable size and such a cluster fits, else 8 (the portable size) where one fits, else 1
// (no clusters: a GPU before Hopper). Asked once per device.
template <auto Kernel>
Status cluster_limit(int device, unsigned* blocks) {
  static std::atomic<int> cache[64];
  int limit = 1;
  const Status s = once_per_device(cache, device, &limit, [](int* value) -> Status {
    *value = 1;
    for (const unsigned size : {kMaxClusterBlocks, 8u}) {
      if (size > 8) {
        const cudaError_t e = cudaFuncSetAttribute(Kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
        if (e != cudaSuccess) {  // not offered by this GPU: try the portable size
          (void)cudaGetLastError();
          continue;
        }
      }
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(size);
      config.blockDim = dim3(kThreads);
      cudaLaunchAttribute attribute[1] = {cluster_attribute(size)};
      config.attrs = attribute;
      config.numAttrs = 1;
      int clusters = 0;
      const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, Kernel, &config);
      if (e != cudaSuccess) {  // no clusters on this GPU (before sm_90)
        (void)cudaGetLastError();
        continue;
      }
      if (clusters >= 1) {
        *value = static_cast<int>(size);
        break;
      }
    }
    return {};
  });
  *blocks = static_cast<unsigned>(limit);
  return s;
}

// Launches `kernel` on `stream` with blocks of `threads` (kThreads unless named); with cluster > 1 the grid (a multiple of it) is cut into
// clusters of that many blocks. With REDUCELAB_OVERLAP_LAUNCH (the default) the launch asks for
// programmatic stream serialization: the kernel may start while the kernel before it in the
// stream is still finishing, and waits (griddepcontrol.wait) before it reads anything.
#ifndef REDUCELAB_OVERLAP_LAUNCH
#define REDUCELAB_OVERLAP_LAUNCH 1
#endif
template <class... Params, class... Args>
cudaError_t launch_kernel_shaped(void (*kernel)(Params...), unsigned grid, unsigned threads, unsigned cluster,
                                 std::size_t shared, stream_t stream, Args... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  cudaLaunchAttribute attribute[2];
  unsigned count = 0;
  if (REDUCELAB_OVERLAP_LAUNCH) {
    attribute[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[count].val.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  if (cluster > 1) attribute[count++] = cluster_attribute(cluster);
  config.attrs = attribute;
  config.numAttrs = count;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...);
}
template <class... Params, class... Args>
cudaError_t launch_kernel_sized(void (*kernel)(Params...), unsigned grid, unsigned threads, unsigned cluster,
                                stream_t stream, Args... args) {
  return launch_kernel_shaped(kernel, grid, threads, cluster, 0, stream, args...);
}
template <class... Params, class... Args>
cudaError_t launch_kernel_clustered(void (*kernel)(Params...), unsigned grid, unsigned cluster, stream_t stream,
                                    Args... args) {
  return launch_kernel_sized(kernel, grid, kThreads, cluster, stream, args...);
}
template <class... Params, class... Args>
cudaError_t launch_kernel(void (*kernel)(Params...), unsigned grid, stream_t stream, Args... args) {
  return launch_kernel_clustered(kernel, grid, 1u, stream, args...);
}

// The cluster a launch of `grid` blocks should be: all of them when the grid is small enough to
// be one cluster (2..limit blocks) and the caller did not force a grid; 1 (none) otherwise.
inline unsigned one_cluster(unsigned grid, unsigned limit, bool forced_grid) {
  return !forced_grid && grid >= 2 && grid <= limit ? grid : 1u;
}

}  // namespace reducelab::detail
