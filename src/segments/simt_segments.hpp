#pragma once
// reduce_axis and reduce_segments's kernels run on the SIMT backend (g++), for tests: the GPU's kernel source with every
// access checked, so CI compares its bits with the CPU backend's.
#include <cstdint>
#include <vector>

#include "reducelab/segments.hpp"

namespace reducelab::detail {

// The results of reduce_axis / reduce_segments over host data, computed by the GPU's kernels on the
// emulator with `grid` blocks (0: one per piece, at most 16), the input placed `offset` elements
// past a 16-byte boundary. Bad arguments throw std::invalid_argument with the Status message.
template <class T, class Op>
std::vector<result_t<T, Op>> simt_reduce_axis(const T* host, Matrix m, int axis, Op op, unsigned grid = 0,
                                              unsigned offset = 0);
template <class T, class Op>
std::vector<result_t<T, Op>> simt_reduce_segments(const T* host, std::uint64_t n, const std::vector<std::int64_t>& begin,
                                                  const std::vector<std::int64_t>& end, Op op, unsigned grid = 0,
                                                  unsigned offset = 0);

// How many pieces the last call on this thread listed for the redo with digits (exact sums
// whose pair of doubles lost part of the sum; exact_pieces.cuh), more than kRedoSlots meaning all.
std::uint64_t simt_last_redone();

// Lowers the redo list's capacity the kernels use on SIMT (0: back to the GPU's kRedoSlots), so
// a test can overflow it with a few pieces; returns the capacity before.
std::uint64_t simt_limit_redo_slots(std::uint64_t slots);

// Lowers the capacity of the list of long segments (reduceSegmentGroups lists them for
// reduceLongPieces) on SIMT (0: back to the GPU's kLongSlots); returns the capacity before.
unsigned simt_limit_long_slots(unsigned slots);

// Lowers how many blocks one launch of reduceSegmentsWarpEach has on SIMT (0: as on the GPU, 2^30),
// so that a test's few segments take several launches; returns the setting before.
unsigned simt_limit_warp_each_blocks(unsigned blocks);

// Sets how many segments reduceSegmentGroups gives a warp on SIMT (a power of two up to 32; 0:
// chosen from the count, as on the GPU); returns the setting before.
unsigned simt_force_segment_group(unsigned group);

// Places the output of the next calls `elements` results past its allocation's start (which is
// 16-byte aligned), so that tests reach the kernels' paths for an output off a word boundary;
// returns the setting before.
unsigned simt_shift_output(unsigned elements);

}  // namespace reducelab::detail
