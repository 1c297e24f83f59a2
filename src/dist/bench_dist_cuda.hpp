#pragma once
// The device side of `reducelab bench --gpus` (bench_dist_cuda.cu): inputs and the CUB baseline.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace reducelab::dist::bench::kernels {

template <class T>
constexpr int dtype_code() {
  if constexpr (std::is_same_v<T, float>) return 0;
  else if constexpr (std::is_same_v<T, double>) return 1;
  else return 2;  // int32
}
// Fills x[0, n) with values in [-1, 1) (integers: hashed bits).
cudaError_t fill(int dtype, void* x, std::uint64_t n, cudaStream_t stream);
// cub::DeviceReduce::Sum (op 0), Max (1) or Min (2) into out (the element type); tmp == nullptr
// sizes *bytes.
cudaError_t cub_reduce(int dtype, int op, const void* x, void* out, std::uint64_t n, void* tmp, std::size_t* bytes,
                       cudaStream_t stream);

}  // namespace reducelab::dist::bench::kernels
