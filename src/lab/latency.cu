// The pointer chase of lab/latency.hpp.
#include <cuda_runtime.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "lab/device.hpp"
#include "lab/latency.hpp"
#include "simt/cuda_check.hpp"

namespace rl::lab {
namespace {

constexpr unsigned kLineWords = 32;  // 128 bytes of unsigned

// next[line * 32] = the word index of the line that follows it in the cycle.
__global__ void lay_out_cycle(unsigned* next, const unsigned* order, unsigned lines) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < lines) next[order[k] * kLineWords] = order[(k + 1) % lines] * kLineWords;
}

__global__ void chase(const unsigned* next, unsigned long long hops, unsigned* sink) {
  unsigned i = 0;
  for (unsigned long long k = 0; k < hops; ++k) i = __ldcg(next + i);
  *sink = i;  // keeps the chain alive
}

// ns per hop over a cycle through `bytes`, `warm`: walk the whole cycle once first.
double chase_ns(Device& device, std::size_t bytes, unsigned long long hops, bool warm) {
  const unsigned lines = static_cast<unsigned>(bytes / 128);
  std::vector<unsigned> order(lines);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 rng(12345);
  std::shuffle(order.begin() + 1, order.end(), rng);  // line 0 first: the chase starts at word 0
  Buffer next(device, bytes), d_order(device, lines * sizeof(unsigned)), sink(device, sizeof(unsigned));
  device.upload(d_order.get(), order.data(), lines * sizeof(unsigned));
  auto stream = static_cast<cudaStream_t>(device.stream());
  lay_out_cycle<<<(lines + 255) / 256, 256, 0, stream>>>(static_cast<unsigned*>(next.get()),
                                                          static_cast<const unsigned*>(d_order.get()), lines);
  RL_CUDA_CHECK(cudaGetLastError());  // pointer-chase layout kernel
  auto* p = static_cast<const unsigned*>(next.get());
  auto* s = static_cast<unsigned*>(sink.get());
  if (warm) {
    chase<<<1, 1, 0, stream>>>(p, lines, s);
    RL_CUDA_CHECK(cudaGetLastError());  // pointer-chase warm-up
  }
  std::vector<double> ns;
  for (int rep = 0; rep < 3; ++rep) {
    // Cold: every repeat starts from an empty L2. (Each repeat walks the same first `hops` lines
    // of the cycle: without a flush the second and third found them in L2 and the "DRAM" figure
    // was the L2's.)
    if (!warm) device.flush_l2();
    const double ms = device.time_ms([&] {
      chase<<<1, 1, 0, stream>>>(p, hops, s);
      RL_CUDA_CHECK(cudaGetLastError());  // pointer-chase kernel
    });
    ns.push_back(ms * 1e6 / static_cast<double>(hops));
  }
  std::sort(ns.begin(), ns.end());
  return ns[1];
}

}  // namespace

MemoryLatency measure_memory_latency(Device& device) {
  MemoryLatency m;
  const DeviceInfo& d = device.info();
  m.dram_buffer_bytes = std::min<std::size_t>(std::max<std::size_t>(std::size_t(16) * d.l2_bytes, std::size_t(256) << 20),
                                              d.global_memory_bytes / 8) & ~std::size_t(127);
  m.l2_buffer_bytes = std::size_t(8) << 20;
  m.dram_ns = chase_ns(device, m.dram_buffer_bytes, 100000, false);
  m.l2_ns = chase_ns(device, m.l2_buffer_bytes, 200000, true);
  return m;
}

}  // namespace rl::lab
