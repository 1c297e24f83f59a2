#pragma once
// What the developer probes share: a checked CUDA call that exits with the failing expression, a
// checked library call, the bench's read kernel, the cold timing of `reducelab bench` (each call
// queued behind a read of twice the L2, timed with CUDA events, the median of `repeats` after
// warm-ups), and the input the probes of axes fill their matrices with (probe_value).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <type_traits>
#include <vector>

#include "lab/read_kernels.cuh"
#include "reducelab/reduce.hpp"
#include "reducelab/types.hpp"

#define CK(x)                                                                                                  \
  do {                                                                                                         \
    cudaError_t e_ = (x);                                                                                      \
    if (e_ != cudaSuccess) {                                                                                   \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));                  \
      std::exit(1);                                                                                            \
    }                                                                                                          \
  } while (0)

// A library call's status: on failure, its message and exit status 2.
inline void check(const reducelab::Status& st) {
  if (!st) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    std::exit(2);
  }
}

__global__ void flush_read(const int4* p, std::size_t n, int* sink) {
  int acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    acc ^= __ldg(p + i).x;
  if (acc == 0x7fffffff) *sink = acc;
}

// The probes' input: element i of a fixed pseudo-random sequence of multiples of 0.37 in
// [-37000, 37000] (halves: a thousandth of that; bfloat16: those values rounded), the same in
// every probe and run.
template <class T>
T probe_value(std::uint64_t i) {
  const std::uint64_t h = (i * 0x9E3779B97F4A7C15ull) >> 40;
  const double v = static_cast<double>(static_cast<std::int64_t>(h % 200001) - 100000) * 0.37;
  if constexpr (std::is_same_v<T, reducelab::half>) return reducelab::to_half(static_cast<float>(v * 1e-3));
  else if constexpr (std::is_same_v<T, reducelab::bfloat16>) return reducelab::to_bfloat16(static_cast<float>(v));
  else return static_cast<T>(v);
}

// The element type's name in the probes' output.
template <class T>
const char* probe_type_name() {
  if constexpr (std::is_same_v<T, int>) return "int32";
  else if constexpr (std::is_same_v<T, signed char>) return "int8";
  else if constexpr (std::is_same_v<T, unsigned char>) return "uint8";
  else if constexpr (std::is_same_v<T, short>) return "int16";
  else if constexpr (std::is_same_v<T, unsigned>) return "uint32";
  else if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else if constexpr (std::is_same_v<T, reducelab::bfloat16>) return "bf16";
  else return "half";
}

// The bench's read kernel (lab/read_kernels.cuh): what one read costs, beside the reductions the
// probes time.
using rl::lab::read_units;

// Twice the L2 of device 0, read before each cold call.
struct L2Flush {
  int4* data = nullptr;
  std::size_t n = 0;
  int* sink = nullptr;
  explicit L2Flush(const cudaDeviceProp& p) : n(std::size_t(p.l2CacheSize) * 2 / sizeof(int4)) {
    CK(cudaMalloc(&data, n * sizeof(int4)));
    CK(cudaMemset(data, 0, n * sizeof(int4)));
    CK(cudaMalloc(&sink, 4));
  }
  void operator()() const { flush_read<<<528, 512>>>(data, n, sink); }
};

// The median GPU time of f in microseconds, each call queued behind `flush` and, when given,
// `before` (untimed); `warmups` calls first.
inline float queued_us(const L2Flush& flush, const std::function<void()>& f, const std::function<void()>& before,
                       int repeats, int warmups = 3) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> v;
  for (int r = 0; r < repeats + warmups; ++r) {
    float ms = 0;
    flush();
    if (before) before();
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&ms, a, b));
    if (r >= warmups) v.push_back(ms * 1000);
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Cold: each call queued behind the L2 flush only.
inline float cold_us(const L2Flush& flush, const std::function<void()>& f, int repeats, int warmups = 3) {
  return queued_us(flush, f, {}, repeats, warmups);
}

// Warm code: after the flush, `same_on_other` (f's work on another copy of the input) runs untimed,
// so the timed call finds its data cold and its kernel's code warm.
inline float warm_code_us(const L2Flush& flush, const std::function<void()>& f,
                          const std::function<void()>& same_on_other, int repeats, int warmups = 3) {
  return queued_us(flush, f, same_on_other, repeats, warmups);
}
