#pragma once
// reduce_axis and reduce_segments on the GPU: check the arguments, size the grid, launch
// reduceSegments once. nvcc only; the library compiles the built-in types and operations
// (device_segments_*.cu).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "reducelab/detail/exact_sum.cuh"
#include "reducelab/detail/launch.cuh"
#include "reducelab/detail/workspace.hpp"
#include "segments/agent_segments.cuh"

namespace reducelab {
namespace detail {

// Blocks of `Kernel` the GPU holds at once (the occupancy is asked once per device).
template <auto Kernel>
Status blocks_held(int device, int sms, std::uint64_t* held) {
  int per_sm = 0;
  if (Status s = resident_blocks<Kernel>(device, &per_sm); !s) return s;
  *held = std::uint64_t(sms) * per_sm;
  return {};
}
// At most as many blocks as the GPU holds at once (they loop over their work) and no more than
// `wanted`, unless a test forces a grid; any grid gives the same bits.
inline unsigned pieces_grid(const Options& options, std::uint64_t held, std::uint64_t wanted) {
  const std::uint64_t g = options.grid != 0 ? options.grid : held;
  return static_cast<unsigned>(std::clamp<std::uint64_t>(g, 1, std::min<std::uint64_t>(wanted, 1u << 30)));
}

// The grid of a row kernel that steps over its rows, `held` of which the GPU holds at once on its
// `sms` multiprocessors: `every` blocks (one step each: blocks that start as others end) where
// the kernel holds four or more blocks an SM, else at most `held`, each looping. On an H200
// (bench/pack_probe lib, both grids in one call) a grid of every step read faster at four or
// more (2^26 x 4 double max 633.4 -> 607.7 us, int32 sum 386.9 -> 365.7, half sum 194.8 ->
// 185.3; 2^20 x 256 exact double sums 511.3 -> 485.8) and slower at three (2^26 x 4 exact float
// sums 323.8 -> 356.3).
inline std::uint64_t row_blocks(std::uint64_t held, int sms, std::uint64_t every) {
  return held >= 4 * std::uint64_t(sms) ? every : std::min(held, every);
}

// The redo list of exact piece sums (exact_pieces.cuh) in the workspace's pieces area.
inline unsigned long long* redo_list(const Workspace& ws) {
  return reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(ws.pieces) + kPiecePartialBytes);
}

template <class T, class Op>
Status launch_segments(const T* input, const Pieces& pieces, const std::int64_t* begin, const std::int64_t* end,
                       result_t<T, Op>* output, stream_t stream, const Options& options) {
  using Sem = piece_semantics_t<T, Op>;
  static_assert(kRedoSlots == kPieceRedoSlots, "the workspace holds the redo list");
  static_assert(sizeof(typename Sem::Acc) <= kPartialSlotBytes, "column partials fit the workspace's slots");
  if (pieces.count == 0) return {};
  int device = 0, sms = 0;
  if (Status s = current_sm_count(&device, &sms); !s) return s;
  // Fewer long rows than multiprocessors: each row through reducelab::reduce, which spreads one
  // array over the whole GPU: the same order (the same bits) as a block per row, and for
  // floating-point sums and means the same exact result.
  if (!pieces.offsets && pieces.stride == 1 && pieces.length > Shape<T>::kTile && pieces.count < std::uint64_t(sms)) {
    Options fixed = options;
    fixed.deterministic = true;  // the pieces' order (or exact sums), whatever the caller asked of reduce
    for (std::uint64_t r = 0; r < pieces.count; ++r)
      if (Status s = ::reducelab::reduce(input + r * pieces.step, pieces.length, Op{}, output + r, stream, fixed); !s) return s;
    return {};
  }
  Workspace ws;
  if (Status s = workspace_for(stream, &ws); !s) return s;
  unsigned long long* const redo = redo_list(ws);
  // Segments longer than a tile, listed by reduceSegmentGroups for reduceLongPieces: the count and
  // ticket in the first two piece tickets (zero between launches), the list where columns keep
  // their partials (a segments call has no columns).
  static_assert(kPiecePartialBytes / sizeof(unsigned long long) >= kLongSlots, "the workspace holds the long list");
  const LongList longs{ws.piece_tickets, static_cast<unsigned long long*>(ws.pieces)};
  Pieces launched = pieces;
  PiecePlan plan = plan_pieces<T, Sem>(&launched);
  if constexpr (warp_rows_v<T, Sem>) {
    if (plan.row_groups) {  // long rows of exact sums: a warp a row when there are enough of them
      std::uint64_t held = 0;
      if (Status s = blocks_held<reduceWarpRows<T, Sem>>(device, sms, &held); !s) return s;
      prefer_warp_rows<T, Sem>(&plan, pieces, (options.grid != 0 ? std::min<std::uint64_t>(options.grid, held) : held) * kWarps);
    }
  }
  // Whether the kernels that ran list nothing for reduceRedoPieces: those that read a few columns
  // as one array (their last block sums a lost column again itself), add half columns as integers,
  // or sum float rows a block each (the block's first warp sums a lost row again); or whether the
  // last one sums every listed piece again itself (reduceLongPieces of float and double sums).
  bool redone_inside = false;
  if constexpr (Sem::order_free) {
    bool narrow = false;  // columns taken by a kernel of their own (read as one array, or half columns in bands)
    // Dense 16-bit columns read as one array (agent_columns.cuh): kKernel over kCols columns with
    // its counters in the piece tickets, at most kHalfColumnBlocksPerSm blocks an SM.
    const auto launch_dense_half = [&]<auto kKernel, unsigned kCols>(const auto& counters, const char* what) -> Status {
      std::uint64_t held = 0;
      if (Status s = blocks_held<kKernel>(device, sms, &held); !s) return s;
      held = std::min<std::uint64_t>(held, std::uint64_t(sms) * kHalfColumnBlocksPerSm<kCols>);
      const std::uint64_t vectors = pieces.length * kCols / Shape<T>::kVec;
      const std::uint64_t wanted = std::max<std::uint64_t>(1, vectors / (kHalfColumnLoads * kThreads));
      kKernel<<<pieces_grid(options, held, wanted), kThreads, 0, stream>>>(input, pieces.length, counters, output);
      const cudaError_t e = cudaGetLastError();
      return e == cudaSuccess ? Status{} : cuda_status(e, what);
    };
    if constexpr (half_columns_v<T, Sem>) {
      if (plan.columns && half_columns_fit<T, Sem>(input, pieces)) {
        narrow = true;
        static_assert(kHalfColumnCountBytes <= kPieceTickets * sizeof(unsigned), "the counters fit the piece tickets");
        const HalfColumnCounts counts = half_column_counts(ws.piece_tickets);
        if (Status s = with_half_columns(pieces.count, [&]<unsigned kCols>() {
              return launch_dense_half.template operator()<reduceHalfColumns<Sem, kCols>, kCols>(
                  counts, "launching reduceHalfColumns");
            });
            !s)
          return s;
      }
    }
    if constexpr (half_column_extrema_v<T, Op>) {  // min and max of the same matrices
      if (plan.columns && dense_half_columns_fit(input, pieces)) {
        narrow = true;
        static_assert(kHalfColumnKeyBytes <= kPieceTickets * sizeof(unsigned), "the counters fit the piece tickets");
        const HalfColumnKeys keys = half_column_keys(ws.piece_tickets);
        if (Status s = with_half_columns(pieces.count, [&]<unsigned kCols>() {
              return launch_dense_half.template operator()<reduceHalfColumnExtrema<T, std::is_same_v<Op, op::max>, kCols>,
                                                           kCols>(keys, "launching reduceHalfColumnExtrema");
            });
            !s)
          return s;
      }
    }
    if constexpr (half_columns_v<T, Sem>) {  // wider (or pitched) half columns: a vector of them a lane, in bands
      if (plan.columns && !narrow) {
        std::uint64_t held = 0;
        if (Status s = blocks_held<reduceHalfColumnBands<Sem>>(device, sms, &held); !s) return s;
        held = std::min<std::uint64_t>(held, std::uint64_t(sms) * kHalfBandBlocksPerSm);
        const HalfBands shape = half_bands(input, pieces, held);
        if (shape.bands != 0) {
          narrow = true;
          reduceHalfColumnBands<Sem><<<pieces_grid(options, held, shape.groups * shape.bands), kThreads, 0, stream>>>(
              input, shape, static_cast<long long*>(ws.pieces), ws.piece_tickets, output);
          if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cuda_status(e, "launching reduceHalfColumnBands");
        }
      }
    }
    if constexpr (narrow_columns_v<T, Sem>) {
      if (plan.columns && narrow_columns_fit<T, Sem>(input, pieces)) {
        narrow = true;
        const auto launch = [&]<unsigned kCols>() -> Status {
          constexpr auto kernel = reduceNarrowColumns<T, Sem, kCols>;
          constexpr std::uint64_t kMost = kNarrowBlocks<typename Sem::Acc, kCols>;
          static_assert(kMost * kCols * sizeof(typename Sem::Acc) <= kPiecePartialBytes, "posts fit the workspace");
          std::uint64_t held = 0;
          if (Status s = blocks_held<kernel>(device, sms, &held); !s) return s;
          const std::uint64_t vectors = pieces.length * kCols / Shape<T>::kVec;
          const std::uint64_t wanted = std::max<std::uint64_t>(1, vectors / (kNarrowLoads<T, kCols> * kThreads));
          const unsigned grid = pieces_grid(options, std::min<std::uint64_t>(held, kMost), wanted);
          kernel<<<static_cast<unsigned>(std::min<std::uint64_t>(grid, kMost)), kThreads, 0, stream>>>(
              input, pieces.length, static_cast<typename Sem::Acc*>(ws.pieces), ws.piece_tickets, output);
          const cudaError_t e = cudaGetLastError();
          return e == cudaSuccess ? Status{} : cuda_status(e, "launching reduceNarrowColumns");
        };
        Status s;
        constexpr unsigned kVec = Shape<T>::kVec;
        if (pieces.count == 2) s = launch.template operator()<2>();
        else if (pieces.count == 4) s = launch.template operator()<4>();
        else if (pieces.count == 2 * kVec) s = launch.template operator()<2 * kVec>();
        else if (pieces.count == 4 * kVec) s = launch.template operator()<4 * kVec>();
        if (!s) return s;
      }
    }
    redone_inside = narrow;
    // Whether reduceColumns over the columns read as E under S gives each warp a whole group.
    const auto warp_a_group = [&]<class E, class S>(const Pieces& p, bool* yes) -> Status {
      std::uint64_t held = 0;
      if (Status s = blocks_held<reduceColumns<E, S>>(device, sms, &held); !s) return s;
      *yes = column_shape<typename S::Acc>(p, held, held * kWarps).warp_per_group;
      return {};
    };
    // reduceColumns over the columns read as E under S: words of two half columns (PairExtremum,
    // PairSum) or vectors of columns (VecColumns), `p` counting them (agent_columns.cuh). With
    // `vectors`, only where the launch's shape lets them pay (vec_columns_pay; `lanes_group`: the
    // kernel a column or a word a lane would give each warp a whole group); *taken says whether
    // it launched.
    const auto launch_columns = [&]<class E, class S>(const Pieces& p, const char* what, bool vectors = false,
                                                      bool* taken = nullptr, bool lanes_group = false) -> Status {
      std::uint64_t held = 0;
      if (Status s = blocks_held<reduceColumns<E, S>>(device, sms, &held); !s) return s;
      const ColumnShape shape = column_shape<typename S::Acc>(p, held, held * kWarps);
      if (vectors && !vec_columns_pay<S>(shape, lanes_group)) return {};
      if (taken) *taken = true;
      const auto launch = [&]<auto kKernel>(const ColumnShape& s, std::uint64_t blocks) -> Status {
        kKernel<<<pieces_grid(options, blocks, column_blocks(s)), kThreads, 0, stream>>>(
            reinterpret_cast<const E*>(input), s, static_cast<typename S::Acc*>(ws.pieces), ws.piece_tickets,
            reinterpret_cast<typename S::Out*>(output), redo);
        const cudaError_t e = cudaGetLastError();
        return e == cudaSuccess ? Status{} : cuda_status(e, what);
      };
      if constexpr (kWarpGroupLoads<S> != kColumnLoads<S>) {
        if (shape.warp_per_group) {  // a warp a whole group: more loads in flight, fewer blocks
          constexpr auto kDeep = reduceColumns<E, S, kWarpGroupLoads<S>>;
          std::uint64_t deep_held = 0;
          if (Status s = blocks_held<kDeep>(device, sms, &deep_held); !s) return s;
          const ColumnShape deep = column_shape<typename S::Acc>(p, deep_held, deep_held * kWarps);
          if (deep.warp_per_group) return launch.template operator()<kDeep>(deep, deep_held);
        }
      }
      return launch.template operator()<reduceColumns<E, S>>(shape, held);
    };
    bool paired = false;  // half/bf16 min, max, sums and means: two columns to a word
    if constexpr (pair_columns_v<T, Op>) {
      if (plan.columns && !narrow && pair_columns_fit<Op>(input, pieces)) {
        paired = true;
        using P = pair_columns_t<T, Op>;
        const Pieces words = column_vector_pieces(pieces, 2);
        bool four = false;  // min and max: four words a lane where they fit and pay
        if constexpr (vec_columns_v<std::uint32_t, P>) {
          using V = VecColumns<std::uint32_t, P>;
          if (vec_columns_fit<std::uint32_t, P>(input, words)) {
            bool lanes_group = false;
            if (Status s = warp_a_group.template operator()<std::uint32_t, P>(words, &lanes_group); !s) return s;
            const Status s = launch_columns.template operator()<typename V::Vec, V>(
                column_vector_pieces(words, V::K), "launching reduceColumns (vectors of column pairs)", true, &four,
                lanes_group);
            if (!s) return s;
          }
        }
        if (!four) {
          if (Status s = launch_columns.template operator()<std::uint32_t, P>(words, "launching reduceColumns (column pairs)"); !s)
            return s;
        }
      }
    }
    bool vectors = false;  // 4- and 8-byte columns, several to a lane
    if constexpr (vec_columns_v<T, Sem>) {
      if (plan.columns && !narrow && vec_columns_fit<T, Sem>(input, pieces)) {
        using V = VecColumns<T, Sem>;
        const Status s = launch_columns.template operator()<typename V::Vec, V>(column_vector_pieces(pieces, V::K),
                                                                                 "launching reduceColumns (vectors)", true, &vectors);
        if (!s) return s;
      }
    }
    if (plan.columns && !paired && !narrow && !vectors) {  // a column a lane
      static_assert(kColumnJobs <= kPieceTickets, "the workspace holds a launch's column partials");
      if (Status s = launch_columns.template operator()<T, Sem>(pieces, "launching reduceColumns"); !s) return s;
    }
    bool few_lanes = false;  // min, max and integer sums of short rows of whole vectors (free_rows_shape)
    if constexpr (free_rows_v<T, Sem>) {
      const FreeRows shape = plan.row_groups ? free_rows_shape<T, Sem>(input, pieces) : FreeRows{};
      if (shape.lanes != 0) {
        few_lanes = true;
        // A grid of every row, as the rows' probe measured it; exact half sums at most
        // kFreeHalfSumBlocks an SM (free_rows_blocks).
        const std::uint64_t every = (pieces.count + free_rows_per_block(shape) - 1) / free_rows_per_block(shape);
        const std::uint64_t blocks = free_rows_blocks<T, Sem>(every, sms);
        const cudaError_t e = with_free_rows_kernel<T, Sem>(shape, [&]<auto kKernel>() {
          kKernel<<<pieces_grid(options, blocks, every), kThreads, 0, stream>>>(input, launched, shape.lanes, output, redo);
          return cudaGetLastError();
        });
        if (e != cudaSuccess) return cuda_status(e, "launching reduceFreeRows");
      }
    }
    bool packed = false;  // dense rows of 2, 4 or 8 elements, or of 2, 4 or 8 vectors: a thread per vector or row
    if constexpr (packed_rows_v<T, Sem>) {
      if (plan.row_groups && !few_lanes && packed_rows_fit<T, Sem>(input, pieces)) {
        packed = true;
        const std::uint64_t every = packed_rows_blocks<T>(pieces);
        const Status launch = with_packed_rows_kernel<T, Sem>(pieces.length, [&]<auto kKernel>() -> Status {
          std::uint64_t held = 0;
          if (Status s = blocks_held<kKernel>(device, sms, &held); !s) return s;
          const unsigned grid = pieces_grid(options, row_blocks(held, sms, every), every);
          kKernel<<<grid, kThreads, 0, stream>>>(input, launched, output, redo);
          const cudaError_t e = cudaGetLastError();
          return e == cudaSuccess ? Status{} : cuda_status(e, "launching reducePackedRows");
        });
        if (!launch) return launch;
      }
    }
    if (plan.row_groups && !packed && !few_lanes) {
      std::uint64_t held = 0;
      if (Status s = blocks_held<reduceRowGroups<T, Sem>>(device, sms, &held); !s) return s;
      const std::uint64_t every = row_groups_blocks(plan.lanes, pieces.count);
      const unsigned grid = pieces_grid(options, row_blocks(held, sms, every), every);
      const unsigned load = row_load_bytes<T>(input, pieces);
      reduceRowGroups<T, Sem><<<grid, kThreads, 0, stream>>>(input, launched, plan.lanes, load, output, redo);
      const cudaError_t e = cudaGetLastError();
      if (e != cudaSuccess) return cuda_status(e, "launching reduceRowGroups");
    }
    if constexpr (cut_rows_v<T, Sem>) {
      if (plan.cut_rows) {
        const unsigned per = cut_row_per(plan.lanes, pieces.length);
        const std::uint64_t every = cut_rows_blocks(plan.lanes, per, pieces.count);
        const unsigned load = row_load_bytes<T>(input, pieces);
        const Status launch = with_cut_rows_kernel<T, Sem>(plan.lanes, per, [&]<auto kKernel>() -> Status {
          std::uint64_t held = 0;
          if (Status s = blocks_held<kKernel>(device, sms, &held); !s) return s;
          const unsigned grid = pieces_grid(options, row_blocks(held, sms, every), every);
          kKernel<<<grid, kThreads, 0, stream>>>(input, launched, load, output, redo);
          const cudaError_t e = cudaGetLastError();
          if (e != cudaSuccess) return cuda_status(e, "launching reduceCutRows");
          return {};
        });
        if (!launch) return launch;
      }
    }
  }
  if (plan.fixed.threads && singles_fit<T, Sem>(input, output, pieces)) {  // one element a piece, in units
    std::uint64_t held = 0;
    if (Status s = blocks_held<reduceSingles<T, Sem>>(device, sms, &held); !s) return s;
    const std::uint64_t per_block = std::uint64_t(kThreads) * kSinglesInFlight * kSingleUnit<T, Sem>;
    const unsigned grid = pieces_grid(options, held, (pieces.count + per_block - 1) / per_block);
    reduceSingles<T, Sem><<<grid, kThreads, 0, stream>>>(input, pieces.count, singles_head<T, Sem>(input, pieces.count),
                                                         output, redo);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return cuda_status(e, "launching reduceSingles");
  } else if (plan.fixed.threads) {
    std::uint64_t held = 0;
    if (Status s = blocks_held<reduceTinyPieces<T, Sem>>(device, sms, &held); !s) return s;
    const unsigned grid = pieces_grid(options, held, (pieces.count + kThreads - 1) / kThreads);
    reduceTinyPieces<T, Sem><<<grid, kThreads, 0, stream>>>(input, launched, output, redo);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return cuda_status(e, "launching reduceTinyPieces");
  }
  if constexpr (!Sem::order_free) {  // order-free plans never set it: no instances for them
    if (plan.fixed.warps) {
      std::uint64_t held = 0;
      if (Status s = blocks_held<reduceShortPieces<T, Sem>>(device, sms, &held); !s) return s;
      const unsigned grid = pieces_grid(options, held, (pieces.count + kWarps - 1) / kWarps);
      reduceShortPieces<T, Sem><<<grid, kThreads, 0, stream>>>(input, launched, begin, end, output, redo);
      const cudaError_t e = cudaGetLastError();
      if (e != cudaSuccess) return cuda_status(e, "launching reduceShortPieces");
    }
  }
  if constexpr (Sem::order_free) {
    if (plan.segment_groups) {
      std::uint64_t held = 0;
      if (Status s = blocks_held<reduceSegmentGroups<T, Sem>>(device, sms, &held); !s) return s;
      const SegmentWarpsShape shape =
          segment_warps_shape(pieces.count, segment_group_size(pieces.count, held * kWarps), options.grid != 0);
      if (shape.alone) {
        // Few segments: a warp each, after whatever wrote the input (programmatic dependent
        // launch: it may start while that kernel ends, and waits for it before it reads).
        for (std::uint64_t first = 0; first < pieces.count; first += shape.per_launch())
          if (const cudaError_t e = launch_kernel_sized(reduceSegmentsWarpEach<T, Sem>, shape.grid, shape.threads, 1u, stream,
                                                        input, first, pieces.count, begin, end, output, redo, longs);
              e != cudaSuccess)
            return cuda_status(e, "launching reduceSegmentsWarpEach");
      } else {
        const unsigned grid = pieces_grid(options, held, shape.blocks);
        reduceSegmentGroups<T, Sem><<<grid, kThreads, 0, stream>>>(input, pieces.count, shape.group, begin, end, output,
                                                                   redo, longs);
        if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cuda_status(e, "launching reduceSegmentGroups");
        // The groups it leaves (not contiguous, or long segments on average), with the same
        // groups: it may start while reduceSegmentGroups still runs (programmatic dependent
        // launch), and ends after it.
        std::uint64_t warps_held = 0;
        if (Status s = blocks_held<reduceSegmentWarps<T, Sem>>(device, sms, &warps_held); !s) return s;
        if (const cudaError_t e = launch_kernel_sized(reduceSegmentWarps<T, Sem>, pieces_grid(options, warps_held, shape.blocks),
                                                      kThreads, 1u, stream, input, pieces.count, shape.group, begin,
                                                      end, output, redo);
            e != cudaSuccess)
          return cuda_status(e, "launching reduceSegmentWarps");
      }
    }
    bool by_warp = false;  // long rows a warp each (reduceWarpRows) when there are enough of them
    if constexpr (warp_rows_v<T, Sem>) {
      if (plan.long_pieces) {
        std::uint64_t held = 0;
        if (Status s = blocks_held<reduceWarpRows<T, Sem>>(device, sms, &held); !s) return s;
        const std::uint64_t blocks = options.grid != 0 ? std::min<std::uint64_t>(options.grid, held) : held;
        if (warp_rows_fit<T, Sem>(pieces, blocks * kWarps)) {
          by_warp = true;
          // A grid of every row, as for a block a row below (H200, 16384 x 16384 sums a warp a
          // row: floats 251.9 -> 246.3 us, halves 131.5 -> 128.8, doubles 514.9 -> 506.2).
          const std::uint64_t every = (pieces.count + kWarps - 1) / kWarps;
          const unsigned grid = pieces_grid(options, every, every);
          for (std::uint64_t first = 0; first < pieces.count; first += std::uint64_t(grid) * kWarps) {
            reduceWarpRows<T, Sem><<<grid, kThreads, 0, stream>>>(input, launched, first, output, redo);
            const cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess) return cuda_status(e, "launching reduceWarpRows");
          }
        }
      }
    }
    if (plan.long_pieces && !by_warp) {
      std::uint64_t held = 0;
      if (Status s = blocks_held<reduceLongPieces<T, Sem>>(device, sms, &held); !s) return s;
      // A matrix's rows a block each, the grid a block a row: blocks that start as others end read
      // faster than blocks that loop over rows (H200, max along 16384 x 16384 floats 239.7 ->
      // 233.1 us, doubles 468.1 -> 462.6, halves 124.2 -> 119.8; docs/performance.md). Segments
      // keep the blocks the GPU holds: they loop over the long list, whose length only the GPU knows.
      const unsigned grid = pieces_grid(options, pieces.offsets ? held : pieces.count, pieces.count);
      const std::uint64_t at_once = options.grid != 0 ? std::min<std::uint64_t>(options.grid, held) : held;
      // Launched to overlap the end of the kernel before it (programmatic dependent launch): after
      // segments a warp each it waits, with its blocks in place, for the long list.
      cudaError_t e = cudaSuccess;
      bool split = false;  // fewer rows of minima or maxima than twice the SMs: a cluster of two blocks a row
      if constexpr (split_rows_v<Sem>) {
        constexpr auto kernel = reduceSplitRows<T, Sem>;
        std::uint64_t split_held = 0;
        if (Status s = blocks_held<kernel>(device, sms, &split_held); !s) return s;
        unsigned limit = 1;  // 1 where the GPU has no clusters
        if (Status s = cluster_limit<kernel>(device, &limit); !s) return s;
        const std::uint64_t every = pieces.count * kSplitRowBlocks;
        const std::uint64_t blocks =
            options.grid != 0 ? std::min<std::uint64_t>(options.grid / kSplitRowBlocks * kSplitRowBlocks, every) : every;
        if (limit >= kSplitRowBlocks && blocks != 0 && split_rows_fit<T, Sem>(pieces, split_held)) {
          split = true;
          for (std::uint64_t first = 0; first < pieces.count && e == cudaSuccess; first += blocks / kSplitRowBlocks)
            e = launch_kernel_clustered(kernel, static_cast<unsigned>(blocks), kSplitRowBlocks, stream, input, launched,
                                        first, output);
          if (e != cudaSuccess) return cuda_status(e, "launching reduceSplitRows");
        }
      }
      bool deep = false;  // few long rows of exact sums, minima or maxima: eight loads in flight a thread
      if constexpr (has_deep_rows_v<Sem>) {
        if (!split && deep_rows_fit<T, Sem>(pieces, at_once)) {
          deep = true;
          e = launch_kernel(reduceLongPieces<T, Sem, true>, grid, stream, input, launched, begin, end, output, redo, longs);
        }
      }
      bool by_block = false;  // exact sums of a dense matrix's rows: a lean block a row
      if constexpr (block_rows_v<T, Sem>) {
        if (!deep && block_rows_fit<T, Sem>(pieces)) {
          by_block = true;
          constexpr auto kernel = reduceBlockRows<T, Sem>;
          constexpr std::size_t shared = kBlockRowsShared<T, Sem>;
          if constexpr (shared > 0) {
            if (Status s = allow_dynamic_shared<kernel>(device, shared); !s) return s;
          }
          for (std::uint64_t first = 0; first < pieces.count && e == cudaSuccess; first += grid)
            e = launch_kernel_shaped(kernel, grid, kThreads, 1u, shared, stream, input, launched, first, output, redo);
          if (e != cudaSuccess) return cuda_status(e, "launching reduceBlockRows");
          redone_inside = block_rows_redo_v<T, Sem>;  // the call's only kernel (dense rows): it sums its lost rows again
        }
      }
      if (!split && !deep && !by_block) {
        e = launch_kernel(reduceLongPieces<T, Sem>, grid, stream, input, launched, begin, end, output, redo, longs);
        redone_inside = long_pieces_redo_v<T, Sem>;  // the call's last kernel: it sums the listed pieces again itself
      }
      if (e != cudaSuccess) return cuda_status(e, "launching reduceLongPieces");
    }
  } else if (plan.fixed.blocks) {
    std::uint64_t held = 0;
    if (Status s = blocks_held<reduceSegments<T, Sem>>(device, sms, &held); !s) return s;
    const unsigned grid = pieces_grid(options, held, pieces.count);
    reduceSegments<T, Sem><<<grid, kThreads, 0, stream>>>(input, launched, begin, end, output);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return cuda_status(e, "launching reduceSegments");
  }
  if constexpr (is_exact_pieces<Sem>::value) {
    if (redone_inside) return {};
    // Pieces whose pair lost part of its sum, again with digits (usually none: each block reads
    // the empty list and leaves).
    using Out = result_t<T, Op>;
    constexpr auto kernel = reduceRedoPieces<T, Out, Sem::kMean>;
    const unsigned grid = static_cast<unsigned>(std::min<std::uint64_t>(pieces.count, 2 * std::uint64_t(sms)));
    // Launched to overlap the end of the kernel before it (programmatic dependent launch): it
    // waits for that kernel, which ends after any before it, before it reads the list.
    if (const cudaError_t e = launch_kernel(kernel, options.grid != 0 ? std::min(options.grid, grid) : grid, stream, input,
                                            pieces, begin, end, redo, output);
        e != cudaSuccess)
      return cuda_status(e, "launching reduceRedoPieces");
  }
  return {};
}

}  // namespace detail

template <class T, class Op>
Status reduce_axis(const T* input, Matrix m, int axis, Op, result_t<T, Op>* output, stream_t stream,
                   const Options& options) {
  detail::Pieces p;
  if (Status s = detail::matrix_pieces(input, m, axis, output, &p); !s) return s;
  return detail::launch_segments<T, Op>(input, p, nullptr, nullptr, output, stream, options);
}

template <class T, class Op>
Status reduce_segments(const T* input, std::uint64_t count, const std::int64_t* begin, const std::int64_t* end, Op,
                       result_t<T, Op>* output, stream_t stream, const Options& options) {
  detail::Pieces p;
  if (Status s = detail::segment_pieces(input, count, begin, end, output, &p); !s) return s;
  return detail::launch_segments<T, Op>(input, p, begin, end, output, stream, options);
}

}  // namespace reducelab

#define REDUCELAB_SEGMENTS_INSTANTIATE_(T, OP)                                                                \
  template ::reducelab::Status reducelab::reduce_axis<T, reducelab::op::OP>(                                  \
      const T*, reducelab::Matrix, int, reducelab::op::OP, reducelab::result_t<T, reducelab::op::OP>*,         \
      reducelab::stream_t, const reducelab::Options&);                                                        \
  template ::reducelab::Status reducelab::reduce_segments<T, reducelab::op::OP>(                              \
      const T*, std::uint64_t, const std::int64_t*, const std::int64_t*, reducelab::op::OP,                   \
      reducelab::result_t<T, reducelab::op::OP>*, reducelab::stream_t, const reducelab::Options&);
#define REDUCELAB_SEGMENTS_INSTANTIATE_TYPE(T) REDUCELAB_FOR_EACH_OP(REDUCELAB_SEGMENTS_INSTANTIATE_, T)
