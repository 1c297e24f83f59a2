#pragma once
// The read kernel the bench's read ceiling is measured with (read_ceiling.cu), shared with the
// developer probes in bench/ so that what they call "a bare read" is the same kernel.
#include <cuda_runtime.h>

#include <cstddef>

namespace rl::lab {

// Blocks of 256 threads take contiguous units of 256 x kLoads 16-byte vectors in turn (unit u:
// block u % grid), every load of a unit issued before the first xor: the order in which the
// library's large reductions read. The xor keeps the loads alive, and the conditional store (never
// taken on the data it reads) keeps the xor alive. With 4 loads (16 KiB units) it read ~1 % faster
// than a grid-stride kernel on an H100 (bench/floor_probe.cu).
template <int kLoads = 4>
__global__ void __launch_bounds__(256) read_units(const int4* __restrict__ data, std::size_t count, int* sink) {
  constexpr std::size_t kUnit = 256 * kLoads;
  int acc = 0;
  for (std::size_t u = blockIdx.x; (u + 1) * kUnit <= count; u += gridDim.x) {
    int4 v[kLoads];
#pragma unroll
    for (int k = 0; k < kLoads; ++k) v[k] = __ldg(data + u * kUnit + k * 256 + threadIdx.x);
#pragma unroll
    for (int k = 0; k < kLoads; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
  }
  if (sink != nullptr && acc == 0x12345678) *sink = acc;
}

}  // namespace rl::lab
