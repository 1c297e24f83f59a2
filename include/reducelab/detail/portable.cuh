#pragma once
// The smallest vocabulary the library's kernels need from a backend: rl::gmem / rl::smem /
// rl::vmem pointers, RL_DYNAMIC_SHARED (the launch's `extern __shared__` bytes as an rl::smem<T>),
// rl::prefetch_l2 and RL_SIMT. Under nvcc the pointers are plain CUDA pointers;
// reducelab's own SIMT build (g++, inside this project only) maps them onto the emulator's checked
// pointers. The lab's fuller vocabulary (launch, checks, tail launches) is simt/portable.cuh,
// which includes this.
#include "reducelab/config.hpp"

#if defined(__CUDACC__)

#include <cuda_runtime.h>

#define RL_SIMT 0

namespace rl {
template <class T>
using gmem = T*;
template <class T>
using smem = T*;
template <class T>
using vmem = volatile T*;

// Asks L2 for the 128-byte line holding p (from DRAM if it is not there) and goes on without
// waiting. For workspace lines a launch will meet late (posted results, digits, a ticket): in a
// call after an L2 flush they are in DRAM only, and an atomic or a poll on such a line waits for
// DRAM first.
template <class T>
__device__ __forceinline__ void prefetch_l2(const T* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}
}  // namespace rl

#define RL_DYNAMIC_SHARED(T, name)                                    \
  extern __shared__ __align__(16) unsigned char rl_dynamic_smem_[];  \
  ::rl::smem<T> name = reinterpret_cast<T*>(rl_dynamic_smem_)

#elif __has_include("simt/runtime.hpp")  // reducelab's SIMT build; an installed tree has no SIMT

#include "simt/runtime.hpp"

#define RL_SIMT 1

namespace rl {
template <class T>
using gmem = ::simt::ptr<T>;
template <class T>
using smem = ::simt::ptr<T>;
template <class T>
using vmem = ::simt::ptr<T>;

template <class P>
inline void prefetch_l2(const P&) {}  // no cache to warm
}  // namespace rl

#define RL_DYNAMIC_SHARED(T, name) ::rl::smem<T> name = ::simt::dynamic_shared<T>()

#else
#error "reducelab's GPU kernels compile with nvcc; the CPU backend needs only reducelab/reduce.hpp"
#endif
