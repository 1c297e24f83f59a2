// split_probe: the long rows that read slower than CUB's segmented reduce, against variants of
// their kernels, each beside reduce_axis and CUB in the same call, on device 0, cold (behind an L2
// flush), median of R; every variant's results compared bit for bit with reduce_axis's.
//   few:    256 x 2^20 maxima and exact sums, a row cut into 1, 2, 4 or 8 parts, one block each, the
//           blocks of a row one thread-block cluster (the parts meet in the first block's shared
//           memory; the library's reduceSplitRows takes two), sixteen or eight loads a thread;
//   counts: 132, 384, 512 and 600 rows of 2^20: a block a row against a cluster of two;
//   warps:  16384 x 16384 and 32768 x 16384 exact float sums and 16384 x 16384 half sums a warp a
//           row (reduceWarpRows) with four and eight loads a lane and bound to 3 to 6 blocks an SM,
//           and a block a row with a window a thread (RunningFold) or a window a round;
//   blocks: 16384 x 16384 and 8192 x 32768 exact double sums a block a row (reduceBlockRows) with
//           4, 6, 8 or 16 loads a thread a round, some bound to four blocks an SM.
//   threads: 16384 x 16384 and 8192 x 32768 exact double sums, 16384 x 16384 float sums, a block a
//           row with blocks of 64, 128, 256 or 512 threads.
//   launches: 16384 x 16384 exact float and double sums: the library's row kernel launched plainly
//           and as the library launches it, and a probe kernel with and without the library's
//           start (programmatic dependent launch) and end (a lost row summed again in its block).
//   reads: 16384 x 16384 plain double sums a block a row, the block's loads striped (the library's
//           shape) or in neighbouring pairs (CUB's), to isolate the reads' shape.
//   staged: 16384 x 16384 and 8192 x 32768 exact (and plain) double sums a block a row through a
//           ring of shared memory that bulk copies fill (no registers for the loads in flight),
//           beside the library's kernel and it bound to four blocks an SM.
//   pipelined: 16384 x 16384 and 8192 x 32768 exact double sums, a row at a time on each of the
//           blocks the GPU holds (rows from a counter), the next row's first loads issued before
//           the row's fold; loads in registers, as the library's kernel; and a block a row with
//           two buffers of loads, the next round's issued before the held one is folded.
//   async:  16384 x 16384 and 8192 x 32768 exact (and plain) double sums a block a row, each thread's
//           rounds of loads copied into its own slots of shared memory with cp.async, some rounds
//           ahead (no register holds a load in flight, no barrier between the threads).
//   staged-floats: 16384 x 16384 and 32768 x 16384 exact float sums a block a row, the library's
//           kernel (loads in registers) against the library's staged fold (lane_fold_staged).
//   split_probe [repeats=10] [few|counts|warps|blocks|threads|launches|reads|staged|pipelined|async|staged-floats: only that part]
#include <cuda_runtime.h>

#include <cub/device/device_segmented_reduce.cuh>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include "probe_timing.cuh"
#include "reducelab/detail/launch.cuh"
#include "reducelab/segments.hpp"
#include "segments/device_segments.cuh"

namespace {

using namespace reducelab;
using namespace reducelab::detail;

// A row's exact pair from a lane's CutFold (settled here), or the lane's elements of the row read
// again with pairs where the fold does not vouch for its sum (what the library's exact_lane_fold
// does after its reading).
inline __device__ piece_semantics_t<double, op::sum>::Acc cut_row_sum(CutFold& fold, const double* row, std::uint64_t length,
                                                                      unsigned lanes, unsigned lane) {
  using Sem = piece_semantics_t<double, op::sum>;
  fold.settle();
  if (fold.exact) return Sem::Acc{fold.a, fold.b};
  PairFold<double, Sem> pf;
  fold_contiguous<double, 1>(pf, row, length, lanes, lane);
  return pf.acc;
}

// Row blockIdx.x / k, its part cluster_rank() of k (k = the cluster's blocks): whole vectors
// split evenly, the last part what is left. Each block folds its part (kLoads loads a thread a
// round), writes the block's result into the cluster's first block, and that block folds the
// parts in rank order and stores the row.
template <class T, class Sem, unsigned kLoads>
__global__ void __launch_bounds__(kThreads)
    split_rows(const T* input, Pieces pieces, typename Sem::Out* output, unsigned long long* redo) {
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[kWarps];
  __shared__ Acc part_storage[kMaxClusterBlocks];
  wait_for_producer();
  cluster_arrive_relaxed();
  const unsigned k = cluster_blocks(), rank = cluster_rank();
  const std::uint64_t r = blockIdx.x / k, n = pieces.length;
  const std::uint64_t per = (n / Shape<T>::kVec + k - 1) / k * Shape<T>::kVec;
  const std::uint64_t b = std::min<std::uint64_t>(n, rank * per);
  const std::uint64_t e = rank + 1 == k ? n : std::min<std::uint64_t>(n, b + per);
  Acc acc = lane_fold_free<T, Sem, kLoads, false>(input + r * pieces.step + b, e - b, kThreads, threadIdx.x);
  acc = block_fold<Sem>(acc, slot_storage);
  cluster_wait();  // every block of the cluster has started
  if (threadIdx.x == 0) in_cluster_leader(part_storage + 0)[rank] = acc;
  cluster_arrive();
  cluster_wait();
  if (rank != 0 || threadIdx.x != 0) return;
  Acc row = part_storage[0];
  for (unsigned i = 1; i < k; ++i) row = Sem::combine(row, part_storage[i]);
  store_piece<Sem>(output, r, row, n, redo);
}

// reduceWarpRows with kIn loads a lane a round, bound to kMinBlocks blocks an SM.
template <class T, class Sem, unsigned kIn, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    warp_rows_in(const T* input, Pieces pieces, typename Sem::Out* output, unsigned long long* redo) {
  const std::uint64_t r = std::uint64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (r >= pieces.count) return;
  const bool rotated = pieces.length * sizeof(T) >= kRotatedRowBytes;
  const typename Sem::Acc acc = warp_fold<Sem>(
      lane_fold_free<T, Sem, kIn, true, false>(input + r * pieces.step, pieces.length, 32, threadIdx.x % 32, rotated ? r : 0));
  if (threadIdx.x % 32 == 0) store_piece<Sem>(output, r, acc, pieces.length, redo);
}

// reduceBlockRows with kIn loads a thread a round, bound to kMinBlocks blocks an SM (0: no bound);
// float, half and bfloat16 windows a round (kRoundWindows) or a window a thread (RunningFold).
template <class T, class Sem, unsigned kIn, int kMinBlocks = 0, bool kRoundWindows = false>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    block_rows_in(const T* input, Pieces pieces, typename Sem::Out* output, unsigned long long* redo) {
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[kWarps];
  const std::uint64_t r = blockIdx.x;
  const Acc acc = block_fold<Sem>(lane_fold_free<T, Sem, kIn, kRoundWindows>(input + r * pieces.step, pieces.length,
                                                                              kThreads, threadIdx.x),
                                  slot_storage);
  if (threadIdx.x == 0) store_piece<Sem>(output, r, acc, pieces.length, redo);
}

// block_rows_in with blocks of kT threads (a row's lanes) and a fold of their kT / 32 warps.
template <class T, class Sem, unsigned kIn, unsigned kT, int kMinBlocks = 0, bool kRoundWindows = false>
__global__ void __launch_bounds__(kT, kMinBlocks)
    block_rows_sized(const T* input, Pieces pieces, typename Sem::Out* output, unsigned long long* redo) {
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[kT / 32];
  const std::uint64_t r = blockIdx.x;
  const Acc acc = block_fold<Sem, kT / 32>(
      lane_fold_free<T, Sem, kIn, kRoundWindows>(input + r * pieces.step, pieces.length, kT, threadIdx.x), slot_storage);
  if (threadIdx.x == 0) store_piece<Sem>(output, r, acc, pieces.length, redo);
}

template <class K>
void print_kernel(K k, unsigned threads = kThreads, std::size_t shared = 0) {
  cudaFuncAttributes a;
  CK(cudaFuncGetAttributes(&a, k));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, shared));
  std::printf("  regs %3d, local %zu, %d blocks/SM", a.numRegs, a.localSizeBytes, per_sm);
}

// A rows x cols matrix of probe values, reduce_axis's results for Op along its rows (the bits every
// variant must give), its time and CUB's segmented reduce's in the same call.
template <class T, class Op>
struct Rows {
  using R = result_t<T, Op>;
  using Sem = piece_semantics_t<T, Op>;
  const L2Flush& flush;
  int repeats;
  std::uint64_t rows, cols;
  T* x = nullptr;
  R* out = nullptr;
  unsigned long long* redo = nullptr;
  std::vector<R> want;
  Pieces p;
  double bytes;

  Rows(const L2Flush& f, int r, std::uint64_t rows_, std::uint64_t cols_)
      : flush(f), repeats(r), rows(rows_), cols(cols_), want(rows_), bytes(double(rows_) * cols_ * sizeof(T)) {
    const std::uint64_t n = rows * cols;
    std::vector<T> h(n);
    for (std::uint64_t i = 0; i < n; ++i) h[i] = probe_value<T>(i);
    CK(cudaMalloc(&x, n * sizeof(T)));
    CK(cudaMalloc(&out, rows * sizeof(R)));
    CK(cudaMalloc(&redo, 1 << 20));
    CK(cudaMemset(redo, 0, 1 << 20));
    CK(cudaMemcpy(x, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    const Matrix m{rows, cols, 0};
    check(matrix_pieces(x, m, 1, out, &p));
    const float lib_us = cold_us(flush, [&] { check(reduce_axis(x, m, 1, Op{}, out, nullptr, {})); }, repeats);
    CK(cudaMemcpy(want.data(), out, rows * sizeof(R), cudaMemcpyDeviceToHost));
    std::printf("%llu x %llu %s %s: reduce_axis %.1f us (%.0f GB/s)", static_cast<unsigned long long>(rows),
                static_cast<unsigned long long>(cols), probe_type_name<T>(), std::is_same_v<Op, op::max> ? "max" : "sum",
                lib_us, bytes / (lib_us * 1e3));
    cub_time();
    std::printf("\n");
    std::fflush(stdout);
  }
  ~Rows() {
    CK(cudaFree(x));
    CK(cudaFree(out));
    CK(cudaFree(redo));
  }

  void cub_time() {
    if constexpr (!std::is_same_v<T, reducelab::half> && !std::is_same_v<T, reducelab::bfloat16>) {
      std::vector<std::int64_t> h(rows + 1);
      for (std::uint64_t i = 0; i <= rows; ++i) h[i] = static_cast<std::int64_t>(i * cols);
      std::int64_t* offsets = nullptr;
      CK(cudaMalloc(&offsets, h.size() * sizeof(std::int64_t)));
      CK(cudaMemcpy(offsets, h.data(), h.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
      T* cub_out = nullptr;
      CK(cudaMalloc(&cub_out, rows * sizeof(T)));
      const auto segments = static_cast<::cuda::std::int64_t>(rows);
      const auto call = [&](void* temp, std::size_t& temp_bytes) {
        if constexpr (std::is_same_v<Op, op::max>)
          CK(cub::DeviceSegmentedReduce::Max(temp, temp_bytes, x, cub_out, segments, offsets, offsets + 1));
        else
          CK(cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, x, cub_out, segments, offsets, offsets + 1));
      };
      std::size_t temp_bytes = 0;
      call(nullptr, temp_bytes);
      void* temp = nullptr;
      CK(cudaMalloc(&temp, std::max<std::size_t>(temp_bytes, 1)));
      const float us = cold_us(flush, [&] { call(temp, temp_bytes); }, repeats);
      std::printf("; CUB %.1f us (%.0f GB/s)", us, bytes / (us * 1e3));
      CK(cudaFree(temp));
      CK(cudaFree(cub_out));
      CK(cudaFree(offsets));
    }
  }

  // One variant: `launch` timed cold, its results compared with reduce_axis's.
  template <class K, class Launch>
  void time(const char* what, K kernel, Launch launch, unsigned threads = kThreads, std::size_t shared = 0) {
    CK(cudaMemset(out, 0xff, rows * sizeof(R)));
    const float us = cold_us(flush, launch, repeats);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<R> got(rows);
    CK(cudaMemcpy(got.data(), out, rows * sizeof(R), cudaMemcpyDeviceToHost));
    std::printf("  %-36s %8.1f us %6.0f GB/s", what, us, bytes / (us * 1e3));
    print_kernel(kernel, threads, shared);  // blocks an SM counting the launch's dynamic shared memory
    std::printf("%s\n", std::memcmp(got.data(), want.data(), rows * sizeof(R)) == 0 ? "  bits equal" : "  BITS DIFFER");
    std::fflush(stdout);
  }
};

template <class T, class Op, unsigned kLoads>
void split_variant(Rows<T, Op>& c, unsigned k, const char* what) {
  using Sem = typename Rows<T, Op>::Sem;
  const auto kernel = split_rows<T, Sem, kLoads>;
  c.time(what, kernel, [&] {
    CK(launch_kernel_clustered(kernel, static_cast<unsigned>(c.rows * k), k, nullptr, static_cast<const T*>(c.x), c.p,
                               c.out, c.redo));
  });
}

template <class T, class Op, unsigned kLoads>
void few(const L2Flush& flush, int repeats, std::uint64_t rows = 256, bool all = true) {
  Rows<T, Op> c(flush, repeats, rows, 1 << 20);
  for (int pass = 0; pass < 2; ++pass) {
    split_variant<T, Op, kLoads>(c, 1, "a block a row");
    split_variant<T, Op, kLoads>(c, 2, "a cluster of 2 a row");
    if (!all) continue;
    split_variant<T, Op, kLoads>(c, 4, "a cluster of 4 a row");
    split_variant<T, Op, kLoads>(c, 8, "a cluster of 8 a row");
    if constexpr (kLoads == 16) split_variant<T, Op, 8>(c, 4, "a cluster of 4 a row, 8 loads");
  }
}

template <class T>
void warps(const L2Flush& flush, int repeats, std::uint64_t rows) {
  Rows<T, op::sum> c(flush, repeats, rows, 16384);
  using Sem = typename Rows<T, op::sum>::Sem;
  const unsigned grid = static_cast<unsigned>((c.rows + kWarps - 1) / kWarps);
  const auto run = [&](const char* what, auto kernel) {
    c.time(what, kernel, [&] { kernel<<<grid, kThreads>>>(c.x, c.p, c.out, c.redo); });
  };
  const auto by_block = [&](const char* what, auto kernel) {
    c.time(what, kernel, [&] { kernel<<<static_cast<unsigned>(c.rows), kThreads>>>(c.x, c.p, c.out, c.redo); });
  };
  for (int pass = 0; pass < 2; ++pass) {
    run("a warp a row, 4 loads (reduceWarpRows)", warp_rows_in<T, Sem, 4, 4>);
    run("a warp a row, 4 loads, 5 blocks/SM", warp_rows_in<T, Sem, 4, 5>);
    run("a warp a row, 4 loads, 6 blocks/SM", warp_rows_in<T, Sem, 4, 6>);
    run("a warp a row, 8 loads, 3 blocks/SM", warp_rows_in<T, Sem, 8, 3>);
    by_block("a block a row, a window a thread", block_rows_in<T, Sem, 4>);
    by_block("a block a row, a window a round (float: the library's)", block_rows_in<T, Sem, 4, 0, true>);
    by_block("a block a row, 8 loads, windows of rounds", block_rows_in<T, Sem, 8, 0, true>);
  }
}

template <class T>
void blocks(const L2Flush& flush, int repeats, std::uint64_t rows, std::uint64_t cols) {
  Rows<T, op::sum> c(flush, repeats, rows, cols);
  using Sem = typename Rows<T, op::sum>::Sem;
  const auto run = [&](const char* what, auto kernel) {
    c.time(what, kernel, [&] { kernel<<<static_cast<unsigned>(c.rows), kThreads>>>(c.x, c.p, c.out, c.redo); });
  };
  for (int pass = 0; pass < 2; ++pass) {
    run("a block a row, 4 loads", block_rows_in<T, Sem, 4>);
    run("a block a row, 6 loads", block_rows_in<T, Sem, 6>);
    run("a block a row, 6 loads, 4 blocks/SM", block_rows_in<T, Sem, 6, 4>);
    run("a block a row, 8 loads (the library's)", block_rows_in<T, Sem, 8>);
    run("a block a row, 8 loads, 4 blocks/SM", block_rows_in<T, Sem, 8, 4>);
    run("a block a row, 16 loads", block_rows_in<T, Sem, 16>);
  }
}

// reduceBlockRows' parts one at a time: the programmatic-dependent-launch instructions at its start
// (kGriddep: wait_for_producer, let_consumer_start) and its end (kRedo 0: the row listed for the
// redo launch; 1: summed again by the whole block, after a barrier that tells it; 2: by the first
// warp, the others gone: the library's). Bound as the library's kernel is (doubles: three blocks
// an SM where the redo is in the kernel).
template <class T, class Sem, unsigned kIn, bool kRoundWindows, bool kGriddep, int kRedo>
__global__ void __launch_bounds__(kThreads, kRedo != 0 && std::is_same_v<T, double> ? 3 : 0)
    block_rows_parts(const T* input, Pieces pieces, typename Sem::Out* output, unsigned long long* redo) {
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[kWarps];
  if constexpr (kGriddep) {
    wait_for_producer();
    let_consumer_start();
  }
  const std::uint64_t r = blockIdx.x;
  const T* row = input + r * pieces.step;
  const Acc acc = block_fold<Sem>(lane_fold_free<T, Sem, kIn, kRoundWindows>(row, pieces.length, kThreads, threadIdx.x),
                                  slot_storage);
  __shared__ unsigned long long digits[ExactTraits<T>::kDigits];
  __shared__ unsigned misc[1];
  if constexpr (kRedo == 1) {
    if (threadIdx.x == 0) {
      const bool lost = Sem::needs_redo(acc);
      if (!lost) output[r] = Sem::finish(acc, pieces.length);
      misc[0] = lost ? 1u : 0u;
    }
    __syncthreads();
    if (misc[0] == 0u) return;
    __syncthreads();
    redo_piece<T, typename Sem::Out, Sem::kMean>(row, 1, pieces.length, digits, misc, output + r);
  } else if constexpr (kRedo == 2) {
    if (threadIdx.x >= 32) return;
    const bool lost = __shfl_sync(kFullMask, threadIdx.x == 0 && Sem::needs_redo(acc) ? 1 : 0, 0) != 0;
    if (!lost) {
      if (threadIdx.x == 0) output[r] = Sem::finish(acc, pieces.length);
      return;
    }
    redo_piece<T, typename Sem::Out, Sem::kMean, 32>(row, 1, pieces.length, digits, misc, output + r);
  } else {
    if (threadIdx.x == 0) store_piece<Sem>(output, r, acc, pieces.length, redo);
  }
}

// What reduce_axis adds to the row kernel: the library's kernel launched as the library does
// (programmatic stream serialization) and plainly, and the probe's kernel with and without the
// library's start and end; 16384 x 16384 exact float and double sums.
template <class T, unsigned kIn, bool kRoundWindows>
void launches(const L2Flush& flush, int repeats) {
  Rows<T, op::sum> c(flush, repeats, 16384, 16384);
  using Sem = typename Rows<T, op::sum>::Sem;
  const unsigned grid = static_cast<unsigned>(c.rows);
  const auto plain = [&](const char* what, auto kernel) {
    c.time(what, kernel, [&] { kernel<<<grid, kThreads>>>(c.x, c.p, c.out, c.redo); });
  };
  const auto overlapped = [&](const char* what, auto kernel) {
    c.time(what, kernel, [&] { CK(launch_kernel(kernel, grid, nullptr, static_cast<const T*>(c.x), c.p, c.out, c.redo)); });
  };
  constexpr auto library = reduceBlockRows<T, Sem>;
  const std::size_t library_shared = kBlockRowsShared<T, Sem>;  // the library's launch: double rows stage their rounds
  if (library_shared > 0) CK(cudaFuncSetAttribute(library, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(library_shared)));
  for (int pass = 0; pass < 2; ++pass) {
    c.time("library kernel, plain launch", library,
           [&] { library<<<grid, kThreads, library_shared>>>(c.x, c.p, 0, c.out, c.redo); }, kThreads, library_shared);
    c.time("library kernel, overlapped launch", library,
           [&] { CK(launch_kernel_shaped(library, grid, kThreads, 1u, library_shared, nullptr, static_cast<const T*>(c.x), c.p, std::uint64_t(0), c.out, c.redo)); },
           kThreads, library_shared);
    plain("bare kernel (listing), plain", block_rows_parts<T, Sem, kIn, kRoundWindows, false, 0>);
    overlapped("griddep (listing), overlapped", block_rows_parts<T, Sem, kIn, kRoundWindows, true, 0>);
    plain("block redo, plain", block_rows_parts<T, Sem, kIn, kRoundWindows, false, 1>);
    plain("warp redo, plain", block_rows_parts<T, Sem, kIn, kRoundWindows, false, 2>);
    overlapped("griddep + warp redo, overlapped", block_rows_parts<T, Sem, kIn, kRoundWindows, true, 2>);
  }
}

// Plain (not exact) double sums of a row a block, to isolate the reads' shape from the exact
// arithmetic: kLoads 16-byte loads a thread a round, the block's threads striped over the round
// (thread t takes vectors t, t + 256, ...: the library's shape), or in pairs (kPaired: thread t
// takes the two neighbouring vectors 2t and 2t + 1 of each 512-vector span, as CUB's segmented
// reduce loads four doubles a thread). Row lengths a multiple of the round; the results are
// written (not compared: plain sums round differently from the exact ones).
template <unsigned kLoads, bool kPaired>
__global__ void __launch_bounds__(kThreads)
    plain_rows(const double* input, Pieces pieces, double* output, unsigned long long*) {
  const double2* row = reinterpret_cast<const double2*>(input + blockIdx.x * pieces.step);
  const std::uint64_t vectors = pieces.length / 2;
  constexpr unsigned kRound = kThreads * kLoads;
  double a = 0, b = 0;
  for (std::uint64_t base = 0; base < vectors; base += kRound) {
    double2 v[kLoads];
#pragma unroll
    for (unsigned j = 0; j < kLoads; ++j) {
      const unsigned k = kPaired ? (j / 2) * (2 * kThreads) + 2 * threadIdx.x + j % 2 : j * kThreads + threadIdx.x;
      v[j] = __ldg(row + base + k);
    }
#pragma unroll
    for (unsigned j = 0; j < kLoads; ++j) a += v[j].x, b += v[j].y;
  }
  a += b;
  for (int o = 16; o > 0; o >>= 1) a += __shfl_down_sync(kFullMask, a, o);
  __shared__ double w[kWarps];
  if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = a;
  __syncthreads();
  if (threadIdx.x == 0) {
    double t = 0;
    for (unsigned i = 0; i < kWarps; ++i) t += w[i];
    output[blockIdx.x] = t;
  }
}

// The reads' shape alone (plain_rows) beside the exact kernels: 16384 x 16384 doubles, at the
// blocks an SM the kernel holds by its registers (eight) and at the library's three (dynamic
// shared memory that leaves room for no more).
void reads(const L2Flush& flush, int repeats) {
  Rows<double, op::sum> c(flush, repeats, 16384, 16384);
  const unsigned grid = static_cast<unsigned>(c.rows);
  int sm_bytes = 0;
  CK(cudaDeviceGetAttribute(&sm_bytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
  const auto run = [&](const char* what, auto kernel, int per_sm) {
    const int smem = per_sm ? sm_bytes / per_sm - 2048 : 0;
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int held = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&held, kernel, kThreads, smem));
    const float us = cold_us(flush, [&] { kernel<<<grid, kThreads, smem>>>(c.x, c.p, c.out, c.redo); }, c.repeats);
    CK(cudaGetLastError());
    std::printf("  %-36s %8.1f us %6.0f GB/s  %d blocks/SM\n", what, us, c.bytes / (us * 1e3), held);
    std::fflush(stdout);
  };
  for (int pass = 0; pass < 2; ++pass) {
    run("plain, 8 loads striped", plain_rows<8, false>, 0);
    run("plain, 8 loads paired", plain_rows<8, true>, 0);
    run("plain, 4 loads striped", plain_rows<4, false>, 0);
    run("plain, 4 loads paired", plain_rows<4, true>, 0);
    run("plain, 8 loads striped, 3 an SM", plain_rows<8, false>, 3);
    run("plain, 8 loads paired, 3 an SM", plain_rows<8, true>, 3);
    run("plain, 4 loads striped, 6 an SM", plain_rows<4, false>, 6);
    run("plain, 4 loads paired, 6 an SM", plain_rows<4, true>, 6);
  }
}

// Exact sums a block a row with blocks of 64 to 512 threads (more, smaller blocks an SM: a block's
// fold at its row's end stalls a smaller share of the SM's loads).
template <class T, unsigned kIn, bool kRoundWindows>
void threads(const L2Flush& flush, int repeats, std::uint64_t rows, std::uint64_t cols) {
  Rows<T, op::sum> c(flush, repeats, rows, cols);
  using Sem = typename Rows<T, op::sum>::Sem;
  const auto run = [&]<unsigned kT>(const char* what, auto kernel) {
    c.time(what, kernel, [&] { kernel<<<static_cast<unsigned>(c.rows), kT>>>(c.x, c.p, c.out, c.redo); }, kT);
  };
  for (int pass = 0; pass < 2; ++pass) {
    run.template operator()<256>("256 threads (the library's)", block_rows_sized<T, Sem, kIn, 256, 0, kRoundWindows>);
    run.template operator()<128>("128 threads", block_rows_sized<T, Sem, kIn, 128, 0, kRoundWindows>);
    run.template operator()<64>("64 threads", block_rows_sized<T, Sem, kIn, 64, 0, kRoundWindows>);
    run.template operator()<512>("512 threads", block_rows_sized<T, Sem, kIn, 512, 0, kRoundWindows>);
    if constexpr (kIn == 8) run.template operator()<128>("128 threads, 4 loads", block_rows_sized<T, Sem, 4, 128, 0, kRoundWindows>);
  }
}

// ---- staged: rows through a ring of shared memory filled by bulk copies ----------------------
// Exact double sums (kExact; else plain double sums, to isolate the reads) of a matrix's rows, a
// row at a time on each of the blocks the GPU holds, the loads in flight held by no register:
// thread 0 fills a ring of kStages stages of kT * kIn 16-byte vectors with bulk copies
// (cp.async.bulk, each stage's bytes counted on its mbarrier), kStages stages ahead and on across
// the rows' ends; every thread folds kIn vectors of a stage (striped as the library's loads) with
// CutFold, then the block meets (a barrier) before thread 0 fills the stage again. Block b starts
// with row b and takes the next from a counter (*next, zero at launch), so the blocks end within
// a row of each other. Rows 16-byte aligned, a whole number of stages long.
__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
// The mbarrier and bulk-copy instructions (sm_90); built for an older GPU they trap.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define STAGED_ASM(...) __trap()
#else
#define STAGED_ASM(...) asm volatile(__VA_ARGS__)
#endif
__device__ __forceinline__ void bar_init(const void* bar, unsigned count) {
  STAGED_ASM("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void bar_init_fence() { STAGED_ASM("fence.mbarrier_init.release.cluster;" ::: "memory"); }
__device__ __forceinline__ void bar_arrive(const void* bar) {
  STAGED_ASM("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}
// `bytes` of src into dst, counted on bar (which this arrival also expects them on).
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, std::uint32_t bytes, const void* bar) {
  STAGED_ASM("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
  STAGED_ASM("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                 smem_addr(dst)),
             "l"(src), "r"(bytes), "r"(smem_addr(bar))
             : "memory");
}
__device__ __forceinline__ bool stage_ready(const void* bar, std::uint32_t parity) {
  std::uint32_t ok = 0;
  STAGED_ASM(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(ok)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return ok != 0;
}
// The filling side of a ring of kStages stages of kStageVectors vectors: which row and chunk stage
// c gets, and its copy. Block b starts with row b; the next row comes from the counter (or, kStatic,
// is row + gridDim.x). Past the last row the stage gets row ~0 and an arrival without bytes, which
// wakes its readers to leave. Returns whether it copied.
template <unsigned kStageVectors, unsigned kStages, bool kStatic = false>
struct RingFill {
  std::uint64_t row = blockIdx.x, chunk = 0;  // the row being filled, its next chunk
  __device__ bool fill(std::uint64_t c, const double* input, const Pieces& pieces, std::uint64_t per_row,
                       unsigned long long* next, unsigned long long* full, std::uint64_t* row_of, unsigned char* ring) {
    const unsigned s = static_cast<unsigned>(c % kStages);
    if (chunk == per_row) {
      row = kStatic ? row + gridDim.x : gridDim.x + atomicAdd(next, 1ull);
      chunk = 0;
    }
    if (row >= pieces.count) {
      row_of[s] = ~0ull;
      bar_arrive(&full[s]);
      return false;
    }
    row_of[s] = row;
    const double* src = input + row * pieces.step + chunk * 2 * kStageVectors;
    ++chunk;
    bulk_copy(ring + s * kStageVectors * 16, src, kStageVectors * 16, &full[s]);
    return true;
  }
};
template <unsigned kT, unsigned kIn, unsigned kStages, bool kExact>
__global__ void __launch_bounds__(kT, 1)
    staged_rows(const double* input, Pieces pieces, double* output, unsigned long long* next) {
  using Sem = piece_semantics_t<double, op::sum>;
  using Acc = typename Sem::Acc;
  constexpr unsigned kStageVectors = kT * kIn;
  extern __shared__ __align__(128) unsigned char ring_bytes[];
  const Vec<double>* ring = reinterpret_cast<const Vec<double>*>(ring_bytes);
  __shared__ __align__(8) unsigned long long full[kStages];
  __shared__ std::uint64_t row_of[kStages];
  __shared__ Acc slot_storage[kT / 32];
  __shared__ double plain_slots[kT / 32];
  const unsigned t = threadIdx.x;
  const std::uint64_t per_row = pieces.length / (2 * kStageVectors);  // stages a row
  RingFill<kStageVectors, kStages> filler;  // thread 0's
  if (t == 0) {
    for (unsigned s = 0; s < kStages; ++s) bar_init(&full[s], 1);
    bar_init_fence();
    for (unsigned c = 0; c < kStages && filler.fill(c, input, pieces, per_row, next, full, row_of, ring_bytes); ++c) {
    }
  }
  __syncthreads();
  CutFold fold;
  double pa = 0, pb = 0;
  std::uint64_t chunk = 0;  // the chunk of its row the stage holds
  for (std::uint64_t c = 0;; ++c) {
    const unsigned s = static_cast<unsigned>(c % kStages);
    while (!stage_ready(&full[s], static_cast<std::uint32_t>((c / kStages) & 1))) {
    }
    const std::uint64_t r = row_of[s];
    if (r == ~0ull) break;
    Vec<double> v[kIn];
#pragma unroll
    for (unsigned j = 0; j < kIn; ++j) v[j] = ring[s * kStageVectors + j * kT + t];
    if constexpr (kExact) {
      fold.template take_round<kIn>(v);
    } else {
#pragma unroll
      for (unsigned j = 0; j < kIn; ++j) pa += v[j].v[0], pb += v[j].v[1];
    }
    __syncthreads();  // the stage is read: it may be filled again
    if (t == 0) filler.fill(c + kStages, input, pieces, per_row, next, full, row_of, ring_bytes);
    if (++chunk < per_row) continue;
    chunk = 0;
    if constexpr (kExact) {
      Acc acc = cut_row_sum(fold, input + r * pieces.step, pieces.length, kT, t);
      fold = CutFold{};
      acc = block_fold<Sem, kT / 32>(acc, slot_storage);
      if (t == 0) output[r] = Sem::finish(acc, pieces.length);
    } else {
      double a = pa + pb;
      pa = pb = 0;
      for (int o = 16; o > 0; o >>= 1) a += __shfl_down_sync(kFullMask, a, o);
      if (t % 32 == 0) plain_slots[t / 32] = a;
      __syncthreads();
      if (t == 0) {
        double sum = 0;
        for (unsigned w = 0; w < kT / 32; ++w) sum += plain_slots[w];
        output[r] = sum;
      }
    }
  }
}

// staged_rows with a producer warp of its own (warp kC's lane 0) and per-stage "empty" barriers
// in place of the block's barrier after each stage: each consumer warp's lane 0 arrives on the
// stage's empty barrier when its warp has read it, and the producer waits for all kC before it
// fills the stage again; at a row's end only the consumer warps meet (named barrier 1), their
// slots double-buffered by the row's parity.
__device__ __forceinline__ void stage_wait(const void* bar, std::uint32_t parity) {
  while (!stage_ready(bar, parity)) {
  }
}
template <unsigned kC, unsigned kIn, unsigned kStages, bool kStatic = false, bool kLastFolds = false, bool kExact = true>
__global__ void __launch_bounds__((kC + 1) * 32, 1)
    staged_ws_rows(const double* input, Pieces pieces, double* output, unsigned long long* next) {
  using Sem = piece_semantics_t<double, op::sum>;
  using Acc = typename Sem::Acc;
  constexpr unsigned kT = kC * 32;  // consumer threads
  constexpr unsigned kStageVectors = kT * kIn;
  extern __shared__ __align__(128) unsigned char ring_bytes[];
  const Vec<double>* ring = reinterpret_cast<const Vec<double>*>(ring_bytes);
  __shared__ __align__(8) unsigned long long full[kStages], empty[kStages];
  __shared__ std::uint64_t row_of[kStages];
  __shared__ Acc slots[2][kC];
  __shared__ unsigned arrived[2];  // kLastFolds: warps whose row part is in slots[parity]
  const unsigned t = threadIdx.x, warp = t / 32, lane = t % 32;
  const std::uint64_t per_row = pieces.length / (2 * kStageVectors);
  if (t == 0) {
    for (unsigned s = 0; s < kStages; ++s) {
      bar_init(&full[s], 1);
      bar_init(&empty[s], kC);
    }
    arrived[0] = arrived[1] = 0;
    bar_init_fence();
  }
  __syncthreads();
  if (warp == kC) {  // the producer
    if (lane != 0) return;
    RingFill<kStageVectors, kStages, kStatic> filler;
    for (std::uint64_t c = 0;; ++c) {
      const unsigned s = static_cast<unsigned>(c % kStages);
      if (c >= kStages) stage_wait(&empty[s], static_cast<std::uint32_t>(((c / kStages) - 1) & 1));
      if (!filler.fill(c, input, pieces, per_row, next, full, row_of, ring_bytes)) return;
    }
  }
  CutFold fold;
  double pa = 0, pb = 0;
  std::uint64_t chunk = 0, rows_done = 0;
  for (std::uint64_t c = 0;; ++c) {
    const unsigned s = static_cast<unsigned>(c % kStages);
    stage_wait(&full[s], static_cast<std::uint32_t>((c / kStages) & 1));
    const std::uint64_t r = row_of[s];
    if (r == ~0ull) break;
    Vec<double> v[kIn];
#pragma unroll
    for (unsigned j = 0; j < kIn; ++j) v[j] = ring[s * kStageVectors + j * kT + t];
    __syncwarp();
    if (lane == 0) bar_arrive(&empty[s]);
    if constexpr (kExact) {
      fold.take_round<kIn>(v);
    } else {
#pragma unroll
      for (unsigned j = 0; j < kIn; ++j) pa += v[j].v[0], pb += v[j].v[1];
    }
    if (++chunk < per_row) continue;
    chunk = 0;
    Acc acc{};
    if constexpr (kExact) {
      acc = cut_row_sum(fold, input + r * pieces.step, pieces.length, kT, t);
      fold = CutFold{};
      acc = warp_fold<Sem>(acc);
    } else {
      double a = pa + pb;
      pa = pb = 0;
      for (int o = 16; o > 0; o >>= 1) a += __shfl_down_sync(kFullMask, a, o);
      acc = Acc{a, 0.0};
    }
    const unsigned parity = static_cast<unsigned>(rows_done++ & 1);
    Acc* set = slots[parity];
    // The warp that folds the row's kC slots and writes the row.
    const auto write_row = [&] {
      const Acc w = lane < kC ? set[lane] : Sem::identity();
      if constexpr (kExact) {
        const Acc row = warp_fold<Sem>(w);
        if (lane == 0) output[r] = Sem::finish(row, pieces.length);
      } else {
        double a = lane < kC ? w.a : 0.0;
        for (int o = 16; o > 0; o >>= 1) a += __shfl_down_sync(kFullMask, a, o);
        if (lane == 0) output[r] = a;
      }
    };
    if constexpr (kLastFolds) {
      // The row's last warp to arrive folds the slots; no warp waits for the others. No warp
      // can write these slots again (two rows on) before that fold: the ring keeps every warp
      // within kStages stages of the slowest, and rows are at least kStages stages long.
      unsigned last = 0;
      if (lane == 0) {
        set[warp] = acc;
        __threadfence_block();
        last = atomicAdd(&arrived[parity], 1u) == kC - 1 ? 1u : 0u;
      }
      if (__shfl_sync(kFullMask, last, 0) == 0) continue;
      __threadfence_block();
      if (lane == 0) arrived[parity] = 0;
      write_row();
    } else {
      if (lane == 0) set[warp] = acc;
      STAGED_ASM("bar.sync 1, %0;" ::"r"(kT) : "memory");
      if (warp == 0) write_row();
    }
  }
}

// ---- pipelined: a block a row from a counter, the next row's loads in flight across the fold ----
// Exact double sums of a matrix's rows (16-byte aligned, whole rounds of kThreads x kIn vectors)
// on the blocks the GPU holds, each taking its next row from a counter as staged_rows does, but
// with the loads in registers as the library's reduceBlockRows holds them (CutFold, the same
// striped loads). What differs: once a lane has folded its row's last round it issues the first
// round of its next row, and only then settles its sums and joins the block's fold, so a row's end
// leaves loads in flight instead of an idle slot until the next block starts. Only barriers and
// atomics: the SIMT backend could run it.
template <unsigned kIn, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    pipelined_rows(const double* input, Pieces pieces, double* output, unsigned long long* next) {
  using Sem = piece_semantics_t<double, op::sum>;
  using Acc = typename Sem::Acc;
  constexpr std::uint64_t kRound = std::uint64_t(kThreads) * kIn * 2;  // elements a round
  __shared__ Acc slot_storage[2][kWarps];  // a row's fold, alternate rows (block_fold's reuse)
  __shared__ unsigned long long row_after[2];
  const unsigned t = threadIdx.x;
  const std::uint64_t rounds = pieces.length / kRound;
  std::uint64_t row = blockIdx.x;
  if (row >= pieces.count) return;
  if (t == 0) row_after[0] = gridDim.x + atomicAdd(next, 1ull);
  Vec<double> v[kIn];
  rl::gmem<const double> src = input + row * pieces.step;
#pragma unroll
  for (unsigned j = 0; j < kIn; ++j) v[j] = load_vec(src, (std::uint64_t(j) * kThreads + t) * 2);
  __syncthreads();  // row_after[0]
  for (unsigned parity = 0;; parity ^= 1) {
    const std::uint64_t after = row_after[parity];
    rl::gmem<const double> then = input + (after < pieces.count ? after : row) * pieces.step;
    CutFold fold;
    for (std::uint64_t k = 0; k < rounds; ++k) {
      fold.template take_round<kIn>(v);
      const bool last = k + 1 == rounds;
      if (last && after >= pieces.count) break;
      const rl::gmem<const double> from = last ? then : src;
      const std::uint64_t at = last ? 0 : (k + 1) * kRound;
#pragma unroll
      for (unsigned j = 0; j < kIn; ++j) v[j] = load_vec(from, at + (std::uint64_t(j) * kThreads + t) * 2);
    }
    Acc acc = cut_row_sum(fold, src, pieces.length, kThreads, t);
    if (t == 0) row_after[parity ^ 1] = gridDim.x + atomicAdd(next, 1ull);
    acc = block_fold<Sem>(acc, slot_storage[parity]);
    if (t == 0) output[row] = Sem::finish(acc, pieces.length);
    if (after >= pieces.count) break;
    row = after;
    src = then;
  }
}

// A block a row (reduceBlockRows' grid) with two register buffers of kIn loads: a lane issues
// the next round's loads before it folds the round it holds, so its loads stay in flight while it
// computes (the library's kernel issues a round, waits, then folds it).
template <unsigned kIn, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    buffered_rows(const double* input, Pieces pieces, double* output, unsigned long long*) {
  using Sem = piece_semantics_t<double, op::sum>;
  using Acc = typename Sem::Acc;
  constexpr std::uint64_t kRound = std::uint64_t(kThreads) * kIn * 2;  // elements a round
  __shared__ Acc slot_storage[kWarps];
  const unsigned t = threadIdx.x;
  const std::uint64_t r = blockIdx.x, rounds = pieces.length / kRound;  // an even number
  const rl::gmem<const double> src = input + r * pieces.step;
  const auto load = [&](Vec<double>* v, std::uint64_t k) {
#pragma unroll
    for (unsigned j = 0; j < kIn; ++j) v[j] = load_vec(src, k * kRound + (std::uint64_t(j) * kThreads + t) * 2);
  };
  Vec<double> a[kIn], b[kIn];
  load(a, 0);
  CutFold fold;
  for (std::uint64_t k = 0; k < rounds; k += 2) {
    load(b, k + 1);
    fold.template take_round<kIn>(a);
    if (k + 2 < rounds) load(a, k + 2);
    fold.template take_round<kIn>(b);
  }
  Acc acc = cut_row_sum(fold, src, pieces.length, kThreads, t);
  acc = block_fold<Sem>(acc, slot_storage);
  if (t == 0) output[r] = Sem::finish(acc, pieces.length);
}

// One staged kernel (kT threads, stages of `stage_bytes`, kStages of them) on the blocks the GPU
// holds (per_sm_wanted: as much shared memory as leaves room for no more blocks an SM than that),
// timed cold; exact sums compared with reduce_axis's bits. Each launch takes a fresh row counter.
inline constexpr std::uint64_t kStagedCounters = 1 << 16;  // launches a call can time
struct StagedRun {
  Rows<double, op::sum>& c;
  unsigned long long* counters = nullptr;  // a row counter for each launch, zero
  std::uint64_t used = 0;

  explicit StagedRun(Rows<double, op::sum>& rows) : c(rows) {
    CK(cudaMalloc(&counters, kStagedCounters * sizeof(unsigned long long)));
    CK(cudaMemset(counters, 0, kStagedCounters * sizeof(unsigned long long)));
  }
  ~StagedRun() { CK(cudaFree(counters)); }
  StagedRun(const StagedRun&) = delete;
  StagedRun& operator=(const StagedRun&) = delete;

  template <class K>
  void time(const char* what, K kernel, unsigned threads, std::uint64_t stage_bytes, unsigned stages, bool exact,
            int per_sm_wanted = 0) {
    if (c.cols * sizeof(double) % stage_bytes != 0) {  // the kernels take whole stages
      std::printf("  %-44s skipped: rows of %llu are not whole stages\n", what, static_cast<unsigned long long>(c.cols));
      return;
    }
    int sm_bytes = 0, sms = 0, per_sm = 0;
    CK(cudaDeviceGetAttribute(&sm_bytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int smem = std::max(static_cast<int>(stages * stage_bytes), per_sm_wanted ? sm_bytes / per_sm_wanted - 2048 : 0);
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, static_cast<int>(threads), smem));
    const unsigned grid = static_cast<unsigned>(std::min<std::uint64_t>(c.rows, std::uint64_t(per_sm) * sms));
    CK(cudaMemset(c.out, 0xff, c.rows * sizeof(double)));
    const float us = cold_us(c.flush, [&] {
      if (used == kStagedCounters) {
        std::fprintf(stderr, "staged: more than %llu launches\n", static_cast<unsigned long long>(kStagedCounters));
        std::exit(1);
      }
      kernel<<<grid, threads, smem>>>(c.x, c.p, c.out, counters + used++);
    }, c.repeats);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<double> got(c.rows);
    CK(cudaMemcpy(got.data(), c.out, c.rows * sizeof(double), cudaMemcpyDeviceToHost));
    cudaFuncAttributes a;
    CK(cudaFuncGetAttributes(&a, kernel));
    const bool equal = std::memcmp(got.data(), c.want.data(), c.rows * sizeof(double)) == 0;
    std::printf("  %-44s %8.1f us %6.0f GB/s  regs %3d, local %zu, %d blocks/SM (%d B shared), grid %u%s\n", what, us,
                c.bytes / (us * 1e3), a.numRegs, a.localSizeBytes, per_sm, smem, grid,
                !exact ? "" : equal ? "  bits equal" : "  BITS DIFFER");
    std::fflush(stdout);
  }
  template <unsigned kIn, int kMinBlocks>
  void pipelined(const char* what) {
    time(what, pipelined_rows<kIn, kMinBlocks>, kThreads, kThreads * kIn * 16, 0, true);
  }
  template <unsigned kT, unsigned kIn, unsigned kStages, bool kExact = true>
  void barrier(const char* what) {
    time(what, staged_rows<kT, kIn, kStages, kExact>, kT, kT * kIn * 16, kStages, kExact);
  }
  template <unsigned kC, unsigned kIn, unsigned kStages, bool kStatic = false, bool kLastFolds = false, bool kExact = true>
  void warps(const char* what, int per_sm_wanted = 0) {
    if (kLastFolds && c.cols * sizeof(double) / (kC * 32 * kIn * 16) < kStages) {  // see staged_ws_rows
      std::printf("  %-44s skipped: rows shorter than the ring\n", what);
      return;
    }
    time(what, staged_ws_rows<kC, kIn, kStages, kStatic, kLastFolds, kExact>, (kC + 1) * 32, kC * 32 * kIn * 16, kStages,
         kExact, per_sm_wanted);
  }
};

// ---- async: rows through per-thread asynchronous copies ---------------------------------------
// A block a row (reduceBlockRows' grid); each thread copies its own rounds of kIn 16-byte vectors
// (striped as the library's loads) into kDepth slots of shared memory with cp.async (sm_80), kDepth
// - 1 rounds ahead, waits for the oldest (cp.async.wait_group: its own copies, no barrier) and
// folds it with CutFold (kExact; else plain double sums, to isolate the reads). No register holds
// a load in flight, and the next rounds stay in flight while a round is folded. Rows a whole
// number of rounds long.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define ASYNC_ASM(...) __trap()
#else
#define ASYNC_ASM(...) asm volatile(__VA_ARGS__)
#endif
// kHow: 0 bypasses L1 (.cg), 1 the same with a 256-byte L2 prefetch hint, 2 through L1 (.ca).
template <int kHow = 0>
__device__ __forceinline__ void copy16_async(void* dst, const void* src) {
  const auto to = static_cast<std::uint32_t>(__cvta_generic_to_shared(dst));
  if constexpr (kHow == 0) ASYNC_ASM("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(src) : "memory");
  else if constexpr (kHow == 1) ASYNC_ASM("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;" ::"r"(to), "l"(src) : "memory");
  else ASYNC_ASM("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(to), "l"(src) : "memory");
}
__device__ __forceinline__ void copies_commit() { ASYNC_ASM("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void copies_wait() {
  ASYNC_ASM("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
template <unsigned kIn, unsigned kDepth, int kMinBlocks, bool kExact, int kHow = 0>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    async_rows(const double* input, Pieces pieces, double* output, unsigned long long*) {
  using Sem = piece_semantics_t<double, op::sum>;
  using Acc = typename Sem::Acc;
  extern __shared__ __align__(16) unsigned char async_raw[];
  Vec<double>* ring = reinterpret_cast<Vec<double>*>(async_raw);  // [kDepth][kIn][kThreads]
  __shared__ Acc slot_storage[kWarps];
  constexpr std::uint64_t kRound = std::uint64_t(kThreads) * kIn;  // vectors a round
  const unsigned t = threadIdx.x;
  const std::uint64_t r = blockIdx.x, rounds = pieces.length / 2 / kRound;
  const Vec<double>* src = reinterpret_cast<const Vec<double>*>(input + r * pieces.step);
  const auto issue = [&](std::uint64_t k, unsigned slot) {
#pragma unroll
    for (unsigned u = 0; u < kIn; ++u) copy16_async<kHow>(ring + (slot * kIn + u) * kThreads + t, src + k * kRound + u * kThreads + t);
  };
#pragma unroll
  for (unsigned d = 0; d + 1 < kDepth; ++d) {
    if (d < rounds) issue(d, d);
    copies_commit();
  }
  CutFold fold;
  double p0 = 0, p1 = 0;
  unsigned slot = 0;
  for (std::uint64_t k = 0; k < rounds; ++k) {
    const std::uint64_t next = k + kDepth - 1;
    if (next < rounds) issue(next, slot == 0 ? kDepth - 1 : slot - 1);
    copies_commit();
    copies_wait<kDepth - 1>();
    Vec<double> v[kIn];
#pragma unroll
    for (unsigned u = 0; u < kIn; ++u) v[u] = ring[(slot * kIn + u) * kThreads + t];
    if constexpr (kExact) {
      fold.template take_round<kIn>(v);
    } else {
#pragma unroll
      for (unsigned u = 0; u < kIn; ++u) p0 += v[u].v[0], p1 += v[u].v[1];
    }
    slot = slot + 1 == kDepth ? 0 : slot + 1;
  }
  if constexpr (kExact) {
    Acc acc = cut_row_sum(fold, input + r * pieces.step, pieces.length, kThreads, t);
    acc = block_fold<Sem>(acc, slot_storage);
    if (t == 0) output[r] = Sem::finish(acc, pieces.length);
  } else {
    double a = p0 + p1;
    for (int o = 16; o > 0; o >>= 1) a += __shfl_down_sync(kFullMask, a, o);
    __shared__ double w[kWarps];
    if (t % 32 == 0) w[t / 32] = a;
    __syncthreads();
    if (t == 0) {
      double s = 0;
      for (unsigned i = 0; i < kWarps; ++i) s += w[i];
      output[r] = s;
    }
  }
}

// The library's staged fold (lane_fold_staged) in async_rows' frame (kFold 1), and async_rows' fold
// in parts of the library's frame: kStart, the library's start (wait_for_producer,
// let_consumer_start); kStore, its end (store_piece: a lost row listed for the redo).
template <bool kLibraryFold, bool kStart, bool kStore>
__global__ void __launch_bounds__(kThreads)
    async_frame_rows(const double* input, Pieces pieces, double* output, unsigned long long* redo) {
  using Sem = piece_semantics_t<double, op::sum>;
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[kWarps];
  if constexpr (kStart) {
    wait_for_producer();
    let_consumer_start();
  }
  RL_DYNAMIC_SHARED(Vec<double>, ring);
  const unsigned t = threadIdx.x;
  const std::uint64_t r = blockIdx.x;
  if (r >= pieces.count) return;
  Acc acc;
  if constexpr (kLibraryFold) {
    acc = lane_fold_staged<double, Sem, 8, 2>(input + r * pieces.step, pieces.length, kThreads, t, ring);
  } else {
    constexpr std::uint64_t kRound = std::uint64_t(kThreads) * 8;
    const std::uint64_t rounds = pieces.length / 2 / kRound;
    const Vec<double>* src = reinterpret_cast<const Vec<double>*>(input + r * pieces.step);
    const auto issue = [&](std::uint64_t k, unsigned slot) {
#pragma unroll
      for (unsigned u = 0; u < 8; ++u) copy16_async<2>(ring + (slot * 8 + u) * kThreads + t, src + k * kRound + u * kThreads + t);
    };
    if (rounds > 0) issue(0, 0);
    copies_commit();
    CutFold fold;
    unsigned slot = 0;
    for (std::uint64_t k = 0; k < rounds; ++k) {
      if (k + 1 < rounds) issue(k + 1, slot ^ 1u);
      copies_commit();
      copies_wait<1>();
      Vec<double> v[8];
#pragma unroll
      for (unsigned u = 0; u < 8; ++u) v[u] = ring[(slot * 8 + u) * kThreads + t];
      fold.template take_round<8>(v);
      slot ^= 1u;
    }
    acc = cut_row_sum(fold, input + r * pieces.step, pieces.length, kThreads, t);
  }
  acc = block_fold<Sem>(acc, slot_storage);
  if constexpr (kStore) {
    if (t == 0) store_piece<Sem>(output, r, acc, pieces.length, redo);
  } else {
    if (t == 0) output[r] = Sem::finish(acc, pieces.length);
  }
}

// Exact sums a block a row through the library's staged fold (lane_fold_staged: kDepth slots of
// kIn loads a thread), for the types whose library kernel keeps its loads in registers.
template <class T, unsigned kIn, unsigned kDepth>
__global__ void __launch_bounds__(kThreads)
    staged_rows(const T* input, Pieces pieces, typename piece_semantics_t<T, op::sum>::Out* output,
                unsigned long long* redo) {
  using Sem = piece_semantics_t<T, op::sum>;
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[kWarps];
  RL_DYNAMIC_SHARED(Vec<T>, ring);
  const std::uint64_t r = blockIdx.x;
  const Acc acc = block_fold<Sem>(
      lane_fold_staged<T, Sem, kIn, kDepth>(input + r * pieces.step, pieces.length, kThreads, threadIdx.x, ring),
      slot_storage);
  if (threadIdx.x == 0) store_piece<Sem>(output, r, acc, pieces.length, redo);
}

// Float rows: the library's kernel (loads in registers) against the staged fold.
template <class T>
void staged_part(const L2Flush& flush, int repeats, std::uint64_t rows, std::uint64_t cols) {
  Rows<T, op::sum> c(flush, repeats, rows, cols);
  using Sem = typename Rows<T, op::sum>::Sem;
  const unsigned grid = static_cast<unsigned>(c.rows);
  constexpr auto library = reduceBlockRows<T, Sem>;
  const std::size_t library_shared = kBlockRowsShared<T, Sem>;  // as the library launches it
  if (library_shared > 0) CK(cudaFuncSetAttribute(library, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(library_shared)));
  const auto staged = [&]<unsigned kIn, unsigned kDepth>(const char* what) {
    constexpr auto kernel = staged_rows<T, kIn, kDepth>;
    constexpr int smem = static_cast<int>(kDepth * kIn * kThreads * 16);
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    c.time(what, kernel, [&] { kernel<<<grid, kThreads, smem>>>(c.x, c.p, c.out, c.redo); }, kThreads, smem);
  };
  for (int pass = 0; pass < 2; ++pass) {
    c.time("library kernel, plain launch", library,
           [&] { library<<<grid, kThreads, library_shared>>>(c.x, c.p, 0, c.out, c.redo); }, kThreads, library_shared);
    staged.template operator()<4, 2>("staged 4 x 2");
    staged.template operator()<4, 3>("staged 4 x 3");
    staged.template operator()<8, 2>("staged 8 x 2");
    staged.template operator()<2, 4>("staged 2 x 4");
  }
}

// The asynchronous copies' rows against the library's kernel and the plain reads in registers.
void async_part(const L2Flush& flush, int repeats, std::uint64_t rows, std::uint64_t cols) {
  Rows<double, op::sum> c(flush, repeats, rows, cols);
  using Sem = typename Rows<double, op::sum>::Sem;
  const unsigned grid = static_cast<unsigned>(c.rows);
  constexpr auto library = reduceBlockRows<double, Sem>;
  const std::size_t library_shared = kBlockRowsShared<double, Sem>;  // the library's launch: double rows stage their rounds
  if (library_shared > 0) CK(cudaFuncSetAttribute(library, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(library_shared)));
  const auto run = [&]<unsigned kIn, unsigned kDepth, int kMin, bool kExact, int kHow = 0>(const char* what) {
    constexpr auto kernel = async_rows<kIn, kDepth, kMin, kExact, kHow>;
    const int smem = static_cast<int>(kDepth * kIn * kThreads * 16);
    if (c.cols % (2 * kThreads * kIn) != 0) {
      std::printf("  %-36s skipped: rows are not whole rounds\n", what);
      return;
    }
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    CK(cudaMemset(c.out, 0xff, c.rows * sizeof(double)));
    const float us = cold_us(c.flush, [&] { kernel<<<grid, kThreads, smem>>>(c.x, c.p, c.out, c.redo); }, c.repeats);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<double> got(c.rows);
    CK(cudaMemcpy(got.data(), c.out, c.rows * sizeof(double), cudaMemcpyDeviceToHost));
    cudaFuncAttributes a;
    CK(cudaFuncGetAttributes(&a, kernel));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem));
    const bool equal = std::memcmp(got.data(), c.want.data(), c.rows * sizeof(double)) == 0;
    std::printf("  %-36s %8.1f us %6.0f GB/s  regs %3d, local %zu, %d blocks/SM (%d B shared)%s\n", what, us,
                c.bytes / (us * 1e3), a.numRegs, a.localSizeBytes, per_sm, smem,
                !kExact ? "" : equal ? "  bits equal" : "  BITS DIFFER");
    std::fflush(stdout);
  };
  for (int pass = 0; pass < 2; ++pass) {
    c.time("library kernel, plain launch", library,
           [&] { library<<<grid, kThreads, library_shared>>>(c.x, c.p, 0, c.out, c.redo); }, kThreads, library_shared);
    run.template operator()<8, 2, 1, true, 2>("async 8 x 2, .ca");
    const auto frame = [&](const char* what, auto kernel) {
      constexpr int smem = 2 * 8 * kThreads * 16;
      CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      c.time(what, kernel, [&] { kernel<<<grid, kThreads, smem>>>(c.x, c.p, c.out, c.redo); }, kThreads, smem);
    };
    frame("library fold, probe frame", async_frame_rows<true, false, false>);
    frame("library fold, library start", async_frame_rows<true, true, false>);
    frame("library fold, library start + store", async_frame_rows<true, true, true>);
    frame("probe fold, probe frame", async_frame_rows<false, false, false>);
    frame("probe fold, library start", async_frame_rows<false, true, false>);
    frame("probe fold, library store", async_frame_rows<false, false, true>);
    run.template operator()<8, 2, 1, true>("async 8 x 2");
    run.template operator()<8, 2, 1, true, 1>("async 8 x 2, L2::256B");
    run.template operator()<8, 2, 1, true, 2>("async 8 x 2, .ca");
    run.template operator()<4, 3, 4, true>("async 4 x 3, 4/SM bound");
    run.template operator()<4, 2, 5, true>("async 4 x 2, 5/SM bound");
    run.template operator()<4, 4, 1, true>("async 4 x 4");
    run.template operator()<8, 2, 1, false>("plain: async 8 x 2");
    run.template operator()<8, 2, 1, false, 1>("plain: async 8 x 2, L2::256B");
    run.template operator()<8, 2, 1, false, 2>("plain: async 8 x 2, .ca");
  }
}

// The pipelined rows against the library's kernel, 8 loads a round (the library's) and 4.
void pipelined(const L2Flush& flush, int repeats, std::uint64_t rows, std::uint64_t cols) {
  Rows<double, op::sum> c(flush, repeats, rows, cols);
  using Sem = typename Rows<double, op::sum>::Sem;
  StagedRun run(c);
  const unsigned grid = static_cast<unsigned>(c.rows);
  constexpr auto library = reduceBlockRows<double, Sem>;
  const std::size_t library_shared = kBlockRowsShared<double, Sem>;  // the library's launch: double rows stage their rounds
  if (library_shared > 0) CK(cudaFuncSetAttribute(library, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(library_shared)));
  for (int pass = 0; pass < 2; ++pass) {
    c.time("library kernel, plain launch", library,
           [&] { library<<<grid, kThreads, library_shared>>>(c.x, c.p, 0, c.out, c.redo); }, kThreads, library_shared);
    run.pipelined<8, 1>("pipelined, 8 loads");
    run.pipelined<8, 3>("pipelined, 8 loads, 3/SM bound");
    run.pipelined<4, 1>("pipelined, 4 loads");
    run.pipelined<4, 5>("pipelined, 4 loads, 5/SM bound");
    const auto buffered = [&](const char* what, auto kernel) {
      c.time(what, kernel, [&] { kernel<<<grid, kThreads>>>(c.x, c.p, c.out, c.redo); });
    };
    buffered("two buffers of 4 loads, 3/SM", buffered_rows<4, 3>);
    buffered("two buffers of 4 loads, 4/SM", buffered_rows<4, 4>);
    buffered("two buffers of 2 loads, 5/SM", buffered_rows<2, 5>);
    buffered("two buffers of 8 loads, 2/SM", buffered_rows<8, 2>);
  }
}

// The staged rows against the library's kernel (and it bound to four blocks an SM).
void staged(const L2Flush& flush, int repeats, std::uint64_t rows, std::uint64_t cols) {
  Rows<double, op::sum> c(flush, repeats, rows, cols);
  using Sem = typename Rows<double, op::sum>::Sem;
  StagedRun run(c);
  const unsigned grid = static_cast<unsigned>(c.rows);
  constexpr auto library = reduceBlockRows<double, Sem>;
  const std::size_t library_shared = kBlockRowsShared<double, Sem>;  // the library's launch: double rows stage their rounds
  if (library_shared > 0) CK(cudaFuncSetAttribute(library, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(library_shared)));
  constexpr auto bound = block_rows_in<double, Sem, 8, 4>;
  for (int pass = 0; pass < 2; ++pass) {
    c.time("library kernel, plain launch", library,
           [&] { library<<<grid, kThreads, library_shared>>>(c.x, c.p, 0, c.out, c.redo); }, kThreads, library_shared);
    c.time("a block a row, 8 loads, 4 blocks/SM", bound, [&] { bound<<<grid, kThreads>>>(c.x, c.p, c.out, c.redo); });
    // the block's barrier after each stage
    run.barrier<256, 8, 3>("barrier, 256 thr, 32 KiB x 3");
    run.barrier<256, 4, 6>("barrier, 256 thr, 16 KiB x 6");
    run.barrier<256, 4, 4>("barrier, 256 thr, 16 KiB x 4");
    run.barrier<512, 4, 6>("barrier, 512 thr, 32 KiB x 6");
    run.barrier<512, 2, 10>("barrier, 512 thr, 16 KiB x 10");
    run.barrier<128, 8, 6>("barrier, 128 thr, 16 KiB x 6");
    // a producer warp and empty barriers
    run.warps<8, 8, 3>("warps, 8, 32 KiB x 3");
    run.warps<8, 4, 6>("warps, 8, 16 KiB x 6");
    run.warps<8, 4, 4>("warps, 8, 16 KiB x 4");
    run.warps<16, 4, 6>("warps, 16, 32 KiB x 6");
    run.warps<16, 2, 12>("warps, 16, 16 KiB x 12");
    run.warps<4, 8, 6>("warps, 4, 16 KiB x 6");
    run.warps<4, 8, 4>("warps, 4, 16 KiB x 4");
    run.warps<8, 8, 2>("warps, 8, 32 KiB x 2");
    run.warps<8, 8, 2, true>("warps, 8, 32 KiB x 2, static rows");
    run.warps<8, 8, 2, false, true>("warps, 8, 32 KiB x 2, last warp folds");
    run.warps<8, 8, 2, true, true>("warps, 8, 32 KiB x 2, static, last folds");
    run.warps<8, 4, 4, false, true>("warps, 8, 16 KiB x 4, last folds, 2/SM", 2);
    run.warps<8, 4, 2, false, true>("warps, 8, 16 KiB x 2, last folds, 3/SM", 3);
    run.warps<8, 4, 3, false, true>("warps, 8, 16 KiB x 3, last folds, 3/SM", 3);
    run.warps<4, 8, 2, false, true>("warps, 4, 16 KiB x 2, last folds, 4/SM", 4);
    // the reads alone (plain double sums)
    run.barrier<256, 8, 3, false>("plain: barrier, 256 thr, 32 KiB x 3");
    run.barrier<512, 4, 6, false>("plain: barrier, 512 thr, 32 KiB x 6");
    run.warps<8, 8, 2, false, true, false>("plain: warps, 8, 32 KiB x 2, last folds");
    run.warps<8, 4, 2, false, true, false>("plain: warps, 8, 16 KiB x 2, 4/SM", 4);
  }
}
}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 10;
  const char* only = argc > 2 ? argv[2] : "";
  const auto part = [&](const char* name) { return only[0] == 0 || std::strcmp(only, name) == 0; };
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s; long rows, cold, median of %d\n", prop.name, repeats);
  L2Flush flush(prop);
  if (part("counts")) {  // other counts of rows of 2^20: a block a row against a cluster of two
    for (const std::uint64_t rows : {132ull, 384ull, 512ull, 600ull}) {
      few<double, op::max, 16>(flush, repeats, rows, false);
      few<float, op::max, 16>(flush, repeats, rows, false);
    }
    few<int, op::max, 16>(flush, repeats, 384, false);
    few<reducelab::half, op::max, 8>(flush, repeats, 384, false);
  }
  if (part("few")) {
    few<double, op::max, 16>(flush, repeats);
    few<float, op::max, 16>(flush, repeats);
    few<int, op::max, 16>(flush, repeats);
    few<reducelab::half, op::max, 8>(flush, repeats);
    few<double, op::sum, 8>(flush, repeats);
    few<float, op::sum, 8>(flush, repeats);
    few<reducelab::half, op::sum, 8>(flush, repeats);
  }
  if (part("warps")) {
    warps<float>(flush, repeats, 16384);
    warps<float>(flush, repeats, 32768);
    warps<reducelab::half>(flush, repeats, 16384);
  }
  if (part("reads")) reads(flush, repeats);
  if (part("launches")) {
    launches<float, 4, true>(flush, repeats);
    launches<double, 8, false>(flush, repeats);
  }
  if (part("threads")) {
    threads<double, 8, false>(flush, repeats, 16384, 16384);
    threads<double, 8, false>(flush, repeats, 8192, 32768);
    threads<float, 4, true>(flush, repeats, 16384, 16384);
  }
  if (part("pipelined")) {
    pipelined(flush, repeats, 16384, 16384);
    pipelined(flush, repeats, 8192, 32768);
  }
  if (part("staged")) {
    staged(flush, repeats, 16384, 16384);
    staged(flush, repeats, 8192, 32768);
  }
  if (part("async")) {
    async_part(flush, repeats, 16384, 16384);
    async_part(flush, repeats, 8192, 32768);
  }
  if (part("staged-floats")) {
    staged_part<float>(flush, repeats, 16384, 16384);
    staged_part<float>(flush, repeats, 32768, 16384);
  }
  if (part("blocks")) {
    blocks<double>(flush, repeats, 16384, 16384);
    blocks<double>(flush, repeats, 8192, 32768);
  }
  return 0;
}
