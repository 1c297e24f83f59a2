// segwarp_probe: ragged segments of 1 to 4096 elements (every eighth empty, 2^26 elements in all,
// as `reducelab bench --segments uniform:1..4096:zeros`), which reduce_segments gives a warp each
// (reduceSegmentsWarpEach): the library's exact sums and maxima against CUB's segmented sum and
// against a warp-a-segment kernel with other folds (the running window with its pair, as the
// library had it; the library's fold now; doubles in two chains) and other loads in flight, on
// device 0, cold (behind an L2 flush), median of R; every variant's sums compared bit for bit
// with reduce_segments's. Floats twice: the probes' values and values in [-1, 1) (the bench's).
// Then 16384 rows of 16384 given as segments, and reduce_axis along them (a warp a row); then
// float, half and bfloat16 rows of 1024 to 16384 elements: reduce_axis against a warp a row.
// With `groups`: segments of 1 to 64 and 1 to 256 elements instead (every eighth empty, 2^26
// elements in all), each type's sums and maxima: reduce_segments against its two kernels launched
// by hand, the group kernel's next round loaded ahead or as it is folded (the library's), and for
// 1- and 2-byte types with the other count of vectors a lane a round.
//   segwarp_probe [repeats=10] [double: the double segments and rows only | groups | occupancy | links]
// With `occupancy`: the library's warp-a-segment kernel for uniform:1..4096 double sums and maxima,
// launched alone with its blocks an SM capped by dynamic shared memory. With `links`: what each
// launch after that kernel adds to the double sums (the library's kernels launched by hand).
#include <cuda_runtime.h>

#include <cub/device/device_segmented_reduce.cuh>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "probe_timing.cuh"
#include "reducelab/segments.hpp"
#include "segments/device_segments.cuh"

namespace {

using namespace reducelab;
using namespace reducelab::detail;

// Double pairs in two chains: even loads into one pair, odd into the other, joined at the end.
template <class Sem, unsigned kIn>
__device__ __forceinline__ typename Sem::Acc fold_two_chains(const double* x, std::uint64_t n, unsigned lanes,
                                                             unsigned lane) {
  using Acc = typename Sem::Acc;
  Acc a0 = Sem::identity(), a1 = Sem::identity();
  const std::uint64_t head = std::min<std::uint64_t>(n, (16 - misalignment16(x)) % 16 / sizeof(double));
  for (std::uint64_t e = lane; e < head; e += lanes) a1 = Sem::combine(a1, Sem::lift(x[e], 0));
  const double* body = x + head;
  const std::uint64_t vectors = (n - head) / 2;
  std::uint64_t k = lane;
  for (; k + (kIn - 1) * lanes < vectors; k += kIn * lanes) {
    Vec<double> v[kIn];
#pragma unroll
    for (unsigned u = 0; u < kIn; ++u) v[u] = load_vec(body, (k + u * lanes) * 2);
#pragma unroll
    for (unsigned u = 0; u < kIn; ++u) {
      if (u % 2 == 0) a0 = Sem::template absorb_run<2>(a0, v[u].v);
      else a1 = Sem::template absorb_run<2>(a1, v[u].v);
    }
  }
  for (; k < vectors; k += lanes) a0 = Sem::template absorb_run<2>(a0, load_vec(body, k * 2).v);
  for (std::uint64_t e = head + vectors * 2 + lane; e < n; e += lanes) a1 = Sem::combine(a1, Sem::lift(x[e], 0));
  return Sem::combine(a0, a1);
}

// 0: RunningFold (the library's fold before; doubles: two TwoSums an element); 1: the library's
// warp_fold_free (windows of a round settled into a pair; doubles: CutFold); 2: doubles in two
// chains; 3: warp_fold_free with the leftovers loaded together (reduceSegmentsWarpEach's); 4: the
// same with kIn loads a round.
template <class T, class Sem, unsigned kIn, int kFold>
__device__ __forceinline__ typename Sem::Acc fold_segment(const T* x, std::uint64_t n) {
  const unsigned lane = threadIdx.x % 32;
  if constexpr (kFold == 2 && std::is_same_v<T, double> && is_exact_pieces<Sem>::value) {
    return warp_fold<Sem>(fold_two_chains<Sem, kIn>(x, n, 32, lane));
  } else if constexpr (kFold == 1) {
    return warp_fold_free<T, Sem>(x, n);
  } else if constexpr (kFold == 3) {
    return warp_fold_free<T, Sem, true, kSegmentWarpLoads<T>>(x, n);
  } else if constexpr (kFold == 4) {
    return warp_fold<Sem>(lane_fold_free<T, Sem, kIn, true, true>(x, n, 32, lane));
  } else {
    RunningFold<T, Sem> run(contiguous_share<T>(n, 32));
    fold_contiguous<T, kIn>(run, x, n, 32, lane);
    return warp_fold<Sem>(run.result());
  }
}

// A warp a segment, blocks of kBlock threads (segments of at most a tile, as here).
template <class T, class Sem, unsigned kIn, int kFold, unsigned kBlock>
__global__ void __launch_bounds__(kBlock)
    seg_warps(const T* x, const std::int64_t* begin, const std::int64_t* end, std::uint64_t count,
              typename Sem::Out* out, unsigned long long* redo) {
  const std::uint64_t s = std::uint64_t(blockIdx.x) * (kBlock / 32) + threadIdx.x / 32;
  if (s >= count) return;
  const std::int64_t b = begin[s], e = end[s];
  const std::uint64_t len = e > b ? std::uint64_t(e - b) : 0;
  if (len == 0) {
    if (threadIdx.x % 32 == 0) store_piece<Sem>(out, s, Sem::identity(), 0, redo);
    return;
  }
  const typename Sem::Acc v = fold_segment<T, Sem, kIn, kFold>(x + b, len);
  if (threadIdx.x % 32 == 0) store_piece<Sem>(out, s, v, len, redo);
}

template <class T, class Op, unsigned kIn, int kFold, unsigned kBlock, class R>
void variant(const L2Flush& flush, int repeats, const T* x, const std::int64_t* begin, const std::int64_t* end,
             std::uint64_t count, double bytes, const std::vector<R>& want, R* out, unsigned long long* redo) {
  using Sem = piece_semantics_t<T, Op>;
  auto k = seg_warps<T, Sem, kIn, kFold, kBlock>;
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, kBlock, 0));
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, k));
  const unsigned grid = static_cast<unsigned>((count + kBlock / 32 - 1) / (kBlock / 32));
  CK(cudaMemset(out, 0xff, count * sizeof(R)));
  CK(cudaMemset(redo, 0, 16));
  const float us = cold_us(flush, [&] { k<<<grid, kBlock>>>(x, begin, end, count, out, redo); }, repeats);
  CK(cudaGetLastError());
  std::vector<R> got(count);
  CK(cudaMemcpy(got.data(), out, count * sizeof(R), cudaMemcpyDeviceToHost));
  unsigned long long lost = 0;
  CK(cudaMemcpy(&lost, redo, 8, cudaMemcpyDeviceToHost));
  std::printf("  %s fold %d, %u loads, blocks of %3u: %8.1f us %6.0f GB/s  regs %3d, local %zu, %2d blocks/SM%s%s\n",
              std::is_same_v<Op, op::sum> ? "sum" : "max", kFold, kFold == 3 ? kSegmentWarpLoads<T> : kIn, kBlock, us,
              bytes / (us * 1e3), attr.numRegs,
              attr.localSizeBytes, per_sm,
              std::memcmp(got.data(), want.data(), count * sizeof(R)) == 0 ? "  bits equal" : "  BITS DIFFER",
              lost ? "  (pairs lost)" : "");
  std::fflush(stdout);
}

// Block runs: a block of kBlock threads takes kBlock / 32 segments one after another with all its
// threads (a block a segment's reads); each warp folds its share of a segment into a shared slot
// without waiting; one barrier per batch, after which warp j folds segment j's slots and stores
// it. The slots are double-buffered (a warp writes batch k + 2's only after batch k + 1's barrier).
template <class T, class Sem, unsigned kBlock>
__global__ void __launch_bounds__(kBlock)
    seg_runs(const T* x, const std::int64_t* begin, const std::int64_t* end, std::uint64_t count,
             typename Sem::Out* out, unsigned long long* redo) {
  constexpr unsigned kW = kBlock / 32;
  using Acc = typename Sem::Acc;
  __shared__ Acc slots[2][kW][kW];
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned parity = 0;
  for (std::uint64_t first = std::uint64_t(blockIdx.x) * kW; first < count; first += std::uint64_t(gridDim.x) * kW) {
    const unsigned batch = static_cast<unsigned>(std::min<std::uint64_t>(kW, count - first));
    for (unsigned j = 0; j < batch; ++j) {
      const std::int64_t b = begin[first + j], e = end[first + j];
      const std::uint64_t len = e > b ? std::uint64_t(e - b) : 0;
      Acc a = Sem::identity();
      if (len != 0) a = warp_fold<Sem>(lane_fold_free<T, Sem, 4>(x + b, len, kBlock, threadIdx.x));
      if (lane == 0) slots[parity][j][warp] = a;
    }
    __syncthreads();
    if (warp < batch) {
      const std::int64_t b = begin[first + warp], e = end[first + warp];
      const Acc a = warp_fold<Sem>(lane < kW ? slots[parity][warp][lane] : Sem::identity());
      if (lane == 0) store_piece<Sem>(out, first + warp, a, e > b ? std::uint64_t(e - b) : 0, redo);
    }
    parity ^= 1;
  }
}

template <class T, class Op, unsigned kBlock, class R>
void runs_variant(const L2Flush& flush, int repeats, int sms, const T* x, const std::int64_t* begin, const std::int64_t* end,
                  std::uint64_t count, double bytes, const std::vector<R>& want, R* out, unsigned long long* redo) {
  using Sem = piece_semantics_t<T, Op>;
  auto k = seg_runs<T, Sem, kBlock>;
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, kBlock, 0));
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, k));
  for (const std::uint64_t grid : {std::uint64_t(per_sm) * sms, (count + kBlock / 32 - 1) / (kBlock / 32)}) {
    CK(cudaMemset(out, 0xff, count * sizeof(R)));
    CK(cudaMemset(redo, 0, 16));
    const float us = cold_us(flush, [&] { k<<<static_cast<unsigned>(grid), kBlock>>>(x, begin, end, count, out, redo); }, repeats);
    CK(cudaGetLastError());
    std::vector<R> got(count);
    CK(cudaMemcpy(got.data(), out, count * sizeof(R), cudaMemcpyDeviceToHost));
    std::printf("  %s block runs, blocks of %3u, grid %7llu: %8.1f us %6.0f GB/s  regs %3d, local %zu, %2d blocks/SM%s\n",
                std::is_same_v<Op, op::sum> ? "sum" : "max", kBlock, static_cast<unsigned long long>(grid), us,
                bytes / (us * 1e3), attr.numRegs, attr.localSizeBytes, per_sm,
                std::memcmp(got.data(), want.data(), count * sizeof(R)) == 0 ? "  bits equal" : "  BITS DIFFER");
    std::fflush(stdout);
  }
}

// A probe's input and offsets on the device, the library's results (lib), a variant's (out) and a
// redo list.
template <class T, class R>
struct DeviceSegments {
  T* x = nullptr;
  std::int64_t *begin = nullptr, *end = nullptr;
  R *lib = nullptr, *out = nullptr;
  unsigned long long* redo = nullptr;
  DeviceSegments(const std::vector<T>& h, const std::vector<std::int64_t>& hb, const std::vector<std::int64_t>& he) {
    const std::uint64_t count = hb.size();
    CK(cudaMalloc(&x, h.size() * sizeof(T)));
    CK(cudaMalloc(&begin, count * 8));
    CK(cudaMalloc(&end, count * 8));
    CK(cudaMalloc(&lib, count * sizeof(R)));
    CK(cudaMalloc(&out, count * sizeof(R)));
    CK(cudaMalloc(&redo, 1 << 20));
    CK(cudaMemset(redo, 0, 1 << 20));
    CK(cudaMemcpy(x, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(begin, hb.data(), count * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(end, he.data(), count * 8, cudaMemcpyHostToDevice));
  }
  DeviceSegments(const DeviceSegments&) = delete;
  DeviceSegments& operator=(const DeviceSegments&) = delete;
  ~DeviceSegments() {
    CK(cudaFree(x));
    CK(cudaFree(begin));
    CK(cudaFree(end));
    CK(cudaFree(lib));
    CK(cudaFree(out));
    CK(cudaFree(redo));
  }
};

template <class T>
void probe(const L2Flush& flush, int repeats, const std::vector<std::int64_t>& hb, const std::vector<std::int64_t>& he,
           const char* name, bool unit = false) {
  const std::uint64_t count = hb.size(), n = static_cast<std::uint64_t>(he.back());
  std::vector<T> h(n);
  // probe_value, or (unit) the bench's floats: uniform in [-1, 1), multiples of 2^-23.
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t r = (i + 1) * 0x9E3779B97F4A7C15ull;
    h[i] = unit ? static_cast<T>(static_cast<float>((r ^ (r >> 29)) >> 40) * 0x1p-23f - 1.0f) : probe_value<T>(i);
  }
  using R = result_t<T, op::sum>;
  const DeviceSegments<T, R> d(h, hb, he);
  T* const x = d.x;
  std::int64_t *const begin = d.begin, *const end = d.end;
  R *const lib = d.lib, *const out = d.out;
  unsigned long long* const redo = d.redo;
  T* maxima = nullptr;
  CK(cudaMalloc(&maxima, count * sizeof(T)));
  const double bytes = double(n) * sizeof(T) + 16.0 * count;
  const float sum_us = cold_us(flush, [&] { check(reduce_segments(x, count, begin, end, op::sum{}, lib, nullptr, {})); }, repeats);
  const float max_us = cold_us(flush, [&] { check(reduce_segments(x, count, begin, end, op::max{}, maxima, nullptr, {})); }, repeats);
  std::vector<R> want(count);
  CK(cudaMemcpy(want.data(), lib, count * sizeof(R), cudaMemcpyDeviceToHost));
  std::vector<T> want_max(count);
  CK(cudaMemcpy(want_max.data(), maxima, count * sizeof(T), cudaMemcpyDeviceToHost));
  std::printf("%s, %llu segments: reduce_segments sum %.1f us (%.0f GB/s), max %.1f us (%.0f GB/s)", name,
              static_cast<unsigned long long>(count), sum_us, bytes / (sum_us * 1e3), max_us, bytes / (max_us * 1e3));
  if constexpr (!std::is_same_v<T, reducelab::half>) {
    std::size_t temp_bytes = 0;
    CK(cub::DeviceSegmentedReduce::Sum(nullptr, temp_bytes, x, out, static_cast<int>(count), begin, end));
    void* temp = nullptr;
    CK(cudaMalloc(&temp, temp_bytes));
    const float cub_us = cold_us(flush, [&] {
      CK(cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, x, out, static_cast<int>(count), begin, end));
    }, repeats);
    std::printf(", CUB sum %.1f us", cub_us);
    CK(cudaFree(temp));
  }
  if (count == 16384 && n == count * count) {  // the rows along axis 1 (a warp a row: reduceWarpRows)
    const float axis_us = cold_us(flush, [&] { check(reduce_axis(x, Matrix{count, count, 0}, 1, op::sum{}, out, nullptr, {})); }, repeats);
    std::vector<R> got(count);
    CK(cudaMemcpy(got.data(), out, count * sizeof(R), cudaMemcpyDeviceToHost));
    std::printf(", reduce_axis sum %.1f us%s", axis_us,
                std::memcmp(got.data(), want.data(), count * sizeof(R)) == 0 ? " (bits equal)" : " (BITS DIFFER)");
  }
  std::printf("\n");
  bool short_only = true;
  for (std::uint64_t i = 0; i < count; ++i) short_only = short_only && he[i] - hb[i] <= std::int64_t(Shape<T>::kTile);
  if (short_only) {  // the library's kernel launched alone, without the redo kernel or PDL
    using Sem = piece_semantics_t<T, op::sum>;
    const unsigned grid = static_cast<unsigned>((count + 1) / 2);
    CK(cudaMemset(out, 0xff, count * sizeof(R)));
    const float us = cold_us(flush, [&] {
      reduceSegmentsWarpEach<T, Sem><<<grid, kSegmentWarpThreads>>>(x, 0, count, begin, end, out, redo, LongList{});
    }, repeats);
    CK(cudaGetLastError());
    std::vector<R> got(count);
    CK(cudaMemcpy(got.data(), out, count * sizeof(R), cudaMemcpyDeviceToHost));
    std::printf("  reduceSegmentsWarpEach alone:    %8.1f us %6.0f GB/s%s\n", us, bytes / (us * 1e3),
                std::memcmp(got.data(), want.data(), count * sizeof(R)) == 0 ? "  bits equal" : "  BITS DIFFER");
  }
  variant<T, op::sum, 4, 0, 64>(flush, repeats, x, begin, end, count, bytes, want, out, redo);
  if constexpr (std::is_same_v<T, double>) {
    variant<T, op::sum, 4, 1, 64>(flush, repeats, x, begin, end, count, bytes, want, out, redo);
    variant<T, op::sum, 4, 1, 128>(flush, repeats, x, begin, end, count, bytes, want, out, redo);
    variant<T, op::sum, 4, 2, 64>(flush, repeats, x, begin, end, count, bytes, want, out, redo);
  } else {
    variant<T, op::sum, 4, 1, 64>(flush, repeats, x, begin, end, count, bytes, want, out, redo);
  }
  variant<T, op::sum, 4, 3, 64>(flush, repeats, x, begin, end, count, bytes, want, out, redo);
  variant<T, op::max, 4, 0, 64>(flush, repeats, x, begin, end, count, bytes, want_max, maxima, redo);
  variant<T, op::max, 4, 1, 64>(flush, repeats, x, begin, end, count, bytes, want_max, maxima, redo);
  variant<T, op::max, 4, 3, 64>(flush, repeats, x, begin, end, count, bytes, want_max, maxima, redo);
  if constexpr (std::is_same_v<T, double>) {
    variant<T, op::sum, 5, 4, 64>(flush, repeats, x, begin, end, count, bytes, want, out, redo);
    variant<T, op::sum, 6, 4, 64>(flush, repeats, x, begin, end, count, bytes, want, out, redo);
    variant<T, op::sum, 8, 4, 64>(flush, repeats, x, begin, end, count, bytes, want, out, redo);
    variant<T, op::max, 6, 4, 64>(flush, repeats, x, begin, end, count, bytes, want_max, maxima, redo);
    variant<T, op::max, 8, 4, 64>(flush, repeats, x, begin, end, count, bytes, want_max, maxima, redo);
  }
  if constexpr (std::is_same_v<T, double>) {
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    runs_variant<T, op::sum, 256>(flush, repeats, sms, x, begin, end, count, bytes, want, out, redo);
    runs_variant<T, op::sum, 128>(flush, repeats, sms, x, begin, end, count, bytes, want, out, redo);
    runs_variant<T, op::max, 256>(flush, repeats, sms, x, begin, end, count, bytes, want_max, maxima, redo);
  }
  CK(cudaFree(maxima));
}

// Short ragged segments (reduceSegmentGroups, then reduceSegmentWarps, as reduce_segments launches
// them): the library's call against the two kernels launched by hand (without the programmatic
// overlap of the second and the redo launch), the group kernel's next round loaded ahead (kAhead)
// or as it is folded (the library's: fewer registers, more blocks an SM); bits compared with
// reduce_segments's.
template <class T, class Op, bool kAhead, unsigned kVectors = kGroupVectors<T, piece_semantics_t<T, Op>>>
void groups_variant(const L2Flush& flush, int repeats, int sms, const T* x, std::uint64_t count, const std::int64_t* begin,
                    const std::int64_t* end, double bytes, unsigned group, const void* want, void* out,
                    unsigned long long* redo) {
  using Sem = piece_semantics_t<T, Op>;
  using R = typename Sem::Out;
  constexpr auto kernel = reduceSegmentGroups<T, Sem, kAhead, kVectors>;
  constexpr auto warps = reduceSegmentWarps<T, Sem, kVectors>;
  int per_sm = 0, warps_per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&warps_per_sm, warps, kThreads, 0));
  const SegmentWarpsShape shape = segment_warps_shape(count, group, true);
  const unsigned grid = static_cast<unsigned>(std::min<std::uint64_t>(std::uint64_t(per_sm) * sms, shape.blocks));
  const unsigned warps_grid = static_cast<unsigned>(std::min<std::uint64_t>(std::uint64_t(warps_per_sm) * sms, shape.blocks));
  R* o = static_cast<R*>(out);
  CK(cudaMemset(o, 0xff, count * sizeof(R)));
  const float us = cold_us(flush, [&] {
    kernel<<<grid, kThreads>>>(x, count, group, begin, end, o, redo, LongList{});
    warps<<<warps_grid, kThreads>>>(x, count, group, begin, end, o, redo);
  }, repeats);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<R> got(count);
  CK(cudaMemcpy(got.data(), o, count * sizeof(R), cudaMemcpyDeviceToHost));
  cudaFuncAttributes a;
  CK(cudaFuncGetAttributes(&a, kernel));
  std::printf("  %s %s, %-18s %u vectors %8.1f us %6.0f GB/s  regs %3d, local %zu, %d blocks/SM%s\n",
              probe_type_name<T>(), op_name<Op>(), kAhead ? "next round ahead," : "round as folded,", kVectors, us,
              bytes / (us * 1e3), a.numRegs, a.localSizeBytes, per_sm,
              std::memcmp(got.data(), want, count * sizeof(R)) == 0 ? "  bits equal" : "  BITS DIFFER");
  std::fflush(stdout);
}

template <class T, class Op>
void groups_case(const L2Flush& flush, int repeats, int sms, const std::vector<std::int64_t>& hb,
                 const std::vector<std::int64_t>& he) {
  using R = result_t<T, Op>;
  const std::uint64_t count = hb.size(), n = static_cast<std::uint64_t>(he.back());
  std::vector<T> h(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T> && sizeof(T) < 4)  // probe_value's range does not fit
      h[i] = static_cast<T>(static_cast<int>((i * 0x9E3779B97F4A7C15ull) >> 58) - 32);
    else
      h[i] = probe_value<T>(i);
  }
  const DeviceSegments<T, R> d(h, hb, he);
  const T* x = d.x;
  const std::int64_t *begin = d.begin, *end = d.end;
  R *lib = d.lib, *out = d.out;
  unsigned long long* redo = d.redo;
  const double bytes = double(n) * sizeof(T) + 16.0 * count + double(count) * sizeof(R);
  // Both outputs start as the same bytes: the padding of an argmin/argmax result is not written.
  CK(cudaMemset(lib, 0xff, count * sizeof(R)));
  const float lib_us = cold_us(flush, [&] { check(reduce_segments(x, count, begin, end, Op{}, lib, nullptr, {})); }, repeats);
  std::vector<R> want(count);
  CK(cudaMemcpy(want.data(), lib, count * sizeof(R), cudaMemcpyDeviceToHost));
  int held = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&held, reduceSegmentGroups<T, piece_semantics_t<T, Op>>, kThreads, 0));
  const unsigned group = segment_group_size(count, std::uint64_t(held) * sms * kWarps);
  std::printf("%s %s, %llu segments of %llu elements, groups of %u: reduce_segments %.1f us (%.0f GB/s)\n",
              probe_type_name<T>(), op_name<Op>(), static_cast<unsigned long long>(count),
              static_cast<unsigned long long>(n), group, lib_us, bytes / (lib_us * 1e3));
  for (int pass = 0; pass < 2; ++pass) {
    groups_variant<T, Op, true>(flush, repeats, sms, x, count, begin, end, bytes, group, want.data(), out, redo);
    groups_variant<T, Op, false>(flush, repeats, sms, x, count, begin, end, bytes, group, want.data(), out, redo);
    // 1- and 2-byte types: the other count of vectors a lane a round (four against the library's
    // one or two, two against the half sums' four)
    constexpr unsigned kLibrary = kGroupVectors<T, piece_semantics_t<T, Op>>;
    if constexpr (sizeof(T) <= 2)
      groups_variant<T, Op, false, kLibrary == 4 ? 2 : 4>(flush, repeats, sms, x, count, begin, end, bytes, group,
                                                          want.data(), out, redo);
  }
}

// The offsets of segments of 1 to `most` elements, every eighth empty, 2^26 elements in all (the
// lengths of `reducelab bench --segments uniform:1..most:zeros`, drawn by another generator).
void uniform_segments(std::int64_t most, std::vector<std::int64_t>* b, std::vector<std::int64_t>* e) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<std::int64_t> d(1, most);
  for (std::int64_t at = 0; at < (std::int64_t(1) << 26);) {
    const std::int64_t len = b->size() % 8 == 7 ? 0 : std::min<std::int64_t>(d(rng), (std::int64_t(1) << 26) - at);
    b->push_back(at);
    at += len;
    e->push_back(at);
  }
}

// Segments of 1 to `most` elements (uniform_segments), each type's sums and maxima, and the
// operations whose group kernels spill a little.
void groups(const L2Flush& flush, int repeats, int sms, std::int64_t most) {
  std::vector<std::int64_t> b, e;
  uniform_segments(most, &b, &e);
  std::printf("segments uniform:1..%lld:zeros\n", static_cast<long long>(most));
  groups_case<int, op::max>(flush, repeats, sms, b, e);
  groups_case<int, op::sum>(flush, repeats, sms, b, e);
  groups_case<float, op::max>(flush, repeats, sms, b, e);
  groups_case<float, op::sum>(flush, repeats, sms, b, e);
  groups_case<double, op::max>(flush, repeats, sms, b, e);
  groups_case<double, op::sum>(flush, repeats, sms, b, e);
  groups_case<reducelab::half, op::max>(flush, repeats, sms, b, e);
  groups_case<reducelab::half, op::sum>(flush, repeats, sms, b, e);
  // operations whose kernels spill a few bytes when each round is loaded as it is folded
  groups_case<float, op::argmax>(flush, repeats, sms, b, e);
  groups_case<short, op::argmax>(flush, repeats, sms, b, e);
  groups_case<reducelab::half, op::argmin>(flush, repeats, sms, b, e);
  groups_case<signed char, op::mean>(flush, repeats, sms, b, e);
  groups_case<unsigned, op::mean>(flush, repeats, sms, b, e);
  // 1- and 2-byte integers
  groups_case<signed char, op::sum>(flush, repeats, sms, b, e);
  groups_case<signed char, op::max>(flush, repeats, sms, b, e);
  groups_case<unsigned char, op::max>(flush, repeats, sms, b, e);
  groups_case<short, op::sum>(flush, repeats, sms, b, e);
  groups_case<short, op::max>(flush, repeats, sms, b, e);
}

// The library's warp-a-segment kernel for double sums and maxima, launched alone with dynamic
// shared memory that caps its blocks an SM: how its time moves with the warps an SM holds.
template <class Op>
void occupancy_case(const L2Flush& flush, int repeats, const std::vector<std::int64_t>& hb, const std::vector<std::int64_t>& he) {
  using Sem = piece_semantics_t<double, Op>;
  using R = typename Sem::Out;
  const std::uint64_t count = hb.size(), n = static_cast<std::uint64_t>(he.back());
  std::vector<double> h(n);
  for (std::uint64_t i = 0; i < n; ++i) h[i] = probe_value<double>(i);
  const DeviceSegments<double, R> d(h, hb, he);
  const double bytes = double(n) * sizeof(double) + 16.0 * count;
  const float lib_us = cold_us(flush, [&] { check(reduce_segments(d.x, count, d.begin, d.end, Op{}, d.lib, nullptr, {})); }, repeats);
  std::vector<R> want(count), got(count);
  CK(cudaMemcpy(want.data(), d.lib, count * sizeof(R), cudaMemcpyDeviceToHost));
  constexpr auto kernel = reduceSegmentsWarpEach<double, Sem>;
  cudaFuncAttributes a;
  CK(cudaFuncGetAttributes(&a, kernel));
  std::printf("double %s, %llu segments: reduce_segments %.1f us; reduceSegmentsWarpEach regs %d, local %zu\n",
              op_name<Op>(), static_cast<unsigned long long>(count), lib_us, a.numRegs, a.localSizeBytes);
  const unsigned grid = static_cast<unsigned>((count + 1) / 2);
  for (const int cap : {32, 24, 21, 18, 16, 14, 12, 10}) {
    std::size_t smem = 0;
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kSegmentWarpThreads, 0));
    if (per_sm > cap) {
      for (smem = 1024; smem <= 48 * 1024; smem += 256) {
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kSegmentWarpThreads, smem));
        if (per_sm <= cap) break;
      }
    }
    CK(cudaMemset(d.out, 0xff, count * sizeof(R)));
    const float us = cold_us(flush, [&] {
      kernel<<<grid, kSegmentWarpThreads, smem>>>(d.x, 0, count, d.begin, d.end, d.out, d.redo, LongList{});
    }, repeats);
    CK(cudaGetLastError());
    CK(cudaMemcpy(got.data(), d.out, count * sizeof(R), cudaMemcpyDeviceToHost));
    std::printf("  at most %2d blocks an SM (%2d held, %5zu bytes shared): %8.1f us %6.0f GB/s%s\n", cap, per_sm, smem, us,
                bytes / (us * 1e3), std::memcmp(got.data(), want.data(), count * sizeof(R)) == 0 ? "  bits equal" : "  BITS DIFFER");
    std::fflush(stdout);
  }
}

// A warp a segment as reduceSegmentsWarpEach (six loads a lane for doubles), but the last `tail`
// segments a block of two warps each, so that the segments the GPU starts last end sooner.
template <class Sem>
__global__ void __launch_bounds__(kSegmentWarpThreads)
    seg_tail(const double* x, const std::int64_t* begin, const std::int64_t* end, std::uint64_t count,
             std::uint64_t tail, typename Sem::Out* out, unsigned long long* redo) {
  using Acc = typename Sem::Acc;
  constexpr unsigned kW = kSegmentWarpThreads / 32;
  __shared__ Acc slot_storage[kW];
  const std::uint64_t warped = count - tail, head_blocks = (warped + kW - 1) / kW;
  if (blockIdx.x < head_blocks) {
    const std::uint64_t s = std::uint64_t(blockIdx.x) * kW + threadIdx.x / 32;
    if (s >= warped) return;
    const std::uint64_t len = segment_length(begin[s], end[s]);
    const Acc v = len == 0 ? Sem::identity() : warp_fold_free<double, Sem, true, kSegmentWarpLoads<double>>(x + begin[s], len);
    if (threadIdx.x % 32 == 0) store_piece<Sem>(out, s, v, len, redo);
    return;
  }
  const std::uint64_t s = warped + (blockIdx.x - head_blocks);
  const std::uint64_t len = segment_length(begin[s], end[s]);
  Acc v = Sem::identity();
  if (len != 0) v = lane_fold_free<double, Sem, kSegmentWarpLoads<double>, true, true>(x + begin[s], len, kSegmentWarpThreads, threadIdx.x);
  v = block_fold<Sem, kW>(v, slot_storage);
  if (threadIdx.x == 0) store_piece<Sem>(out, s, v, len, redo);
}

// What each launch after the warp-a-segment kernel adds to uniform:1..4096 double sums: the
// library's kernels launched by hand, each for programmatic dependent launch as the library does
// (launch_kernel), in growing chains, against the kernel alone with <<<>>> and reduce_segments.
void links(const L2Flush& flush, int repeats, int sms, const std::vector<std::int64_t>& hb, const std::vector<std::int64_t>& he) {
  using Sem = piece_semantics_t<double, op::sum>;
  using R = typename Sem::Out;
  const std::uint64_t count = hb.size(), n = static_cast<std::uint64_t>(he.back());
  std::vector<double> h(n);
  for (std::uint64_t i = 0; i < n; ++i) h[i] = probe_value<double>(i);
  const DeviceSegments<double, R> d(h, hb, he);
  unsigned* counters = nullptr;
  unsigned long long* slots = nullptr;
  CK(cudaMalloc(&counters, 2 * sizeof(unsigned)));
  CK(cudaMemset(counters, 0, 2 * sizeof(unsigned)));
  CK(cudaMalloc(&slots, kLongSlots * sizeof(unsigned long long)));
  const LongList longs{counters, slots};
  Pieces pieces;
  pieces.count = count;
  pieces.offsets = true;
  pieces.skip_short = true;
  std::printf("double sum, %llu segments (links after the warp-a-segment kernel)\n", static_cast<unsigned long long>(count));
  check(reduce_segments(d.x, count, d.begin, d.end, op::sum{}, d.lib, nullptr, {}));
  std::vector<R> want(count), got(count);
  CK(cudaMemcpy(want.data(), d.lib, count * sizeof(R), cudaMemcpyDeviceToHost));
  const SegmentWarpsShape shape = segment_warps_shape(count, 1, false);
  int long_per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&long_per_sm, reduceLongPieces<double, Sem>, kThreads, 0));
  const unsigned long_grid = static_cast<unsigned>(long_per_sm * sms), redo_grid = static_cast<unsigned>(std::min<std::uint64_t>(count, 2 * std::uint64_t(sms)));
  const auto each = [&](bool pdl) {
    if (pdl) CK(launch_kernel_sized(reduceSegmentsWarpEach<double, Sem>, shape.grid, shape.threads, 1u, nullptr, d.x, 0,
                                    count, d.begin, d.end, d.out, d.redo, longs));
    else reduceSegmentsWarpEach<double, Sem><<<shape.grid, shape.threads>>>(d.x, 0, count, d.begin, d.end, d.out, d.redo, longs);
  };
  const auto longp = [&](unsigned grid) {
    CK(launch_kernel(reduceLongPieces<double, Sem>, grid, nullptr, d.x, pieces, d.begin, d.end, d.out, d.redo, longs));
  };
  const auto redop = [&](unsigned grid) {
    CK(launch_kernel(reduceRedoPieces<double, R, false>, grid, nullptr, d.x, pieces, d.begin, d.end, d.redo, d.out));
  };
  const auto row = [&](const char* what, const std::function<void()>& f) {
    CK(cudaMemset(d.out, 0xff, count * sizeof(R)));
    const float us = cold_us(flush, f, repeats);
    CK(cudaGetLastError());
    CK(cudaMemcpy(got.data(), d.out, count * sizeof(R), cudaMemcpyDeviceToHost));
    std::printf("  %-58s %8.1f us%s\n", what, us,
                std::memcmp(got.data(), want.data(), count * sizeof(R)) == 0 ? "  bits equal" : "  BITS DIFFER");
    std::fflush(stdout);
  };
  for (int pass = 0; pass < 2; ++pass) {
    row("reduceSegmentsWarpEach <<<>>>", [&] { each(false); });
    row("reduceSegmentsWarpEach (PDL)", [&] { each(true); });
    row("  + reduceLongPieces (blocks held)", [&] { each(true), longp(long_grid); });
    row("  + reduceLongPieces (one block an SM)", [&] { each(true), longp(static_cast<unsigned>(sms)); });
    row("  + reduceLongPieces (one block)", [&] { each(true), longp(1); });
    row("  + reduceRedoPieces (2 blocks an SM)", [&] { each(true), redop(redo_grid); });
    row("  + reduceLongPieces (blocks held) + reduceRedoPieces", [&] { each(true), longp(long_grid), redop(redo_grid); });
    row("  + reduceLongPieces (one block) + reduceRedoPieces (one block)", [&] { each(true), longp(1), redop(1); });
    row("reduce_segments", [&] { check(reduce_segments(d.x, count, d.begin, d.end, op::sum{}, d.out, nullptr, {})); });
    for (const std::uint64_t tail : {0, 1056, 2112, 4224, 8448}) {
      const unsigned grid = static_cast<unsigned>((count - tail + 1) / 2 + tail);
      char what[96];
      std::snprintf(what, sizeof what, "the last %llu segments a block of two warps each (<<<>>>)", static_cast<unsigned long long>(tail));
      row(what, [&] { seg_tail<Sem><<<grid, kSegmentWarpThreads>>>(d.x, d.begin, d.end, count, tail, d.out, d.redo); });
    }
  }
  CK(cudaFree(counters));
  CK(cudaFree(slots));
}

// Rows along axis 1: reduce_axis (rows of up to 8192 float, half or bfloat16 elements: a few
// lanes or a warp a row in reduceRowGroups) against reduceWarpRows launched directly (a warp a
// row, warp_fold_free), bits compared.
template <class T>
void rows(const L2Flush& flush, int repeats, int sms, std::uint64_t rows, std::uint64_t cols, const char* name) {
  using R = result_t<T, op::sum>;
  using Sem = piece_semantics_t<T, op::sum>;
  const std::uint64_t n = rows * cols;
  std::vector<T> h(n);
  for (std::uint64_t i = 0; i < n; ++i) h[i] = probe_value<T>(i);
  T* x = nullptr;
  R *lib = nullptr, *out = nullptr;
  unsigned long long* redo = nullptr;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&lib, rows * sizeof(R)));
  CK(cudaMalloc(&out, rows * sizeof(R)));
  CK(cudaMalloc(&redo, 1 << 20));
  CK(cudaMemset(redo, 0, 1 << 20));
  CK(cudaMemcpy(x, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  const Matrix m{rows, cols, 0};
  const double bytes = double(n) * sizeof(T);
  const float sum_us = cold_us(flush, [&] { check(reduce_axis(x, m, 1, op::sum{}, lib, nullptr, {})); }, repeats);
  const float max_us = cold_us(flush, [&] { check(reduce_axis(x, m, 1, op::max{}, reinterpret_cast<T*>(out), nullptr, {})); }, repeats);
  std::vector<R> want(rows), got(rows);
  CK(cudaMemcpy(want.data(), lib, rows * sizeof(R), cudaMemcpyDeviceToHost));
  Pieces p;
  check(matrix_pieces(x, m, 1, out, &p));
  auto k = reduceWarpRows<T, Sem>;
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, kThreads, 0));
  const unsigned grid = static_cast<unsigned>((rows + kWarps - 1) / kWarps);  // a warp each, as the library launches it
  CK(cudaMemset(out, 0xff, rows * sizeof(R)));
  const float warp_us = cold_us(flush, [&] { k<<<grid, kThreads>>>(x, p, 0, out, redo); }, repeats);
  CK(cudaGetLastError());
  CK(cudaMemcpy(got.data(), out, rows * sizeof(R), cudaMemcpyDeviceToHost));
  std::printf("%llu x %llu %s: reduce_axis sum %.1f us (%.0f GB/s), max %.1f us; a warp a row (reduceWarpRows, %d blocks/SM) %.1f us (%.0f GB/s)%s\n",
              static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols), name, sum_us,
              bytes / (sum_us * 1e3), max_us, per_sm, warp_us, bytes / (warp_us * 1e3),
              std::memcmp(got.data(), want.data(), rows * sizeof(R)) == 0 ? "  bits equal" : "  BITS DIFFER");
  std::fflush(stdout);
  CK(cudaFree(x));
  CK(cudaFree(lib));
  CK(cudaFree(out));
  CK(cudaFree(redo));
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 10;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s; ragged segments, cold, median of %d\n", prop.name, repeats);
  L2Flush flush(prop);
  if (argc > 2 && std::strcmp(argv[2], "links") == 0) {  // what each launch after the warp-a-segment kernel adds
    std::vector<std::int64_t> b, e;
    uniform_segments(4096, &b, &e);
    links(flush, repeats, prop.multiProcessorCount, b, e);
    return 0;
  }
  if (argc > 2 && std::strcmp(argv[2], "occupancy") == 0) {  // the warp-a-segment kernel, blocks an SM capped
    std::vector<std::int64_t> b, e;
    uniform_segments(4096, &b, &e);
    occupancy_case<op::sum>(flush, repeats, b, e);
    occupancy_case<op::max>(flush, repeats, b, e);
    return 0;
  }
  if (argc > 2 && std::strcmp(argv[2], "groups") == 0) {  // short segments only
    groups(flush, repeats, prop.multiProcessorCount, 64);
    groups(flush, repeats, prop.multiProcessorCount, 256);
    return 0;
  }
  std::printf("segments uniform:1..4096:zeros\n");
  std::vector<std::int64_t> b, e;
  uniform_segments(4096, &b, &e);
  const bool doubles_only = argc > 2 && std::strcmp(argv[2], "double") == 0;
  if (!doubles_only) {
    probe<float>(flush, repeats, b, e, "float");
    probe<float>(flush, repeats, b, e, "float in [-1, 1)", true);
  }
  probe<double>(flush, repeats, b, e, "double");
  if (!doubles_only) probe<reducelab::half>(flush, repeats, b, e, "half");
  // 16384 rows of 16384 as segments (reduce_axis's reduceWarpRows takes such double rows a warp each).
  b.clear(), e.clear();
  for (std::int64_t r = 0; r < 16384; ++r) b.push_back(r * 16384), e.push_back((r + 1) * 16384);
  std::printf("16384 x 16384 rows as segments\n");
  if (!doubles_only) probe<float>(flush, repeats, b, e, "float in [-1, 1)", true);
  probe<double>(flush, repeats, b, e, "double");
  if (doubles_only) return 0;
  for (const std::uint64_t cols : {1024, 2048, 4096, 8192, 16384}) {
    rows<float>(flush, repeats, prop.multiProcessorCount, (std::uint64_t(1) << 28) / cols, cols, "float");
    rows<reducelab::half>(flush, repeats, prop.multiProcessorCount, (std::uint64_t(1) << 28) / cols, cols, "half");
    rows<reducelab::bfloat16>(flush, repeats, prop.multiProcessorCount, (std::uint64_t(1) << 28) / cols, cols, "bfloat16");
  }
  return 0;
}
