#pragma once
// The kernels of reduce_axis and reduce_segments. Every piece (a row, a column or a segment;
// pieces.hpp) is reduced in reducelab::reduce's fixed order for its length (reduce_order.hpp), so
// its bits depend on its elements alone, never on the kernel, the grid or the GPU. Read by nvcc
// and by g++ (SIMT).
//
//   reduceTinyPieces   a thread per piece of at most one vector (a matrix's rows or columns of
//                      a few elements): neighbouring threads read neighbouring pieces.
//   reduceShortPieces  a warp per contiguous piece of at most one tile (kTile elements: 8192
//                      floats): the warp's lanes stand in for the block's 256 threads, so the
//                      order is the block's; lane l reads vector l of each row, 512 bytes a row.
//   reduceSegments     a block per piece: the piece's chunks one after another with the
//                      library's own fold_chunk and block_fold, the chunk results in shared
//                      memory, folded as reduceChunks' last block does.
//
// Fewer long rows than multiprocessors go through reducelab::reduce row by row instead
// (device_segments.cuh): the same order, the whole GPU on each row.
//
//   reduceColumns      columns of an order-free operation (integer sums, min, max, arg-extrema):
//                      read coalesced across neighbouring columns, rows cut into bands.
//
// Still slow: columns of floating-point sums and products follow each column's fixed order, one
// element per row with a stride; a few long segments (whose lengths only the GPU knows) get a
// block each.
#include <cstdint>

#include "reducelab/detail/agent_reduce.cuh"
#include "reducelab/detail/portable.cuh"
#include "segments/pieces.hpp"

namespace reducelab::detail {

// Step 1 for chunk c of a piece whose elements are `stride` apart: fold_chunk's order, one
// element at a time.
template <class T, class Sem>
__device__ __forceinline__ typename Sem::Acc fold_strided_chunk(rl::gmem<const T> x, std::uint64_t stride,
                                                                const Plan& plan, std::uint64_t c) {
  using Acc = typename Sem::Acc;
  using Inner = typename Sem::Inner;
  constexpr unsigned kVec = Shape<T>::kVec;
  constexpr std::uint64_t kTile = Shape<T>::kTile;
  const std::uint64_t begin = plan.chunk_begin(c), end = plan.chunk_begin(c + 1);
  Acc acc = Sem::identity();
  for (std::uint64_t tile = begin; tile < end; tile += kTile) {
    const std::uint64_t base = tile + std::uint64_t(threadIdx.x) * kVec;
    Inner in = Sem::inner_identity();
#pragma unroll 1
    for (unsigned i = 0; i < kItems; ++i) {
      if (tile + std::uint64_t(i) * kThreads * kVec >= end) break;
      const std::uint64_t at = base + std::uint64_t(i) * kThreads * kVec;
#pragma unroll 1
      for (unsigned j = 0; j < kVec && at + j < plan.n; ++j) {
        const T v = x[(at + j) * stride];
        in = Sem::inner_combine(in, Sem::lift(v, at + j));
      }
    }
    acc = Sem::absorb(acc, in);
  }
  return acc;
}

template <class T>
__device__ __forceinline__ bool is_aligned16(rl::gmem<const T> p) {
#if RL_SIMT
  return reinterpret_cast<std::uintptr_t>(p.get()) % 16 == 0;
#else
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
#endif
}

// The first element and the length of piece p.
template <class Index>
__device__ __forceinline__ void piece_extent(const Pieces& pieces, Index begin, Index end, std::uint64_t p,
                                             std::uint64_t* first, std::uint64_t* length) {
  if (pieces.offsets) {
    const std::int64_t b = begin[p], e = end[p];
    *length = segment_length(b, e);
    *first = *length ? static_cast<std::uint64_t>(b) : 0;
  } else {
    *first = p * pieces.step;
    *length = pieces.length;
  }
}

// The block's order for a contiguous piece of n <= kTile elements (one chunk, one tile), computed
// by one warp. Lane l stands for the block's threads l + 32 w (w < kWarps): it folds each one's
// vectors as fold_chunk would, the warp folds each w as block_fold's warps do, and lane 0 replays
// warp 0's final tree over the kWarps results (the lanes past kWarps hold the identity, which
// every built-in combine passes through exactly). The whole warp must call it.
template <class T, class Sem>
__device__ __forceinline__ typename Sem::Acc warp_fold_tile(rl::gmem<const T> x, std::uint64_t n, bool aligned) {
  using Acc = typename Sem::Acc;
  using Inner = typename Sem::Inner;
  constexpr unsigned kVec = Shape<T>::kVec;
  const unsigned lane = threadIdx.x % 32;
  Acc warps[kWarps];
#pragma unroll
  for (unsigned w = 0; w < kWarps; ++w) {
    warps[w] = Sem::identity();
    if (std::uint64_t(w) * 32 * kVec >= n) continue;  // the same for every lane
    const std::uint64_t t = w * 32 + lane;
    Inner in = Sem::inner_identity();
#pragma unroll 1
    for (unsigned i = 0; i < kItems; ++i) {
      const std::uint64_t row = std::uint64_t(i) * kThreads * kVec;
      if (row >= n) break;
      const std::uint64_t at = row + t * kVec;
      if (aligned && at + kVec <= n) {
        const Vec<T> v = load_vec(x, at);
#pragma unroll
        for (unsigned j = 0; j < kVec; ++j) in = Sem::inner_combine(in, Sem::lift(v.v[j], at + j));
      } else {
#pragma unroll 1
        for (unsigned j = 0; j < kVec && at + j < n; ++j) {
          const T e = x[at + j];
          in = Sem::inner_combine(in, Sem::lift(e, at + j));
        }
      }
    }
    warps[w] = warp_fold<Sem>(Sem::absorb(Sem::identity(), in));
  }
  static_assert(kWarps == 8, "the final tree below is written for 8 warps");
  const Acc a0 = Sem::combine(warps[0], warps[4]), a1 = Sem::combine(warps[1], warps[5]);
  const Acc a2 = Sem::combine(warps[2], warps[6]), a3 = Sem::combine(warps[3], warps[7]);
  return Sem::combine(Sem::combine(a0, a2), Sem::combine(a1, a3));
}

// Launch with kThreads threads and any grid; thread k of the grid reduces pieces k, k + (threads
// in the grid), ... of a matrix whose pieces hold at most one vector (kVec elements): such a piece
// lies in the block's thread 0's first vector, every other thread, warp and chunk holds the
// identity, which every built-in combine passes through exactly, so the order is this one fold.
// Neighbouring threads take neighbouring pieces: columns are read coalesced, row by row.
template <class T, class Sem>
__global__ void __launch_bounds__(kThreads)
    reduceTinyPieces(rl::gmem<const T> input, Pieces pieces, rl::gmem<typename Sem::Out> output) {
  const std::uint64_t threads = std::uint64_t(gridDim.x) * kThreads;
  for (std::uint64_t p = std::uint64_t(blockIdx.x) * kThreads + threadIdx.x; p < pieces.count; p += threads) {
    const rl::gmem<const T> x = input + p * pieces.step;
    typename Sem::Inner in = Sem::inner_identity();
    for (std::uint64_t i = 0; i < pieces.length; ++i) {
      const T e = x[i * pieces.stride];
      in = Sem::inner_combine(in, Sem::lift(e, i));
    }
    output[p] = Sem::finish(Sem::absorb(Sem::identity(), in), pieces.length);
  }
}

// Launch with kThreads threads and any grid; warp k of the grid reduces pieces k, k + (warps in
// the grid), ... of at most kTile elements (longer ones are left to reduceSegments). Contiguous
// pieces only (stride 1).
template <class T, class Sem>
__global__ void __launch_bounds__(kThreads)
    reduceShortPieces(rl::gmem<const T> input, Pieces pieces, rl::gmem<const std::int64_t> begin,
                      rl::gmem<const std::int64_t> end, rl::gmem<typename Sem::Out> output) {
  const std::uint64_t warps = std::uint64_t(gridDim.x) * kWarps;
  for (std::uint64_t p = std::uint64_t(blockIdx.x) * kWarps + threadIdx.x / 32; p < pieces.count; p += warps) {
    std::uint64_t first = 0, length = 0;
    piece_extent(pieces, begin, end, p, &first, &length);
    if (length > Shape<T>::kTile) continue;  // the same for the whole warp
    const rl::gmem<const T> x = input + first;
    const typename Sem::Acc v = warp_fold_tile<T, Sem>(x, length, is_aligned16(x));
    if (threadIdx.x % 32 == 0) output[p] = Sem::finish(v, length);
  }
}

// Launch with kThreads threads and any grid; block b reduces pieces b, b + gridDim.x, ...
// (with pieces.skip_short, only those longer than kTile). begin/end are read only for segments.
template <class T, class Sem>
__global__ void __launch_bounds__(kThreads)
    reduceSegments(rl::gmem<const T> input, Pieces pieces, rl::gmem<const std::int64_t> begin,
                   rl::gmem<const std::int64_t> end, rl::gmem<typename Sem::Out> output) {
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[kWarps];
  rl::smem<Acc> slots = slot_storage;
  __shared__ Acc chunk_storage[kChunks];  // 2112 x at most 16 bytes: 33 KiB
  rl::smem<Acc> chunk_results = chunk_storage;

  for (std::uint64_t p = blockIdx.x; p < pieces.count; p += gridDim.x) {
    std::uint64_t first = 0, length = 0;
    piece_extent(pieces, begin, end, p, &first, &length);
    if (pieces.skip_short && length <= Shape<T>::kTile) continue;  // the same for the whole block
    const Plan plan = fixed_plan<T>(length);
    const rl::gmem<const T> x = input + first;
    const bool contiguous = pieces.stride == 1;
    const bool aligned = contiguous && is_aligned16(x);
    Acc v;
    if (plan.chunks <= 1) {
      v = Sem::identity();
      if (plan.chunks == 1)
        v = contiguous ? fold_chunk<T, Sem>(x, plan, 0, aligned) : fold_strided_chunk<T, Sem>(x, pieces.stride, plan, 0);
      v = block_fold<Sem>(v, slots);
    } else {
      for (std::uint64_t c = 0; c < plan.chunks; ++c) {
        Acc w = contiguous ? fold_chunk<T, Sem>(x, plan, c, aligned)
                           : fold_strided_chunk<T, Sem>(x, pieces.stride, plan, c);
        w = block_fold<Sem>(w, slots);
        if (threadIdx.x == 0) chunk_results[c] = w;
        __syncthreads();  // slots are reused; chunk_results complete before step 3
      }
      // Step 3: thread t folds chunks t, t + kThreads, ... in order, then the block tree.
      Acc w = Sem::identity();
      for (std::uint64_t c = threadIdx.x; c < plan.chunks; c += kThreads) {
        const Acc r = chunk_results[c];
        w = Sem::combine(w, r);
      }
      v = block_fold<Sem>(w, slots);
    }
    if (threadIdx.x == 0) output[p] = Sem::finish(v, length);
    __syncthreads();  // slots and chunk_results are reused by the next piece
  }
}

}  // namespace reducelab::detail

namespace reducelab::detail {

// ---- Columns of an order-free operation, read coalesced ----------------------------------------
// Integer sums and products, min, max, argmin and argmax give the same bits in any order, so a
// matrix's columns (axis 0) need not follow the fixed order of each column: a warp reads W
// neighbouring columns (W = min(cols, 32)) of 32 / W neighbouring rows at once, every lane one
// element, so a row's columns come in as one coalesced load instead of one sector per element.
// The rows are cut into bands; a block takes a (column group, band) job, its 8 warps folding
// interleaved rows, 8 loads in flight per thread; the block folds its warps' partials per column
// in shared memory. With one band the block writes the results; with more, each band's partials
// go to the workspace and the block that takes the group's last ticket folds them.
struct ColumnShape {
  std::uint64_t cols = 0, rows = 0, pitch = 0;
  unsigned width = 1;        // W: columns per warp
  unsigned phases = 1;       // 32 / W rows per warp step
  std::uint64_t groups = 0;  // ceil(cols / W)
  std::uint64_t bands = 1;
  std::uint64_t band_rows = 0;
};

// The most partials and group tickets a columns launch uses (the workspace's pieces area).
inline constexpr std::uint64_t kColumnJobs = 2048;

inline ColumnShape column_shape(const Pieces& p, std::uint64_t target_jobs) {
  ColumnShape s;
  s.cols = p.count, s.rows = p.length, s.pitch = p.stride;
  s.width = static_cast<unsigned>(s.cols < 32 ? s.cols : 32);
  s.phases = 32 / s.width;
  s.groups = (s.cols + s.width - 1) / s.width;
  const std::uint64_t step = std::uint64_t(kWarps) * s.phases * 8;  // rows a block covers per 8 loads
  std::uint64_t bands = s.groups >= target_jobs ? 1 : (target_jobs + s.groups - 1) / s.groups;
  const std::uint64_t most_by_rows = (s.rows + step - 1) / step;
  if (bands > most_by_rows) bands = most_by_rows;
  if (bands > 1 && s.groups * bands > kColumnJobs) bands = kColumnJobs / s.groups;
  if (bands < 1) bands = 1;
  s.bands = bands;
  s.band_rows = (s.rows + bands - 1) / bands;
  return s;
}

// Whether reduceColumns takes this call: an order-free operation along axis 0 with columns of
// more than one vector (shorter ones go to reduceTinyPieces, already coalesced).
template <class T, class Sem>
inline bool columns_fit(const Pieces& p) {
  return Sem::order_free && !p.offsets && p.stride > 1 && p.length > Shape<T>::kVec;
}

template <class T, class Sem>
__global__ void __launch_bounds__(kThreads)
    reduceColumns(rl::gmem<const T> input, ColumnShape shape, rl::gmem<typename Sem::Acc> partials,
                  rl::gmem<unsigned> tickets, rl::gmem<typename Sem::Out> output) {
  using Acc = typename Sem::Acc;
  using Inner = typename Sem::Inner;
  __shared__ Acc lane_storage[kThreads];
  rl::smem<Acc> lanes = lane_storage;
  __shared__ unsigned last_storage[1];
  rl::smem<unsigned> am_last = last_storage;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned width = shape.width, phases = shape.phases;
  const bool active = lane < width * phases;
  const unsigned column_in_group = lane % width, phase = lane / width;
  const std::uint64_t jobs = shape.groups * shape.bands;
  const std::uint64_t step = std::uint64_t(kWarps) * phases;  // rows between one thread's loads

  for (std::uint64_t job = blockIdx.x; job < jobs; job += gridDim.x) {
    const std::uint64_t group = job / shape.bands, band = job % shape.bands;
    const std::uint64_t column = group * width + column_in_group;
    const bool mine = active && column < shape.cols;
    const std::uint64_t row_begin = band * shape.band_rows;
    const std::uint64_t row_end = row_begin + shape.band_rows < shape.rows ? row_begin + shape.band_rows : shape.rows;
    Acc acc = Sem::identity();
    if (mine) {
      std::uint64_t r = row_begin + std::uint64_t(warp) * phases + phase;
      for (; r + 7 * step < row_end; r += 8 * step) {  // eight loads in flight
        T x[8];
#pragma unroll
        for (unsigned k = 0; k < 8; ++k) x[k] = input[(r + k * step) * shape.pitch + column];
        Inner in = Sem::inner_identity();
#pragma unroll
        for (unsigned k = 0; k < 8; ++k) in = Sem::inner_combine(in, Sem::lift(x[k], r + k * step));
        acc = Sem::absorb(acc, in);
      }
      Inner in = Sem::inner_identity();
      for (; r < row_end; r += step) in = Sem::inner_combine(in, Sem::lift(input[r * shape.pitch + column], r));
      acc = Sem::absorb(acc, in);
    }
    lanes[threadIdx.x] = acc;
    __syncthreads();
    Acc total = Sem::identity();
    if (threadIdx.x < width) {  // this block's fold of column group * width + threadIdx.x
      for (unsigned w = 0; w < kWarps; ++w)
        for (unsigned ph = 0; ph < phases; ++ph) total = Sem::combine(total, lanes[w * 32 + ph * width + threadIdx.x]);
    }
    const std::uint64_t out_column = group * width + threadIdx.x;
    if (shape.bands == 1) {
      if (threadIdx.x < width && out_column < shape.cols) output[out_column] = Sem::finish(total, shape.rows);
      __syncthreads();  // lanes is reused by the next job
      continue;
    }
    if (threadIdx.x < width) partials[job * width + threadIdx.x] = total;
    __syncthreads();  // every partial written before thread 0's ticket (its release publishes them)
    if (threadIdx.x == 0) am_last[0] = take_ticket(tickets + group) == shape.bands - 1 ? 1u : 0u;
    __syncthreads();
    if (am_last[0] != 0 && threadIdx.x < width) {  // the group's last band: fold the bands' partials
      Acc all = Sem::identity();
      for (std::uint64_t b = 0; b < shape.bands; ++b)
        all = Sem::combine(all, load_other_block(partials, (group * shape.bands + b) * width + threadIdx.x));
      if (out_column < shape.cols) output[out_column] = Sem::finish(all, shape.rows);
      if (threadIdx.x == 0) tickets[group] = 0u;
    }
    __syncthreads();
  }
}

}  // namespace reducelab::detail
