// Reduces on the GPU through an installed reducelab and checks the bits against the CPU backend.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "reducelab/reduce.hpp"
#include "reducelab/segments.hpp"

int main() {
  if (auto st = reducelab::gpu_available(); !st) {
    std::printf("consumer_gpu: skipped, no GPU: %s\n", st.message().c_str());
    return 0;
  }
  const std::size_t rows = 64, cols = 100003;
  std::vector<float> x(rows * cols);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = float((i * 2654435761u) % 1000) / 999.0f - 0.5f;
  float *d_x = nullptr, *d_out = nullptr;
  if (cudaMalloc(&d_x, x.size() * sizeof(float)) != cudaSuccess || cudaMalloc(&d_out, rows * sizeof(float)) != cudaSuccess ||
      cudaMemcpy(d_x, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) {
    std::printf("consumer_gpu: CUDA allocation or copy failed\n");
    return 1;
  }
  const auto whole = reducelab::reduce_to_host(d_x, x.size(), reducelab::op::sum{});
  const auto st = reducelab::reduce_axis(d_x, reducelab::Matrix{rows, cols, 0}, 1, reducelab::op::sum{}, d_out);
  std::vector<float> got(rows), want(rows);
  if (!whole || !st || cudaMemcpy(got.data(), d_out, rows * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) {
    std::printf("consumer_gpu: %s\n", !whole ? whole.status.message().c_str() : st.message().c_str());
    return 1;
  }
  (void)reducelab::cpu::reduce_axis(x.data(), reducelab::Matrix{rows, cols, 0}, 1, reducelab::op::sum{}, want.data());
  const float cpu_whole = reducelab::cpu::reduce(x.data(), x.size(), reducelab::op::sum{}).value;
  const bool same = std::memcmp(got.data(), want.data(), rows * sizeof(float)) == 0 &&
                    std::memcmp(&whole.value, &cpu_whole, sizeof(float)) == 0;
  std::printf("consumer_gpu: sum %.6f, row 0 %.6f, GPU and CPU bits %s\n", whole.value, got[0], same ? "equal" : "DIFFER");
  cudaFree(d_x);
  cudaFree(d_out);
  return same ? 0 : 1;
}
