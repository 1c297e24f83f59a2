// longrow_probe: exact sums along long matrix rows (reduce_axis, axis 1; rows longer than the
// row-group kernel takes, which reduceLongPieces sums a block each) against a warp a row (the
// segment warps' fold, warp_fold_free; for doubles also two TwoSums an element, as before CutFold,
// and CutFold with eight loads a round; on the blocks the GPU holds and on a grid of every row),
// and against reduceLongPieces on both grids (sums and maxima), on device 0, cold (behind an L2
// flush), median of R. 16384 x 16384 half, float and double sums, 2^13 x 2^15 half and double
// sums, 2^15 x 2^13 double sums; every row compared bit for bit with reduce_axis's.
//   longrow_probe [repeats=10] [groups: only groups of 1, 2, 4 and 8 warps a row | tail: only what a
//   block a row's end costs | rotate: a warp a row with each row's rounds in order and rotated, and
//   a block a row | blocks: reduceBlockRows against copies of it bound to six and eight blocks an SM]
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "probe_timing.cuh"
#include "reducelab/segments.hpp"
#include "segments/device_segments.cuh"

namespace {

using namespace reducelab;
using namespace reducelab::detail;

// A lane's fold of a double row: 0, two TwoSums an element (absorb_run, the library's fold before
// CutFold); 1, the library's warp_fold_free; 2, CutFold with eight loads a round.
template <class T, class Sem, int kFold>
__device__ __forceinline__ typename Sem::Acc row_fold(const T* x, std::uint64_t n) {
  const unsigned lane = threadIdx.x % 32;
  if constexpr (kFold == 0 && std::is_same_v<T, double>) {
    RunningFold<T, Sem> run(contiguous_share<T>(n, 32));
    fold_contiguous<T>(run, x, n, 32, lane);
    return warp_fold<Sem>(run.result());
  } else if constexpr (kFold == 2 && std::is_same_v<T, double>) {
    CutFold c;
    fold_contiguous<T, 8>(c, x, n, 32, lane);
    typename Sem::Acc mine{c.a, c.b};
    if (!c.exact) {
      PairFold<T, Sem> p;
      fold_contiguous<T, 1>(p, x, n, 32, lane);
      mine = p.acc;
    }
    return warp_fold<Sem>(mine);
  } else {
    return warp_fold_free<T, Sem>(x, n);
  }
}

// A warp a row: each warp folds rows w, w + (warps in the grid), ...
template <class T, class Sem, int kBlocks, int kFold>
__global__ void __launch_bounds__(256, kBlocks)
    warp_rows(const T* x, std::uint64_t rows, std::uint64_t cols, typename Sem::Out* out, unsigned long long* redo) {
  const std::uint64_t warp = std::uint64_t(blockIdx.x) * 8 + threadIdx.x / 32;
  const std::uint64_t warps = std::uint64_t(gridDim.x) * 8;
  for (std::uint64_t r = warp; r < rows; r += warps) {
    const typename Sem::Acc acc = row_fold<T, Sem, kFold>(x + r * cols, cols);
    if (threadIdx.x % 32 == 0) store_piece<Sem>(out, r, acc, cols, redo);
  }
}

// A warp a row on the blocks the GPU holds, or (every_row) on a grid of every row.
template <class T, int kBlocks, int kFold = 1, class Op = op::sum, class R = result_t<T, Op>>
void variant(const L2Flush& flush, int repeats, int sms, const T* x, std::uint64_t rows, std::uint64_t cols,
             const std::vector<R>& want, R* out, unsigned long long* redo, bool every_row = false) {
  using Sem = piece_semantics_t<T, Op>;
  auto k = warp_rows<T, Sem, kBlocks, kFold>;
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, 256, 0));
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, k));
  const unsigned grid = static_cast<unsigned>(every_row ? (rows + 7) / 8 : std::min<std::uint64_t>((rows + 7) / 8, std::uint64_t(per_sm) * sms));
  CK(cudaMemset(out, 0xff, rows * sizeof(R)));
  CK(cudaMemset(redo, 0, 16));
  const float us = cold_us(flush, [&] { k<<<grid, 256>>>(x, rows, cols, out, redo); }, repeats);
  CK(cudaGetLastError());
  std::vector<R> got(rows);
  CK(cudaMemcpy(got.data(), out, rows * sizeof(R), cudaMemcpyDeviceToHost));
  const double bytes = double(rows) * cols * sizeof(T);
  std::printf("  %s, warp a row, fold %d, %d blocks/SM asked: %8.1f us %6.0f GB/s  regs %3d, local %zu, %d blocks/SM, grid %u%s\n", std::is_same_v<Op, op::max> ? "max" : "sum", kFold, kBlocks,
              us, bytes / (us * 1e3), attr.numRegs, attr.localSizeBytes, per_sm, grid,
              std::memcmp(got.data(), want.data(), rows * sizeof(R)) == 0 ? "  bits equal" : "  BITS DIFFER");
  std::fflush(stdout);
}

// Block runs: a block takes 8 rows one after another with all its threads (a block a row's
// reads); each warp folds its share of a row and leaves it in a shared slot without waiting for
// the others; one barrier per 8 rows, after which warp j folds row j's 8 slots and stores it. The
// slots are double-buffered: a warp writes batch k + 2's only after passing batch k + 1's barrier.
template <class T, class Sem, int kBlocks, bool kRoundWindows>
__global__ void __launch_bounds__(256, kBlocks)
    block_runs(const T* x, std::uint64_t rows, std::uint64_t cols, typename Sem::Out* out, unsigned long long* redo) {
  using Acc = typename Sem::Acc;
  __shared__ Acc slots[2][8][8];  // [batch parity][row of the batch][warp]
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned parity = 0;
  for (std::uint64_t first = std::uint64_t(blockIdx.x) * 8; first < rows; first += std::uint64_t(gridDim.x) * 8) {
    const unsigned batch = static_cast<unsigned>(std::min<std::uint64_t>(8, rows - first));
    for (unsigned j = 0; j < batch; ++j) {
      const Acc a = warp_fold<Sem>(lane_fold_free<T, Sem, 4, kRoundWindows>(x + (first + j) * cols, cols, 256, threadIdx.x));
      if (lane == 0) slots[parity][j][warp] = a;
    }
    __syncthreads();
    if (warp < batch) {
      const Acc a = warp_fold<Sem>(lane < 8 ? slots[parity][warp][lane] : Sem::identity());
      if (lane == 0) store_piece<Sem>(out, first + warp, a, cols, redo);
    }
    parity ^= 1;
  }
}

// What a block a row's end costs. Each thread folds its share of row blockIdx.x as
// reduceLongPieces does (lane_fold_free, four loads in flight, a window a thread), then kTail 0:
// thread 0 stores its own share's result and no thread folds with another (not the row's value:
// the bound of the reads and the lanes' arithmetic alone); 1: the warps fold and warp 0 stores
// its warp's result (not the row's value either); 2: the block folds, as reduceLongPieces.
template <class T, class Sem, int kTail>
__global__ void __launch_bounds__(256)
    block_tail(const T* x, std::uint64_t rows, std::uint64_t cols, typename Sem::Out* out, unsigned long long* redo) {
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[8];
  rl::smem<Acc> slots = slot_storage;
  for (std::uint64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    Acc acc = lane_fold_free<T, Sem, 4, false>(x + r * cols, cols, 256, threadIdx.x);
    if constexpr (kTail == 1) acc = warp_fold<Sem>(acc);
    if constexpr (kTail == 2) acc = block_fold<Sem>(acc, slots);
    if (threadIdx.x == 0) store_piece<Sem>(out, r, acc, cols, redo);
    if constexpr (kTail == 2) __syncthreads();  // slots are reused by the next row
  }
}

// A group of kK warps a row: the block's 8 warps in 8 / kK groups, group g of the grid taking rows
// g, g + (groups in the grid), ...; each warp folds its share of the row (the row's vectors dealt
// to the group's 32 kK lanes in turn), the group's warps meet at a named barrier, and the group's
// first warp folds their kK results. The slots are double-buffered (a warp writes row i + 2's
// only after passing row i + 1's barrier). kK = 1: a warp a row; kK = 8: a block a row.
__device__ __forceinline__ void group_barrier(unsigned id, unsigned threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
template <class T, class Sem, int kK, int kBlocks>
__global__ void __launch_bounds__(256, kBlocks)
    group_rows(const T* x, std::uint64_t rows, std::uint64_t cols, typename Sem::Out* out, unsigned long long* redo) {
  using Acc = typename Sem::Acc;
  constexpr unsigned kGroups = 8 / kK;
  __shared__ Acc slots[2][8];
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const unsigned group = warp / kK, in_group = warp % kK;
  const std::uint64_t groups = std::uint64_t(gridDim.x) * kGroups;
  unsigned parity = 0;
  for (std::uint64_t r = std::uint64_t(blockIdx.x) * kGroups + group; r < rows; r += groups) {
    Acc a = warp_fold<Sem>(lane_fold_free<T, Sem, 4>(x + r * cols, cols, 32 * kK, in_group * 32 + lane));
    if constexpr (kK > 1) {
      if (lane == 0) slots[parity][warp] = a;
      group_barrier(group + 1, 32 * kK);
      if (in_group == 0) a = warp_fold<Sem>(lane < kK ? slots[parity][group * kK + lane] : Sem::identity());
      parity ^= 1;
    }
    if (in_group == 0 && lane == 0) store_piece<Sem>(out, r, a, cols, redo);
  }
}

// reduceBlockRows' body under a launch bound of kBlocks blocks an SM (the library's bound asks for
// none: 48 registers, five blocks, for double sums).
template <class T, class Sem, int kBlocks>
__global__ void __launch_bounds__(256, kBlocks)
    block_rows_bounded(const T* input, Pieces pieces, std::uint64_t first, typename Sem::Out* output,
                       unsigned long long* redo) {
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[kWarps];
  rl::smem<Acc> slots = slot_storage;
  const std::uint64_t r = first + blockIdx.x;
  if (r >= pieces.count) return;
  const Acc acc = block_fold<Sem>(lane_fold_free<T, Sem, 4, false>(input + r * pieces.step, pieces.length, kThreads,
                                                                    threadIdx.x), slots);
  if (threadIdx.x == 0) store_piece<Sem>(output, r, acc, pieces.length, redo);
}

// Times k(x, rows, cols, out, redo) with 256 threads on the blocks the GPU holds and on `every`
// blocks, and prints each time after `label`, its bits compared with `want`.
template <class T, class R, class K>
void time_on_grids(const L2Flush& flush, int repeats, int sms, K k, const T* x, std::uint64_t rows, std::uint64_t cols,
                   std::uint64_t every, const std::vector<R>& want, R* out, unsigned long long* redo, const char* label) {
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, 256, 0));
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, k));
  const double bytes = double(rows) * cols * sizeof(T);
  for (const std::uint64_t grid : {std::uint64_t(per_sm) * sms, every}) {
    CK(cudaMemset(out, 0xff, rows * sizeof(R)));
    CK(cudaMemset(redo, 0, 16));
    const float us = cold_us(flush, [&] { k<<<static_cast<unsigned>(grid), 256>>>(x, rows, cols, out, redo); }, repeats);
    CK(cudaGetLastError());
    std::vector<R> got(rows);
    CK(cudaMemcpy(got.data(), out, rows * sizeof(R), cudaMemcpyDeviceToHost));
    std::printf("  %s: %8.1f us %6.0f GB/s  regs %3d, local %zu, %d blocks/SM, grid %llu%s\n", label, us,
                bytes / (us * 1e3), attr.numRegs, attr.localSizeBytes, per_sm, static_cast<unsigned long long>(grid),
                std::memcmp(got.data(), want.data(), rows * sizeof(R)) == 0 ? "  bits equal" : "  BITS DIFFER");
    std::fflush(stdout);
  }
}

// A rows x cols matrix of probe values on the device, reduce_axis's sums and maxima along its
// rows (every variant's bits are checked against them) and their times, and room for a variant's
// results and redo list.
template <class T>
struct RowsCase {
  using R = result_t<T, op::sum>;
  T* x = nullptr;
  R* out = nullptr;
  T* maxima = nullptr;
  unsigned long long* redo = nullptr;
  std::vector<R> want;
  std::vector<T> want_max;
  float sum_us = 0, max_us = 0;
  RowsCase(const L2Flush& flush, int repeats, std::uint64_t rows, std::uint64_t cols) : want(rows), want_max(rows) {
    const std::uint64_t n = rows * cols;
    std::vector<T> h(n);
    for (std::uint64_t i = 0; i < n; ++i) h[i] = probe_value<T>(i);
    CK(cudaMalloc(&x, n * sizeof(T)));
    CK(cudaMalloc(&out, rows * sizeof(R)));
    CK(cudaMalloc(&maxima, rows * sizeof(T)));
    CK(cudaMalloc(&redo, 1 << 20));
    CK(cudaMemcpy(x, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    const Matrix m{rows, cols, 0};
    sum_us = cold_us(flush, [&] { check(reduce_axis(x, m, 1, op::sum{}, out, nullptr, {})); }, repeats);
    max_us = cold_us(flush, [&] { check(reduce_axis(x, m, 1, op::max{}, maxima, nullptr, {})); }, repeats);
    CK(cudaMemcpy(want.data(), out, rows * sizeof(R), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(want_max.data(), maxima, rows * sizeof(T), cudaMemcpyDeviceToHost));
  }
  ~RowsCase() {
    CK(cudaFree(x));
    CK(cudaFree(out));
    CK(cudaFree(maxima));
    CK(cudaFree(redo));
  }
};

// A block a row's end, sums and maxima (block_tail), against reduce_axis.
template <class T>
void tails(const L2Flush& flush, int repeats, int sms, std::uint64_t rows, std::uint64_t cols, const char* name) {
  RowsCase<T> c(flush, repeats, rows, cols);
  std::printf("%llu x %llu %s, a block a row's end: reduce_axis sum %.1f us, max %.1f us\n",
              static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols), name, c.sum_us, c.max_us);
  using R = typename RowsCase<T>::R;
  using Sum = piece_semantics_t<T, op::sum>;
  using Max = piece_semantics_t<T, op::max>;
  const auto sums = [&](auto kernel, const char* label) {
    time_on_grids<T, R>(flush, repeats, sms, kernel, c.x, rows, cols, rows, c.want, c.out, c.redo, label);
  };
  const auto maxima = [&](auto kernel, const char* label) {
    time_on_grids<T, T>(flush, repeats, sms, kernel, c.x, rows, cols, rows, c.want_max, c.maxima, c.redo, label);
  };
  sums(block_tail<T, Sum, 0>, "sum, no fold (a bound, not the sums)");
  sums(block_tail<T, Sum, 1>, "sum, warp folds only (not the sums)");
  sums(block_tail<T, Sum, 2>, "sum, block fold");
  maxima(block_tail<T, Max, 0>, "max, no fold (a bound, not the maxima)");
  maxima(block_tail<T, Max, 2>, "max, block fold");
}

template <class T, int kK, int kBlocks, class Op = op::sum, class R = result_t<T, Op>>
void group_variant(const L2Flush& flush, int repeats, int sms, const T* x, std::uint64_t rows, std::uint64_t cols,
                   const std::vector<R>& want, R* out, unsigned long long* redo) {
  char label[96];
  std::snprintf(label, sizeof label, "%s, %d warps a row, %d blocks/SM asked", std::is_same_v<Op, op::max> ? "max" : "sum",
                kK, kBlocks);
  time_on_grids<T, R>(flush, repeats, sms, group_rows<T, piece_semantics_t<T, Op>, kK, kBlocks>, x, rows, cols,
                      (rows + 8 / kK - 1) / (8 / kK), want, out, redo, label);
}

// Groups of 1, 2, 4 and 8 warps a row, sums and maxima.
template <class T>
void groups(const L2Flush& flush, int repeats, int sms, std::uint64_t rows, std::uint64_t cols, const char* name) {
  RowsCase<T> c(flush, repeats, rows, cols);
  std::printf("%llu x %llu %s, groups of warps a row: reduce_axis sum %.1f us, max %.1f us\n",
              static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols), name, c.sum_us, c.max_us);
  group_variant<T, 1, 4>(flush, repeats, sms, c.x, rows, cols, c.want, c.out, c.redo);
  group_variant<T, 2, 4>(flush, repeats, sms, c.x, rows, cols, c.want, c.out, c.redo);
  group_variant<T, 4, 4>(flush, repeats, sms, c.x, rows, cols, c.want, c.out, c.redo);
  group_variant<T, 8, 4>(flush, repeats, sms, c.x, rows, cols, c.want, c.out, c.redo);
  group_variant<T, 1, 4, op::max>(flush, repeats, sms, c.x, rows, cols, c.want_max, c.maxima, c.redo);
  group_variant<T, 2, 4, op::max>(flush, repeats, sms, c.x, rows, cols, c.want_max, c.maxima, c.redo);
  group_variant<T, 4, 4, op::max>(flush, repeats, sms, c.x, rows, cols, c.want_max, c.maxima, c.redo);
  group_variant<T, 8, 4, op::max>(flush, repeats, sms, c.x, rows, cols, c.want_max, c.maxima, c.redo);
}

template <class T, int kBlocks, bool kRoundWindows, class Op = op::sum, class R = result_t<T, Op>>
void runs_variant(const L2Flush& flush, int repeats, int sms, const T* x, std::uint64_t rows, std::uint64_t cols,
                  const std::vector<R>& want, R* out, unsigned long long* redo) {
  char label[96];
  std::snprintf(label, sizeof label, "%s, block runs of 8 rows, round windows %d, %d blocks/SM asked",
                std::is_same_v<Op, op::max> ? "max" : "sum", int(kRoundWindows), kBlocks);
  time_on_grids<T, R>(flush, repeats, sms, block_runs<T, piece_semantics_t<T, Op>, kBlocks, kRoundWindows>, x, rows,
                      cols, (rows + 7) / 8, want, out, redo, label);
}

// A block a row (the library's reduceLongPieces), on the grid the library gives it (the blocks
// the GPU holds at once, each taking rows b, b + grid, ...) and on a grid of a block a row.
template <class T, class Op, class R = result_t<T, Op>>
void block_rows(const L2Flush& flush, int repeats, int sms, const T* x, const Matrix& m, const R* want, R* out,
                unsigned long long* redo) {
  using Sem = piece_semantics_t<T, Op>;
  Pieces p;
  check(matrix_pieces(x, m, 1, out, &p));
  auto k = reduceLongPieces<T, Sem>;
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, kThreads, 0));
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, k));
  const double bytes = double(m.rows) * m.cols * sizeof(T);
  for (const std::uint64_t grid : {std::uint64_t(per_sm) * sms, m.rows}) {
    CK(cudaMemset(out, 0xff, m.rows * sizeof(R)));
    CK(cudaMemset(redo, 0, 16));
    const float us = cold_us(flush, [&] {
      k<<<static_cast<unsigned>(grid), kThreads>>>(x, p, nullptr, nullptr, out, redo, LongList{});
    }, repeats);
    CK(cudaGetLastError());
    std::vector<R> got(m.rows);
    CK(cudaMemcpy(got.data(), out, m.rows * sizeof(R), cudaMemcpyDeviceToHost));
    std::printf("  %s, a block a row (reduceLongPieces, regs %d, %d blocks/SM), grid %6llu: %8.1f us %6.0f GB/s%s\n",
                std::is_same_v<Op, op::max> ? "max" : "sum", attr.numRegs, per_sm, static_cast<unsigned long long>(grid),
                us, bytes / (us * 1e3), std::memcmp(got.data(), want, m.rows * sizeof(R)) == 0 ? "  bits equal" : "  BITS DIFFER");
    std::fflush(stdout);
  }
}

// RunningFold with each round of loads taken whole (fold_contiguous's take_round): the round's
// keys meet in a tree (four levels for eight double vectors) and then the thread's key, where the
// library's RunningFold takes them element by element, a chain through the thread's key.
template <class T, class Sem>
struct TreeFold {
  RunningFold<T, Sem> run;
  template <unsigned kIn>
  __device__ __forceinline__ void take_round(const Vec<T>* v) {
    constexpr unsigned kVec = Shape<T>::kVec, kN = kIn * kVec;
    typename Sem::Inner k[kN];
#pragma unroll
    for (unsigned i = 0; i < kIn; ++i)
#pragma unroll
      for (unsigned j = 0; j < kVec; ++j) k[i * kVec + j] = Sem::lift(v[i].v[j], 0);
#pragma unroll
    for (unsigned w = 1; w < kN; w *= 2)
#pragma unroll
      for (unsigned i = 0; i + w < kN; i += 2 * w) k[i] = Sem::inner_combine(k[i], k[i + w]);
    run.col.acc = Sem::absorb(run.col.acc, k[0]);
  }
  template <unsigned N, class IndexOf>
  __device__ __forceinline__ void take(const T* v, IndexOf index_of) {
    run.template take<N>(v, index_of);
  }
  __device__ __forceinline__ void take_one(T x, std::uint64_t index) { run.take_one(x, index); }
};
// A block a row of a max, kIn loads in flight a thread, the rounds' keys in a tree (TreeFold) or
// in a chain (the library's RunningFold).
template <class T, class Sem, unsigned kIn, bool kTree>
__global__ void __launch_bounds__(kThreads) long_max(const T* x, std::uint64_t cols, T* out) {
  __shared__ typename Sem::Acc slots[kWarps];
  const T* row = x + std::uint64_t(blockIdx.x) * cols;
  RunningFold<T, Sem> chain(contiguous_share<T>(cols, kThreads));
  TreeFold<T, Sem> tree{chain};
  if constexpr (kTree) fold_contiguous<T, kIn>(tree, row, cols, kThreads, threadIdx.x);
  else fold_contiguous<T, kIn>(chain, row, cols, kThreads, threadIdx.x);
  const typename Sem::Acc acc = block_fold<Sem>(kTree ? tree.run.result() : chain.result(), slots);
  if (threadIdx.x == 0) out[blockIdx.x] = Sem::finish(acc, cols);
}

// Maxima of few long rows (fewer than the blocks the GPU holds): reduceLongPieces with four and
// with kDeepLoads in flight a thread (kDeep), on a grid of a block a row, bits compared; with
// `chains`, also the probe's own block a row with the keys of a round in a chain and in a tree,
// at eight and sixteen loads.
template <class T>
void deep_max(const L2Flush& flush, int repeats, std::uint64_t rows, std::uint64_t cols, const char* name,
              bool chains = false) {
  using Sem = piece_semantics_t<T, op::max>;
  const std::uint64_t n = rows * cols;
  std::vector<T> h(n);
  for (std::uint64_t i = 0; i < n; ++i) h[i] = probe_value<T>(i);
  T *x = nullptr, *out = nullptr;
  unsigned long long* redo = nullptr;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&out, rows * sizeof(T)));
  CK(cudaMalloc(&redo, 1 << 20));
  CK(cudaMemcpy(x, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  const Matrix m{rows, cols, 0};
  const float lib_us = cold_us(flush, [&] { check(reduce_axis(x, m, 1, op::max{}, out, nullptr, {})); }, repeats);
  std::vector<T> want(rows), got(rows);
  CK(cudaMemcpy(want.data(), out, rows * sizeof(T), cudaMemcpyDeviceToHost));
  Pieces p;
  check(matrix_pieces(x, m, 1, out, &p));
  const double bytes = double(n) * sizeof(T);
  std::printf("%llu x %llu %s max: reduce_axis %.1f us (%.0f GB/s)", static_cast<unsigned long long>(rows),
              static_cast<unsigned long long>(cols), name, lib_us, bytes / (lib_us * 1e3));
  auto time = [&](auto k, const char* what) {
    CK(cudaMemset(out, 0xff, rows * sizeof(T)));
    const float us = cold_us(flush, [&] {
      k<<<static_cast<unsigned>(rows), kThreads>>>(x, p, nullptr, nullptr, out, redo, LongList{});
    }, repeats);
    CK(cudaGetLastError());
    CK(cudaMemcpy(got.data(), out, rows * sizeof(T), cudaMemcpyDeviceToHost));
    std::printf("; %s %.1f us (%.0f GB/s)%s", what, us, bytes / (us * 1e3),
                std::memcmp(got.data(), want.data(), rows * sizeof(T)) == 0 ? "" : " BITS DIFFER");
  };
  time(reduceLongPieces<T, Sem, false>, "four loads");
  time(reduceLongPieces<T, Sem, true>, kDeepLoads<T, Sem> == 8 ? "eight loads" : "sixteen loads");
  std::printf("\n");
  if constexpr (!is_half_like<T>) {
    if (chains) {
      const auto own = [&](auto k, const char* what) {
        CK(cudaMemset(out, 0xff, rows * sizeof(T)));
        const float us = cold_us(flush, [&] { k<<<static_cast<unsigned>(rows), kThreads>>>(x, cols, out); }, repeats);
        CK(cudaGetLastError());
        CK(cudaMemcpy(got.data(), out, rows * sizeof(T), cudaMemcpyDeviceToHost));
        std::printf("  %-24s %8.1f us %6.0f GB/s%s\n", what, us, bytes / (us * 1e3),
                    std::memcmp(got.data(), want.data(), rows * sizeof(T)) == 0 ? "  bits equal" : "  BITS DIFFER");
      };
      for (int pass = 0; pass < 2; ++pass) {
        own(long_max<T, Sem, 8, false>, "eight loads, a chain");
        own(long_max<T, Sem, 8, true>, "eight loads, a tree");
        own(long_max<T, Sem, 16, false>, "sixteen loads, a chain");
        own(long_max<T, Sem, 16, true>, "sixteen loads, a tree");
      }
    }
  }
  std::fflush(stdout);
  CK(cudaFree(x));
  CK(cudaFree(out));
  CK(cudaFree(redo));
}

template <class T>
void probe(const L2Flush& flush, int repeats, int sms, std::uint64_t rows, std::uint64_t cols, const char* name) {
  const std::uint64_t n = rows * cols;
  std::vector<T> h(n);
  for (std::uint64_t i = 0; i < n; ++i) h[i] = probe_value<T>(i);
  using R = result_t<T, op::sum>;
  T* x = nullptr;
  R *lib = nullptr, *out = nullptr;
  unsigned long long* redo = nullptr;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&lib, rows * sizeof(R)));
  CK(cudaMalloc(&out, rows * sizeof(R)));
  CK(cudaMalloc(&redo, 1 << 20));
  CK(cudaMemcpy(x, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  const Matrix m{rows, cols, 0};
  const float lib_us = cold_us(flush, [&] { check(reduce_axis(x, m, 1, op::sum{}, lib, nullptr, {})); }, repeats);
  const float max_us = cold_us(flush, [&] { check(reduce_axis(x, m, 1, op::max{}, reinterpret_cast<T*>(out), nullptr, {})); }, repeats);
  std::vector<R> want(rows);
  CK(cudaMemcpy(want.data(), lib, rows * sizeof(R), cudaMemcpyDeviceToHost));
  const double bytes = double(n) * sizeof(T);
  std::printf("%llu x %llu %s: reduce_axis sum %.1f us (%.0f GB/s), max %.1f us\n", static_cast<unsigned long long>(rows),
              static_cast<unsigned long long>(cols), name, lib_us, bytes / (lib_us * 1e3), max_us);
  if constexpr (std::is_same_v<T, double>) {
    variant<T, 4, 0>(flush, repeats, sms, x, rows, cols, want, out, redo);
    variant<T, 4, 1>(flush, repeats, sms, x, rows, cols, want, out, redo);
    variant<T, 4, 1>(flush, repeats, sms, x, rows, cols, want, out, redo, true);
    variant<T, 3, 2>(flush, repeats, sms, x, rows, cols, want, out, redo);
  } else {
    variant<T, 3>(flush, repeats, sms, x, rows, cols, want, out, redo);
    variant<T, 3>(flush, repeats, sms, x, rows, cols, want, out, redo, true);
  }
  block_rows<T, op::sum>(flush, repeats, sms, x, m, want.data(), out, redo);
  if constexpr (std::is_same_v<T, double>) {
    runs_variant<T, 4, true>(flush, repeats, sms, x, rows, cols, want, out, redo);
    runs_variant<T, 3, true>(flush, repeats, sms, x, rows, cols, want, out, redo);
  } else {
    runs_variant<T, 3, true>(flush, repeats, sms, x, rows, cols, want, out, redo);
    runs_variant<T, 3, false>(flush, repeats, sms, x, rows, cols, want, out, redo);
    runs_variant<T, 4, false>(flush, repeats, sms, x, rows, cols, want, out, redo);
  }
  {
    std::vector<T> want_max(rows);
    T* maxima = reinterpret_cast<T*>(lib);
    check(reduce_axis(x, m, 1, op::max{}, maxima, nullptr, {}));
    CK(cudaMemcpy(want_max.data(), maxima, rows * sizeof(T), cudaMemcpyDeviceToHost));
    block_rows<T, op::max>(flush, repeats, sms, x, m, want_max.data(), maxima, redo);
    runs_variant<T, 4, false, op::max>(flush, repeats, sms, x, rows, cols, want_max, maxima, redo);
    if constexpr (std::is_same_v<T, float>) {
      variant<T, 4, 1, op::max>(flush, repeats, sms, x, rows, cols, want_max, maxima, redo);

    }
  }
  CK(cudaFree(x));
  CK(cudaFree(lib));
  CK(cudaFree(out));
  CK(cudaFree(redo));
}

// The library's reduceWarpRows with its rows' rounds in order and rotated (a row's reading starts
// at its round r % rounds; the library rotates rows of 64 KiB or more), and reduceBlockRows, on a
// grid of a warp or a block a row, twice, against reduce_axis; bits compared. (Rotated rounds in
// reduceBlockRows were slower everywhere: 16384 x 16384 doubles 488.6 -> 501.8 us, 32768 x 8192
// doubles 506.0 -> 558.0, H200.)
template <class T>
void rotations(const L2Flush& flush, int repeats, std::uint64_t rows, std::uint64_t cols, const char* name,
               bool bounded = false) {
  RowsCase<T> c(flush, repeats, rows, cols);
  using R = typename RowsCase<T>::R;
  using Sem = piece_semantics_t<T, op::sum>;
  Pieces p;
  const Matrix m{rows, cols, 0};
  check(matrix_pieces(c.x, m, 1, c.out, &p));
  const double bytes = double(rows) * cols * sizeof(T);
  std::printf("%llu x %llu %s sums: reduce_axis %.1f us (%.0f GB/s)\n", static_cast<unsigned long long>(rows),
              static_cast<unsigned long long>(cols), name, c.sum_us, bytes / (c.sum_us * 1e3));
  const auto time = [&](auto k, unsigned rows_a_block, const char* what, std::size_t shared = 0) {
    CK(cudaMemset(c.out, 0xff, rows * sizeof(R)));
    const unsigned grid = static_cast<unsigned>((rows + rows_a_block - 1) / rows_a_block);
    if (shared > 0) CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
    const float us = cold_us(flush, [&] { k<<<grid, kThreads, shared>>>(c.x, p, 0, c.out, c.redo); }, repeats);
    CK(cudaGetLastError());
    std::vector<R> got(rows);
    CK(cudaMemcpy(got.data(), c.out, rows * sizeof(R), cudaMemcpyDeviceToHost));
    std::printf("  %-34s %8.1f us %6.0f GB/s%s\n", what, us, bytes / (us * 1e3),
                std::memcmp(got.data(), c.want.data(), rows * sizeof(R)) == 0 ? "  bits equal" : "  BITS DIFFER");
    std::fflush(stdout);
  };
  for (int pass = 0; pass < 2; ++pass) {
    if (bounded) {
      time(reduceBlockRows<T, Sem>, 1, "a block a row, the library's", kBlockRowsShared<T, Sem>);
      time(block_rows_bounded<T, Sem, 6>, 1, "a block a row, 6 blocks an SM");
      time(block_rows_bounded<T, Sem, 8>, 1, "a block a row, 8 blocks an SM");
      continue;
    }
    time(reduceWarpRows<T, Sem, false>, kWarps, "a warp a row, rounds in order");
    time(reduceWarpRows<T, Sem, true>, kWarps, "a warp a row, the library's");
    time(reduceBlockRows<T, Sem>, 1, "a block a row, rounds in order", kBlockRowsShared<T, Sem>);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 10;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s; exact sums along long rows, cold, median of %d\n", prop.name, repeats);
  L2Flush flush(prop);
  if (argc > 2 && std::strcmp(argv[2], "tail") == 0) {
    tails<double>(flush, repeats, prop.multiProcessorCount, 16384, 16384, "double");
    tails<double>(flush, repeats, prop.multiProcessorCount, 32768, 8192, "double");
    tails<double>(flush, repeats, prop.multiProcessorCount, 65536, 4096, "double");
    tails<double>(flush, repeats, prop.multiProcessorCount, 8192, 32768, "double");
    tails<float>(flush, repeats, prop.multiProcessorCount, 16384, 16384, "float");
    tails<float>(flush, repeats, prop.multiProcessorCount, 8192, 32768, "float");
    tails<reducelab::half>(flush, repeats, prop.multiProcessorCount, 8192, 32768, "half");
    return 0;
  }
  if (argc > 2 && std::strcmp(argv[2], "rotate") == 0) {
    rotations<float>(flush, repeats, 16384, 16384, "float");
    rotations<double>(flush, repeats, 16384, 16384, "double");
    rotations<double>(flush, repeats, 32768, 8192, "double");
    rotations<reducelab::half>(flush, repeats, 16384, 16384, "half");
    rotations<float>(flush, repeats, 32768, 8192, "float");
    rotations<float>(flush, repeats, 8192, 32768, "float");
    rotations<reducelab::bfloat16>(flush, repeats, 16384, 16384, "bfloat16");
    return 0;
  }
  if (argc > 2 && std::strcmp(argv[2], "blocks") == 0) {
    rotations<double>(flush, repeats, 16384, 16384, "double", true);
    rotations<double>(flush, repeats, 32768, 8192, "double", true);
    return 0;
  }
  if (argc > 2 && std::strcmp(argv[2], "groups") == 0) {
    groups<float>(flush, repeats, prop.multiProcessorCount, 16384, 16384, "float");
    groups<double>(flush, repeats, prop.multiProcessorCount, 16384, 16384, "double");
    groups<reducelab::half>(flush, repeats, prop.multiProcessorCount, 16384, 16384, "half");
    groups<double>(flush, repeats, prop.multiProcessorCount, 32768, 8192, "double");
    groups<float>(flush, repeats, prop.multiProcessorCount, 65536, 4096, "float");
    return 0;
  }
  if (argc > 2 && std::strcmp(argv[2], "chains") == 0) {
    deep_max<double>(flush, repeats, 256, 1 << 20, "double", true);
    deep_max<float>(flush, repeats, 256, 1 << 20, "float", true);
    deep_max<int>(flush, repeats, 256, 1 << 20, "int32", true);
    return 0;
  }
  deep_max<double>(flush, repeats, 256, 1 << 20, "double");
  deep_max<float>(flush, repeats, 256, 1 << 20, "float");
  deep_max<int>(flush, repeats, 256, 1 << 20, "int32");
  deep_max<reducelab::half>(flush, repeats, 256, 1 << 20, "half");
  probe<double>(flush, repeats, prop.multiProcessorCount, 16384, 16384, "double");
  probe<double>(flush, repeats, prop.multiProcessorCount, 32768, 8192, "double");
  probe<double>(flush, repeats, prop.multiProcessorCount, 8192, 32768, "double");
  probe<reducelab::half>(flush, repeats, prop.multiProcessorCount, 16384, 16384, "half");
  probe<float>(flush, repeats, prop.multiProcessorCount, 16384, 16384, "float");
  probe<reducelab::half>(flush, repeats, prop.multiProcessorCount, 8192, 32768, "half");
  return 0;
}
