#pragma once
// The library's per-(device, stream) workspace: a ticket counter, an accumulator for the
// nondeterministic variant, room for one result per chunk, the digits of exact sums and the
// order-free kernel's posted results.
// Allocated on first use, zeroed in stream order, kept until the process exits. Different streams get different workspaces, so
// concurrent reductions never share a counter; calls on one stream are ordered by the stream.
#include <cstddef>

#include "reducelab/detail/reduce_order.hpp"
#include "reducelab/reduce.hpp"

namespace reducelab::detail {

struct Workspace {
  unsigned* ticket = nullptr;
  void* accumulator = nullptr;  // 16 bytes
  void* result = nullptr;       // 16 bytes: where reduce_to_host lands before its copy
  void* partials = nullptr;     // kPartialBytes
  unsigned long long* exact = nullptr;  // kExactBytes: the digits and flags of exact sums
  void* pieces = nullptr;               // kPieceBytes: reduce_axis's column partials
  unsigned* piece_tickets = nullptr;    // kPieceTickets counters, zero between launches
  unsigned long long* posts = nullptr;  // kPostBytes: posted results, empty between launches
};

inline constexpr std::size_t kPartialSlots = kMaxPartials;
inline constexpr std::size_t kPartialSlotBytes = 16;  // the largest accumulator (ArgResult<double>)
inline constexpr std::size_t kPostBytes = kPartialSlots * 10 * 8;  // up to 10 words a block (posted_results.cuh)
inline constexpr std::size_t kExactBytes = 1024;      // >= kExactWords (agent_exact.cuh) * 8
inline constexpr std::size_t kPieceTickets = 2048;    // column groups of one reduce_axis launch
inline constexpr std::size_t kPieceRedoSlots = std::size_t(1) << 16;  // reduce_axis's exact sums: pieces to redo
inline constexpr std::size_t kPiecePartialBytes = kPieceTickets * 32 * kPartialSlotBytes;  // 1 MiB
// The column partials, then a redo counter, a ticket and kPieceRedoSlots piece numbers (64-bit words).
inline constexpr std::size_t kPieceBytes = kPiecePartialBytes + (kPieceRedoSlots + 2) * 8;

// Looks up or creates the workspace of the current device and `stream`. Works while `stream` is
// being captured into a graph (the allocation happens outside the capture, the zeroing is
// captured as a memset node, which is harmless on replay).
Status workspace_for(stream_t stream, Workspace* out);

// A failed CUDA call (its cudaError_t as an int) as a Status naming `what`.
Status cuda_status(int cuda_error, const char* what);

// The current device's multiprocessor count (cached).
Status current_sm_count(int* device, int* sms);

// Whether `device`'s DRAM peaks at 4 TB/s or more (memory clock x bus width; cached): an H200
// (4.8 TB/s) but not an H100 (3.35). The order-free kernel's shape for large inputs depends on it
// (free_large, agent_order_free.cuh).
Status wide_memory(int device, bool* wide);

}  // namespace reducelab::detail
