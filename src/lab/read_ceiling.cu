// The read ceiling: how fast this GPU can read a buffer it does not hold in L2. Reductions read
// each byte once, so for large n this, not the datasheet, is the bound they are held to.
#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "lab/device.hpp"
#include "lab/read_ceiling.hpp"
#include "lab/read_kernels.cuh"
#include "simt/cuda_check.hpp"

namespace rl::lab {
namespace {

// A 16-byte load through L1 (kL2Only false) or through L2 only (ld.global.cg).
template <bool kL2Only>
__device__ __forceinline__ int4 load16(const int4* p) {
  if constexpr (kL2Only) return __ldcg(p);
  else return __ldg(p);
}

// `passes` reads of the buffer, grid-stride, four independent 16-byte loads in flight per thread
// per iteration; the xor keeps the loads alive, and the conditional store (never taken on this
// data) keeps the xor alive. kL2Only for passes over a buffer held in L2: through L1, a block
// would be served the lines it read in the pass before.
template <bool kL2Only>
__global__ void read_only(const int4* __restrict__ data, std::size_t count, int passes, int* sink) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  int acc = 0;
  for (int pass = 0; pass < passes; ++pass) {
    std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < count; i += 4 * stride) {
      const int4 a = load16<kL2Only>(data + i), b = load16<kL2Only>(data + i + stride);
      const int4 c = load16<kL2Only>(data + i + 2 * stride), d = load16<kL2Only>(data + i + 3 * stride);
      acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < count; i += stride) {
      const int4 a = load16<kL2Only>(data + i);
      acc ^= a.x ^ a.y ^ a.z ^ a.w;
    }
  }
  if (sink != nullptr && acc == 0x12345678) *sink = acc;
}

// A copy of `count` 16-byte vectors, grid-stride, four loads issued before the four stores.
__global__ void copy_vectors(const int4* __restrict__ from, int4* __restrict__ to, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < count; i += 4 * stride) {
    const int4 a = __ldg(from + i), b = __ldg(from + i + stride);
    const int4 c = __ldg(from + i + 2 * stride), d = __ldg(from + i + 3 * stride);
    to[i] = a, to[i + stride] = b, to[i + 2 * stride] = c, to[i + 3 * stride] = d;
  }
  for (; i < count; i += stride) to[i] = __ldg(from + i);
}

// The median GB/s of `launch` reading `bytes`, over 10 timings after 2 warm-ups. `cold`: each
// timing queued behind an L2 flush, as the bench's cold rows are, so that the ceiling they are
// divided by is timed as they are (timed from an idle device, the timing also held the host's
// launch of the kernel).
double median_gbs(Device& device, double bytes, const std::function<void()>& launch, bool cold) {
  std::vector<double> gbs;
  for (int rep = 0; rep < 12; ++rep) {
    if (cold) device.flush_l2();
    const double ms = device.time_ms(launch);
    if (rep >= 2) gbs.push_back(bytes / (ms * 1e-3) / 1e9);
  }
  std::sort(gbs.begin(), gbs.end());
  return gbs[gbs.size() / 2];
}

}  // namespace

void read_through(Device& device, const void* data, std::size_t bytes) {
  read_only<false><<<device.info().sm_count * 4, 512, 0, static_cast<cudaStream_t>(device.stream())>>>(
      static_cast<const int4*>(data), bytes / sizeof(int4), 1, nullptr);
  RL_CUDA_CHECK(cudaGetLastError());  // the L2 flush kernel's launch
}

double measure_read_ceiling_gbs(Device& device) {
  // 1 GiB, or an eighth of the memory on a small card: far larger than any L2.
  const std::size_t bytes =
      std::min<std::size_t>(std::size_t(1) << 30, device.info().global_memory_bytes / 8) & ~std::size_t(15);
  Buffer data(device, bytes), sink(device, sizeof(int));
  device.fill(data.get(), 1, bytes);
  const std::size_t count = bytes / sizeof(int4);
  const int sms = device.info().sm_count;
  auto stream = static_cast<cudaStream_t>(device.stream());
  const auto* in = static_cast<const int4*>(data.get());
  auto* out = static_cast<int*>(sink.get());
  // The better median of two ways of reading: a ceiling below what a reduction reaches is none.
  const double grid_stride = median_gbs(device, static_cast<double>(bytes), [&] {
    read_only<false><<<sms * 4, 512, 0, stream>>>(in, count, 1, out);
    RL_CUDA_CHECK(cudaGetLastError());  // the read ceiling kernel's launch
  }, true);
  const double units = median_gbs(device, static_cast<double>(bytes), [&] {
    read_units<4><<<sms * 8, 256, 0, stream>>>(in, count, out);
    RL_CUDA_CHECK(cudaGetLastError());  // the read ceiling kernel's launch (units)
  }, true);
  return std::max(grid_stride, units);
}

double measure_copy_ceiling_gbs(Device& device) {
  // Two buffers of 1 GiB (or a sixteenth of the memory each on a small card), as the read ceiling.
  const std::size_t bytes =
      std::min<std::size_t>(std::size_t(1) << 30, device.info().global_memory_bytes / 16) & ~std::size_t(15);
  Buffer from(device, bytes), to(device, bytes);
  device.fill(from.get(), 1, bytes);
  device.fill(to.get(), 2, bytes);
  auto stream = static_cast<cudaStream_t>(device.stream());
  const auto* in = static_cast<const int4*>(from.get());
  auto* out = static_cast<int4*>(to.get());
  const double moved = 2.0 * static_cast<double>(bytes);
  // The better median of the driver's copy and a copy kernel, both timed cold.
  const double driver = median_gbs(device, moved, [&] {
    RL_CUDA_CHECK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice, stream));
  }, true);
  const double kernel = median_gbs(device, moved, [&] {
    copy_vectors<<<device.info().sm_count * 4, 512, 0, stream>>>(in, out, bytes / sizeof(int4));
    RL_CUDA_CHECK(cudaGetLastError());  // the copy ceiling kernel's launch
  }, true);
  return std::max(driver, kernel);
}

double measure_l2_read_ceiling_gbs(Device& device) {
  const std::size_t l2 = device.info().l2_bytes;
  if (l2 == 0) return 0;
  const std::size_t bytes = (l2 / 2) & ~std::size_t(15);
  const int passes = 20;  // one launch's fixed cost spread over 20 reads of the buffer
  Buffer data(device, bytes), sink(device, sizeof(int));
  device.fill(data.get(), 1, bytes);
  auto stream = static_cast<cudaStream_t>(device.stream());
  return median_gbs(device, static_cast<double>(bytes) * passes, [&] {  // the first two warm L2
    read_only<true><<<device.info().sm_count * 4, 512, 0, stream>>>(static_cast<const int4*>(data.get()),
                                                                   bytes / sizeof(int4), passes,
                                                                   static_cast<int*>(sink.get()));
    RL_CUDA_CHECK(cudaGetLastError());  // the L2 read ceiling kernel's launch
  }, false);
}

}  // namespace rl::lab
