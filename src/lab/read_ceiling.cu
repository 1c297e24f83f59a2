// The read ceiling: how fast this GPU can read a buffer it does not hold in L2. Reductions read
// each byte once, so for large n this, not the datasheet, is the bound they are held to.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "lab/device.hpp"
#include "lab/read_ceiling.hpp"
#include "simt/cuda_check.hpp"

namespace rl::lab {
namespace {

// Four independent 16-byte loads in flight per thread per iteration; the xor keeps the loads
// alive, and the conditional store (never taken on this data) keeps the xor alive.
__global__ void read_only(const int4* __restrict__ data, std::size_t count, int* sink) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int acc = 0;
  for (; i + 3 * stride < count; i += 4 * stride) {
    const int4 a = __ldg(data + i), b = __ldg(data + i + stride);
    const int4 c = __ldg(data + i + 2 * stride), d = __ldg(data + i + 3 * stride);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < count; i += stride) {
    const int4 a = __ldg(data + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (sink != nullptr && acc == 0x12345678) *sink = acc;
}

}  // namespace

void read_through(Device& device, const void* data, std::size_t bytes) {
  read_only<<<device.info().sm_count * 4, 512, 0, static_cast<cudaStream_t>(device.stream())>>>(
      static_cast<const int4*>(data), bytes / sizeof(int4), nullptr);
  RL_CUDA_CHECK(cudaGetLastError());  // the L2 flush kernel's launch
}

double measure_read_ceiling_gbs(Device& device) {
  // 1 GiB, or an eighth of the memory on a small card: far larger than any L2.
  const std::size_t bytes =
      std::min<std::size_t>(std::size_t(1) << 30, device.info().global_memory_bytes / 8) & ~std::size_t(15);
  Buffer data(device, bytes), sink(device, sizeof(int));
  device.fill(data.get(), 1, bytes);
  const std::size_t count = bytes / sizeof(int4);
  const int threads = 512;
  const int blocks = device.info().sm_count * 4;
  auto stream = static_cast<cudaStream_t>(device.stream());
  std::vector<double> gbs;
  for (int rep = 0; rep < 12; ++rep) {
    const double ms = device.time_ms([&] {
      read_only<<<blocks, threads, 0, stream>>>(static_cast<const int4*>(data.get()), count,
                                                static_cast<int*>(sink.get()));
      RL_CUDA_CHECK(cudaGetLastError());  // the read ceiling kernel's launch
    });
    if (rep >= 2) gbs.push_back(bytes / (ms * 1e-3) / 1e9);  // first two are warm-up
  }
  std::sort(gbs.begin(), gbs.end());
  return gbs[gbs.size() / 2];
}

}  // namespace rl::lab
