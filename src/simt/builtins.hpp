#pragma once
// CUDA's device built-ins on the SIMT runtime: barriers, warp collectives, atomics, bit tricks,
// fences. Global names, as in CUDA. Each one that can fail takes a std::source_location default
// argument, so an error names the file:line of the call.
#include <bit>
#include <cstring>

#include "simt/pointer.hpp"

namespace simt::detail {

enum class Collective : std::uint8_t {
  syncwarp,
  shfl_idx,
  shfl_up,
  shfl_down,
  shfl_xor,
  ballot,
  any,
  all,
  reduce_add,
  reduce_min,
  reduce_max,
};
const char* name(Collective c);

// A warp collective: rendezvous the lanes of `mask`, exchange `value` (raw bits), return this
// lane's result. `arg` is the shuffle's source lane / delta / lane mask, or the vote's predicate.
std::uint64_t warp_collective(Collective c, unsigned mask, std::uint64_t value, int arg,
                              int width, bool is_signed, const std::source_location& loc);

enum class BarrierOp : std::uint8_t { none, count, all, any };
// __syncthreads and its counting variants; returns the count / and / or of the predicates.
int sync_threads(BarrierOp op, int predicate, const std::source_location& loc);

unsigned active_mask(const std::source_location& loc);

template <class T>
concept shufflable = std::is_trivially_copyable_v<T> && (sizeof(T) <= 8);

template <class T>
std::uint64_t to_bits(const T& v) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}
template <class T>
T from_bits(std::uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}

template <class T>
T shuffle(Collective c, unsigned mask, const T& v, int arg, int width,
          const std::source_location& loc) {
  return from_bits<T>(warp_collective(c, mask, to_bits(v), arg, width, false, loc));
}

// ---- atomics -----------------------------------------------------------------------------------
template <class T>
concept atomic_value = (std::is_integral_v<T> || std::is_floating_point_v<T>) &&
                       (sizeof(T) == 4 || sizeof(T) == 8) && !std::is_const_v<T>;

// The checked address an atomic works on (bounds check, race tracking, observer).
template <class T>
T* atomic_target(const ptr<T>& p, const std::source_location& loc) {
  check_access(p.get(), sizeof(T), p.region_base(), p.region_bytes(), sizeof(T), p.space(),
               AccessKind::atomic, loc);
  return p.get();
}
// A raw pointer has no region: no bounds check, tracked as global memory.
template <class T>
T* atomic_target(T* p, const std::source_location& loc) {
  if (g_track_accesses) [[unlikely]]
    record_access(p, sizeof(T), nullptr, Space::global, AccessKind::atomic, loc);
  return p;
}

// Read-modify-write through a compare-exchange loop; returns the old value.
template <class T, class F>
T atomic_update(T* p, F f) {
  std::atomic_ref<T> a(*p);
  T old = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(old, f(old), std::memory_order_relaxed)) {
  }
  return old;
}

}  // namespace simt::detail

// ---- barriers ----------------------------------------------------------------------------------
inline void __syncthreads(std::source_location loc = std::source_location::current()) {
  simt::detail::sync_threads(simt::detail::BarrierOp::none, 0, loc);
}
inline int __syncthreads_count(int predicate,
                               std::source_location loc = std::source_location::current()) {
  return simt::detail::sync_threads(simt::detail::BarrierOp::count, predicate, loc);
}
inline int __syncthreads_and(int predicate,
                             std::source_location loc = std::source_location::current()) {
  return simt::detail::sync_threads(simt::detail::BarrierOp::all, predicate, loc);
}
inline int __syncthreads_or(int predicate,
                            std::source_location loc = std::source_location::current()) {
  return simt::detail::sync_threads(simt::detail::BarrierOp::any, predicate, loc);
}

// ---- warp collectives -------------------------------------------------------------------------
inline void __syncwarp(unsigned mask = 0xffffffffu,
                       std::source_location loc = std::source_location::current()) {
  simt::detail::warp_collective(simt::detail::Collective::syncwarp, mask, 0, 0, warpSize, false,
                                loc);
}

// On SIMT: the lanes of the caller's warp that exist (inside blockDim) and have not exited.
// A GPU may report fewer (the lanes converged at this instruction); code that needs a mask
// should name it, or compute it with __ballot_sync.
inline unsigned __activemask(std::source_location loc = std::source_location::current()) {
  return simt::detail::active_mask(loc);
}

#define SIMT_SHUFFLE(fn, kind, argname)                                                         \
  template <simt::detail::shufflable T>                                                         \
  T fn(unsigned mask, T var, int argname, int width = warpSize,                                 \
       std::source_location loc = std::source_location::current()) {                            \
    return simt::detail::shuffle(simt::detail::Collective::kind, mask, var, argname, width, loc); \
  }                                                                                             \
  template <class T>                                                                            \
  typename simt::ref<T>::value_type fn(unsigned mask, const simt::ref<T>& var, int argname,     \
                                       int width = warpSize,                                    \
                                       std::source_location loc =                               \
                                           std::source_location::current()) {                   \
    return simt::detail::shuffle(simt::detail::Collective::kind, mask, var.read(), argname,     \
                                 width, loc);                                                   \
  }
SIMT_SHUFFLE(__shfl_sync, shfl_idx, srcLane)
SIMT_SHUFFLE(__shfl_up_sync, shfl_up, delta)
SIMT_SHUFFLE(__shfl_down_sync, shfl_down, delta)
SIMT_SHUFFLE(__shfl_xor_sync, shfl_xor, laneMask)
#undef SIMT_SHUFFLE

inline unsigned __ballot_sync(unsigned mask, int predicate,
                              std::source_location loc = std::source_location::current()) {
  return static_cast<unsigned>(simt::detail::warp_collective(
      simt::detail::Collective::ballot, mask, 0, predicate != 0, warpSize, false, loc));
}
inline int __any_sync(unsigned mask, int predicate,
                      std::source_location loc = std::source_location::current()) {
  return static_cast<int>(simt::detail::warp_collective(
      simt::detail::Collective::any, mask, 0, predicate != 0, warpSize, false, loc));
}
inline int __all_sync(unsigned mask, int predicate,
                      std::source_location loc = std::source_location::current()) {
  return static_cast<int>(simt::detail::warp_collective(
      simt::detail::Collective::all, mask, 0, predicate != 0, warpSize, false, loc));
}

#define SIMT_WARP_REDUCE(fn, kind)                                                               \
  inline unsigned fn(unsigned mask, unsigned value,                                              \
                     std::source_location loc = std::source_location::current()) {               \
    return static_cast<unsigned>(simt::detail::warp_collective(simt::detail::Collective::kind,  \
                                                               mask, value, 0, warpSize, false, \
                                                               loc));                            \
  }                                                                                              \
  inline int fn(unsigned mask, int value,                                                        \
                std::source_location loc = std::source_location::current()) {                    \
    return static_cast<int>(simt::detail::warp_collective(                                       \
        simt::detail::Collective::kind, mask, static_cast<std::uint32_t>(value), 0, warpSize,   \
        true, loc));                                                                             \
  }
SIMT_WARP_REDUCE(__reduce_add_sync, reduce_add)
SIMT_WARP_REDUCE(__reduce_min_sync, reduce_min)
SIMT_WARP_REDUCE(__reduce_max_sync, reduce_max)
#undef SIMT_WARP_REDUCE

// ---- atomics: on checked pointers and on raw pointers ------------------------------------------
// Real atomics (blocks run concurrently). Min/max exist for float and double too (CUDA lacks
// them natively; the gallery's generic combine needs them).
#define SIMT_ATOMIC(fn, body)                                                                   \
  template <simt::detail::atomic_value T>                                                       \
  T fn(simt::ptr<T> address, std::type_identity_t<T> val,                                       \
       std::source_location loc = std::source_location::current()) {                           \
    T* p = simt::detail::atomic_target(address, loc);                                           \
    body                                                                                        \
  }                                                                                             \
  template <simt::detail::atomic_value T>                                                       \
  T fn(T* address, std::type_identity_t<T> val,                                                 \
       std::source_location loc = std::source_location::current()) {                            \
    T* p = simt::detail::atomic_target(address, loc);                                           \
    body                                                                                        \
  }
SIMT_ATOMIC(atomicAdd, return std::atomic_ref<T>(*p).fetch_add(val, std::memory_order_relaxed);)
SIMT_ATOMIC(atomicSub, return std::atomic_ref<T>(*p).fetch_sub(val, std::memory_order_relaxed);)
SIMT_ATOMIC(atomicExch, return std::atomic_ref<T>(*p).exchange(val, std::memory_order_relaxed);)
SIMT_ATOMIC(atomicOr, return std::atomic_ref<T>(*p).fetch_or(val, std::memory_order_relaxed);)
SIMT_ATOMIC(atomicAnd, return std::atomic_ref<T>(*p).fetch_and(val, std::memory_order_relaxed);)
SIMT_ATOMIC(atomicMin,
            return simt::detail::atomic_update(p, [val](T old) { return val < old ? val : old; });)
SIMT_ATOMIC(atomicMax,
            return simt::detail::atomic_update(p, [val](T old) { return old < val ? val : old; });)
#undef SIMT_ATOMIC

// atomicInc/atomicDec wrap as CUDA's: inc gives 0 once old >= val; dec gives val at 0 or > val.
template <simt::detail::atomic_value T>
  requires std::is_integral_v<T>
T atomicInc(simt::ptr<T> address, std::type_identity_t<T> val,
            std::source_location loc = std::source_location::current()) {
  return simt::detail::atomic_update(simt::detail::atomic_target(address, loc),
                                     [val](T old) { return old >= val ? T(0) : T(old + 1); });
}
template <simt::detail::atomic_value T>
  requires std::is_integral_v<T>
T atomicInc(T* address, std::type_identity_t<T> val,
            std::source_location loc = std::source_location::current()) {
  return simt::detail::atomic_update(simt::detail::atomic_target(address, loc),
                                     [val](T old) { return old >= val ? T(0) : T(old + 1); });
}
template <simt::detail::atomic_value T>
  requires std::is_integral_v<T>
T atomicDec(simt::ptr<T> address, std::type_identity_t<T> val,
            std::source_location loc = std::source_location::current()) {
  return simt::detail::atomic_update(
      simt::detail::atomic_target(address, loc),
      [val](T old) { return (old == 0 || old > val) ? val : T(old - 1); });
}
template <simt::detail::atomic_value T>
  requires std::is_integral_v<T>
T atomicDec(T* address, std::type_identity_t<T> val,
            std::source_location loc = std::source_location::current()) {
  return simt::detail::atomic_update(
      simt::detail::atomic_target(address, loc),
      [val](T old) { return (old == 0 || old > val) ? val : T(old - 1); });
}

// Compares bit patterns, as the GPU does.
template <simt::detail::atomic_value T>
T atomicCAS(simt::ptr<T> address, std::type_identity_t<T> compare, std::type_identity_t<T> val,
            std::source_location loc = std::source_location::current()) {
  std::atomic_ref<T>(*simt::detail::atomic_target(address, loc))
      .compare_exchange_strong(compare, val, std::memory_order_relaxed);
  return compare;
}
template <simt::detail::atomic_value T>
T atomicCAS(T* address, std::type_identity_t<T> compare, std::type_identity_t<T> val,
            std::source_location loc = std::source_location::current()) {
  std::atomic_ref<T>(*simt::detail::atomic_target(address, loc))
      .compare_exchange_strong(compare, val, std::memory_order_relaxed);
  return compare;
}

// ---- fences: blocks on other worker threads see writes in order ------------------------------
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }
// The threads of a block share one OS thread: only the compiler must not reorder.
inline void __threadfence_block() { std::atomic_signal_fence(std::memory_order_seq_cst); }

// ---- bit manipulation --------------------------------------------------------------------------
inline int __popc(unsigned x) { return std::popcount(x); }
inline int __popcll(unsigned long long x) { return std::popcount(x); }
inline int __ffs(int x) { return x == 0 ? 0 : std::countr_zero(static_cast<unsigned>(x)) + 1; }
inline int __ffsll(long long x) {
  return x == 0 ? 0 : std::countr_zero(static_cast<unsigned long long>(x)) + 1;
}
inline int __clz(int x) { return std::countl_zero(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return std::countl_zero(static_cast<unsigned long long>(x)); }
inline unsigned __brev(unsigned x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
  return (x >> 16) | (x << 16);
}

// Read-only loads (a plain checked read here).
template <class T>
std::remove_const_t<T> __ldg(simt::ptr<T> p) {
  return (*p).read();
}
template <class T>
T __ldg(const T* p) {
  return *p;
}

// CUDA's device-side min/max for the arithmetic types.
#define SIMT_MINMAX(T)                                  \
  inline T min(T a, T b) { return b < a ? b : a; }      \
  inline T max(T a, T b) { return a < b ? b : a; }
SIMT_MINMAX(int)
SIMT_MINMAX(unsigned)
SIMT_MINMAX(long long)
SIMT_MINMAX(unsigned long long)
SIMT_MINMAX(float)
SIMT_MINMAX(double)
#undef SIMT_MINMAX
