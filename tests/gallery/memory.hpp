#pragma once
// Device memory for the gallery tests on either backend. The CUDA half lives in cuda_memory.cpp:
// <cuda_runtime.h> and the SIMT runtime (which defines dim3, threadIdx, ...) cannot share a
// translation unit.
#include <cstddef>
#include <memory>
#include <string>

namespace gallery_test {

struct Memory {
  virtual ~Memory() = default;
  virtual void* alloc(std::size_t bytes) = 0;
  virtual void free(void* p) = 0;
  virtual void upload(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void download(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void synchronize() = 0;
  virtual std::size_t free_bytes() = 0;
};

// cudaMalloc/cudaMemcpy with checks (throws std::runtime_error naming the call); nullptr when
// built without CUDA.
std::unique_ptr<Memory> make_cuda_memory();

// Why CUDA cases cannot run here ("" when they can): built without CUDA, cudaGetDeviceCount
// failed, or it returned 0.
std::string cuda_unavailable();

}  // namespace gallery_test
