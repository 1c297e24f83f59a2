#pragma once
// rl::atomic_combine(op, p, v): *p = op(*p, v), atomically, for the gallery's ops and types.
//
// CUDA: the native atomics where the hardware has them (int/long long/float/double add — long
// long through unsigned long long, which is the same bits mod 2^64; int and long long min/max,
// native since sm_35), and a compare-and-swap loop on the bit pattern otherwise (float/double
// min/max). SIMT: the runtime's atomics, which cover every one of these types.
#include "gallery/common.cuh"

namespace rl::inline RL_GALLERY_BACKEND {

#if RL_SIMT

template <class T>
inline void atomic_combine(core::Sum<T>, gmem<T> p, T v) {
  atomicAdd(p, v);
}
template <class T>
inline void atomic_combine(core::Min<T>, gmem<T> p, T v) {
  atomicMin(p, v);
}
template <class T>
inline void atomic_combine(core::Max<T>, gmem<T> p, T v) {
  atomicMax(p, v);
}

#else

namespace detail {
// *p = op(*p, v) by compare-and-swap on the bits; Bits is the unsigned integer of T's size.
template <class Bits, class T, class Op>
__device__ __forceinline__ void cas_combine(T* p, T v, Op op) {
  Bits* bits = reinterpret_cast<Bits*>(p);
  Bits old = *bits;
  for (;;) {
    T current = __builtin_bit_cast(T, old);
    T next = op(current, v);
    if (__builtin_bit_cast(Bits, next) == old) return;  // already combined: no write needed
    Bits seen = atomicCAS(bits, old, __builtin_bit_cast(Bits, next));
    if (seen == old) return;
    old = seen;
  }
}
}  // namespace detail

__device__ __forceinline__ void atomic_combine(core::Sum<int>, int* p, int v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_combine(core::Sum<long long>, long long* p, long long v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}
__device__ __forceinline__ void atomic_combine(core::Sum<float>, float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_combine(core::Sum<double>, double* p, double v) { atomicAdd(p, v); }

__device__ __forceinline__ void atomic_combine(core::Min<int>, int* p, int v) { atomicMin(p, v); }
__device__ __forceinline__ void atomic_combine(core::Max<int>, int* p, int v) { atomicMax(p, v); }
__device__ __forceinline__ void atomic_combine(core::Min<long long>, long long* p, long long v) {
  atomicMin(p, v);
}
__device__ __forceinline__ void atomic_combine(core::Max<long long>, long long* p, long long v) {
  atomicMax(p, v);
}

__device__ __forceinline__ void atomic_combine(core::Min<float> op, float* p, float v) {
  detail::cas_combine<unsigned int>(p, v, op);
}
__device__ __forceinline__ void atomic_combine(core::Max<float> op, float* p, float v) {
  detail::cas_combine<unsigned int>(p, v, op);
}
__device__ __forceinline__ void atomic_combine(core::Min<double> op, double* p, double v) {
  detail::cas_combine<unsigned long long>(p, v, op);
}
__device__ __forceinline__ void atomic_combine(core::Max<double> op, double* p, double v) {
  detail::cas_combine<unsigned long long>(p, v, op);
}

#endif

}  // namespace rl::inline RL_GALLERY_BACKEND
