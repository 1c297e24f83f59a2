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
//   split_probe [repeats=10] [few|counts|warps|blocks|threads|launches|reads: only that part]
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
void print_kernel(K k, unsigned threads = kThreads) {
  cudaFuncAttributes a;
  CK(cudaFuncGetAttributes(&a, k));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, 0));
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
  void time(const char* what, K kernel, Launch launch, unsigned threads = kThreads) {
    CK(cudaMemset(out, 0xff, rows * sizeof(R)));
    const float us = cold_us(flush, launch, repeats);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<R> got(rows);
    CK(cudaMemcpy(got.data(), out, rows * sizeof(R), cudaMemcpyDeviceToHost));
    std::printf("  %-36s %8.1f us %6.0f GB/s", what, us, bytes / (us * 1e3));
    print_kernel(kernel, threads);
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
  for (int pass = 0; pass < 2; ++pass) {
    c.time("library kernel, plain launch", library,
           [&] { library<<<grid, kThreads>>>(c.x, c.p, 0, c.out, c.redo); });
    c.time("library kernel, overlapped launch", library,
           [&] { CK(launch_kernel(library, grid, nullptr, static_cast<const T*>(c.x), c.p, std::uint64_t(0), c.out, c.redo)); });
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
  if (part("blocks")) {
    blocks<double>(flush, repeats, 16384, 16384);
    blocks<double>(flush, repeats, 8192, 32768);
  }
  return 0;
}
