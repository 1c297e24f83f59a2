// floatcol_probe: exact float sums along axis 0 of wide matrices (2^20 x 256, 16384 x 16384; 2^28
// floats), read 16 bytes a lane, written out here in a few lines to see what the reading and the
// windows cost before any pair. A lane takes four columns (a 16-byte vector) of every eighth row of
// a band, its block's eight warps the other rows; it keeps for each column a plain double and the
// largest and smallest magnitudes' bits (a window: exact while the exponent span allows the lane's
// element count), with no pair in registers. The warps' doubles meet in shared memory, each band
// posts one double a column, and the block that takes a group's last ticket adds the group's posts
// in an unevaluated pair (TwoSum) and rounds it to float. Beside it, in the same call: the library's
// sum and max along axis 0 and a plain read of the bytes. Cold (behind an L2 flush), median of R;
// the probe's results are compared bit for bit with reduce_axis's, and the lanes whose window could
// not vouch for their sum are counted (the library would hand those to its pairs).
//   floatcol_probe [repeats=10]
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "probe_timing.cuh"
#include "reducelab/segments.hpp"

namespace {

using namespace reducelab;

constexpr unsigned kGroupCols = 128;  // a warp's 32 vectors of four floats

__device__ __forceinline__ void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

template <unsigned kIn, int kMin>
__global__ void __launch_bounds__(256, kMin)
    fcols(const float4* input, std::uint64_t rows, std::uint64_t vectors, std::uint64_t groups, std::uint64_t bands,
          std::uint64_t band_rows, double* posts, unsigned* tickets, float* output, unsigned* unvouched) {
  constexpr unsigned kRow = kGroupCols + kGroupCols / 32;
  __shared__ double sums[8 * kRow];
  __shared__ bool last;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::uint64_t cols = vectors * 4;
  // The exponent span a lane's window may hold for the rows it takes (53 - 24 - ceil(log2 n)).
  const std::uint64_t most_rows = (band_rows + 7) / 8;
  int log2n = 0;
  while ((std::uint64_t(1) << log2n) < most_rows) ++log2n;
  const int span = 29 - log2n;
  for (std::uint64_t job = blockIdx.x; job < groups * bands; job += gridDim.x) {
    const std::uint64_t band = job / groups, group = job % groups, vector = group * 32 + lane;
    const std::uint64_t r0 = band * band_rows, r1 = r0 + band_rows < rows ? r0 + band_rows : rows;
    double s[4] = {-0.0, -0.0, -0.0, -0.0};
    unsigned most[4] = {0, 0, 0, 0}, least[4] = {~0u, ~0u, ~0u, ~0u};
    const auto take = [&](const float4& v) {
      const float x[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (unsigned j = 0; j < 4; ++j) {
        const unsigned m = __float_as_uint(x[j]) & 0x7fffffffu;
        most[j] = m > most[j] ? m : most[j];
        least[j] = m - 1u < least[j] ? m - 1u : least[j];
        s[j] += static_cast<double>(x[j]);
      }
    };
    if (vector < vectors) {
      std::uint64_t r = r0 + warp;
      for (; r + (kIn - 1) * 8 < r1; r += kIn * 8) {
        float4 v[kIn];
#pragma unroll
        for (unsigned k = 0; k < kIn; ++k) v[k] = __ldg(input + (r + k * 8) * vectors + vector);
#pragma unroll
        for (unsigned k = 0; k < kIn; ++k) take(v[k]);
      }
      for (; r < r1; r += 8) take(__ldg(input + r * vectors + vector));
#pragma unroll
      for (unsigned j = 0; j < 4; ++j)
        if (static_cast<int>(most[j] >> 23) - static_cast<int>(least[j] >> 23) > span) atomicAdd(unvouched, 1u);
    }
#pragma unroll
    for (unsigned j = 0; j < 4; ++j) {
      const unsigned c = lane * 4 + j;
      sums[warp * kRow + c + c / 32] = s[j];
    }
    __syncthreads();
    const std::uint64_t column = group * kGroupCols + threadIdx.x;
    if (threadIdx.x < kGroupCols && column < cols) {
      double total = -0.0;
      for (unsigned w = 0; w < 8; ++w) total += sums[w * kRow + threadIdx.x + threadIdx.x / 32];
      posts[band * cols + column] = total;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();
      last = atomicAdd(tickets + group, 1u) == bands - 1;
    }
    __syncthreads();
    if (last) {
      __threadfence();
      if (threadIdx.x < kGroupCols && column < cols) {
        double a = -0.0, b = 0.0;
        for (std::uint64_t k = 0; k < bands; ++k) {
          double e;
          two_sum(a, __ldcg(posts + k * cols + column), a, e);
          b += e;
        }
        output[column] = static_cast<float>(a + b);
      }
      if (threadIdx.x == 0) tickets[group] = 0;
    }
    __syncthreads();
  }
}

template <unsigned kIn, int kMin>
void variant(const L2Flush& flush, int repeats, int sms, const float* x, std::uint64_t rows, std::uint64_t cols,
             const std::vector<float>& want, double* posts, unsigned* tickets, float* out, unsigned* unvouched) {
  auto k = fcols<kIn, kMin>;
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, 256, 0));
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, k));
  const std::uint64_t blocks = std::uint64_t(per_sm) * sms, vectors = cols / 4, groups = (vectors + 31) / 32;
  // Bands: as many as make about one job a resident block, posts within 1 MiB, whole rounds of loads.
  std::uint64_t bands = (blocks + groups - 1) / groups;
  while (bands > 1 && bands * cols * sizeof(double) > (std::uint64_t(1) << 20)) --bands;
  const std::uint64_t step = 8 * kIn;
  const std::uint64_t band_rows = ((rows + bands - 1) / bands + step - 1) / step * step;
  bands = (rows + band_rows - 1) / band_rows;
  const unsigned grid = static_cast<unsigned>(std::min<std::uint64_t>(blocks, groups * bands));
  CK(cudaMemset(out, 0xff, cols * sizeof(float)));
  CK(cudaMemset(unvouched, 0, sizeof(unsigned)));
  const float us = cold_us(flush, [&] {
    k<<<grid, 256>>>(reinterpret_cast<const float4*>(x), rows, vectors, groups, bands, band_rows, posts, tickets, out, unvouched);
  }, repeats);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> got(cols);
  unsigned lanes = 0;
  CK(cudaMemcpy(got.data(), out, cols * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&lanes, unvouched, sizeof lanes, cudaMemcpyDeviceToHost));
  std::uint64_t differ = 0;
  for (std::uint64_t c = 0; c < cols; ++c) differ += std::memcmp(&got[c], &want[c], sizeof(float)) != 0;
  std::printf("  %u loads, %d blocks/SM asked  %8.1f us %6.0f GB/s  regs %3d, local %zu, %d blocks/SM, grid %u, %llu bands "
              "of %llu rows  columns differing %llu, windows not vouching %u (all calls)\n",
              kIn, kMin, us, double(rows * cols) * 4 / (us * 1e3), attr.numRegs, static_cast<std::size_t>(attr.localSizeBytes),
              per_sm, grid, static_cast<unsigned long long>(bands), static_cast<unsigned long long>(band_rows),
              static_cast<unsigned long long>(differ), lanes);
  std::fflush(stdout);
}

void probe(const L2Flush& flush, int repeats, int sms, const float* x, std::uint64_t rows, std::uint64_t cols,
           double* posts, unsigned* tickets, float* out, float* lib, float* maxima, unsigned* unvouched) {
  const Matrix m{rows, cols, 0};
  const float lib_us = cold_us(flush, [&] { check(reduce_axis(x, m, 0, op::sum{}, lib, nullptr, {})); }, repeats);
  const float max_us = cold_us(flush, [&] { check(reduce_axis(x, m, 0, op::max{}, maxima, nullptr, {})); }, repeats);
  CK(cudaDeviceSynchronize());
  std::vector<float> want(cols);
  CK(cudaMemcpy(want.data(), lib, cols * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("%llu x %llu floats: reduce_axis sum %.1f us, max %.1f us\n", static_cast<unsigned long long>(rows),
              static_cast<unsigned long long>(cols), lib_us, max_us);
  variant<8, 4>(flush, repeats, sms, x, rows, cols, want, posts, tickets, out, unvouched);
  variant<8, 3>(flush, repeats, sms, x, rows, cols, want, posts, tickets, out, unvouched);
  variant<4, 4>(flush, repeats, sms, x, rows, cols, want, posts, tickets, out, unvouched);
  variant<4, 6>(flush, repeats, sms, x, rows, cols, want, posts, tickets, out, unvouched);
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 10;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s; exact float sums along axis 0, 16 bytes a lane, windows without pairs, cold, median of %d\n",
              prop.name, repeats);
  L2Flush flush(prop);
  const int sms = prop.multiProcessorCount;
  const std::uint64_t n = std::uint64_t(1) << 28;
  std::vector<float> host(n);
  for (std::uint64_t i = 0; i < n; ++i) host[i] = probe_value<float>(i);
  float* x = nullptr;
  double* posts = nullptr;
  unsigned* tickets = nullptr;
  float *out = nullptr, *lib = nullptr, *maxima = nullptr;
  unsigned* unvouched = nullptr;
  const std::uint64_t most_cols = 16384;
  CK(cudaMalloc(&x, n * sizeof(float)));
  CK(cudaMalloc(&posts, std::size_t(1) << 20));
  CK(cudaMalloc(&tickets, 4096 * sizeof(unsigned)));
  CK(cudaMalloc(&out, most_cols * sizeof(float)));
  CK(cudaMalloc(&lib, most_cols * sizeof(float)));
  CK(cudaMalloc(&maxima, most_cols * sizeof(float)));
  CK(cudaMalloc(&unvouched, sizeof(unsigned)));
  CK(cudaMemset(tickets, 0, 4096 * sizeof(unsigned)));
  CK(cudaMemcpy(x, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const float read_us = cold_us(flush, [&] {
    read_units<4><<<sms * 8, 256>>>(reinterpret_cast<const int4*>(x), n * sizeof(float) / 16, reinterpret_cast<int*>(out));
  }, repeats);
  std::printf("read of the %llu floats: %.1f us\n", static_cast<unsigned long long>(n), read_us);
  probe(flush, repeats, sms, x, std::uint64_t(1) << 20, 256, posts, tickets, out, lib, maxima, unvouched);
  probe(flush, repeats, sms, x, 16384, 16384, posts, tickets, out, lib, maxima, unvouched);
  CK(cudaFree(x));
  CK(cudaFree(posts));
  CK(cudaFree(tickets));
  CK(cudaFree(out));
  CK(cudaFree(lib));
  CK(cudaFree(maxima));
  CK(cudaFree(unvouched));
  return 0;
}
