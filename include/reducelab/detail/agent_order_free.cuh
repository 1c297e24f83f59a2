#pragma once
// The kernel of reducelab::reduce for operations whose result does not depend on the order of
// combination (Sem::order_free: integer sums and products, min, max, argmin, argmax, integer
// means). With no order to keep, the work is split the way that is fastest on Hopper:
//   - the array is a head (elements before the first 16-byte boundary), a body of 16-byte
//     vectors and a tail (the elements after the last whole vector); block 0 takes the head and
//     the tail;
//   - the body is cut into units of kThreads x kFreeLoads vectors; blocks take units in a
//     grid-stride loop, every thread issuing its kFreeLoads loads before the first add, guarded
//     ones included (a partial unit costs one round trip, not one per vector);
//   - the grid is as many units as there are, up to what the GPU holds at once, so a mid-size
//     input spreads over every SM (2^16 int32 values: 16 blocks rather than the 8 of the
//     fixed order's 32 KiB tiles);
//   - when the launch is a single cluster (2..16 blocks: cluster.cuh), each block stores its
//     result in the first block's shared memory and one cluster barrier ends the launch; with
//     more blocks, each block posts its result and block 0 collects the posts
//     (posted_results.cuh): no ticket.
// Against the fixed-order kernel at 2^16..2^22 on an H100 this saved ~1 us of a 6-8 us call
// (docs/performance.md): the tile/chunk arithmetic before the first load and half the blocks;
// posting the results instead of the last-block-done ticket saved 0.3-0.5 us more for min and
// max at 2^17..2^21 and for the int32 sum at 2^22.
#include <cstdint>

#include "reducelab/detail/agent_reduce.cuh"
#include "reducelab/detail/block_reduce.cuh"
#include "reducelab/detail/cluster.cuh"
#include "reducelab/detail/posted_results.cuh"
#include "reducelab/detail/reduce_ops.cuh"
#include "reducelab/detail/portable.cuh"

namespace reducelab::detail {

// Vectors each thread loads per unit. 4 x 16 bytes x 256 threads = 16 KiB per unit.
inline constexpr unsigned kFreeLoads = 4;

// How an order-free reduce of n elements at `input` is cut (the same on the GPU and in SIMT).
struct FreeShape {
  std::uint64_t n = 0;
  std::uint32_t head = 0;   // elements before the first 16-byte boundary (< elements per vector)
  std::uint64_t vectors = 0;
  std::uint64_t units = 0;
  unsigned grid = 1;
};
// Large inputs take a second shape, measured on an H200 (bench/free_probe.cu, cold, max, against
// the first): elements of up to 4 bytes load 8 vectors per thread per unit from 2^24 elements
// (float at 2^30: 945 us against 955; CUB 947); 8-byte elements take contiguous runs of units
// from 2^27 (double at 2^30: 1906 us against 1958; CUB 1895). The other combinations were slower
// (double with 8 vectors: 2265 us at 2^30). On an H100, whose DRAM is 30 % slower, 8 vectors
// were the slower shape (bench/midn_probe, cold, int32 sum: 2^24 26.7 us against 25.9, 2^26
// 91.2 against 89.5, 2^28 349.7 against 343.4, where a bare read of 2^28 took 342.2), so 4-byte
// elements take it only on a GPU with wide memory (wide_memory, workspace.hpp).
template <class T>
inline constexpr unsigned kLargeLoads = sizeof(T) <= 4 ? 8u : kFreeLoads;
template <class T>
inline constexpr bool kLargeContiguous = sizeof(T) > 4;
template <class T>
inline bool free_large(std::uint64_t n, bool wide_memory) {
  if constexpr (sizeof(T) <= 4) return wide_memory && n >= (std::uint64_t(1) << 24);
  else return n >= (std::uint64_t(1) << 27);
}

// `loads`: the kernel's vectors per thread per unit (kFreeLoads, or kLargeLoads<T> for the large shape).
template <class T>
inline FreeShape free_shape(std::uint64_t n, const void* input, std::uint64_t slots, unsigned loads = kFreeLoads) {
  constexpr unsigned kVec = Shape<T>::kVec;
  FreeShape s;
  s.n = n;
  const auto misalign = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(input) % 16);
  const std::uint64_t head = misalign == 0 ? 0 : (16 - misalign) / sizeof(T);
  s.head = static_cast<std::uint32_t>(head < n ? head : n);
  s.vectors = (n - s.head) / kVec;
  s.units = (s.vectors + std::uint64_t(kThreads) * loads - 1) / (std::uint64_t(kThreads) * loads);
  const std::uint64_t g = s.units < slots ? s.units : slots;
  s.grid = static_cast<unsigned>(g < 1 ? 1 : g);
  return s;
}
// Exact float and bfloat16 sums (exact_wide.cuh: one 320-bit integer a thread) take the order-free
// kernel from more than one of the digits' tiles (8192 floats, 16384 bfloat16 values: below that
// the digits' kernel is one block, the wide integer's units a cluster of two) up to 2^20 elements.
// On an H100 (bench/wide_probe mid and bf16, cold) the wide integer was faster than the digits'
// kernel (agent_exact.cuh) up to 2^19 on uniform values (float 2^18: 6.59 against 7.33 us; bf16
// 2^16: 6.62 against 7.26), even at 2^20 (float 8.42 against 8.38, bf16 7.55 against 7.58) and
// faster on cancelling and wide-ranging values; from 2^21 the digits were faster on uniform values
// (float 2^22: 12.58 against 13.63), where the wide integer's work per element shows
// (docs/performance.md, "Exact float sums as one wide integer").
inline constexpr std::uint64_t kExactWideMost = std::uint64_t(1) << 20;
template <class T>
inline bool exact_wide_taken(std::uint64_t n) {
  return n > Shape<T>::kTile && n <= kExactWideMost;
}
// The most elements one block of `shape` folds (`loads` as free_shape took it): its share of the
// units, every gridDim.x-th or a contiguous run, and block 0's head and tail.
template <class T>
inline std::uint64_t most_per_block(const FreeShape& shape, unsigned loads) {
  const std::uint64_t units = (shape.units + shape.grid - 1) / shape.grid;
  return units * kThreads * loads * Shape<T>::kVec + 2 * Shape<T>::kVec;
}
// The input can be cut this way: its address is a multiple of the element size.
template <class T>
inline bool free_shape_fits(const void* input) {
  return reinterpret_cast<std::uintptr_t>(input) % sizeof(T) == 0;
}

// A developer's probe may give its semantics a trace(stage) to time the kernel's stages
// (bench/wide_probe: 0 started, 1 units folded, 2 block folded, 3 posted or collecting, 4 posts
// taken, 5 collector folded, 6 answer written); the library's semantics have none.
template <class Sem>
__device__ __forceinline__ void trace_stage(unsigned stage) {
  if constexpr (requires { Sem::trace(stage); }) Sem::trace(stage);
}

// The collector's end: every other block's post, folded with this block's `own` (thread 0's),
// and the answer. Thread t waits for slots t, t + kThreads, ...; it polls them kPollBatch at a
// time, all of a batch's loads in flight at once (one at a time, a thread of a 792-block grid
// waited for up to four round trips in a row: int32 sum at 2^22 went from 10.9 to 11.6 us on an
// H100). A call, not inlined: inlined, ptxas gives the uint32 sum kernel 32 registers and a
// spill (the int32 sum's did the same in an earlier form of the kernel); the batch is small
// because the kernel's register count is that of its largest callee (two slots of the 40-byte
// exact float sums' posts, exact_wide.cuh, hold as many words as four of the others).
template <class Acc>
inline constexpr unsigned kPollBatch = kPostWords<Acc> <= 4 ? 4u : 2u;
// What the collector folds the posts in: Sem::Collect where the semantics names one and says the
// launch's n needs it (collect_wide: the exact half sum's blocks post 64 bits, whose sum may need
// 128), else Sem itself. C::from widens a post.
template <class Sem, class C>
__device__ __forceinline__ typename C::Acc collected_from(typename Sem::Acc a) {
  if constexpr (std::is_same_v<C, Sem>) return a;
  else return C::from(a);
}
template <class Sem, class C>
__device__ __forceinline__ void collect_posts_in(typename Sem::Acc own, rl::gmem<unsigned long long> posts,
                                                 rl::smem<typename C::Acc> slots, rl::gmem<typename Sem::Out> output,
                                                 std::uint64_t n) {
  using Acc = typename Sem::Acc;
  typename C::Acc got = threadIdx.x == 0 ? collected_from<Sem, C>(own) : C::identity();
  constexpr unsigned kBatch = kPollBatch<Acc>;
  for (unsigned first = threadIdx.x; first < gridDim.x; first += kBatch * kThreads) {
    unsigned pending = 0;  // bit k: slot first + k * kThreads is still to be taken
#pragma unroll
    for (unsigned k = 0; k < kBatch; ++k) {
      const unsigned b = first + k * kThreads;
      if (b < gridDim.x && b != blockIdx.x) pending |= 1u << k;
    }
    while (pending != 0) {
      unsigned long long w[kBatch][kPostWords<Acc>];
#pragma unroll
      for (unsigned k = 0; k < kBatch; ++k)
        if ((pending >> k) & 1u) poll_post<Acc>(posts, first + k * kThreads, w[k]);
#pragma unroll
      for (unsigned k = 0; k < kBatch; ++k)
        if (((pending >> k) & 1u) && post_is_full<Acc>(w[k])) {
          got = C::combine(got, collected_from<Sem, C>(take_post<Acc>(posts, first + k * kThreads, w[k])));
          pending &= ~(1u << k);
        }
    }
  }
  // The lanes that polled rejoin the rest of their warp before the fold's shuffles. Without this,
  // the lanes with no slot to wait for went on alone (a spinning loop lets them), the warp reached
  // the fold diverged, and every shuffle took the compiler's slow path for a diverged warp: on an
  // H100 the collector's fold took 0.5 us instead of ~0.2 for 4-byte posts and 3-6 us for the
  // exact float sum's 40-byte ones (bench/post_probe).
  __syncwarp();
  trace_stage<Sem>(4);
  got = block_fold<C>(got, slots);
  trace_stage<Sem>(5);
  if (threadIdx.x == 0) output[0] = C::finish(got, n);
  trace_stage<Sem>(6);
}
template <class Sem>
__device__ __noinline__ void collect_posts(typename Sem::Acc own, rl::gmem<unsigned long long> posts,
                                           rl::smem<typename Sem::Acc> slots, rl::gmem<typename Sem::Out> output,
                                           std::uint64_t n) {
  if constexpr (requires { requires !std::is_same_v<typename Sem::Collect, Sem>; }) {
    using C = typename Sem::Collect;
    if (Sem::collect_wide(n)) {
      __shared__ typename C::Acc total_storage[kWarps];
      rl::smem<typename C::Acc> totals = total_storage;
      collect_posts_in<Sem, C>(own, posts, totals, output, n);
      return;
    }
  }
  collect_posts_in<Sem, Sem>(own, posts, slots, output, n);
}

// kLoads vectors per thread per unit (shape.units must be counted with it); kContiguous: each
// block takes one contiguous run of units instead of every gridDim.x-th one. The library launches
// the defaults, or kLargeLoads/kLargeContiguous when free_large(n, wide_memory).
template <class T, class Sem, unsigned kLoads = kFreeLoads, bool kContiguous = false>
__global__ void __launch_bounds__(kThreads)
    reduceOrderFree(rl::gmem<const T> input, FreeShape shape, rl::gmem<unsigned long long> posts,
                    rl::gmem<unsigned> ticket, rl::gmem<typename Sem::Out> output) {
  using Acc = typename Sem::Acc;
  using Inner = typename Sem::Inner;
  constexpr unsigned kVec = Shape<T>::kVec;
  constexpr std::uint64_t kUnit = std::uint64_t(kThreads) * kLoads;
  __shared__ Acc slot_storage[kWarps];
  rl::smem<Acc> slots = slot_storage;
  __shared__ unsigned started_storage[1];
  rl::smem<unsigned> started = started_storage;  // SIMT: the start ticket (posted_results.cuh)
  __shared__ Acc cluster_storage[kMaxClusterBlocks];  // the leader's: one result per block
  rl::smem<Acc> results = cluster_storage;
  const unsigned clustered = cluster_blocks();  // > 1: the whole grid is one cluster
  if (clustered > 1) cluster_arrive_relaxed();

  if (!RL_SIMT && blockIdx.x == 0 && clustered == 1 && gridDim.x > 1) prefetch_posts<Acc>(posts);  // the collector
  wait_for_producer();
  trace_stage<Sem>(0);
  if (RL_SIMT && clustered == 1 && gridDim.x > 1 && threadIdx.x == 0) started[0] = draw_start_ticket(ticket);
  const std::uint64_t head = shape.head, vectors = shape.vectors;
  Acc acc = Sem::identity();
  std::uint64_t u_begin = blockIdx.x, u_end = shape.units, u_step = gridDim.x;
  if constexpr (kContiguous) {
    const std::uint64_t per = shape.units / gridDim.x, extra = shape.units % gridDim.x;
    u_begin = blockIdx.x * per + (blockIdx.x < extra ? blockIdx.x : extra);
    u_end = u_begin + per + (blockIdx.x < extra ? 1 : 0);
    u_step = 1;
  }
  for (std::uint64_t u = u_begin; u < u_end; u += u_step) {
    const std::uint64_t first = u * kUnit + threadIdx.x;  // this thread's first vector of the unit
    bool has[kLoads];
    const bool whole = (u + 1) * kUnit <= vectors;  // the same in every thread of the block
    if constexpr (requires(const std::uint32_t* w) { Sem::template absorb_words<4>(acc, w); }) {
      // The min and max of 16-bit floats: the vectors stay 32-bit words, two keys each
      // (Extremum::absorb_words), all loads issued before the first is used.
      std::uint32_t w[kLoads][4];
#pragma unroll
      for (unsigned i = 0; i < kLoads; ++i) {
        const std::uint64_t at = first + std::uint64_t(i) * kThreads;
        has[i] = whole || at < vectors;
        load_words(input, head + at * kVec, has[i], w[i]);
      }
      if (whole) {
        acc = Sem::template absorb_words<kLoads * 4>(acc, &w[0][0]);
      } else {
#pragma unroll
        for (unsigned i = 0; i < kLoads; ++i)
          if (has[i]) acc = Sem::template absorb_words<4>(acc, w[i]);
      }
      continue;
    }
    Vec<T> v[kLoads];
#pragma unroll
    for (unsigned i = 0; i < kLoads; ++i) {
      const std::uint64_t at = first + std::uint64_t(i) * kThreads;
      has[i] = whole || at < vectors;
      if (has[i]) v[i] = load_vec(input, head + at * kVec);
    }
    if constexpr (requires(const T* e) { Sem::template absorb_batch<kVec>(acc, e); }) {
      // Exact float sums (exact_wide.cuh) pad a partial unit with a value that changes nothing
      // (-0) and take it as one batch: one copy of their code instead of one per vector.
      if constexpr (requires { Sem::template padding<T>(); }) {
#pragma unroll
        for (unsigned i = 0; i < kLoads; ++i)
          if (!has[i])
#pragma unroll
            for (unsigned j = 0; j < kVec; ++j) v[i].v[j] = Sem::template padding<T>();
      }
      if (whole || requires { Sem::template padding<T>(); }) {
        T e[kLoads * kVec];
#pragma unroll
        for (unsigned i = 0; i < kLoads; ++i)
#pragma unroll
          for (unsigned j = 0; j < kVec; ++j) e[i * kVec + j] = v[i].v[j];
        acc = Sem::template absorb_batch<kLoads * kVec>(acc, e);
      } else {
#pragma unroll
        for (unsigned i = 0; i < kLoads; ++i)
          if (has[i]) acc = Sem::template absorb_batch<kVec>(acc, v[i].v);
      }
      continue;
    }
    Inner in = Sem::inner_identity();
#pragma unroll
    for (unsigned i = 0; i < kLoads; ++i) {
      if (has[i]) {
        const std::uint64_t at = head + (first + std::uint64_t(i) * kThreads) * kVec;
#pragma unroll
        for (unsigned j = 0; j < kVec; ++j) in = Sem::inner_combine(in, Sem::lift(v[i].v[j], at + j));
      }
    }
    acc = Sem::absorb(acc, in);
  }
  let_consumer_start();
  trace_stage<Sem>(1);
  if (blockIdx.x == 0) {  // the head and the tail, fewer than kVec elements each
    const std::uint64_t tail_begin = head + vectors * kVec;
    Inner in = Sem::inner_identity();
    if (threadIdx.x < head) in = Sem::inner_combine(in, Sem::lift(input[threadIdx.x], threadIdx.x));
    if (tail_begin + threadIdx.x < shape.n)
      in = Sem::inner_combine(in, Sem::lift(input[tail_begin + threadIdx.x], tail_begin + threadIdx.x));
    acc = Sem::absorb(acc, in);
  }
  acc = block_fold<Sem>(acc, slots);
  trace_stage<Sem>(2);
  if (clustered > 1) {  // one cluster: the leader folds the blocks' results in rank order
    const unsigned rank = cluster_rank();
    cluster_wait();  // every block of the cluster has started: its shared memory exists
    if (threadIdx.x == 0) *in_cluster_leader(results + rank) = acc;
    cluster_arrive();
    cluster_wait();
    if (rank != 0) return;
    if (threadIdx.x < 32) {
      acc = threadIdx.x < clustered ? results[threadIdx.x] : Sem::identity();
      acc = warp_fold<Sem>(acc);
      if (threadIdx.x == 0) output[0] = Sem::finish(acc, shape.n);
    }
    return;
  }
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) output[0] = Sem::finish(acc, shape.n);
    return;
  }
  // Posted results: every block but the collector posts its fold and is done; the collector
  // waits for the posts, a few slots per thread.
  const bool collector = is_collector(RL_SIMT ? started[0] : 0u);  // block_fold's barrier ordered started[0]
  if (!collector) {
    if (threadIdx.x == 0) post_result<Acc>(posts, blockIdx.x, acc);
    trace_stage<Sem>(3);
    return;
  }
  __syncthreads();  // slots is read once more
  trace_stage<Sem>(3);
  // The exact float sums' 40-byte accumulators collect inline: called, the collector's end took 3 us
  // longer at 16 blocks on an H100 (bench/wide_probe, trace).
  if constexpr (sizeof(Acc) > 16) collect_posts_in<Sem, Sem>(acc, posts, slots, output, shape.n);
  else collect_posts<Sem>(acc, posts, slots, output, shape.n);
  if (RL_SIMT && threadIdx.x == 0) ticket[0] = 0u;  // every block has drawn its start ticket
}

}  // namespace reducelab::detail
