#pragma once
// The kernel of reducelab::reduce: each block folds whole chunks of the fixed order
// (reduce_order.hpp) and leaves one result per chunk; the block that finishes last folds those
// results and writes the answer. One launch for every n, no atomics on the data path.
//
// Hopper choices (each measured on an H200, docs/performance.md):
//   - 16-byte loads through the read-only path, kItems of them in flight per thread per tile;
//   - a grid of at most (blocks resident per SM) x SMs, each block looping over its chunks;
//   - last-block-done instead of a second launch: a partial per chunk, __threadfence, a ticket.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "reducelab/detail/block_reduce.cuh"
#include "reducelab/detail/reduce_ops.cuh"
#include "reducelab/detail/reduce_order.hpp"
#include "reducelab/detail/portable.cuh"

namespace reducelab::detail {

template <class T>
struct alignas(16) Vec {
  T v[Shape<T>::kVec];
};

// kVec consecutive elements starting at element `at` (16-byte aligned) in one load.
template <class T>
__device__ __forceinline__ Vec<T> load_vec(rl::gmem<const T> input, std::uint64_t at) {
#if RL_SIMT
  const simt::ptr<const Vec<T>> p(reinterpret_cast<const Vec<T>*>(input.get() + at), input.region_base(),
                                  input.region_bytes(), input.space());
  return p[0].read();
#else
  const int4 raw = __ldg(reinterpret_cast<const int4*>(input + at));
  Vec<T> out;
  memcpy(&out, &raw, sizeof out);
  return out;
#endif
}

// The 16-byte vector at element `at` (16-byte aligned) as four 32-bit words, or zeros when not
// `live`: one load, straight into the words' registers (16-bit elements held as a Vec are split
// into a register each after the load; see Extremum::absorb_words).
template <class T>
__device__ __forceinline__ void load_words(rl::gmem<const T> input, std::uint64_t at, bool live, std::uint32_t (&w)[4]) {
#if RL_SIMT
  w[0] = w[1] = w[2] = w[3] = 0;
  if (live) {
    const Vec<T> x = load_vec(input, at);
    memcpy(w, &x, sizeof w);
  }
#else
  int4 raw = make_int4(0, 0, 0, 0);
  if (live) raw = __ldg(reinterpret_cast<const int4*>(input + at));
  memcpy(w, &raw, sizeof w);
#endif
}

// A value another block wrote during this launch: read past this SM's L1.
template <class A>
__device__ __forceinline__ A load_other_block(rl::gmem<A> p, std::uint64_t i) {
#if RL_SIMT
  A v = p[i];
  return v;
#else
  if constexpr (sizeof(A) == 16 && !std::is_class_v<A>) {  // a 128-bit integer: two halves
    const auto* w = reinterpret_cast<const unsigned long long*>(p + i);
    return (static_cast<A>(__ldcg(w + 1)) << 64) | static_cast<A>(__ldcg(w));
  } else if constexpr (std::is_arithmetic_v<A>) {
    return __ldcg(p + i);
  } else if constexpr (std::is_same_v<A, half> || std::is_same_v<A, bfloat16>) {
    A r;
    r.bits = __ldcg(reinterpret_cast<const unsigned short*>(p + i));
    return r;
  } else if constexpr (requires { A::kTwoDoubles; }) {  // a pair of doubles (exact piece sums)
    A r;
    r.a = __ldcg(&p[i].a);
    r.b = __ldcg(&p[i].b);
    return r;
  } else if constexpr (requires { A::kColumns; }) {  // one accumulator per column of a vector
    A r;
    for (unsigned j = 0; j < A::kColumns; ++j) r.c[j] = load_other_block(&p[i].c[j], 0);
    return r;
  } else {
    A r;
    r.value = load_other_block(reinterpret_cast<decltype(r.value)*>(&p[i].value), 0);
    r.index = __ldcg(&p[i].index);
    return r;
  }
#endif
}

// Programmatic dependent launch: wait here until the kernel before this one in the stream has
// finished writing (a no-op when the launch did not ask for overlap), and let the kernel after
// this one start its own preamble.
__device__ __forceinline__ void wait_for_producer() {
#if !RL_SIMT && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void let_consumer_start() {
#if !RL_SIMT && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// The last-block-done handshake. A block's thread 0 publishes its chunk results and takes a
// ticket in one acquire-release atomic: the release orders the results before the ticket, the
// acquire orders the last block's reads after every ticket before it (the block barrier that
// follows carries that to the block's other threads). Cheaper than __threadfence(), a
// sequentially consistent fence (H200: docs/performance.md).
__device__ __forceinline__ unsigned take_ticket(rl::gmem<unsigned> ticket) {
#if RL_SIMT
  __threadfence();
  return atomicAdd(&ticket[0], 1u);
#else
  unsigned taken;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(taken) : "l"(ticket) : "memory");
  return taken;
#endif
}

// Step 1 of the order: this thread's fold of chunk c.
template <class T, class Sem>
__device__ __forceinline__ typename Sem::Acc fold_chunk(rl::gmem<const T> input, const Plan& plan,
                                                        std::uint64_t c, bool aligned) {
  using Acc = typename Sem::Acc;
  using Inner = typename Sem::Inner;
  constexpr unsigned kVec = Shape<T>::kVec;
  constexpr std::uint64_t kTile = Shape<T>::kTile;
  const std::uint64_t begin = plan.chunk_begin(c), end = plan.chunk_begin(c + 1);
  Acc acc = Sem::identity();
  for (std::uint64_t tile = begin; tile < end; tile += kTile) {
    const std::uint64_t base = tile + std::uint64_t(threadIdx.x) * kVec;
    Inner in = Sem::inner_identity();
    if (aligned && tile + kTile <= end) {  // a whole tile: kItems 16-byte loads in flight
      Vec<T> v[kItems];
#pragma unroll
      for (unsigned i = 0; i < kItems; ++i) v[i] = load_vec(input, base + std::uint64_t(i) * kThreads * kVec);
#pragma unroll
      for (unsigned i = 0; i < kItems; ++i)
#pragma unroll
        for (unsigned j = 0; j < kVec; ++j)
          in = Sem::inner_combine(in, Sem::lift(v[i].v[j], base + std::uint64_t(i) * kThreads * kVec + j));
    } else {
      // The chunk's last tile (fewer rows: a test the whole block agrees on) or an input that is
      // not 16-byte aligned: the same order, one vector at a time. Rows are whole except the
      // array's last, so only that one is guarded element by element. Kept rolled up: unrolled,
      // this rare path took the 16-bit kernels to 103 registers (2 blocks per SM) against 32.
      const std::uint64_t n = plan.n;
#pragma unroll 1
      for (unsigned i = 0; i < kItems; ++i) {
        if (tile + std::uint64_t(i) * kThreads * kVec >= end) break;
        const std::uint64_t at = base + std::uint64_t(i) * kThreads * kVec;
        if (aligned && at + kVec <= n) {
          const Vec<T> x = load_vec(input, at);
#pragma unroll
          for (unsigned j = 0; j < kVec; ++j) in = Sem::inner_combine(in, Sem::lift(x.v[j], at + j));
        } else {
#pragma unroll 1
          for (unsigned j = 0; j < kVec && at + j < n; ++j) {
            const T x = input[at + j];
            in = Sem::inner_combine(in, Sem::lift(x, at + j));
          }
        }
      }
    }
    acc = Sem::absorb(acc, in);
  }
  return acc;
}

// Step 3, in the last block of a launch: thread t folds partials t, t + kThreads, ... in order
// (all its loads issued first: one trip to L2 instead of one per partial), the block folds the
// threads' results in the fixed tree, thread 0 writes the answer and resets the ticket for the
// next launch (every block has taken its ticket).
template <class Sem>
__device__ __forceinline__ void fold_partials(rl::gmem<typename Sem::Acc> partials, std::uint64_t count,
                                              rl::smem<typename Sem::Acc> slots, rl::gmem<unsigned> ticket,
                                              rl::gmem<typename Sem::Out> output, std::uint64_t n) {
  using Acc = typename Sem::Acc;
  constexpr unsigned kPerThread = (kMaxPartials + kThreads - 1) / kThreads;
  Acc got[kPerThread];
#pragma unroll
  for (unsigned k = 0; k < kPerThread; ++k) {
    const std::uint64_t i = threadIdx.x + std::uint64_t(k) * kThreads;
    got[k] = i < count ? load_other_block(partials, i) : Sem::identity();
  }
  Acc w = Sem::identity();
#pragma unroll
  for (unsigned k = 0; k < kPerThread; ++k) w = Sem::combine(w, got[k]);
  w = block_fold<Sem>(w, slots);
  if (threadIdx.x == 0) {
    output[0] = Sem::finish(w, n);
    ticket[0] = 0u;
  }
}

enum : unsigned {
  kAligned = 1u,        // the input is 16-byte aligned: vector loads
  kAtomicCombine = 2u,  // nondeterministic variant: chunk results meet in one atomic accumulator
};

// How a launch of reduceChunks<T, Sem> is shaped, from n, the blocks the caller can have at once
// (`slots`), whether the caller wants the fixed order, and the input's address. One function for
// the GPU launcher (device_reduce.cuh) and the SIMT runner (simt_reduce.cpp).
struct LaunchShape {
  Plan plan;
  unsigned grid = 1;
  unsigned flags = 0;
};
template <class T, class Sem>
inline LaunchShape launch_shape(std::uint64_t n, std::uint64_t slots, bool deterministic, const void* input) {
  bool atomic = false;
  if constexpr (Sem::has_atomic_combine) atomic = !deterministic && !Sem::order_free;
  LaunchShape s;
  s.plan = (Sem::order_free || atomic) ? split_plan<T>(n, slots) : fixed_plan<T>(n);
  s.grid = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min(s.plan.chunks, slots)));
  if (reinterpret_cast<std::uintptr_t>(input) % 16 == 0) s.flags |= kAligned;
  if (atomic) s.flags |= kAtomicCombine;
  return s;
}

// reduceChunks — the library's kernel (see the file comment). Launch with kThreads threads and
// at most plan.chunks blocks. `ticket` and `accumulator` are zero before the launch and zero
// after it (the last block resets them), so launches on one stream can reuse the workspace and
// a CUDA graph can replay it.
template <class T, class Sem>
__global__ void __launch_bounds__(kThreads)
    reduceChunks(rl::gmem<const T> input, Plan plan, unsigned flags, rl::gmem<typename Sem::Acc> partials,
                 rl::gmem<unsigned> ticket, rl::gmem<typename Sem::Acc> accumulator,
                 rl::gmem<typename Sem::Out> output) {
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[kWarps];
  rl::smem<Acc> slots = slot_storage;
  __shared__ unsigned last_storage[1];
  rl::smem<unsigned> am_last = last_storage;
  const bool aligned = (flags & kAligned) != 0;
  wait_for_producer();

  if (plan.chunks <= 1) {  // one chunk (small n, or n == 0): one block, no second stage
    Acc v = plan.chunks == 1 ? fold_chunk<T, Sem>(input, plan, 0, aligned) : Sem::identity();
    v = block_fold<Sem>(v, slots);
    if (threadIdx.x == 0) output[0] = Sem::finish(v, plan.n);
    return;
  }

  for (std::uint64_t c = blockIdx.x; c < plan.chunks; c += gridDim.x) {
    Acc v = fold_chunk<T, Sem>(input, plan, c, aligned);
    v = block_fold<Sem>(v, slots);
    if (threadIdx.x == 0) {
      if constexpr (Sem::has_atomic_combine) {
        if (flags & kAtomicCombine) atomicAdd(&accumulator[0], v);
        else partials[c] = v;
      } else {
        partials[c] = v;
      }
    }
    __syncthreads();  // the slots are reused by the next chunk
  }

  if (gridDim.x > 1) {
    if (threadIdx.x == 0) am_last[0] = take_ticket(ticket) == gridDim.x - 1 ? 1u : 0u;
    __syncthreads();
    const unsigned last = am_last[0];
    if (last == 0) return;  // uniform across the block
  }

  // Step 3: the last block folds the chunk results.
  if constexpr (Sem::has_atomic_combine) {
    if (flags & kAtomicCombine) {
      if (threadIdx.x == 0) {
        const Acc total = load_other_block(accumulator, 0);
        output[0] = Sem::finish(total, plan.n);
        accumulator[0] = Acc(0);
        ticket[0] = 0u;
      }
      return;
    }
  }
  fold_partials<Sem>(partials, plan.chunks, slots, ticket, output, plan.n);
}

}  // namespace reducelab::detail
