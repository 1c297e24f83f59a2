// The CUDA half of memory.hpp (host code against the CUDA runtime; no SIMT headers here).
#include "memory.hpp"

#include <stdexcept>

#if RL_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace gallery_test {

#if RL_WITH_CUDA
namespace {

#define CHECK_CUDA(call)                                                                      \
  do {                                                                                        \
    cudaError_t e_ = (call);                                                                  \
    if (e_ != cudaSuccess)                                                                    \
      throw std::runtime_error(std::string(#call) + " failed: " + cudaGetErrorName(e_) + " (" + \
                               cudaGetErrorString(e_) + ")");                                 \
  } while (0)

struct CudaMemory final : Memory {
  void* alloc(std::size_t bytes) override {
    void* p = nullptr;
    CHECK_CUDA(cudaMalloc(&p, bytes));
    return p;
  }
  void free(void* p) override { cudaFree(p); }
  void upload(void* d, const void* s, std::size_t b) override {
    CHECK_CUDA(cudaMemcpy(d, s, b, cudaMemcpyHostToDevice));
  }
  void download(void* d, const void* s, std::size_t b) override {
    CHECK_CUDA(cudaMemcpy(d, s, b, cudaMemcpyDeviceToHost));
  }
  void synchronize() override {
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
  }
  std::size_t free_bytes() override {
    std::size_t free = 0, total = 0;
    CHECK_CUDA(cudaMemGetInfo(&free, &total));
    return free;
  }
};

}  // namespace

std::unique_ptr<Memory> make_cuda_memory() { return std::make_unique<CudaMemory>(); }

std::string cuda_unavailable() {
  static const std::string why = [] {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess)
      return std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(err) + " (" +
             cudaGetErrorString(err) + ")";
    if (count == 0) return std::string("cudaGetDeviceCount returned 0");
    return std::string();
  }();
  return why;
}

#else

std::unique_ptr<Memory> make_cuda_memory() { return nullptr; }
std::string cuda_unavailable() { return "this binary was built without CUDA"; }

#endif

}  // namespace gallery_test
