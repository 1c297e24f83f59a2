// widen_probe: exact half sums along short rows (256 and 512 halves, 2^28 halves in all), a few
// lanes a row with four 16-byte loads each in flight (reduceFreeRows' shape), written out here in
// a few lines: what the library's kernel costs beyond it, and how a half becomes a double. Every
// finite half is a multiple of 2^-24 below 2^16, so a row of up to 8192 sums exactly in double in
// any order; the widenings compared:
//   f2f      half to float to double (two conversions; what the library does);
//   cvt      one cvt.f64.f16;
//   bits     the half's bits placed in a double's top word (sign at bit 63, exponent and fraction
//            from bit 42): the value times 2^-1008, subnormals included, with integer operations
//            only; the row's sum is scaled back by 2^1008 (exact). An infinity or NaN would read as
//            a finite value, so the lanes also OR the words' exponent carries; no row of this input
//            has one, and the probe says when one was flagged.
// Beside them, on the same input and in the same call: reduce_axis's sum and max (the max: the
// same kernel shape with next to no arithmetic) at its own grid and at 4, 16 and 64 blocks an SM;
// a plain read of the bytes; the f2f kernel on a grid of every row and on 4 blocks an SM; and the
// f2f kernel followed by a stand-in for the exact sums' redo kernel (wait for the kernel before,
// read the empty list, take a ticket), launched plainly and overlapped (programmatic dependent
// launch, as the library does). Cold (behind an L2 flush), median of R; every sum's output
// compared bit for bit with reduce_axis's.
//   widen_probe [repeats=10]
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "probe_timing.cuh"
#include "reducelab/detail/agent_reduce.cuh"
#include "reducelab/detail/launch.cuh"
#include "reducelab/segments.hpp"

namespace {

using namespace reducelab;
using H = reducelab::half;  // cuda_fp16.h has a half of its own

enum class Widen { f2f, cvt, bits };

__device__ __forceinline__ double widen_half(std::uint16_t h, Widen how) {
  if (how == Widen::cvt) {
    double d;
    asm("cvt.f64.f16 %0, %1;" : "=d"(d) : "h"(h));
    return d;
  }
  if (how == Widen::f2f) return static_cast<double>(__half2float(__ushort_as_half(h)));
  const std::uint32_t hi = (std::uint32_t(h & 0x8000u) << 16) | (std::uint32_t(h & 0x7fffu) << 10);
  return __hiloint2double(static_cast<int>(hi), 0);  // the value times 2^-1008
}

// kLanes lanes a row of kLanes * 4 vectors, four vectors a lane, every load issued first.
template <Widen kHow, unsigned kLanes>
__global__ void __launch_bounds__(256, 4)
    rows_sum(const uint4* input, std::uint64_t rows, float* output, unsigned* flagged) {
  const unsigned lane = threadIdx.x % 32, sub = lane % kLanes;
  constexpr std::uint64_t kRowsPerWarp = 32 / kLanes, kVectors = kLanes * 4;
  const std::uint64_t warp = std::uint64_t(blockIdx.x) * 8 + threadIdx.x / 32;
  const std::uint64_t warps = std::uint64_t(gridDim.x) * 8;
  for (std::uint64_t base = warp * kRowsPerWarp; base < rows; base += warps * kRowsPerWarp) {
    const std::uint64_t r = base + lane / kLanes;
    uint4 v[4];
#pragma unroll
    for (unsigned q = 0; q < 4; ++q) v[q] = r < rows ? __ldg(input + r * kVectors + sub + q * kLanes) : make_uint4(0, 0, 0, 0);
    double s[2] = {-0.0, -0.0};
    std::uint32_t carries = 0;
#pragma unroll
    for (unsigned q = 0; q < 16; ++q) {
      const std::uint32_t w = q % 4 == 0 ? v[q / 4].x : q % 4 == 1 ? v[q / 4].y : q % 4 == 2 ? v[q / 4].z : v[q / 4].w;
      if (kHow == Widen::bits) carries |= (w & 0x7fff7fffu) + 0x04000400u;  // bit 15 or 31: exponent 31
      s[q % 2] += widen_half(static_cast<std::uint16_t>(w), kHow) + widen_half(static_cast<std::uint16_t>(w >> 16), kHow);
    }
    double a = s[0] + s[1];
    for (unsigned offset = kLanes / 2; offset > 0; offset >>= 1) a += __shfl_down_sync(0xffffffffu, a, offset);
    if (kHow == Widen::bits) {
      a *= 0x1p1008;
      if (carries & 0x80008000u) atomicAdd(flagged, 1u);
    }
    if (sub == 0 && r < rows) output[r] = static_cast<float>(a);
  }
}

// What follows an exact sum's row kernel in the library (reduceRedoPieces on an empty list): wait
// for the kernel before, read the list's count, take a ticket; the last block clears it.
__global__ void __launch_bounds__(256) after(unsigned long long* list) {
  __shared__ unsigned long long listed;
  __shared__ bool last;
  reducelab::detail::wait_for_producer();
  if (threadIdx.x == 0) listed = list[0];
  __syncthreads();
  if (listed != 0 && threadIdx.x == 0) list[2] = listed;  // never: the list stays empty
  if (threadIdx.x == 0) last = atomicAdd(&list[1], 1ull) == gridDim.x - 1;
  __syncthreads();
  if (last && threadIdx.x == 0) list[1] = 0;
}

// The probe's kernel with `how`: `most` 0, a block for every 8 * 32 / kLanes rows; otherwise at most
// `most` blocks, looping. For f2f, also with the redo's stand-in after it.
template <Widen kHow, unsigned kLanes>
void time_variant(const L2Flush& flush, const H* x, std::uint64_t rows, float* out, const std::vector<float>& want,
                  unsigned* flagged, std::uint64_t most, int repeats, const char* name) {
  CK(cudaMemset(out, 0xff, rows * sizeof(float)));
  CK(cudaMemset(flagged, 0, sizeof(unsigned)));
  const std::uint64_t every = (rows + 8 * (32 / kLanes) - 1) / (8 * (32 / kLanes));
  const unsigned grid = static_cast<unsigned>(most ? std::min(every, most) : every);
  const float us = cold_us(flush, [&] { rows_sum<kHow, kLanes><<<grid, 256>>>(reinterpret_cast<const uint4*>(x), rows, out, flagged); }, repeats);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> got(rows);
  unsigned flags = 0;
  CK(cudaMemcpy(got.data(), out, rows * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&flags, flagged, sizeof flags, cudaMemcpyDeviceToHost));
  const bool same = std::memcmp(got.data(), want.data(), rows * sizeof(float)) == 0;
  std::printf("  %-12s %8.1f us  %s%s\n", name, us, same ? "same bits" : "DIFFERENT BITS", flags ? ", flagged" : "");
  if (kHow == Widen::f2f) {  // then with the redo's stand-in after it, plainly and overlapped
    unsigned long long* list = nullptr;
    CK(cudaMalloc(&list, 4 * sizeof(unsigned long long)));
    CK(cudaMemset(list, 0, 4 * sizeof(unsigned long long)));
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const unsigned after_grid = 2 * static_cast<unsigned>(sms);  // the redo's grid
    const float plain = cold_us(flush, [&] {
      rows_sum<kHow, kLanes><<<grid, 256>>>(reinterpret_cast<const uint4*>(x), rows, out, flagged);
      after<<<after_grid, 256>>>(list);
    }, repeats);
    const float overlapped = cold_us(flush, [&] {
      rows_sum<kHow, kLanes><<<grid, 256>>>(reinterpret_cast<const uint4*>(x), rows, out, flagged);
      CK(reducelab::detail::launch_kernel(after, after_grid, nullptr, list));
    }, repeats);
    CK(cudaGetLastError());
    std::printf("  %-12s then the redo's stand-in: %8.1f us plainly, %8.1f us overlapped\n", "", plain, overlapped);
    CK(cudaFree(list));
  }
}

template <unsigned kLanes>
void probe(const L2Flush& flush, int sms, int repeats) {
  constexpr std::uint64_t length = kLanes * 4 * 8;
  const std::uint64_t n = std::uint64_t(1) << 28, rows = n / length;
  std::vector<H> host(n);
  for (std::uint64_t i = 0; i < n; ++i) host[i] = probe_value<H>(i);
  H* x = nullptr;
  float* out = nullptr;
  H* maxima = nullptr;
  unsigned* flagged = nullptr;
  CK(cudaMalloc(&x, n * sizeof(H)));
  CK(cudaMalloc(&out, rows * sizeof(float)));
  CK(cudaMalloc(&maxima, rows * sizeof(H)));
  CK(cudaMalloc(&flagged, sizeof(unsigned)));
  CK(cudaMemcpy(x, host.data(), n * sizeof(H), cudaMemcpyHostToDevice));
  const Matrix m{rows, length, 0};
  std::printf("%llu x %llu halves\n", static_cast<unsigned long long>(rows), static_cast<unsigned long long>(length));
  const float lib_us = cold_us(flush, [&] { check(reduce_axis(x, m, 1, op::sum{}, out, nullptr, {})); }, repeats);
  const float max_us = cold_us(flush, [&] { check(reduce_axis(x, m, 1, op::max{}, maxima, nullptr, {})); }, repeats);
  const float read_us = cold_us(flush, [&] { read_units<4><<<sms * 8, 256>>>(reinterpret_cast<const int4*>(x), n * sizeof(H) / 16, reinterpret_cast<int*>(flagged)); }, repeats);
  CK(cudaDeviceSynchronize());
  std::vector<float> want(rows);
  CK(cudaMemcpy(want.data(), out, rows * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("  %-12s %8.1f us\n  %-12s %8.1f us\n  %-12s %8.1f us\n", "lib", lib_us, "max", max_us, "read", read_us);
  for (const unsigned per_sm : {4u, 16u, 64u}) {
    Options o;
    o.grid = static_cast<unsigned>(sms) * per_sm;
    std::vector<float> got(rows);
    const float us = cold_us(flush, [&] { check(reduce_axis(x, m, 1, op::sum{}, out, nullptr, o)); }, repeats);
    const float mus = cold_us(flush, [&] { check(reduce_axis(x, m, 1, op::max{}, maxima, nullptr, o)); }, repeats);
    CK(cudaMemcpy(got.data(), out, rows * sizeof(float), cudaMemcpyDeviceToHost));
    std::printf("  lib %2u/SM    %8.1f us  %s; max %8.1f us\n", per_sm, us,
                std::memcmp(got.data(), want.data(), rows * sizeof(float)) == 0 ? "same bits" : "DIFFERENT BITS", mus);
  }
  const std::uint64_t cap = std::uint64_t(sms) * 64;
  time_variant<Widen::f2f, kLanes>(flush, x, rows, out, want, flagged, cap, repeats, "f2f");
  time_variant<Widen::f2f, kLanes>(flush, x, rows, out, want, flagged, 0, repeats, "f2f, every");
  time_variant<Widen::f2f, kLanes>(flush, x, rows, out, want, flagged, std::uint64_t(sms) * 4, repeats, "f2f, 4/SM");
  time_variant<Widen::cvt, kLanes>(flush, x, rows, out, want, flagged, cap, repeats, "cvt");
  time_variant<Widen::bits, kLanes>(flush, x, rows, out, want, flagged, cap, repeats, "bits");
  CK(cudaFree(x));
  CK(cudaFree(out));
  CK(cudaFree(maxima));
  CK(cudaFree(flagged));
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 10;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s; exact half sums of short rows, ways to widen a half, cold, median of %d\n", prop.name, repeats);
  L2Flush flush(prop);
  probe<8>(flush, prop.multiProcessorCount, repeats);
  probe<16>(flush, prop.multiProcessorCount, repeats);
  return 0;
}
