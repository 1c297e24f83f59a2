// A developer's probe for the order-free kernel (include/reducelab/detail/agent_order_free.cuh) at
// large n: its unit shape (vectors per thread per unit) and how blocks take units (every
// gridDim.x-th unit, as the library does, or one contiguous run each), against CUB's max, cold
// (queued behind an L2 flush), median of R. Every variant must give the library's result.
//   free_probe [repeats=20]
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>
#include "reducelab/detail/device_reduce.cuh"
#include "probe_timing.cuh"

using namespace reducelab::detail;
namespace op = reducelab::op;

__global__ void fill(float* f, double* d, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    const float v = float(int((i * 2654435761u) >> 12) % 100003) * 0.37f;
    f[i] = v;
    d[i] = double(v) * 1.0000001;
  }
}

static L2Flush* g_flush = nullptr;
static int g_sms;

template <class T, unsigned LOADS, bool CONTIG>
void variant(const char* name, const T* in, std::size_t n, T* out, void* posts, unsigned* ticket, int reps, T want,
             int per_sm_cap, bool* ok) {
  using Sem = semantics_t<T, op::max>;
  constexpr auto kernel = reduceOrderFree<T, Sem, LOADS, CONTIG>;
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  if (per_sm_cap > 0) per_sm = std::min(per_sm, per_sm_cap);
  FreeShape s = free_shape<T>(n, in, std::uint64_t(g_sms) * per_sm);
  s.units = (s.vectors + std::uint64_t(kThreads) * LOADS - 1) / (std::uint64_t(kThreads) * LOADS);
  s.grid = unsigned(std::max<std::uint64_t>(1, std::min<std::uint64_t>(s.units, std::min<std::uint64_t>(std::uint64_t(g_sms) * per_sm, kPartialSlots))));
  auto launch = [&] { kernel<<<s.grid, kThreads>>>(in, s, static_cast<unsigned long long*>(posts), ticket, out); };
  launch();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  T got;
  CK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
  const bool same = std::memcmp(&got, &want, sizeof got) == 0;
  if (!same) *ok = false;
  std::printf("  %-16s %9.2f%s", name, cold_us(*g_flush, launch, reps, 2), same ? "" : " WRONG");
}

template <class T>
void sweep(const char* type, const T* in, void* posts, unsigned* ticket, int reps, bool* ok) {
  T* out;
  CK(cudaMalloc(&out, 64));
  std::size_t tb = 0;
  CK(cub::DeviceReduce::Max(nullptr, tb, in, out, std::size_t(1) << 30));
  void* temp;
  CK(cudaMalloc(&temp, tb));
  for (int lg : {16, 20, 24, 26, 28, 30}) {
    const std::size_t n = std::size_t(1) << lg;
    if (!launch_reduce<T, op::max>(in, n, out, nullptr, {}).ok()) std::exit(2);
    CK(cudaDeviceSynchronize());
    T want;
    CK(cudaMemcpy(&want, out, sizeof want, cudaMemcpyDeviceToHost));
    std::printf("%s max 2^%d  library %9.2f  cub %9.2f\n", type, lg, cold_us(*g_flush, [&] {
      if (!launch_reduce<T, op::max>(in, n, out, nullptr, {}).ok()) std::exit(2);
    }, reps, 2), cold_us(*g_flush, [&] { std::size_t t = tb; CK(cub::DeviceReduce::Max(temp, t, in, out, n)); }, reps, 2));
    variant<T, 4, false>("l4 strided", in, n, out, posts, ticket, reps, want, 0, ok);
    variant<T, 8, false>("l8 strided", in, n, out, posts, ticket, reps, want, 0, ok);
    variant<T, 4, true>("l4 contig", in, n, out, posts, ticket, reps, want, 0, ok);
    std::printf("\n");
    variant<T, 8, true>("l8 contig", in, n, out, posts, ticket, reps, want, 0, ok);
    variant<T, 4, false>("l4 strided 4/SM", in, n, out, posts, ticket, reps, want, 4, ok);
    variant<T, 8, true>("l8 contig 4/SM", in, n, out, posts, ticket, reps, want, 4, ok);
    std::printf("\n");
    std::fflush(stdout);
  }
  CK(cudaFree(temp));
  CK(cudaFree(out));
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  g_sms = p.multiProcessorCount;
  std::printf("device %s, %d SMs; cold us (median of %d); library = reducelab::reduce (max)\n", p.name, g_sms, reps);
  L2Flush flush(p);
  g_flush = &flush;
  const std::size_t maxn = std::size_t(1) << 30;
  float* f;
  double* d;
  CK(cudaMalloc(&f, maxn * sizeof(float)));
  CK(cudaMalloc(&d, maxn * sizeof(double)));
  fill<<<1056, 256>>>(f, d, maxn);
  CK(cudaGetLastError());
  void* posts;  // the kernel's posted results (posted_results.cuh): zeroed once, left zeroed by each launch
  CK(cudaMalloc(&posts, kPostBytes));
  CK(cudaMemset(posts, 0, kPostBytes));
  unsigned* ticket;
  CK(cudaMalloc(&ticket, 4));
  CK(cudaMemset(ticket, 0, 4));
  CK(cudaDeviceSynchronize());
  bool ok = true;
  sweep<float>("float", f, posts, ticket, reps, &ok);
  sweep<double>("double", d, posts, ticket, reps, &ok);
  std::printf("%s\n", ok ? "every variant gave the library's result" : "SOME VARIANT DIFFERED");
  return ok ? 0 : 1;
}
