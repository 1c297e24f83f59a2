#pragma once
// The kernels of reduce_axis and reduce_segments. Every piece (a row, a column or a segment;
// pieces.hpp) gets what reducelab::reduce gives for its elements alone, so its bits never depend
// on the kernel, the grid or the GPU: order-free operations (integers, min/max, arg-extrema, and
// floating-point sums and means, carried as exact pairs: exact_pair.cuh) in whatever order
// reads fastest, the others (floating-point products, user operations) in reducelab::reduce's
// fixed order for the piece's length (reduce_order.hpp). Read by nvcc and by g++ (SIMT).
//
// The kernels live in agent_pieces.cuh (what they share, and the fixed order's kernels),
// agent_columns.cuh (axis 0), agent_rows.cuh (short rows), agent_long_pieces.cuh (long rows and
// segments) and agent_segment_groups.cuh (short ragged segments); this file chooses among them
// (plan_pieces, below).
//
// Order-free:
//   reduceColumns      columns (axis 0): coalesced across neighbouring columns, rows in bands
//                      (16-bit floats' min, max, sums and means: two columns a lane, as words;
//                      vectors of columns a lane where they pay: VecColumns, vec_columns_pay).
//   reduceNarrowColumns  exact sums and means of 2, 4, 8 or 16 dense float columns: the matrix
//                      read as one array, a thread keeping the sums of every column (or of the
//                      columns a vector holds).
//   reduceHalfColumns  exact sums and means of 2, 4 or 8 to 256 (a power of two) dense half
//                      columns: read the same way, the sums added as integers (counts of 2^-24);
//                      reduceHalfColumnExtrema, min and max of such half and bfloat16 columns.
//   reduceHalfColumnBands  exact half sums and means of at least 256 columns in whole 16-byte
//                      vectors: a vector of eight columns a lane, plain doubles over bands of at
//                      most 8192 rows (or a warp a group over every row), the bands' sums added
//                      as integers. (Other 16-bit columns take reduceColumns, two columns a lane.)
//   reduceRowGroups    rows of up to 8 KiB (exact sums: 8192 elements): a few lanes per
//                      row, 16-byte loads, several rows per warp in flight.
//   reduceCutRows      exact double sums and means of rows of up to 256 elements: the row's
//                      lanes hold all of it and split it on one grid (double_split, exact_sum.cuh).
//   reducePackedRows   dense rows of 2, 4 or 8 elements (whole rows in each 16-byte vector): a
//                      thread per vector, no shuffle; rows of two or four whole vectors (eight for
//                      order-free operations): a thread per row (a kernel for each row shape).
//                      Exact float, half and bfloat16 sums, and the order-free operations that are
//                      not exact sums.
//   reduceFreeRows     min, max, argmin, argmax and integer sums and products of dense rows of 4
//                      to 64 whole vectors (4 to 32, and 128, for 8-byte elements; 4- and 8-byte
//                      elements; the min, max, exact sum and mean of halves): two or four vectors
//                      a lane, every load of a step issued first (before reducePackedRows and
//                      reduceRowGroups).
//   reduceLongPieces   longer rows and segments: a block each (few rows of exact sums, minima
//                      or maxima: eight loads in flight a thread).
//   reduceWarpRows     longer rows (up to 64 KiB; float, half and bfloat16 rows of more than
//                      1024 elements) of exact sums and means, when there are at least as many
//                      as the GPU holds warps: a warp each.
//   reduceBlockRows    the other long rows of exact sums and means of a dense matrix: a block
//                      each, without reduceLongPieces' list of segments and strided pieces
//                      (double rows read through shared memory: each thread's own
//                      asynchronous copies, a round ahead).
//   reduceSegmentGroups  segments of up to a tile: a warp per group of up to 32 neighbouring
//                      short segments, read as one contiguous range (agent_segment_groups.cuh).
//   reduceSegmentWarps the groups it leaves (longer or scattered segments): a warp per segment.
//   reduceSegmentsWarpEach  few segments (no reduceSegmentGroups): a warp each, in small blocks.
//   reduceRedoPieces   exact sums only: the pieces whose pair lost part of the sum, with digits
//                      (not after float rows a block each: their blocks sum a lost row again;
//                      nor after reduceLongPieces of float or double sums, which sums them all).
// The fixed order (order-free operations take the first too, for matrix pieces of at most one
// vector):
//   reduceTinyPieces   a thread per piece of at most one vector (a matrix's rows or columns of
//                      a few elements): neighbouring threads read neighbouring pieces.
//   reduceSingles      pieces of one element, piece p at element p (a single row's columns, a
//                      single column's rows): units of 16 bytes of results a thread.
//   reduceShortPieces  a warp per contiguous piece of at most one tile (kTile elements: 8192
//                      floats): the warp's lanes stand in for the block's 256 threads, so the
//                      order is the block's; lane l reads vector l of each row, 512 bytes a row
//                      (order-free operations: four loads in flight per lane, one warp fold).
//   reduceSegments     a block per piece: the piece's chunks one after another with the
//                      library's own fold_chunk and block_fold, the chunk results in shared
//                      memory, folded as reduceChunks' last block does.
//
// Fewer long rows than multiprocessors go through reducelab::reduce row by row instead
// (device_segments.cuh): the same order, the whole GPU on each row.
//
// Float, half and bfloat16 sums and means sum in plain double while a window of exponents vouches
// for it (exact_pair.cuh), and fall back to exact pairs per row or per thread where it cannot.
// Double rows of up to 256 elements are split on a grid set by the row's largest element and summed
// as two plain double sums (double_split, exact_sum.cuh; reduceCutRows), pairs where the
// exponents lie too far apart for it; longer double pieces split each lane's rounds of loads the
// same way (CutFold).
//
// Still slow: columns of floating-point products follow each column's fixed order, one element
// per row with a stride; a few long segments (whose lengths only the GPU knows) get a block each;
// columns of 16-bit elements load 2 bytes a lane (64 bytes a warp) but for their min, max,
// sums and means, which read words of two columns (PairExtremum, PairSum) where the kernels above
// do not take them; rows shorter than one
// 16-byte vector take one load each only when they are exactly 4 or 8 bytes (others, element by
// element), unless they are exact sums of a dense matrix whose rows divide a vector
// (reducePackedRows); exact double sums along long rows stay about 1 % behind CUB's plain sums
// (16384 x 16384 on an H200): a block a row gives registers to each lane's split sums that CUB's
// plain kernel gives to loads in flight (docs/performance.md).
#include <algorithm>
#include <cstdint>

#include "segments/agent_columns.cuh"
#include "segments/agent_long_pieces.cuh"
#include "segments/agent_pieces.cuh"
#include "segments/agent_rows.cuh"
#include "segments/agent_segment_groups.cuh"

namespace reducelab::detail {

// Which kernels one reduce_axis / reduce_segments call runs (the GPU and the SIMT runner share
// this choice). Order-free operations (exact sums and means of floating-point pieces among them):
// columns read coalesced (reduceColumns), short rows a few lanes each (reduceRowGroups; exact
// double sums of rows of up to 256 elements, reduceCutRows), columns of at most one vector a
// thread each, longer rows and segments a block each (reduceLongPieces), segments of up to a
// tile a warp per group of them (reduceSegmentGroups).
// Floating-point products and user operations keep each piece's fixed order (piece_kernels).
struct PiecePlan {
  bool columns = false;      // reduceColumns
  bool row_groups = false;   // reduceRowGroups, `lanes` lanes per row
  bool cut_rows = false;     // reduceCutRows, `lanes` lanes per row
  unsigned lanes = 1;
  bool long_pieces = false;  // reduceLongPieces
  bool segment_groups = false;  // reduceSegmentGroups, then reduceSegmentWarps (or reduceSegmentsWarpEach alone)
  PieceKernels fixed;        // reduceTinyPieces / reduceShortPieces / reduceSegments
};
template <class T, class Sem>
inline PiecePlan plan_pieces(Pieces* p) {
  PiecePlan plan;
  if constexpr (Sem::order_free) {
    if (columns_fit<T, Sem>(*p)) {
      plan.columns = true;
    } else if (!p->offsets && p->length == 1) {  // one element a row: a thread per row
      plan.fixed.threads = true;
    } else if (row_groups_fit<T, Sem>(*p)) {
      if constexpr (cut_rows_v<T, Sem>) {
        if (p->length <= kRowCutElements) {  // exact double sums of short rows: reduceCutRows
          plan.cut_rows = true;
          plan.lanes = cut_row_lanes(p->length);
          return plan;
        }
      }
      plan.row_groups = true;
      plan.lanes = packed_order_free_v<T, Sem> ? free_row_lanes<T>(p->length) : row_group_lanes<T>(p->length);
      // Exact double sums of rows longer than the cut takes (reduceCutRows): each level of a row's
      // shuffle tree merges pairs (four TwoSums a lane), so fewer lanes per row, each folding more
      // elements, do less work: a lane takes at least 16 vectors, or the row has 4 lanes
      // (docs/performance.md).
      if constexpr (cut_rows_v<T, Sem>) {
        const unsigned vectors = static_cast<unsigned>((p->length + Shape<T>::kVec - 1) / Shape<T>::kVec);
        plan.lanes = std::min(plan.lanes, std::max(kDoubleRowLanes, vectors / 16));
      }
    } else if (!p->offsets && p->length <= Shape<T>::kVec) {
      plan.fixed.threads = true;
    } else if (!p->offsets) {
      plan.long_pieces = true;
    } else {
      plan.segment_groups = true;
      plan.long_pieces = true;
      p->skip_short = true;
    }
    return plan;
  }
  plan.fixed = piece_kernels<T>(p);
  return plan;
}

// Exact float, half and bfloat16 sums along rows of more than kWarpRowsFrom elements, which
// reduceRowGroups would take (up to 8192 elements), read faster a warp a row when there are at
// least as many rows as warps the launch holds: H200, rows of 2048, 4096 and 8192 halves
// 406.9 -> 168.2, 360.4 -> 138.2 and 345.6 -> 131.6 us, floats 303.5 -> 247.2, 283.8 -> 242.8
// and 305.2 -> 239.0 (2^28 elements each); rows of 1024 keep the row groups (float 250.9 against
// 266.4 us a warp a row, half 164.5 against 232.3). The launchers ask before they launch.
inline constexpr std::uint64_t kWarpRowsFrom = 1024;
template <class T, class Sem>
inline void prefer_warp_rows(PiecePlan* plan, const Pieces& p, std::uint64_t warps) {
  if (window_sums_v<T, Sem> && plan->row_groups && p.length > kWarpRowsFrom && warp_rows_fit<T, Sem>(p, warps)) {
    plan->row_groups = false;
    plan->long_pieces = true;
  }
}

}  // namespace reducelab::detail
