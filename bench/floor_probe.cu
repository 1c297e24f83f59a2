// floor_probe: what the bench's floors and ceiling should be. The batch floor of `reducelab
// bench` (an empty kernel launched the library's way, 200 back-to-back launches between two
// events) came out above the time of whole reductions of 2^10 elements in the same mode, and its
// read ceiling (a grid-stride read-only kernel over 1 GiB) below what the library's large
// reductions read per second. This times, on device 0:
//   - empty launches, four ways (programmatic dependent launch with the trigger before or after
//     the wait, with neither, and a plain launch), beside reducelab::reduce of 2^10 int32, in
//     batch mode (200 calls between two events) and sync mode (one call, the device idle);
//   - read-only kernels over 1 GiB: the grid-stride kernel of the bench, and blocks reading
//     contiguous 16 or 32 KiB units in turn, beside reducelab::reduce of 2^28 int32 (cold).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <cstdio>
#include <vector>

#include "probe_timing.cuh"
#include "reducelab/reduce.cuh"

namespace {

__device__ __forceinline__ void wait_() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void trigger_() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

__global__ void empty_trigger_wait() { trigger_(); wait_(); }
__global__ void empty_wait_trigger() { wait_(); trigger_(); }
__global__ void empty_bare() {}

template <class... P>
void launch_pdl(void (*k)(P...), unsigned grid, unsigned threads) {
  cudaLaunchConfig_t c = {};
  c.gridDim = dim3(grid);
  c.blockDim = dim3(threads);
  cudaLaunchAttribute a = {};
  a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  a.val.programmaticStreamSerializationAllowed = 1;
  c.attrs = &a;
  c.numAttrs = 1;
  CK(cudaLaunchKernelEx(&c, k));
}

void must(const reducelab::Status& s) {
  if (!s) {
    std::fprintf(stderr, "reducelab::reduce: %s\n", s.message().c_str());
    std::exit(1);
  }
}

float events_us(const std::function<void()>& f, int calls) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaEventRecord(a));
  for (int i = 0; i < calls; ++i) f();
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return ms * 1000 / calls;
}

float median_of(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// batch: 200 calls between two events, median of 101; sync: one call after a device sync.
void floors(const char* name, const std::function<void()>& f) {
  for (int i = 0; i < 5; ++i) f();
  CK(cudaDeviceSynchronize());
  std::vector<float> batch, sync;
  for (int r = 0; r < 101; ++r) batch.push_back(events_us(f, 200));
  for (int r = 0; r < 101; ++r) {
    CK(cudaDeviceSynchronize());
    sync.push_back(events_us(f, 1));
  }
  std::printf("%-34s batch %6.2f us   sync %6.2f us\n", name, median_of(batch), median_of(sync));
}

__global__ void read_grid_stride(const int4* __restrict__ data, std::size_t count, int* sink) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int acc = 0;
  for (; i + 3 * stride < count; i += 4 * stride) {
    const int4 a = __ldg(data + i), b = __ldg(data + i + stride), c = __ldg(data + i + 2 * stride),
               d = __ldg(data + i + 3 * stride);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < count; i += stride) acc ^= __ldg(data + i).x;
  if (acc == 0x12345678) *sink = acc;
}

}  // namespace

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("floor_probe on %s, %d SMs\n", p.name, p.multiProcessorCount);

  const std::size_t small = 1024;
  int* in = nullptr;
  std::int64_t* out = nullptr;
  CK(cudaMalloc(&in, std::size_t(1) << 30));
  CK(cudaMemset(in, 1, std::size_t(1) << 30));
  CK(cudaMalloc(&out, sizeof(std::int64_t) * 2));
  floors("PDL, trigger then wait (the bench's)", [] { launch_pdl(empty_trigger_wait, 1, 256); });
  floors("PDL, wait then trigger", [] { launch_pdl(empty_wait_trigger, 1, 256); });
  floors("PDL, neither", [] { launch_pdl(empty_bare, 1, 256); });
  floors("plain <<<1, 256>>>", [] { empty_bare<<<1, 256>>>(); CK(cudaGetLastError()); });
  floors("plain <<<1, 1>>>", [] { empty_bare<<<1, 1>>>(); CK(cudaGetLastError()); });
  floors("reducelab::reduce int32 sum 2^10", [&] { must(reducelab::reduce(in, small, reducelab::op::sum{}, out)); });
  floors("PDL, trigger then wait (again)", [] { launch_pdl(empty_trigger_wait, 1, 256); });

  const std::size_t bytes = std::size_t(1) << 30, count = bytes / sizeof(int4);
  const int4* data = reinterpret_cast<const int4*>(in);
  int* sink = reinterpret_cast<int*>(out + 1);
  L2Flush flush(p);
  const int sms = p.multiProcessorCount;
  auto gbs = [&](const char* name, const std::function<void()>& f) {
    std::printf("%-40s %7.1f GB/s\n", name, bytes / (cold_us(flush, f, 15) * 1e-6) / 1e9);
  };
  gbs("grid-stride, 4x512 blocks/SM x 4 loads", [&] { read_grid_stride<<<sms * 4, 512>>>(data, count, sink); });
  gbs("units 16 KiB, 8 blocks/SM", [&] { read_units<4><<<sms * 8, 256>>>(data, count, sink); });
  gbs("units 32 KiB, 8 blocks/SM", [&] { read_units<8><<<sms * 8, 256>>>(data, count, sink); });
  gbs("units 32 KiB, 4 blocks/SM", [&] { read_units<8><<<sms * 4, 256>>>(data, count, sink); });
  gbs("units 64 KiB, 4 blocks/SM", [&] { read_units<16><<<sms * 4, 256>>>(data, count, sink); });
  gbs("reducelab::reduce int32 sum 2^28", [&] { must(reducelab::reduce(in, bytes / 4, reducelab::op::sum{}, out)); });
  return 0;
}
