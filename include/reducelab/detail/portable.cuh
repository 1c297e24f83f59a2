#pragma once
// The smallest vocabulary the library's kernels need from a backend: rl::gmem / rl::smem /
// rl::vmem pointers and RL_SIMT. Under nvcc they are plain CUDA pointers; reducelab's own SIMT
// build (g++, inside this project only) maps them onto the emulator's checked pointers. The lab's
// fuller vocabulary (launch, checks, tail launches) is simt/portable.cuh, which includes this.
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
}  // namespace rl

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
}  // namespace rl

#else
#error "reducelab's GPU kernels compile with nvcc; the CPU backend needs only reducelab/reduce.hpp"
#endif
