// columns_probe: how fast columns of a row-major matrix can be read, by the bytes each lane takes
// from a row. reduceColumns gives a lane one element of each row, so a warp reads 32 neighbouring
// elements of a row at a time: 128 bytes for floats, 64 for 16-bit elements, whose columns run at
// 67-80 % of the read ceiling where float columns reach 93 % (H100). This reads a 16384 x 16384
// matrix of 2-byte elements (and a 256 x 2^20 one) the kernel's way, a block of 8 warps per
// (column group, band of rows) job, the warps on interleaved rows, 8 loads in flight per lane,
// with 2, 4, 8 or 16 bytes per lane (a warp covering 64 to 512 bytes of a row), and times each
// cold (behind an L2 flush), median of 15.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>

#include "probe_timing.cuh"

namespace {

template <int kBytes>
struct Word;
template <> struct Word<2> { using type = unsigned short; };
template <> struct Word<4> { using type = unsigned; };
template <> struct Word<8> { using type = uint2; };
template <> struct Word<16> { using type = uint4; };

__device__ __forceinline__ unsigned fold(unsigned short w) { return w; }
__device__ __forceinline__ unsigned fold(unsigned w) { return w; }
__device__ __forceinline__ unsigned fold(uint2 w) { return w.x ^ w.y; }
__device__ __forceinline__ unsigned fold(uint4 w) { return w.x ^ w.y ^ w.z ^ w.w; }

// rows x pitch bytes; a warp's group is 32 * kBytes bytes wide; jobs = groups * bands.
template <int kBytes>
__global__ void __launch_bounds__(256) read_columns(const unsigned char* m, std::size_t rows, std::size_t pitch,
                                                    std::size_t groups, std::size_t bands, int* sink) {
  using W = typename Word<kBytes>::type;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::size_t band_rows = (rows + bands - 1) / bands;
  unsigned acc = 0;
  for (std::size_t job = blockIdx.x; job < groups * bands; job += gridDim.x) {
    const std::size_t group = job / bands, band = job % bands;
    const std::size_t col = group * 32 * kBytes + lane * kBytes;
    const std::size_t r_end = std::min(rows, (band + 1) * band_rows);
    std::size_t r = band * band_rows + warp;
    for (; r + 7 * 8 < r_end; r += 64) {
      W v[8];
#pragma unroll
      for (int k = 0; k < 8; ++k) v[k] = *reinterpret_cast<const W*>(m + (r + k * 8) * pitch + col);
#pragma unroll
      for (int k = 0; k < 8; ++k) acc ^= fold(v[k]);
    }
    for (; r < r_end; r += 8) acc ^= fold(*reinterpret_cast<const W*>(m + r * pitch + col));
  }
  if (acc == 0x12345678u) *sink = static_cast<int>(acc);
}

}  // namespace

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("columns_probe on %s, %d SMs\n", p.name, p.multiProcessorCount);
  const std::size_t bytes = std::size_t(1) << 29;  // 2^28 two-byte elements
  unsigned char* m = nullptr;
  int* sink = nullptr;
  CK(cudaMalloc(&m, bytes));
  CK(cudaMemset(m, 1, bytes));
  CK(cudaMalloc(&sink, 4));
  L2Flush flush(p);
  const int blocks = p.multiProcessorCount * 8;  // one wave: 8 blocks of 256 threads per SM
  struct Shape {
    const char* name;
    std::size_t rows, cols;
  };
  for (const Shape& s : {Shape{"16384 x 16384", 16384, 16384}, Shape{"256 x 1048576", 256, 1048576}}) {
    const std::size_t pitch = s.cols * 2;
    auto run = [&](int k, const std::function<void(std::size_t, std::size_t)>& launch) {
      const std::size_t groups = pitch / (32 * std::size_t(k));
      std::size_t bands = std::max<std::size_t>(1, (2 * std::size_t(blocks) + groups - 1) / groups);
      bands = std::min<std::size_t>(bands, std::max<std::size_t>(1, s.rows / 64));
      const float us = cold_us(flush, [&] { launch(groups, bands); }, 15);
      std::printf("%-14s %2d bytes a lane (%3d a warp per row): %8.1f us  %7.1f GB/s  (%zu groups x %zu bands)\n", s.name,
                  k, 32 * k, us, bytes / (us * 1e-6) / 1e9, groups, bands);
    };
    run(2, [&](std::size_t g, std::size_t b) { read_columns<2><<<blocks, 256>>>(m, s.rows, pitch, g, b, sink); });
    run(4, [&](std::size_t g, std::size_t b) { read_columns<4><<<blocks, 256>>>(m, s.rows, pitch, g, b, sink); });
    run(8, [&](std::size_t g, std::size_t b) { read_columns<8><<<blocks, 256>>>(m, s.rows, pitch, g, b, sink); });
    run(16, [&](std::size_t g, std::size_t b) { read_columns<16><<<blocks, 256>>>(m, s.rows, pitch, g, b, sink); });
    CK(cudaGetLastError());
  }
  return 0;
}
