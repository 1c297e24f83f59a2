// The device side of `reducelab bench --gpus`: the inputs and local CUB reductions.
#include <cub/device/device_reduce.cuh>

#include "dist/bench_dist_cuda.hpp"

namespace reducelab::dist::bench::kernels {
namespace {

__device__ inline std::uint64_t hash(std::uint64_t i) {
  std::uint64_t h = i * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}
template <class T>
__global__ void fill_kernel(T* x, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n; i += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint64_t h = hash(i);
    if constexpr (std::is_same_v<T, float>) x[i] = float(std::int32_t(h >> 40) - (1 << 23)) / float(1 << 23);
    else if constexpr (std::is_same_v<T, double>) x[i] = double(std::int64_t(h >> 11) - (std::int64_t(1) << 52)) * 0x1p-52;
    else x[i] = static_cast<T>(h >> 32);
  }
}
template <class T>
cudaError_t fill_as(void* x, std::uint64_t n, cudaStream_t s) {
  fill_kernel<T><<<2048, 256, 0, s>>>(static_cast<T*>(x), n);
  return cudaGetLastError();
}
template <class T>
cudaError_t cub_as(int op, const void* x, void* out, std::uint64_t n, void* tmp, std::size_t* bytes, cudaStream_t s) {
  const T* in = static_cast<const T*>(x);
  T* o = static_cast<T*>(out);
  if (op == 0) return cub::DeviceReduce::Sum(tmp, *bytes, in, o, n, s);
  if (op == 1) return cub::DeviceReduce::Max(tmp, *bytes, in, o, n, s);
  return cub::DeviceReduce::Min(tmp, *bytes, in, o, n, s);
}

}  // namespace

cudaError_t fill(int dtype, void* x, std::uint64_t n, cudaStream_t stream) {
  if (dtype == 0) return fill_as<float>(x, n, stream);
  if (dtype == 1) return fill_as<double>(x, n, stream);
  return fill_as<std::int32_t>(x, n, stream);
}
cudaError_t cub_reduce(int dtype, int op, const void* x, void* out, std::uint64_t n, void* tmp, std::size_t* bytes,
                       cudaStream_t stream) {
  if (dtype == 0) return cub_as<float>(op, x, out, n, tmp, bytes, stream);
  if (dtype == 1) return cub_as<double>(op, x, out, n, tmp, bytes, stream);
  return cub_as<std::int32_t>(op, x, out, n, tmp, bytes, stream);
}

}  // namespace reducelab::dist::bench::kernels
