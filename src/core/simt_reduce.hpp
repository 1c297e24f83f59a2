#pragma once
// The library's kernel run on the SIMT backend (g++), for tests: the same reduceChunks source
// as the GPU, with every access checked, so CI can compare its bits with the CPU backend's.
#include <cstdint>

#include "reducelab/reduce.hpp"

namespace reducelab::detail {

// Reduces host[0, n) by running the library's kernel on the SIMT emulator with `grid` blocks (0: as
// many as the fixed order has chunks, capped at 64), the input placed `offset` elements past a
// 16-byte boundary (offset 0: vector loads; other offsets: the unaligned path). `other_shape`:
// the kernel's other launch shape, whatever n: order-free operations take the one the GPU takes for
// large inputs (free_large), exact sums of halves the 128-bit accumulator the GPU takes where a
// block would sum more than 2^20 elements (exact_half.cuh), exact float sums of 2^13 to 2^16
// elements the digits' kernel (agent_exact.cuh) instead of the wide integer (exact_wide.cuh),
// exact bfloat16 sums the mid-size shape (exact_mid_shape).
template <class T, class Op>
result_t<T, Op> simt_reduce(const T* host, std::uint64_t n, Op op, unsigned grid = 0, unsigned offset = 0,
                            bool deterministic = true, bool other_shape = false);

}  // namespace reducelab::detail
