#pragma once
// Posted results: how the blocks of one launch hand their results to one block without a ticket
// (the order-free kernel from 17 blocks up: agent_order_free.cuh).
// Every block but the collector posts its result to its own slot in global memory and exits; the
// collector polls the slots until each is full, folds what it finds, empties the slots for the
// next launch and writes the answer. The last-block-done ticket it replaces puts three trips to
// L2 in a row after the last block's fold (its partial, an acquire-release atomic, the last block
// reading the partials back); here the last post reaches a collector whose loads are already
// waiting for it. On an H100, cold: int32 max of 2^20 elements 6.96 -> 6.53 us, int32 sum of
// 2^22 11.0 -> 10.4 us (docs/performance.md, "Posted results instead of the ticket").
//
// Who collects. On the GPU, block 0: it starts first, so its polls are in flight when the others
// post (faster than the last block collecting, bench/midn_probe). Its waiting cannot stall the
// launch: no other block waits on anything, so every one of them runs to its end and frees its
// place for the next, whatever the grid. The SIMT runtime runs a block to its end before a worker
// takes the next, so there the collector is the block that started last (a ticket drawn at the
// start): every other block has started, and on one worker has already finished.
//
// A slot is kPostWords<Acc> 64-bit words, each a 32-bit piece of the result with 1 in its high
// half; the collector takes the slot once every word has its 1, and zeroes the words (the
// workspace starts zeroed). A 64-bit access is whole (single-copy atomic), so a word that reads 1
// was written by this launch's poster, and the pieces need no order between them: no fence on
// either side. A result of up to 8 bytes is one 16-byte store and one 16-byte load, one of 40
// bytes five of each. Every collector zeroes every word it waited for, so launches whose results
// differ in size can share one workspace.
//
// The slots lie in rows, one row per 16 bytes of a slot (two words), kMaxPartials slots a row:
// the k-th 16 bytes of slot b follow those of slot b - 1. So the collector's lanes, each polling
// the slot of its own block, read consecutive 16 bytes in each of their loads, a few lines a warp.
// With each slot's words together, a warp polling 40-byte slots asked L2 for about 32 lines per
// load (on an H100 its 127 posts were taken 1.05 us after the last one landed, against 0.45 for
// 4-byte posts; bench/post_probe).
#include <cstdint>
#include <cstring>

#include "reducelab/detail/portable.cuh"
#include "reducelab/detail/reduce_order.hpp"

namespace reducelab::detail {

template <class Acc>
inline constexpr unsigned kPostWords = sizeof(Acc) <= 4 ? 1u : 2u * static_cast<unsigned>((sizeof(Acc) + 7) / 8);
static_assert(sizeof(unsigned) == 4);

// Whether this block collects: block 0 on the GPU, the block that started last in SIMT (`started`
// is the ticket this block drew at its start there; unused on the GPU).
__device__ __forceinline__ bool is_collector(unsigned started) {
#if RL_SIMT
  return started == gridDim.x - 1;
#else
  (void)started;
  return blockIdx.x == 0;
#endif
}

// SIMT only: the ticket that picks the collector, drawn by thread 0 at a block's start (0 on the GPU).
__device__ __forceinline__ unsigned draw_start_ticket(rl::gmem<unsigned> ticket) {
#if RL_SIMT
  return atomicAdd(&ticket[0], 1u);
#else
  (void)ticket;
  return 0;
#endif
}

// Where word k of slot `slot` lies: a one-word slot is the word itself; wider slots lie in rows of
// 16 bytes (above).
template <unsigned kWords>
__device__ __forceinline__ std::uint64_t word_at(unsigned slot, unsigned k) {
  if constexpr (kWords == 1) return slot;
  else return (std::uint64_t(k / 2) * kMaxPartials + slot) * 2 + k % 2;
}

// The collector asks L2 for its slots' lines at its start, one prefetch per 128 bytes of each row
// of slots and one for the row's last slot (a row need not start a line), and goes on without
// waiting. After the L2 flush of a cold call the lines are in DRAM only: a post then lands in a
// line L2 holds, and the poll that finds it reads L2 instead of waiting for DRAM (int32 sum on an
// H100, cold: 2^18 5.9 -> 5.7 us, 2^20 7.0 -> 6.7; docs/performance.md).
template <class Acc>
__device__ __forceinline__ void prefetch_posts(rl::gmem<unsigned long long> posts) {
  constexpr unsigned kWords = kPostWords<Acc>;
  constexpr unsigned kRows = kWords == 1 ? 1u : kWords / 2;
  constexpr unsigned kSlotsPerLine = kWords == 1 ? 16u : 8u;
  const unsigned lines = (gridDim.x + kSlotsPerLine - 1) / kSlotsPerLine + 1;
  for (unsigned i = threadIdx.x; i < kRows * lines; i += blockDim.x) {
    const unsigned row = i / lines, line = i % lines;
    const unsigned b = line * kSlotsPerLine < gridDim.x ? line * kSlotsPerLine : gridDim.x - 1;
    rl::prefetch_l2(posts + word_at<kWords>(b, row * 2));
  }
}

// Writes the kWords words of slot `slot`: whole 64-bit words, two to a 16-byte store.
template <unsigned kWords>
__device__ __forceinline__ void store_slot(rl::gmem<unsigned long long> posts, unsigned slot,
                                           const unsigned long long (&w)[kWords]) {
#if RL_SIMT
  for (unsigned k = 0; k < kWords; ++k) atomicExch(&posts[word_at<kWords>(slot, k)], w[k]);
#else
  if constexpr (kWords == 1) {
    unsigned long long* p = posts + word_at<kWords>(slot, 0);
    asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(w[0]) : "memory");
  } else {
#pragma unroll
    for (unsigned k = 0; k < kWords; k += 2) {
      unsigned long long* p = posts + word_at<kWords>(slot, k);
      asm volatile("st.relaxed.gpu.global.v2.b64 [%0], {%1, %2};" ::"l"(p), "l"(w[k]), "l"(w[k + 1]) : "memory");
    }
  }
#endif
}

// Posts `value` to slot `slot`. One thread per block.
template <class Acc>
__device__ __forceinline__ void post_result(rl::gmem<unsigned long long> posts, unsigned slot, const Acc& value) {
  constexpr unsigned kWords = kPostWords<Acc>;
  static_assert(sizeof(Acc) <= 4 * kWords);
  unsigned piece[kWords] = {};
  memcpy(piece, &value, sizeof(Acc));
  unsigned long long w[kWords];
#pragma unroll
  for (unsigned k = 0; k < kWords; ++k) w[k] = (1ull << 32) | piece[k];
  store_slot<kWords>(posts, slot, w);
}

// The collector's side, in three steps so that a thread can have every one of its slots' loads in
// flight at once: poll_post reads slot `slot` into `w`, post_is_full says whether all of it is
// this launch's post, take_post zeroes the slot and returns the posted value.
template <class Acc>
__device__ __forceinline__ void poll_post(rl::gmem<unsigned long long> posts, unsigned slot,
                                          unsigned long long (&w)[kPostWords<Acc>]) {
  constexpr unsigned kWords = kPostWords<Acc>;
#if RL_SIMT
  for (unsigned k = 0; k < kWords; ++k) w[k] = atomicAdd(&posts[word_at<kWords>(slot, k)], 0ull);
#else
  if constexpr (kWords == 1) {
    unsigned long long* p = posts + word_at<kWords>(slot, 0);
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(w[0]) : "l"(p) : "memory");
  } else {
#pragma unroll
    for (unsigned k = 0; k < kWords; k += 2) {
      unsigned long long* p = posts + word_at<kWords>(slot, k);
      asm volatile("ld.relaxed.gpu.global.v2.b64 {%0, %1}, [%2];" : "=l"(w[k]), "=l"(w[k + 1]) : "l"(p) : "memory");
    }
  }
#endif
}

template <class Acc>
__device__ __forceinline__ bool post_is_full(const unsigned long long (&w)[kPostWords<Acc>]) {
  bool full = true;
#pragma unroll
  for (unsigned k = 0; k < kPostWords<Acc>; ++k) full = full && (w[k] >> 32) != 0;
  return full;
}

template <class Acc>
__device__ __forceinline__ Acc take_post(rl::gmem<unsigned long long> posts, unsigned slot,
                                         const unsigned long long (&w)[kPostWords<Acc>]) {
  constexpr unsigned kWords = kPostWords<Acc>;
  const unsigned long long empty[kWords] = {};
  store_slot<kWords>(posts, slot, empty);
  unsigned piece[kWords];
#pragma unroll
  for (unsigned k = 0; k < kWords; ++k) piece[k] = static_cast<unsigned>(w[k]);
  Acc value;
  memcpy(&value, piece, sizeof(Acc));
  return value;
}

}  // namespace reducelab::detail
