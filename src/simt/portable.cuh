#pragma once
// One vocabulary for kernels, two compilers.
//
// Every kernel header of reducelab includes this file and nothing else of a backend. Under nvcc
// the names below are CUDA itself; under g++ they come from the SIMT runtime (simt/runtime.hpp),
// which runs each thread of a block as a fiber and checks what a GPU cannot check for you.
//
// What a kernel may use, beyond plain CUDA C++ (threadIdx, __syncthreads, __shfl_*_sync,
// __ballot_sync, __reduce_*_sync, atomics, __threadfence, cooperative groups tiles):
//
//   rl::gmem<T>      a pointer into global memory. T* on the GPU; on SIMT a checked pointer
//                    whose every access is bounds-checked against the allocation and recorded
//                    for race checks and counts. Kernel parameters that point at device buffers
//                    use it; arithmetic (p + i, p[i], &p[i], *p) works as with T*.
//   rl::smem<T>      a pointer into shared memory, made from a __shared__ array:
//                      __shared__ T cache_storage[N];
//                      rl::smem<T> cache = cache_storage;
//   rl::vmem<T>      the textbook's `volatile T*` view (warp-synchronous code). On SIMT it is
//                    the same checked pointer: volatile changes nothing about the race.
//   RL_DYNAMIC_SHARED(T, name)   `extern __shared__` storage of the launch's dynamic size,
//                    as an rl::smem<T> called `name` (reducelab/detail/portable.cuh).
//   rl::launch(kernel, cfg, args...)   a host-side launch that works on both backends (no
//                    <<<>>> outside .cu files); checks the launch and throws rl::CudaError or
//                    simt::KernelError on failure.
//   RL_CUDA_CHECK(call)   (CUDA only, simt/cuda_check.hpp) throws rl::CudaError naming the call,
//                    file and line when a runtime call fails: the one check every CUDA call of
//                    the lab and gallery goes through.
//   RL_TAIL_LAUNCH(kernel, grid, block, args...)   a device-side launch that starts after the
//                    launching grid has finished (CUDA 13's dynamic parallelism: tail launch).
//
// Values loaded through gmem/smem on SIMT are proxies: write `T v = p[i];`, never `auto v`.
#include <cstddef>
#include <cstdint>

#include "reducelab/config.hpp"
#include "reducelab/detail/portable.cuh"  // rl::gmem, rl::smem, rl::vmem, RL_SIMT

#if defined(__CUDACC__)

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

#include <string>

#include "simt/cuda_check.hpp"  // rl::CudaError, RL_CUDA_CHECK
#include "simt/launch_observer.hpp"

namespace rl {
using stream_t = cudaStream_t;
}  // namespace rl

#define RL_TAIL_LAUNCH(kernel, grid, block, ...) \
  kernel<<<(grid), (block), 0, cudaStreamTailLaunch>>>(__VA_ARGS__)

namespace rl {

struct LaunchConfig {
  dim3 grid;
  dim3 block;
  std::size_t shared_bytes = 0;
  stream_t stream = nullptr;
  const char* name = "kernel";
  bool helper = false;  // bookkeeping (a final pass), not the kernel a caller asked for
};

// Host-side launch through cudaLaunchKernel: arguments are converted to the kernel's parameter
// types first, so the kernel sees exactly what a <<<>>> launch would give it.
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), const LaunchConfig& cfg, Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "wrong number of kernel arguments");
  auto launch_with = [&](Params... converted) {
    void* slots[] = {static_cast<void*>(&converted)..., nullptr};
    const std::string what = std::string("launch of ") + cfg.name;
    check_cuda(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), cfg.grid, cfg.block, slots,
                                cfg.shared_bytes, cfg.stream),
               what.c_str());
    check_cuda(cudaGetLastError(), what.c_str());
    if (const LaunchObserver& o = launch_observer(); o.fn)
      o.fn(LaunchRecord{reinterpret_cast<const void*>(kernel), {cfg.grid.x, cfg.grid.y, cfg.grid.z},
                        {cfg.block.x, cfg.block.y, cfg.block.z}, cfg.shared_bytes, cfg.name, cfg.helper},
           o.context);
  };
  launch_with(static_cast<Params>(std::forward<Args>(args))...);
}

}  // namespace rl

#else  // the SIMT backend

namespace rl {
using stream_t = void*;
using LaunchConfig = ::simt::LaunchConfig;
using ::simt::launch;
}  // namespace rl

#define RL_TAIL_LAUNCH(kernel, grid, block, ...) \
  ::simt::tail_launch(#kernel, kernel, (grid), (block), __VA_ARGS__)

#endif

namespace cg = cooperative_groups;
