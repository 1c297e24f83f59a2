#pragma once
// Grid and scratch arithmetic of the gallery, host-only and shared by the registry (which
// declares scratch sizes) and the launchers (which carve that scratch). One place, so the two
// can never disagree.
#include <cstddef>

namespace rl::gallery {

constexpr std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }
constexpr bool is_pow2(std::size_t x) { return x != 0 && (x & (x - 1)) == 0; }
constexpr std::size_t align_up(std::size_t x, std::size_t a) { return ceil_div(x, a) * a; }

// Scratch regions start on 256-byte boundaries (what cudaMalloc guarantees for the base).
inline constexpr std::size_t kScratchAlign = 256;

// The final pass (final_pass.cuh) reduces `count` per-block partials in fixed order: while more
// than kFinalOneBlock remain, blocks of kFinalThreads threads fold chunks of kFinalChunk partials
// into a second buffer (ping-pong with the first); one block then writes the result.
inline constexpr unsigned kFinalThreads = 256;
inline constexpr std::size_t kFinalChunk = 4096;      // partials per block of an inner round
inline constexpr std::size_t kFinalOneBlock = 16384;  // at most this many: one block finishes

// Bytes of scratch the final pass needs to reduce `count` partials that a kernel wrote at the
// start of scratch: the partials themselves plus the second buffer of the ping-pong.
constexpr std::size_t final_pass_scratch(std::size_t count, std::size_t acc_bytes) {
  std::size_t bytes = align_up(count * acc_bytes, kScratchAlign);
  if (count > kFinalOneBlock) bytes += align_up(ceil_div(count, kFinalChunk) * acc_bytes, kScratchAlign);
  return bytes;
}

// Grid-stride kernels (modern.cuh: vectorized) cap their grid at a constant so that the
// reduction order depends on n and the block only, never on the device.
inline constexpr std::size_t kGridStrideMaxBlocks = 2048;

// reduceVectorized's grid: about four 16-byte vectors per thread, at most kGridStrideMaxBlocks
// blocks. Not tuned on a device yet: a starting point; 2048 blocks cover an H100/H200's 132 SMs
// many times over at any block size.
constexpr std::size_t vectorized_blocks(std::size_t n, unsigned block, std::size_t in_bytes) {
  const std::size_t per_block = static_cast<std::size_t>(block) * (16 / in_bytes) * 4;
  const std::size_t blocks = ceil_div(n, per_block);
  return blocks < kGridStrideMaxBlocks ? blocks : kGridStrideMaxBlocks;
}

// CUB's DeviceReduce temp storage, bounded without a device: it holds one partial per block of
// its even-share grid (at most a few thousand blocks on any current GPU) plus bookkeeping. The
// launcher queries the exact size and throws if it exceeds this bound.
constexpr std::size_t cub_scratch_bound(std::size_t /*n*/, std::size_t acc_bytes) {
  return align_up(64 * 1024 + 65536 * acc_bytes, kScratchAlign);
}

// The footprints the entries declare (Entry::bytes_read, Entry::scratch_bytes).

// Every kernel of the gallery reads each input element once.
constexpr std::size_t read_once(std::size_t n, std::size_t input_bytes) { return n * input_bytes; }

// A kernel that leaves one partial per `per_thread * block` elements for the final pass.
template <unsigned per_thread>
constexpr std::size_t partials_scratch(std::size_t n, unsigned block, std::size_t acc_bytes) {
  return final_pass_scratch(ceil_div(n, static_cast<std::size_t>(block) * per_thread), acc_bytes);
}

// A kernel that combines into the result with atomics.
constexpr std::size_t no_scratch(std::size_t, unsigned, std::size_t) { return 0; }

// reduceVectorized: the most blocks any input type gives (8-byte elements, two per vector).
constexpr std::size_t vectorized_scratch(std::size_t n, unsigned block, std::size_t acc_bytes) {
  return final_pass_scratch(vectorized_blocks(n, block, 8), acc_bytes);
}

constexpr std::size_t cub_scratch(std::size_t n, unsigned, std::size_t acc_bytes) {
  return cub_scratch_bound(n, acc_bytes);
}

}  // namespace rl::gallery
