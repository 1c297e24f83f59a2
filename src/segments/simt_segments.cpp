#include "segments/simt_segments.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "segments/agent_segments.cuh"
#include "simt/portable.cuh"

namespace reducelab::detail {
namespace {
struct Freer {
  void operator()(void* p) const { simt::device_free(p); }
};
using DeviceBytes = std::unique_ptr<void, Freer>;
DeviceBytes device_copy(const void* host, std::size_t bytes, std::size_t pad = 0) {
  void* p = simt::device_malloc(std::max<std::size_t>(1, bytes + pad));
  std::memset(p, 0, std::max<std::size_t>(1, bytes + pad));
  if (bytes > 0) std::memcpy(static_cast<char*>(p) + pad, host, bytes);
  return DeviceBytes(p);
}

// What the GPU leaves in memory nobody wrote: cudaMalloc'd outputs and scratch hold whatever was
// there before. The runner fills them with a pattern instead of zeros, so a piece the kernels
// never write (or scratch read before it is written) shows up as a mismatch instead of passing
// as a zero. (The redo list and the column tickets are zero between calls by contract: the
// workspace is zeroed once, and the kernels leave them zero.)
constexpr unsigned char kPoison = 0x5a;
void poison(void* p, std::size_t bytes) { std::memset(p, kPoison, bytes); }

thread_local std::uint64_t last_redone = 0;
unsigned forced_group = 0;  // reduceSegmentGroups' group size, 0: as the GPU picks it
unsigned output_shift = 0;  // elements the output lies past its allocation's start
unsigned warp_each_blocks = 0;  // the most blocks a launch of reduceSegmentsWarpEach has, 0: kWarpEachBlocks

template <class T, class Op>
std::vector<result_t<T, Op>> run(const T* host, std::uint64_t n, const Pieces& pieces, const std::int64_t* begin,
                                 const std::int64_t* end, unsigned grid, unsigned offset) {
  using Sem = piece_semantics_t<T, Op>;
  using Out = typename Sem::Out;
  using Acc = typename Sem::Acc;
  last_redone = 0;
  simt_redone_in_blocks = 0;
  DeviceBytes input = device_copy(host, n * sizeof(T), offset * sizeof(T));
  const std::size_t offset_bytes = pieces.offsets ? pieces.count * sizeof(std::int64_t) : 0;
  DeviceBytes b = device_copy(begin, offset_bytes), e = device_copy(end, offset_bytes);
  std::vector<Out> host_out(pieces.count);
  DeviceBytes output = device_copy(host_out.data(), pieces.count * sizeof(Out), output_shift * sizeof(Out));
  if (pieces.count == 0) return host_out;
  auto* out = static_cast<Out*>(output.get()) + output_shift;
  poison(out, pieces.count * sizeof(Out));
  DeviceBytes redo_bytes = device_copy(nullptr, 0, (kRedoSlots + 2) * sizeof(unsigned long long));
  auto* redo = static_cast<unsigned long long*>(redo_bytes.get());
  poison(redo + 2, kRedoSlots * sizeof(unsigned long long));  // the slots; the count and ticket are zero

  DeviceBytes long_counters = device_copy(nullptr, 0, 2 * sizeof(unsigned));
  DeviceBytes long_pieces = device_copy(nullptr, 0, kLongSlots * sizeof(unsigned long long));
  poison(long_pieces.get(), kLongSlots * sizeof(unsigned long long));
  auto* counters = static_cast<unsigned*>(long_counters.get());
  const LongList longs{counters, static_cast<unsigned long long*>(long_pieces.get())};
  Pieces launched = pieces;
  PiecePlan plan = plan_pieces<T, Sem>(&launched);
  // As on the GPU, for a GPU that holds two blocks (or the forced grid).
  if constexpr (warp_rows_v<T, Sem>) prefer_warp_rows<T, Sem>(&plan, pieces, std::uint64_t(grid != 0 ? grid : 2) * kWarps);
  const auto* in = static_cast<const T*>(input.get()) + offset;
  const auto* bp = static_cast<const std::int64_t*>(b.get());
  const auto* ep = static_cast<const std::int64_t*>(e.get());
  simt::LaunchConfig cfg{};
  cfg.block = dim3(kThreads);
  // A small grid keeps the emulator quick; any grid gives the same bits.
  auto grid_for = [&](std::uint64_t wanted) {
    return dim3(grid != 0 ? grid : static_cast<unsigned>(std::clamp<std::uint64_t>(wanted, 1, 16)));
  };
  bool redone_inside = false;  // as on the GPU: no redo launch after these kernels
  std::uint64_t listed_before = 0;  // pieces listed for reduceLongPieces to sum again
  if constexpr (Sem::order_free) {
    bool narrow = false;  // as on the GPU (device_segments.cuh)
    // As on the GPU: kernel over kCols dense 16-bit columns, `counters` zero before and after.
    const auto launch_dense_half = [&]<unsigned kCols>(auto kernel, const char* name, std::size_t bytes,
                                                       auto counters_in) {
      DeviceBytes tickets = device_copy(nullptr, 0, bytes);
      const auto counters = counters_in(static_cast<unsigned*>(tickets.get()));
      const std::uint64_t vectors = pieces.length * kCols / Shape<T>::kVec;
      cfg.grid = grid_for(std::max<std::uint64_t>(1, vectors / (kHalfColumnLoads * kThreads)));
      cfg.name = name;
      rl::launch(kernel, cfg, in, pieces.length, counters, out);
      const auto* left = static_cast<const unsigned char*>(tickets.get());
      if (std::any_of(left, left + bytes, [](unsigned char b) { return b != 0; }))
        throw std::logic_error(std::string(name) + " left its counters set");
    };
    if constexpr (half_columns_v<T, Sem>) {
      if (plan.columns && half_columns_fit<T, Sem>(in, pieces)) {
        narrow = true;
        with_half_columns(pieces.count, [&]<unsigned kCols>() {
          launch_dense_half.template operator()<kCols>(reduceHalfColumns<Sem, kCols>, "reduceHalfColumns",
                                                      kHalfColumnCountBytes, half_column_counts);
        });
      }
    }
    if constexpr (half_column_extrema_v<T, Op>) {
      if (plan.columns && dense_half_columns_fit(in, pieces)) {
        narrow = true;
        with_half_columns(pieces.count, [&]<unsigned kCols>() {
          launch_dense_half.template operator()<kCols>(reduceHalfColumnExtrema<T, std::is_same_v<Op, op::max>, kCols>,
                                                      "reduceHalfColumnExtrema", kHalfColumnKeyBytes, half_column_keys);
        });
      }
    }
    if constexpr (half_columns_v<T, Sem>) {
      const HalfBands shape = plan.columns && !narrow ? half_bands(in, pieces, 24) : HalfBands{.bands = 0};
      if (shape.bands != 0) {
        narrow = true;
        DeviceBytes posts = device_copy(nullptr, 0, kPiecePartialBytes);
        poison(posts.get(), kPiecePartialBytes);
        DeviceBytes tickets = device_copy(nullptr, 0, kPieceTickets * sizeof(unsigned));
        cfg.grid = grid_for(shape.groups * shape.bands);
        cfg.name = "reduceHalfColumnBands";
        rl::launch(reduceHalfColumnBands<Sem>, cfg, in, shape, static_cast<long long*>(posts.get()),
                   static_cast<unsigned*>(tickets.get()), out);
        const auto* left = static_cast<const unsigned*>(tickets.get());
        if (std::any_of(left, left + kPieceTickets, [](unsigned t) { return t != 0; }))
          throw std::logic_error("reduceHalfColumnBands left a ticket set");
      }
    }
    if constexpr (narrow_columns_v<T, Sem>) {
      if (plan.columns && narrow_columns_fit<T, Sem>(in, pieces)) {
        narrow = true;
        DeviceBytes partials = device_copy(nullptr, 0, kPiecePartialBytes);
        poison(partials.get(), kPiecePartialBytes);
        DeviceBytes ticket = device_copy(nullptr, 0, sizeof(unsigned));
        const auto launch = [&]<unsigned kCols>() {
          const std::uint64_t vectors = pieces.length * kCols / Shape<T>::kVec;
          cfg.grid = grid_for(std::max<std::uint64_t>(1, vectors / (kNarrowLoads<T, kCols> * kThreads)));
          cfg.grid.x = static_cast<unsigned>(std::min<std::uint64_t>(cfg.grid.x, kNarrowBlocks<Acc, kCols>));
          cfg.name = "reduceNarrowColumns";
          rl::launch(reduceNarrowColumns<T, Sem, kCols>, cfg, in, pieces.length, static_cast<Acc*>(partials.get()),
                     static_cast<unsigned*>(ticket.get()), out);
        };
        constexpr unsigned kVec = Shape<T>::kVec;
        if (pieces.count == 2) launch.template operator()<2>();
        else if (pieces.count == 4) launch.template operator()<4>();
        else if (pieces.count == 2 * kVec) launch.template operator()<2 * kVec>();
        else if (pieces.count == 4 * kVec) launch.template operator()<4 * kVec>();
        if (*static_cast<unsigned*>(ticket.get()) != 0) throw std::logic_error("reduceNarrowColumns left its ticket set");
      }
    }
    redone_inside = narrow;
    // As on the GPU (device_segments.cuh), for a launch that holds 24 blocks.
    const auto warp_a_group = []<class S>(const Pieces& p) { return column_shape<typename S::Acc>(p, 24, 32).warp_per_group; };
    const auto launch_columns = [&]<class E, class S>(const Pieces& p, const char* name, bool vectors = false,
                                                      bool lanes_group = false) {
      const ColumnShape shape = column_shape<typename S::Acc>(p, 24, 32);
      if (vectors && !vec_columns_pay<S>(shape, lanes_group)) return false;
      DeviceBytes partials = device_copy(nullptr, 0, kColumnJobs * 32 * sizeof(typename S::Acc));
      poison(partials.get(), kColumnJobs * 32 * sizeof(typename S::Acc));
      DeviceBytes tickets = device_copy(nullptr, 0, kColumnJobs * sizeof(unsigned));
      cfg.grid = grid_for(column_blocks(shape));
      cfg.name = name;
      const auto launch = [&](auto kernel) {
        rl::launch(kernel, cfg, reinterpret_cast<const E*>(in), shape, static_cast<typename S::Acc*>(partials.get()),
                   static_cast<unsigned*>(tickets.get()), reinterpret_cast<typename S::Out*>(out), redo);
      };
      // As on the GPU: more loads in flight where a warp takes a whole group (the same kernel where
      // kWarpGroupLoads is kColumnLoads).
      if (shape.warp_per_group) launch(reduceColumns<E, S, kWarpGroupLoads<S>>);
      else launch(reduceColumns<E, S>);
      return true;
    };
    bool paired = false;
    if constexpr (pair_columns_v<T, Op>) {
      if (plan.columns && !narrow && pair_columns_fit<Op>(in, pieces)) {
        paired = true;
        using P = pair_columns_t<T, Op>;
        const Pieces words = column_vector_pieces(pieces, 2);
        bool four = false;
        if constexpr (vec_columns_v<std::uint32_t, P>) {
          using V = VecColumns<std::uint32_t, P>;
          if (vec_columns_fit<std::uint32_t, P>(in, words))
            four = launch_columns.template operator()<typename V::Vec, V>(
                column_vector_pieces(words, V::K), "reduceColumns (vectors)", true, warp_a_group.template operator()<P>(words));
        }
        if (!four) launch_columns.template operator()<std::uint32_t, P>(words, "reduceColumns");
      }
    }
    bool vectors = false;
    if constexpr (vec_columns_v<T, Sem>) {
      if (plan.columns && !narrow && vec_columns_fit<T, Sem>(in, pieces)) {
        using V = VecColumns<T, Sem>;
        vectors = launch_columns.template operator()<typename V::Vec, V>(column_vector_pieces(pieces, V::K),
                                                                         "reduceColumns (vectors)", true);
      }
    }
    // A column a lane: about 48 jobs of bands, or a warp per group from 32 groups of 32 columns.
    if (plan.columns && !paired && !narrow && !vectors) launch_columns.template operator()<T, Sem>(pieces, "reduceColumns");
    bool few_lanes = false;  // as on the GPU (device_segments.cuh)
    if constexpr (free_rows_v<T, Sem>) {
      const FreeRows shape = plan.row_groups ? free_rows_shape<T, Sem>(in, pieces) : FreeRows{};
      if (shape.lanes != 0) {
        few_lanes = true;
        cfg.grid = grid_for((pieces.count + free_rows_per_block(shape) - 1) / free_rows_per_block(shape));
        cfg.name = "reduceFreeRows";
        with_free_rows_kernel<T, Sem>(shape, [&]<auto kKernel>() { rl::launch(kKernel, cfg, in, launched, shape.lanes, out, redo); });
      }
    }
    bool packed = false;  // as on the GPU (device_segments.cuh)
    if constexpr (packed_rows_v<T, Sem>) {
      if (plan.row_groups && !few_lanes && packed_rows_fit<T, Sem>(in, pieces)) {
        packed = true;
        cfg.grid = grid_for(packed_rows_blocks<T>(pieces));
        cfg.name = "reducePackedRows";
        with_packed_rows_kernel<T, Sem>(pieces.length, [&]<auto kKernel>() { rl::launch(kKernel, cfg, in, launched, out, redo); });
      }
    }
    if (plan.row_groups && !packed && !few_lanes) {
      cfg.grid = grid_for(row_groups_blocks(plan.lanes, pieces.count));
      cfg.name = "reduceRowGroups";
      rl::launch(reduceRowGroups<T, Sem>, cfg, in, launched, plan.lanes, row_load_bytes<T>(in, pieces), out, redo);
    }
    if constexpr (cut_rows_v<T, Sem>) {
      if (plan.cut_rows) {
        const unsigned per = cut_row_per(plan.lanes, pieces.length);
        cfg.grid = grid_for(cut_rows_blocks(plan.lanes, per, pieces.count));
        cfg.name = "reduceCutRows";
        with_cut_rows_kernel<T, Sem>(plan.lanes, per, [&]<auto kKernel>() {
          rl::launch(kKernel, cfg, in, launched, row_load_bytes<T>(in, pieces), out, redo);
        });
      }
    }
  }
  if (plan.fixed.threads && singles_fit<T, Sem>(in, out, pieces)) {  // as on the GPU (device_segments.cuh)
    const std::uint64_t per_block = std::uint64_t(kThreads) * kSinglesInFlight * kSingleUnit<T, Sem>;
    cfg.grid = grid_for((pieces.count + per_block - 1) / per_block);
    cfg.name = "reduceSingles";
    rl::launch(reduceSingles<T, Sem>, cfg, in, pieces.count, singles_head<T, Sem>(in, pieces.count), out, redo);
  } else if (plan.fixed.threads) {
    cfg.grid = grid_for((pieces.count + kThreads - 1) / kThreads);
    cfg.name = "reduceTinyPieces";
    rl::launch(reduceTinyPieces<T, Sem>, cfg, in, launched, out, redo);
  }
  if constexpr (!Sem::order_free) {
    if (plan.fixed.warps) {
      cfg.grid = grid_for((pieces.count + kWarps - 1) / kWarps);
      cfg.name = "reduceShortPieces";
      rl::launch(reduceShortPieces<T, Sem>, cfg, in, launched, bp, ep, out, redo);
    }
  }
  if constexpr (Sem::order_free) {
    if (plan.segment_groups) {
      // As on the GPU for a grid of a few blocks (simt_force_segment_group picks the group size),
      // unless reduceSegmentsWarpEach runs alone (groups of one or two segments and no forced
      // grid): then its grid is the GPU's.
      const SegmentWarpsShape shape = segment_warps_shape(
          pieces.count, forced_group != 0 ? forced_group : segment_group_size(pieces.count, 4), grid != 0,
          warp_each_blocks != 0 ? warp_each_blocks : kWarpEachBlocks);
      if (shape.alone) {
        cfg.grid = dim3(shape.grid), cfg.block = dim3(shape.threads);
        cfg.name = "reduceSegmentsWarpEach";
        for (std::uint64_t first = 0; first < pieces.count; first += shape.per_launch())
          rl::launch(reduceSegmentsWarpEach<T, Sem>, cfg, in, first, pieces.count, bp, ep, out, redo, longs);
        cfg.block = dim3(kThreads);
      } else {
        cfg.grid = grid_for(shape.blocks);
        cfg.name = "reduceSegmentGroups";
        rl::launch(reduceSegmentGroups<T, Sem>, cfg, in, pieces.count, shape.group, bp, ep, out, redo, longs);
        cfg.name = "reduceSegmentWarps";
        rl::launch(reduceSegmentWarps<T, Sem>, cfg, in, pieces.count, shape.group, bp, ep, out, redo);
      }
    }
    bool by_warp = false;  // as on the GPU, for a GPU that holds two blocks (or the forced grid)
    if constexpr (warp_rows_v<T, Sem>) {
      if (plan.long_pieces && warp_rows_fit<T, Sem>(pieces, std::uint64_t(grid != 0 ? grid : 2) * kWarps)) {
        by_warp = true;
        cfg.grid = grid_for((pieces.count + kWarps - 1) / kWarps);
        cfg.name = "reduceWarpRows";
        for (std::uint64_t first = 0; first < pieces.count; first += std::uint64_t(cfg.grid.x) * kWarps)
          rl::launch(reduceWarpRows<T, Sem>, cfg, in, launched, first, out, redo);
      }
    }
    if (plan.long_pieces && !by_warp) {
      cfg.grid = grid_for(pieces.count);
      cfg.name = "reduceLongPieces";
      bool split = false;  // as on the GPU, for one that holds two blocks (or the forced grid); clusters of one
      if constexpr (split_rows_v<Sem>) {
        if (split_rows_fit<T, Sem>(pieces, grid != 0 ? grid : 2)) {
          split = true;
          cfg.name = "reduceSplitRows";
          for (std::uint64_t first = 0; first < pieces.count; first += cfg.grid.x)
            rl::launch(reduceSplitRows<T, Sem>, cfg, in, launched, first, out);
        }
      }
      bool deep = false;  // as on the GPU, for one that holds two blocks (or the forced grid)
      if constexpr (has_deep_rows_v<Sem>) {
        if (!split && deep_rows_fit<T, Sem>(pieces, grid != 0 ? grid : 2)) {
          deep = true;
          rl::launch(reduceLongPieces<T, Sem, true>, cfg, in, launched, bp, ep, out, redo, longs);
        }
      }
      bool by_block = false;  // as on the GPU
      if constexpr (block_rows_v<T, Sem>) {
        if (!deep && block_rows_fit<T, Sem>(pieces)) {
          by_block = true;
          rl::LaunchConfig rows_cfg = cfg;
          rows_cfg.name = "reduceBlockRows";
          rows_cfg.shared_bytes = kBlockRowsShared<T, Sem>;  // double rows' staged rounds
          for (std::uint64_t first = 0; first < pieces.count; first += rows_cfg.grid.x)
            rl::launch(reduceBlockRows<T, Sem>, rows_cfg, in, launched, first, out, redo);
          redone_inside = block_rows_redo_v<T, Sem>;
        }
      }
      if (!split && !deep && !by_block) {
        redone_inside = long_pieces_redo_v<T, Sem>;  // as on the GPU: it sums the listed pieces again itself
        listed_before = redo[0];
        rl::launch(reduceLongPieces<T, Sem>, cfg, in, launched, bp, ep, out, redo, longs);
      }
      if (counters[0] != 0 || counters[1] != 0) throw std::logic_error("reduceLongPieces left the long list set");
    }
  } else if (plan.fixed.blocks) {
    cfg.grid = grid_for(pieces.count);
    cfg.name = "reduceSegments";
    rl::launch(reduceSegments<T, Sem>, cfg, in, launched, bp, ep, out);
  }
  if constexpr (is_exact_pieces<Sem>::value) {
    if (redone_inside) {
      if (redo[0] != 0) throw std::logic_error("a kernel that sums pieces again itself left the redo list set");
      last_redone = listed_before + simt_redone_in_blocks;
    } else {
      cfg.grid = grid_for(std::min<std::uint64_t>(pieces.count, 4));
      cfg.name = "reduceRedoPieces";
      last_redone = redo[0];
      rl::launch(reduceRedoPieces<T, Out, Sem::kMean>, cfg, in, pieces, bp, ep, redo, out);
      if (redo[0] != 0 || redo[1] != 0) throw std::logic_error("reduceRedoPieces left the redo list set");
    }
  }
  std::memcpy(static_cast<void*>(host_out.data()), out, pieces.count * sizeof(Out));
  return host_out;
}
}  // namespace

std::uint64_t simt_last_redone() { return last_redone; }

std::uint64_t simt_limit_redo_slots(std::uint64_t slots) {
  const std::uint64_t before = simt_redo_slots;
  simt_redo_slots = slots == 0 || slots > kRedoSlots ? kRedoSlots : slots;
  return before;
}

unsigned simt_limit_long_slots(unsigned slots) {
  const unsigned before = simt_long_slots;
  simt_long_slots = slots == 0 || slots > kLongSlots ? kLongSlots : slots;
  return before;
}

unsigned simt_limit_warp_each_blocks(unsigned blocks) {
  const unsigned before = warp_each_blocks;
  warp_each_blocks = blocks;
  return before;
}

unsigned simt_shift_output(unsigned elements) {
  const unsigned before = output_shift;
  output_shift = elements;
  return before;
}

unsigned simt_force_segment_group(unsigned group) {
  const unsigned before = forced_group;
  forced_group = group;
  return before;
}

template <class T, class Op>
std::vector<result_t<T, Op>> simt_reduce_axis(const T* host, Matrix m, int axis, Op, unsigned grid, unsigned offset) {
  Pieces p;
  std::vector<result_t<T, Op>> probe(1);
  if (Status s = matrix_pieces(host, m, axis, probe.data(), &p); !s) throw std::invalid_argument(s.message());
  return run<T, Op>(host, p.elements, p, nullptr, nullptr, grid, offset);
}

template <class T, class Op>
std::vector<result_t<T, Op>> simt_reduce_segments(const T* host, std::uint64_t n, const std::vector<std::int64_t>& begin,
                                                  const std::vector<std::int64_t>& end, Op, unsigned grid,
                                                  unsigned offset) {
  Pieces p;
  std::vector<result_t<T, Op>> probe(1);
  if (begin.size() != end.size()) throw std::invalid_argument("simt_reduce_segments: begin and end differ in size");
  if (Status s = segment_pieces(host, begin.size(), begin.data(), end.data(), probe.data(), &p); !s)
    throw std::invalid_argument(s.message());
  return run<T, Op>(host, n, p, begin.data(), end.data(), grid, offset);
}

#define REDUCELAB_SIMT_SEGMENTS_(T, OP)                                                                       \
  template std::vector<result_t<T, op::OP>> simt_reduce_axis<T, op::OP>(const T*, Matrix, int, op::OP, unsigned, \
                                                                        unsigned);                            \
  template std::vector<result_t<T, op::OP>> simt_reduce_segments<T, op::OP>(                                  \
      const T*, std::uint64_t, const std::vector<std::int64_t>&, const std::vector<std::int64_t>&, op::OP, unsigned, unsigned);
#define REDUCELAB_SIMT_SEGMENTS_TYPE_(T) REDUCELAB_FOR_EACH_OP(REDUCELAB_SIMT_SEGMENTS_, T)
REDUCELAB_FOR_EACH_TYPE(REDUCELAB_SIMT_SEGMENTS_TYPE_)

}  // namespace reducelab::detail
