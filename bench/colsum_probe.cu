// colsum_probe: exact half sums along axis 0 of a dense matrix of 8 to 256 columns (2^28 halves),
// read as one array with 16-byte loads, written out here in a few lines. A thread's vectors always
// hold the same eight columns (a row is 1 to 32 vectors); it keeps a plain double a column (exact:
// every finite half is a multiple of 2^-24 below 2^16, and no thread takes 8192 elements of a
// column here), turns it into an integer count of 2^-24 at the end, and the counts are added as
// integers: a warp's lanes with shuffles, the warps in shared memory, the blocks with 64-bit
// atomic additions into one counter a column; the block that takes the last ticket rounds each
// counter once and clears it. No pairs anywhere. Beside it, in the same call: the library's sum
// and max along axis 0, a plain read of the bytes. Cold (behind an L2 flush), median of R; every
// variant's results compared bit for bit with reduce_axis's. (The probe's input has no infinity
// or NaN, and no column sums to zero; the library's kernel handles those.)
//   colsum_probe [repeats=10]
#include <cuda_fp16.h>
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
using H = reducelab::half;

// kG vectors a row (8 kG columns), kIn vectors in flight a thread.
template <unsigned kG, unsigned kIn, int kMin>
__global__ void __launch_bounds__(256, kMin)
    cols_sum(const uint4* input, std::uint64_t vectors, unsigned long long* counts, unsigned* ticket, float* output) {
  constexpr unsigned kCols = 8 * kG;
  __shared__ unsigned long long block_counts[kCols];
  __shared__ bool last;
  for (unsigned c = threadIdx.x; c < kCols; c += 256) block_counts[c] = 0;
  double s[8];
#pragma unroll
  for (unsigned j = 0; j < 8; ++j) s[j] = -0.0;
  constexpr std::uint64_t kUnit = 256 * kIn;
  const std::uint64_t units = vectors / kUnit;
  for (std::uint64_t u = blockIdx.x; u < units; u += gridDim.x) {
    uint4 v[kIn];
#pragma unroll
    for (unsigned i = 0; i < kIn; ++i) v[i] = __ldg(input + u * kUnit + i * 256 + threadIdx.x);
#pragma unroll
    for (unsigned i = 0; i < kIn; ++i) {
      const unsigned w[4] = {v[i].x, v[i].y, v[i].z, v[i].w};
#pragma unroll
      for (unsigned q = 0; q < 4; ++q) {
        const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&w[q]));
        s[2 * q] += static_cast<double>(f.x);
        s[2 * q + 1] += static_cast<double>(f.y);
      }
    }
  }
  __syncthreads();  // block_counts cleared
  const unsigned lane = threadIdx.x % 32;
#pragma unroll
  for (unsigned j = 0; j < 8; ++j) {
    long long c = __double2ll_rn(s[j] * 16777216.0);
#pragma unroll
    for (unsigned offset = 16; offset >= kG; offset >>= 1) c += __shfl_down_sync(0xffffffffu, c, offset);
    if (lane < kG) atomicAdd(&block_counts[lane * 8 + j], static_cast<unsigned long long>(c));
  }
  __syncthreads();
  for (unsigned c = threadIdx.x; c < kCols; c += 256) atomicAdd(&counts[c], block_counts[c]);
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (unsigned c = threadIdx.x; c < kCols; c += 256) {
    const long long total = static_cast<long long>(atomicExch(&counts[c], 0ull));
    output[c] = static_cast<float>(total) * (1.0f / 16777216.0f);
  }
  if (threadIdx.x == 0) *ticket = 0;
}

template <unsigned kG, unsigned kIn, int kMin>
void variant(const L2Flush& flush, int repeats, int sms, const H* x, std::uint64_t n, const std::vector<float>& want,
             unsigned long long* counts, unsigned* ticket, float* out) {
  constexpr unsigned kCols = 8 * kG;
  auto k = cols_sum<kG, kIn, kMin>;
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, 256, 0));
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, k));
  const std::uint64_t vectors = n / 8;
  const unsigned grid = static_cast<unsigned>(std::min<std::uint64_t>(std::uint64_t(per_sm) * sms, vectors / (256 * kIn)));
  CK(cudaMemset(out, 0xff, kCols * sizeof(float)));
  const float us = cold_us(flush, [&] { k<<<grid, 256>>>(reinterpret_cast<const uint4*>(x), vectors, counts, ticket, out); }, repeats);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> got(kCols);
  CK(cudaMemcpy(got.data(), out, kCols * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("  %u loads, %d blocks/SM asked  %8.1f us %6.0f GB/s  regs %3d, local %zu, %d blocks/SM, grid %u  %s\n", kIn,
              kMin, us, double(n) * 2 / (us * 1e3), attr.numRegs, static_cast<std::size_t>(attr.localSizeBytes), per_sm,
              grid, std::memcmp(got.data(), want.data(), kCols * sizeof(float)) == 0 ? "bits equal" : "BITS DIFFER");
  std::fflush(stdout);
}

template <unsigned kG>
void probe(const L2Flush& flush, int repeats, int sms, const H* x, std::uint64_t n, unsigned long long* counts,
           unsigned* ticket, float* out, float* lib, H* maxima) {
  constexpr unsigned kCols = 8 * kG;
  const Matrix m{n / kCols, kCols, 0};
  const float lib_us = cold_us(flush, [&] { check(reduce_axis(x, m, 0, op::sum{}, lib, nullptr, {})); }, repeats);
  const float max_us = cold_us(flush, [&] { check(reduce_axis(x, m, 0, op::max{}, maxima, nullptr, {})); }, repeats);
  CK(cudaDeviceSynchronize());
  std::vector<float> want(kCols);
  CK(cudaMemcpy(want.data(), lib, kCols * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("%llu x %u halves: reduce_axis sum %.1f us, max %.1f us\n", static_cast<unsigned long long>(n / kCols), kCols,
              lib_us, max_us);
  variant<kG, 4, 4>(flush, repeats, sms, x, n, want, counts, ticket, out);
  variant<kG, 4, 3>(flush, repeats, sms, x, n, want, counts, ticket, out);
  variant<kG, 8, 3>(flush, repeats, sms, x, n, want, counts, ticket, out);
  variant<kG, 8, 2>(flush, repeats, sms, x, n, want, counts, ticket, out);
  variant<kG, 2, 6>(flush, repeats, sms, x, n, want, counts, ticket, out);
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 10;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s; exact half sums along axis 0 read as one array, integer folds, cold, median of %d\n", prop.name,
              repeats);
  L2Flush flush(prop);
  const int sms = prop.multiProcessorCount;
  const std::uint64_t n = std::uint64_t(1) << 28;
  std::vector<H> host(n);
  for (std::uint64_t i = 0; i < n; ++i) host[i] = probe_value<H>(i);
  H* x = nullptr;
  unsigned long long* counts = nullptr;
  unsigned* ticket = nullptr;
  float* out = nullptr;
  float* lib = nullptr;
  H* maxima = nullptr;
  CK(cudaMalloc(&x, n * sizeof(H)));
  CK(cudaMalloc(&counts, 256 * sizeof(unsigned long long)));
  CK(cudaMalloc(&ticket, sizeof(unsigned)));
  CK(cudaMalloc(&out, 256 * sizeof(float)));
  CK(cudaMalloc(&lib, 256 * sizeof(float)));
  CK(cudaMalloc(&maxima, 256 * sizeof(H)));
  CK(cudaMemset(counts, 0, 256 * sizeof(unsigned long long)));
  CK(cudaMemset(ticket, 0, sizeof(unsigned)));
  CK(cudaMemcpy(x, host.data(), n * sizeof(H), cudaMemcpyHostToDevice));
  const float read_us =
      cold_us(flush, [&] { read_units<4><<<sms * 8, 256>>>(reinterpret_cast<const int4*>(x), n * sizeof(H) / 16, reinterpret_cast<int*>(out)); }, repeats);
  std::printf("read of the %llu halves: %.1f us\n", static_cast<unsigned long long>(n), read_us);
  probe<1>(flush, repeats, sms, x, n, counts, ticket, out, lib, maxima);
  probe<2>(flush, repeats, sms, x, n, counts, ticket, out, lib, maxima);
  probe<4>(flush, repeats, sms, x, n, counts, ticket, out, lib, maxima);
  probe<8>(flush, repeats, sms, x, n, counts, ticket, out, lib, maxima);
  probe<32>(flush, repeats, sms, x, n, counts, ticket, out, lib, maxima);
  CK(cudaFree(x));
  CK(cudaFree(counts));
  CK(cudaFree(ticket));
  CK(cudaFree(out));
  CK(cudaFree(lib));
  CK(cudaFree(maxima));
  return 0;
}
