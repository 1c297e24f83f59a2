#pragma once
// rl::atomic_combine(op, p, v): *p = op(*p, v), atomically, for any lab op (core/ops.hpp) over
// the gallery's accumulator types.
//
// What every op gets: a compare-and-swap loop around its combine, on the value's bit pattern
// (a 4- or 8-byte type). The faster paths, keyed off the op's row and the type, are the
// hardware's own read-modify-writes. CUDA: add for int, long long (through unsigned long long,
// the same bits mod 2^64), float and double; min and max for int and long long (native since
// sm_35); float and double min/max take the loop. SIMT: the runtime's atomicAdd/Min/Max, which
// cover every one of these types, for sum, min and max.
#include <cstring>
#include <type_traits>

#include "gallery/common.cuh"

namespace rl::inline RL_GALLERY_BACKEND {

namespace detail {

// The hardware's own atomic for this op and type, where it has one.
template <core::OpKind K, class T>
inline constexpr bool kNativeAtomic =
#if RL_SIMT
    K == core::OpKind::sum || K == core::OpKind::min || K == core::OpKind::max;
#else
    (K == core::OpKind::sum &&
     (std::is_same_v<T, int> || std::is_same_v<T, long long> || std::is_same_v<T, float> ||
      std::is_same_v<T, double>)) ||
    ((K == core::OpKind::min || K == core::OpKind::max) &&
     (std::is_same_v<T, int> || std::is_same_v<T, long long>));
#endif

#if RL_SIMT
// The runtime's atomicCAS compares bit patterns of T itself. The first guess is the identity;
// a wrong guess costs one more compare-and-swap and returns the value actually there.
template <class T, class Op>
inline void cas_combine(gmem<T> p, T v, const Op& op) {
  T expected = Op::identity();
  for (;;) {
    const T seen = atomicCAS(p, expected, op(expected, v));
    if (std::memcmp(&seen, &expected, sizeof(T)) == 0) return;
    expected = seen;
  }
}
#else
// On the unsigned integer of T's size.
template <class T, class Op>
__device__ __forceinline__ void cas_combine(T* p, T v, const Op& op) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "atomic_combine: a 4- or 8-byte value type");
  using Bits = std::conditional_t<sizeof(T) == 4, unsigned int, unsigned long long>;
  Bits* bits = reinterpret_cast<Bits*>(p);
  Bits old = *bits;
  for (;;) {
    const T current = __builtin_bit_cast(T, old);
    const T next = op(current, v);
    if (__builtin_bit_cast(Bits, next) == old) return;  // already combined: no write needed
    const Bits seen = atomicCAS(bits, old, __builtin_bit_cast(Bits, next));
    if (seen == old) return;
    old = seen;
  }
}
#endif

}  // namespace detail

template <class Op, class T>
__device__ __forceinline__ void atomic_combine(const Op& op, gmem<T> p, std::type_identity_t<T> v) {
  constexpr core::OpKind kind = Op::kind;
  if constexpr (!detail::kNativeAtomic<kind, T>) {
    detail::cas_combine(p, v, op);
  } else if constexpr (kind == core::OpKind::sum) {
#if RL_SIMT
    atomicAdd(p, v);
#else
    if constexpr (std::is_same_v<T, long long>)
      atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
    else
      atomicAdd(p, v);
#endif
  } else if constexpr (kind == core::OpKind::min) {
    atomicMin(p, v);
  } else {
    atomicMax(p, v);
  }
}

}  // namespace rl::inline RL_GALLERY_BACKEND
