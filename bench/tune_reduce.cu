// A developer's probe for tuning the library kernel: reducelab vs CUB, same process, CUDA
// events, median of repeats, L2 warm (the buffer was just read) or flushed (a 2x-L2 read in
// between). `reducelab bench` is the user-facing benchmark; this one is small and quick to
// rebuild while changing agent_reduce.cuh.
//   tune_reduce [max_log2=30] [repeats=30]
#include <cub/cub.cuh>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "probe_timing.cuh"
#include "reducelab/detail/device_reduce.cuh"  // its own instantiations: variants build with -DRL_REDUCE_*


__global__ void empty_kernel() {}

struct Timer {
  cudaEvent_t a, b;
  Timer() { CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b)); }
  template <class F>
  float us(F&& f) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000;
  }
};

static L2Flush* g_flush = nullptr;
static bool g_cold;

template <class F>
float median_us(F&& f, int reps) {
  Timer t;
  std::vector<float> v;
  for (int r = 0; r < reps + 3; ++r) {
    if (g_cold) (*g_flush)();
    const float x = t.us(f);
    if (r >= 3) v.push_back(x);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class T, class Acc>
void row(const char* name, int lg, int reps, void* buf) {
  const std::size_t n = std::size_t(1) << lg;
  const T* in = static_cast<const T*>(buf);
  // CUB reads 16-bit floats as CUDA's own type, which converts to float implicitly.
  using CubT = std::conditional_t<std::is_same_v<T, reducelab::half>, __half, T>;
  const CubT* cin = static_cast<const CubT*>(buf);
  Acc* out;
  CK(cudaMalloc(&out, 64));
  std::size_t temp_bytes = 0;
  CK(cub::DeviceReduce::Reduce(nullptr, temp_bytes, cin, out, n, cuda::std::plus<Acc>{}, Acc(0)));
  void* temp;
  CK(cudaMalloc(&temp, temp_bytes));
  const float cub_us = median_us([&] { CK(cub::DeviceReduce::Reduce(temp, temp_bytes, cin, out, n, cuda::std::plus<Acc>{}, Acc(0))); }, reps);
  auto* rout = reinterpret_cast<reducelab::result_t<T, reducelab::op::sum>*>(out);
  using reducelab::detail::launch_reduce;
  namespace op = reducelab::op;
  const float rl_us = median_us([&] { if (!launch_reduce<T, op::sum>(in, n, rout, nullptr, {}).ok()) std::exit(2); }, reps);
  const float nd_us = median_us([&] {
    if (!launch_reduce<T, op::sum>(in, n, rout, nullptr, reducelab::Options{0, false}).ok()) std::exit(2);
  }, reps);
  const float mx_us = median_us([&] { if (!launch_reduce<T, op::max>(in, n, reinterpret_cast<T*>(out), nullptr, {}).ok()) std::exit(2); }, reps);
  std::printf("%-6s 2^%-2d %s cub %8.2f  rl %8.2f (%.2fx)  nondet %8.2f  max %8.2f  GB/s rl %7.1f\n", name, lg,
              g_cold ? "cold" : "warm", cub_us, rl_us, cub_us / rl_us, nd_us, mx_us, n * sizeof(T) / (rl_us * 1e3));
  CK(cudaFree(temp));
  CK(cudaFree(out));
}

int main(int argc, char** argv) {
  const int max_lg = argc > 1 ? std::atoi(argv[1]) : 30;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 30;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("device %s, %d SMs, L2 %d MiB\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20);
  L2Flush flush(p);
  g_flush = &flush;
  void* buf;
  const std::size_t bytes = (std::size_t(1) << max_lg) * 8;
  CK(cudaMalloc(&buf, bytes));
  CK(cudaMemset(buf, 0, bytes));
  std::printf("variant: %u threads x %u items\n", reducelab::detail::kThreads, reducelab::detail::kItems);
  for (int cold = 1; cold < 2; ++cold) {
    g_cold = cold;
    std::printf("empty launch %s: %.2f us\n", cold ? "cold" : "warm", median_us([] { empty_kernel<<<1, 32>>>(); }, reps));
    for (int lg : {12, 14, 16, 18, 20, 21, 22, 23, 24, 26, 28, 30}) {
      if (lg > max_lg) break;
      row<int, long long>("int32", lg, reps, buf);
      row<float, float>("float", lg, reps, buf);
      row<double, double>("double", lg, reps, buf);
      row<reducelab::half, float>("half", lg, reps, buf);
    }
  }
  return 0;
}
