#pragma once
// The kernels of long rows and segments: reduceLongPieces (a block each), reduceSplitRows (a
// thread-block cluster a row), reduceBlockRows and reduceWarpRows (agent_segments.cuh has the
// map of every kernel). Read by nvcc and by g++ (SIMT).
#include <algorithm>
#include <cstdint>

#include "reducelab/detail/cluster.cuh"
#include "segments/agent_pieces.cuh"

namespace reducelab::detail {

// ---- Long pieces of an order-free operation, a block each --------------------------------------
// The segments longer than a tile that reduceSegmentGroups found, listed in the workspace: the
// piece numbers in `pieces` (kLongSlots of them), their count and this kernel's ticket in
// `counters` (zero between launches). A launch that listed more than the slots hold takes
// every segment again and skips the short ones.
inline constexpr unsigned kLongSlots = 1u << 17;  // the column partials' area (1 MiB), idle for segments
// The slots the kernels use: kLongSlots on the GPU; the SIMT runner can lower it (tests reach the
// overflow with a few long segments).
#if RL_SIMT
inline unsigned simt_long_slots = kLongSlots;
__device__ __forceinline__ unsigned long_slots() { return simt_long_slots < kLongSlots ? simt_long_slots : kLongSlots; }
#else
__device__ __forceinline__ unsigned long_slots() { return kLongSlots; }
#endif

struct LongList {
  rl::gmem<unsigned> counters;
  rl::gmem<unsigned long long> pieces;
  __device__ __forceinline__ void add(std::uint64_t p) const {
    const unsigned slot = atomicAdd(&counters[0], 1u);
    if (slot < long_slots()) pieces[slot] = p;
  }
};

// Whether a matrix's long rows of exact sums, minima or maxima are too few to fill the GPU (fewer
// than `blocks`, the blocks of reduceLongPieces it holds at once): a block then has more than its
// share of a multiprocessor to itself, and its threads keep eight 16-byte loads in flight instead
// of four (reduceLongPieces<T, Sem, true>, a kernel of its own: its registers would cost the float
// and half kernel a block an SM). H200, both in one call: 256 x 2^20 exact double sums 562 -> 501
// us, half 149 -> 137, float 267 -> 251; 16384 x 16384 (rows enough to fill it) double sums 519 ->
// 529 with eight, so they keep four. Maxima of 256 x 2^20, the same kernel with four and with eight
// (bench/longrow_probe, one call): double 496.1 -> 488.2 us, float 251.2 -> 246.5, int32 245.4 ->
// 244.1, half 130.0 -> 126.7.
// The minima and maxima of 4- and 8-byte elements take rounds of sixteen loads a thread there
// (ptxas keeps fewer in flight: 31 to 34 registers, as with eight): 256 x 2^20 maxima a block a
// row (bench/longrow_probe chains, H200, one call), rounds of eight against sixteen: double 498.0
// -> 493.8 us, float 251.7 -> 249.5, int32 250.1 -> 244.2. (The same probe took each round's keys
// in a tree of four levels instead of the chain through the thread's key: double 514.3 and 513.3
// us at eight and sixteen, float 252.1 and 252.7, int32 250.8 and 248.5; no faster anywhere.)
template <class Sem>
inline constexpr bool has_deep_rows_v = is_exact_pieces<Sem>::value || extremum_v<Sem>;
template <class T, class Sem>
inline constexpr unsigned kDeepLoads = extremum_v<Sem> && sizeof(T) >= 4 ? 16 : 8;
template <class T, class Sem>
inline bool deep_rows_fit(const Pieces& p, std::uint64_t blocks) {
  return has_deep_rows_v<Sem> && !p.offsets && p.stride == 1 && p.count < blocks;
}

// Rows longer than a tile, and segments longer than a tile (pieces.skip_short; `longs` lists
// them when it could hold them all): the block's threads take the piece's vectors in turn
// (lane_fold_free; strided pieces element by element), four loads in flight each (rounds of
// kDeepLoads for kDeep: deep_rows_fit), and the block folds.
// Exact float and double sums and means end the call here (long_pieces_redo_v): the blocks also
// sum again, with digits (redo_piece), the pieces the kernels before listed in `redo` and those
// whose pairs lost part of their sum here, so that no reduceRedoPieces launch follows. A block
// notes its own lost pieces (up to kLongRedoNotes at a time) and sums them again between runs of
// its loop over the long pieces, not inside it, where the call would hold the loop's registers.
// Each launch after the warp-a-segment kernel, even over empty lists, added 1.3 to 1.9 us to a
// call (H200, 2^26 doubles in segments of 1 to 4096 elements, bench/segwarp_probe links).
// Float and double sums and means only (half sums took 42 -> 48 registers with it: five blocks
// an SM instead of six), and not with eight loads a thread (kDeep: a few long rows, where one
// launch more is little); those keep reduceRedoPieces after them. With the redo (ptxas, sm_90)
// float and double sums keep four blocks an SM (60 and 62 registers, against 59 and 54 without
// it), double means too (64 against 56); exact float means go from five to four (64 against 48),
// a cost not measured on a GPU (bench times no means).
template <class T, class Sem>
inline constexpr bool long_pieces_redo_v = is_exact_pieces<Sem>::value && sizeof(T) >= 4;
inline constexpr unsigned kLongRedoNotes = 8;
// One long piece by the whole block: the block's threads take its vectors in turn (strided
// pieces element by element), and the block folds (thread 0 ends with the result). The block
// must call it uniformly (block_fold has a barrier).
template <class T, class Sem, bool kDeep>
__device__ __forceinline__ typename Sem::Acc fold_long_piece(rl::gmem<const T> x, std::uint64_t length,
                                                             std::uint64_t stride, rl::smem<typename Sem::Acc> slots) {
  using Acc = typename Sem::Acc;
  constexpr unsigned kIn = 4;
  Acc acc;
  if (stride == 1) {
    acc = lane_fold_free<T, Sem, kDeep ? kDeepLoads<T, Sem> : 4, false>(x, length, kThreads, threadIdx.x);
  } else {
    RunningFold<T, Sem> run(length / kThreads + 1);  // the most one thread takes
    std::uint64_t e = threadIdx.x;
    for (; e + (kIn - 1) * kThreads < length; e += kIn * kThreads) {
      T v[kIn];
#pragma unroll
      for (unsigned u = 0; u < kIn; ++u) v[u] = x[(e + u * kThreads) * stride];
      run.template take<kIn>(v, [&](unsigned u) { return e + u * kThreads; });
    }
    for (; e < length; e += kThreads) run.take_one(x[e * stride], e);
    acc = run.result();
  }
  return block_fold<Sem>(acc, slots);
}

// The long-piece kernel of exact float and double sums and means (long_pieces_redo_v, above).
template <class T, class Sem>
__device__ __forceinline__ void long_pieces_and_redo(rl::gmem<const T> input, const Pieces& pieces,
                                                     rl::gmem<const std::int64_t> begin, rl::gmem<const std::int64_t> end,
                                                     rl::gmem<typename Sem::Out> output, rl::gmem<unsigned long long> redo,
                                                     LongList longs) {
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[kWarps];
  rl::smem<Acc> slots = slot_storage;
  __shared__ unsigned listed_storage[1];  // the long list's count
  rl::smem<unsigned> listed_at = listed_storage;
  __shared__ unsigned long long redo_listed_storage[1];  // the redo list's count
  rl::smem<unsigned long long> redo_listed = redo_listed_storage;
  __shared__ unsigned long long note_storage[kLongRedoNotes + 1];  // the block's lost pieces: the count, then the pieces
  rl::smem<unsigned long long> notes = note_storage;
  // One read of each count per block, shared; no thread reads them after the last block cleared them.
  if (threadIdx.x == 0) {
    listed_at[0] = pieces.skip_short ? longs.counters[0] : 0u;
    redo_listed[0] = redo[0];
    notes[0] = 0ull;
  }
  __syncthreads();
  std::uint64_t todo = pieces.count;
  bool from_list = false;
  if (pieces.skip_short && listed_at[0] <= long_slots()) todo = listed_at[0], from_list = true;
  const auto sum_again = [&](std::uint64_t p) {  // the whole block, with digits
    std::uint64_t first = 0, length = 0;
    piece_extent(pieces, begin, end, p, &first, &length);
    redo_piece_in_block<T, Sem>(input + first, pieces.stride, length, output + p);
  };
  // The loop over the long pieces, left whenever the notes are full to sum those pieces again.
  std::uint64_t i = blockIdx.x;
  for (;;) {
    for (; i < todo; i += gridDim.x) {
      const std::uint64_t p = from_list ? static_cast<std::uint64_t>(longs.pieces[i]) : i;
      std::uint64_t first = 0, length = 0;
      piece_extent(pieces, begin, end, p, &first, &length);
      if (pieces.skip_short && length <= Shape<T>::kTile) continue;  // the same for the whole block
      const Acc acc = fold_long_piece<T, Sem, false>(input + first, length, pieces.stride, slots);
      if (threadIdx.x == 0) store_or_list<Sem>(output, p, acc, length, [&](std::uint64_t q) { notes[1 + notes[0]++] = q; });
      __syncthreads();  // slots are reused by the next piece; the notes are read below
      if (notes[0] == kLongRedoNotes) {  // the same for the whole block
        i += gridDim.x;
        break;
      }
    }
    const unsigned noted = static_cast<unsigned>(notes[0]);
    for (unsigned k = 0; k < noted; ++k) {
      sum_again(notes[1 + k]);
#if RL_SIMT
      if (threadIdx.x == 0) ++simt_redone_in_blocks;
#endif
    }
    __syncthreads();  // every thread has read the notes
    if (threadIdx.x == 0) notes[0] = 0ull;
    __syncthreads();
    if (i >= todo) break;
  }
  // The pieces the kernels before listed (they have ended: the count is final), or every piece
  // when the list overflowed, as reduceRedoPieces takes them.
  const unsigned long long listed = redo_listed[0];
  for_listed_pieces(listed, pieces.count, redo, sum_again);
  // The last block clears the lists for the next call; over empty ones, no ticket (below).
  if ((listed_at[0] != 0 || listed != 0) && threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&longs.counters[1], 1u) == gridDim.x - 1u) longs.counters[0] = 0u, longs.counters[1] = 0u, redo[0] = 0ull;
  }
}

template <class T, class Sem, bool kDeep = false>
__global__ void __launch_bounds__(kThreads)
    reduceLongPieces(rl::gmem<const T> input, Pieces pieces, rl::gmem<const std::int64_t> begin,
                     rl::gmem<const std::int64_t> end, rl::gmem<typename Sem::Out> output,
                     rl::gmem<unsigned long long> redo, LongList longs) {
  wait_for_producer();
  let_consumer_start();  // the kernel after it may take its places: it waits for this one to end
  if constexpr (long_pieces_redo_v<T, Sem> && !kDeep) {
    long_pieces_and_redo<T, Sem>(input, pieces, begin, end, output, redo, longs);
  } else {
    using Acc = typename Sem::Acc;
    __shared__ Acc slot_storage[kWarps];
    rl::smem<Acc> slots = slot_storage;
    __shared__ unsigned listed_storage[1];
    rl::smem<unsigned> listed_at = listed_storage;
    std::uint64_t todo = pieces.count;
    bool from_list = false;
    if (pieces.skip_short) {
      // One read of the count per block, shared; no thread reads it after the last block cleared it.
      if (threadIdx.x == 0) listed_at[0] = longs.counters[0];
      __syncthreads();
      const unsigned listed = listed_at[0];
      if (listed <= long_slots()) todo = listed, from_list = true;
    }
    for (std::uint64_t i = blockIdx.x; i < todo; i += gridDim.x) {
      const std::uint64_t p = from_list ? static_cast<std::uint64_t>(longs.pieces[i]) : i;
      std::uint64_t first = 0, length = 0;
      piece_extent(pieces, begin, end, p, &first, &length);
      if (pieces.skip_short && length <= Shape<T>::kTile) continue;  // the same for the whole block
      const Acc acc = fold_long_piece<T, Sem, kDeep>(input + first, length, pieces.stride, slots);
      if (threadIdx.x == 0) store_piece<Sem>(output, p, acc, length, redo);
      __syncthreads();  // slots are reused by the next piece
    }
    // The last block clears the list for the next call. Over an empty list (every block read the
    // same count: 0) there is nothing to clear and no ticket to take: the blocks leave at once, and
    // the few hundred blocks the GPU holds do not queue for one counter at the end of the call.
    if (pieces.skip_short && threadIdx.x == 0 && listed_at[0] != 0) {
      __threadfence();
      if (atomicAdd(&longs.counters[1], 1u) == gridDim.x - 1u) longs.counters[0] = 0u, longs.counters[1] = 0u;
    }
  }
}

// ---- Few long rows of minima and maxima, a thread-block cluster a row --------------------------
// With fewer rows than twice the SMs, a block a row (reduceLongPieces, sixteen loads a thread)
// leaves most of each SM idle: two blocks of eight warps where it holds eight blocks. Here each row
// is cut into as many parts as its cluster has blocks (whole vectors; the last part takes what is
// left), each block folds its part, and the cluster's first block folds the parts, rank by rank,
// through its shared memory (cluster.cuh). Minima and maxima are order-free: any cut, the same
// bits. The launcher makes clusters of kSplitRowBlocks; SIMT's clusters are one block (a block a
// row, the same code). NVIDIA H200, rows of 2^20, cold, a cluster of two against a block a row
// (bench/split_probe): 256 rows double max 496.9 -> 478.8 us (CUB 491.8), float 251.6 -> 240.7,
// int32 243.3 -> 240.4, half 130.0 -> 123.6; 132 rows double 333.2 -> 260.0 (CUB 330.3), float
// 167.0 -> 131.5; but 384 rows double 711.9 -> 718.2, half 183.6 -> 187.7, and 600 rows (more
// blocks than fit at once) double 1135.3 -> 1230.8. Clusters of four or eight a row over 256 rows
// were slower than two (double 523.1 and 492.2 us). Exact sums keep a block a row: they hold three
// or four blocks an SM, and two a row took 256 x 2^20 double sums 479.2 -> 513.7 us, half sums
// 129.5 -> 130.6.
template <class Sem>
inline constexpr bool split_rows_v = extremum_v<Sem>;
inline constexpr unsigned kSplitRowBlocks = 2;
// Whether reduceSplitRows takes a call's long rows: a dense matrix's rows of minima or maxima, at
// most a quarter as many as the blocks of it the GPU holds (`held`: 2 * SMs at eight an SM).
template <class T, class Sem>
inline bool split_rows_fit(const Pieces& p, std::uint64_t held) {
  return split_rows_v<Sem> && !p.offsets && p.stride == 1 && p.count <= held / 4;
}
// Launch with kThreads threads in clusters along x, a grid that is a multiple of the cluster, as
// many launches as it takes: cluster c of the grid takes row first + c alone (a loop over rows
// took ptxas from 32 registers to 48, five blocks an SM instead of eight).
template <class T, class Sem>
__global__ void __launch_bounds__(kThreads)
    reduceSplitRows(rl::gmem<const T> input, Pieces pieces, std::uint64_t first, rl::gmem<typename Sem::Out> output) {
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[kWarps];
  rl::smem<Acc> slots = slot_storage;
  __shared__ Acc part_storage[kMaxClusterBlocks];
  rl::smem<Acc> parts = part_storage;
  wait_for_producer();
  let_consumer_start();
  const unsigned k = cluster_blocks(), rank = cluster_rank();
  const std::uint64_t r = first + blockIdx.x / k;
  if (r >= pieces.count) return;  // the whole cluster
  cluster_arrive_relaxed();  // waited for before the write into the first block
  const std::uint64_t n = pieces.length, per = (n / Shape<T>::kVec + k - 1) / k * Shape<T>::kVec;
  const std::uint64_t b = std::min(n, rank * per), e = rank + 1 == k ? n : std::min(n, b + per);
  const Acc part = block_fold<Sem>(
      lane_fold_free<T, Sem, kDeepLoads<T, Sem>, false>(input + r * pieces.step + b, e - b, kThreads, threadIdx.x), slots);
  cluster_wait();  // the first block has started: its shared memory exists
  if (threadIdx.x == 0) in_cluster_leader(parts)[rank] = part;
  cluster_arrive();  // release: the part
  cluster_wait();    // only the first block's shared memory is read, by that block, after this
  if (rank != 0 || threadIdx.x != 0) return;
  Acc row = parts[0];
  for (unsigned i = 1; i < k; ++i) row = Sem::combine(row, parts[i]);
  output[r] = Sem::finish(row, n);
}

// Exact sums and means of a dense matrix's long rows, a block a row: reduceLongPieces without the
// segments' long list and the strided path, whose registers cost a block an SM (exact double sums
// 54 registers there, 48 here: 4 blocks an SM against 5). Launch with kThreads threads, a block
// for every row (as many launches as it takes): block b sums row first + b alone. H200, 16384 x
// 16384 double sums: 478.3 us this way, 501.3 a warp a row (reduceWarpRows), 462.7 for the same
// reads and lanes' arithmetic with no fold at all (bench/longrow_probe tail).
// Float, half and bfloat16 lanes sum a window a round (WindowFold), as the warps do, where
// reduceLongPieces keeps a window a thread: 38 registers against 54 for floats (six blocks an SM,
// not four), and the H200 took 16384 x 16384 float sums 256.8 -> 242.0 us, 32768 x 16384 493.6 ->
// 473.9, half sums 144.6 -> 143.5 (bench/split_probe warps, one call).
// Double lanes take rounds of eight loads (68 registers, three blocks an SM, against 48 and five
// with four): H200, bench/split_probe blocks, two calls, 16384 x 16384 double sums 479.3-480.4 ->
// 475.7-476.6 us (CUB 472.0-472.3), 8192 x 32768 480.3-480.8 -> 475.9-476.4 (CUB 475.1-475.8);
// six loads (61 registers, four an SM) took 514.7-518.4 and 479.8-479.9, sixteen (116, two an SM)
// 477.0-477.9 and 474.7-475.1. Float lanes keep four: eight took 16384 x 16384 float sums 242.0 ->
// 253.9 us.
template <class T, class Sem>
inline constexpr bool block_rows_v = is_exact_pieces<Sem>::value;
template <class T, class Sem>
inline constexpr unsigned kBlockRowLoads = cut_sums_v<T, Sem> ? 8 : 4;
// Whether reduceBlockRows takes a call's long pieces (those reduceWarpRows and the eight-load
// reduceLongPieces leave): a dense matrix's rows of exact sums or means.
template <class T, class Sem>
inline bool block_rows_fit(const Pieces& p) {
  return block_rows_v<T, Sem> && !p.offsets && p.stride == 1;
}
// Float rows whose pair lost part of the sum are summed again by their block's first warp
// (redo_piece, out of line), so that no reduceRedoPieces launch follows; the other warps leave
// after the fold as they do without it, so no barrier is added to the rows' ends (the kernel
// keeps its 38 registers). H200, 16384 x 16384 float sums, every listed shape's run before and
// two after: 240.3 -> 237.9 and 239.1 us (CUB 237.7, then 237.4 and 239.5). Doubles keep the
// list: the redo in their kernel took ptxas from 68 registers to 108 (two blocks an SM), bound to
// three blocks an SM to 80, and 16384 x 16384 double sums 476.5 -> 477.4 us; half and bfloat16
// keep it too.
template <class T, class Sem>
inline constexpr bool block_rows_redo_v = block_rows_v<T, Sem> && std::is_same_v<T, float>;
// Double rows stage their rounds in shared memory (lane_fold_staged): two rounds of eight loads a
// thread, 64 KiB a block of the launch's dynamic shared memory, three blocks an SM as with the
// loads in registers. H200, exact double sums, kernels alone (bench/split_probe async, CUB's
// segmented reduce in the same call): 16384 x 16384 469.0-469.5 us with the loads in registers,
// 462.9-463.8 for the probe's staged kernel, CUB's plain sums 462.1; the library's kernel staged
// 465.0 in a later call where CUB took 462.7, and 472.5-472.9 against 472.7 in another.
template <class T, class Sem>
inline constexpr bool block_rows_staged_v = block_rows_v<T, Sem> && cut_sums_v<T, Sem>;
inline constexpr unsigned kBlockRowStages = 2;
template <class T, class Sem>
inline constexpr std::size_t kBlockRowsShared =
    block_rows_staged_v<T, Sem> ? std::size_t(kBlockRowStages) * kBlockRowLoads<T, Sem> * kThreads * sizeof(Vec<T>) : 0;
template <class T, class Sem>
__global__ void __launch_bounds__(kThreads)
    reduceBlockRows(rl::gmem<const T> input, Pieces pieces, std::uint64_t first, rl::gmem<typename Sem::Out> output,
                    rl::gmem<unsigned long long> redo) {
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[kWarps];
  rl::smem<Acc> slots = slot_storage;
  wait_for_producer();
  let_consumer_start();  // the redo kernel (if any) may take its places: it waits for this one to end
  const std::uint64_t r = first + blockIdx.x;
  if (r >= pieces.count) return;  // the whole block
  const rl::gmem<const T> row = input + r * pieces.step;
  const Acc acc = block_fold<Sem>(
      [&] {
        if constexpr (block_rows_staged_v<T, Sem>) {
          RL_DYNAMIC_SHARED(Vec<T>, ring);  // kBlockRowsShared bytes
          return lane_fold_staged<T, Sem, kBlockRowLoads<T, Sem>, kBlockRowStages>(row, pieces.length, kThreads,
                                                                                    threadIdx.x, ring);
        } else {
          return lane_fold_free<T, Sem, kBlockRowLoads<T, Sem>>(row, pieces.length, kThreads, threadIdx.x);
        }
      }(),
      slots);
  if constexpr (block_rows_redo_v<T, Sem>) {
    if (threadIdx.x >= 32) return;  // block_fold leaves the row's pair in thread 0
    bool lost = false;              // written, or lost: then the warp sums the row again
    if (threadIdx.x == 0) store_or_list<Sem>(output, r, acc, pieces.length, [&](std::uint64_t) { lost = true; });
    if (__shfl_sync(kFullMask, lost ? 1 : 0, 0) == 0) return;
    __shared__ unsigned long long digit_storage[ExactTraits<T>::kDigits];
    __shared__ unsigned misc_storage[1];  // the row's flags
    redo_piece<T, typename Sem::Out, Sem::kMean, 32>(row, 1, pieces.length, digit_storage, misc_storage, output + r);
#if RL_SIMT
    if (threadIdx.x == 0) ++simt_redone_in_blocks;
#endif
  } else {
    if (threadIdx.x == 0) store_piece<Sem>(output, r, acc, pieces.length, redo);
  }
}

// ---- Long rows of exact sums, a warp each -------------------------------------------------------
// reduceLongPieces folds a row with its whole block, and each row ends with a block fold and a
// pair merge per thread: for rows of 16384 halves that is 64 elements a thread between two such
// ends, and the ends cost as much as the elements (16384 x 16384 half sums at 60 % of the read
// ceiling, 14 warp instructions per element under Nsight Compute, H200). When there are at least
// as many rows as warps the GPU holds, a warp takes a row (warp_fold_free: 512 elements a lane
// for rows of 16384) and the rows' ends are a warp fold. H200, cold, both builds in one call:
// 16384 x 16384 half sums 199.7 -> 137.7 us, float sums 285.9 -> 249.8, the bits the same; double
// sums (bench/longrow_probe, the probe's launch against reduce_axis): 32768 x 8192 589.6 -> 481.1,
// 16384 x 16384 510.0 -> 501.6 (docs/performance.md).
template <class T, class Sem>
inline constexpr bool warp_rows_v = is_exact_pieces<Sem>::value;

// Whether reduceWarpRows takes a call's long pieces instead of a block a row (reduceBlockRows):
// rows of a matrix of up to kWarpRowBytes, at least `warps` of them (the warps a launch holds at
// once). Longer rows spread a block's ends over enough elements. H200, the same call, a warp a
// row against a block a row: double sums of 65536 x 4096 (32 KiB rows) 485.9 against 621.5 us,
// of 32768 x 8192 (64 KiB) 487.6 against 514.2, of 16384 x 16384 (128 KiB) 508.3 against 488.4;
// float sums of 16384 x 16384 (64 KiB) 247.9 against 267.2 (bench/longrow_probe tail).
// Float rows of 64 KiB read faster a block a row since that kernel sums windows of a round: H200,
// 16384 x 16384 float sums 244.1 and 244.0 us a warp a row, 242.0 and 243.0 a block a row, 32768 x
// 16384 478.8 and 479.6 against 473.9 and 473.9 (bench/split_probe warps, one call); so float rows
// take a warp up to 32 KiB. Half rows of 32 KiB stay a warp each (126.3 against 143.5 us).
inline constexpr std::uint64_t kWarpRowBytes = 65536;
template <class T, class Sem>
inline bool warp_rows_fit(const Pieces& p, std::uint64_t warps) {
  constexpr std::uint64_t most = std::is_same_v<T, float> ? kWarpRowBytes / 2 : kWarpRowBytes;
  return warp_rows_v<T, Sem> && !p.offsets && p.stride == 1 && p.length * sizeof(T) <= most && p.count >= warps;
}

// Launch with kThreads threads, as many launches as it takes: warp w of the grid sums row first +
// w alone, as reduceSegmentsWarpEach takes its segments (the launcher's grid has a warp for every
// row; a test's smaller grid takes several launches). Four blocks an SM (64 registers): doubles'
// CutFold took 74 with a bound of three, and 16384 x 16384 double sums 523.6 us against 514.1
// with four (H200).
// Rows of kRotatedRowBytes or more start their rounds at round r (fold_contiguous's `rotate`), so
// that the warps' loads at one time lie at different offsets of their rows. H200, cold, the same
// call (bench/longrow_probe rotate), in order against rotated, µs: 16384 x 16384 float sums 245.9
// -> 243.9, 32768 x 8192 double sums 486.3 -> 483.2 (64 KiB rows); 16384 x 16384 double sums
// 503.8 -> 486.5 and 8192 x 32768 float sums 261.4 -> 247.6 (128 KiB rows, which reduceBlockRows
// takes, 488.6 and 248.7); but 16384 x 16384 half sums 128.0 -> 129.6 and 32768 x 8192 float sums
// 244.9 -> 246.1 (32 KiB rows). Rows longer than kWarpRowBytes (also 64 KiB) take a block each,
// so only rows of exactly 64 KiB rotate. (kRotate false: the probe's rounds in order.)
inline constexpr std::uint64_t kRotatedRowBytes = kWarpRowBytes;
template <class T, class Sem, bool kRotate = true>
__global__ void __launch_bounds__(kThreads, 4)
    reduceWarpRows(rl::gmem<const T> input, Pieces pieces, std::uint64_t first, rl::gmem<typename Sem::Out> output,
                   rl::gmem<unsigned long long> redo) {
  const std::uint64_t r = first + std::uint64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (r >= pieces.count) return;  // the whole warp
  const bool rotated = kRotate && pieces.length * sizeof(T) >= kRotatedRowBytes;
  const typename Sem::Acc acc = warp_fold_free<T, Sem>(input + r * pieces.step, pieces.length, rotated ? r : 0);
  if (threadIdx.x % 32 == 0) store_piece<Sem>(output, r, acc, pieces.length, redo);
}
}  // namespace reducelab::detail
