// narrow_probe: exact sums along axis 0 of a dense matrix of 2, 4 or 8 columns, or of rows of two
// to 32 vectors (16 to 256 half columns, 8 and 16 float columns), read as one array
// (reduceNarrowColumns) with other loads in flight and occupancies, against the column kernel the
// library used before for them (reduceColumns, half columns two a lane as words, float columns a
// lane and two a lane) and against the
// max along the same axis, the exact sum of the whole array (reducelab::reduce) and a plain read of
// the bytes, on device 0, cold (behind an L2 flush), median of R; every variant's results compared
// bit for bit with reduce_axis's. Half columns have since moved to reduceHalfColumns
// (bench/colsum_probe): for them the reduce_axis line is that kernel, and the narrow variants keep
// a double chain and a pair a column (RunningFold<half>).
//   narrow_probe [repeats=10]
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "probe_timing.cuh"
#include "reducelab/reduce.hpp"
#include "reducelab/segments.hpp"
#include "segments/device_segments.cuh"

namespace {

using namespace reducelab;
using namespace reducelab::detail;

struct Bufs {
  void* partials = nullptr;
  unsigned* tickets = nullptr;
  unsigned long long* redo = nullptr;
  float* out = nullptr;
};

void report(const char* what, float us, double bytes, const std::vector<float>& want, const float* out, unsigned cols,
            int regs, std::size_t local, int per_sm, unsigned grid) {
  std::vector<float> got(cols);
  CK(cudaMemcpy(got.data(), out, cols * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("  %-34s %8.1f us %6.0f GB/s  regs %3d, local %zu, %d blocks/SM, grid %u%s\n", what, us, bytes / (us * 1e3),
              regs, local, per_sm, grid,
              std::memcmp(got.data(), want.data(), cols * sizeof(float)) == 0 ? "  bits equal" : "  BITS DIFFER");
  std::fflush(stdout);
}

template <class T, unsigned kCols, unsigned kIn, int kMin>
void narrow(const L2Flush& flush, int repeats, int sms, const T* x, std::uint64_t rows, const std::vector<float>& want,
            const Bufs& b) {
  using Sem = piece_semantics_t<T, op::sum>;
  auto k = reduceNarrowColumns<T, Sem, kCols, kIn, kMin>;
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, 256, 0));
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, k));
  const unsigned grid =
      static_cast<unsigned>(std::min<std::uint64_t>(std::uint64_t(per_sm) * sms, kNarrowBlocks<typename Sem::Acc, kCols>));
  CK(cudaMemset(b.out, 0xff, kCols * sizeof(float)));
  const float us = cold_us(flush, [&] {
    k<<<grid, 256>>>(x, rows, static_cast<typename Sem::Acc*>(b.partials), b.tickets, b.out);
  }, repeats);
  CK(cudaGetLastError());
  char what[64];
  std::snprintf(what, sizeof what, "narrow, %u loads, %d blocks/SM asked", kIn, kMin);
  report(what, us, double(rows) * kCols * sizeof(T), want, b.out, kCols, attr.numRegs, attr.localSizeBytes, per_sm, grid);
}

// The column kernel as the library launched it before (half: two columns a lane, as words).
template <class T>
void columns(const L2Flush& flush, int repeats, int sms, const T* x, std::uint64_t rows, unsigned cols,
             const std::vector<float>& want, const Bufs& b) {
  Pieces p;
  p.count = cols, p.step = 1, p.length = rows, p.stride = cols, p.elements = rows * cols;
  int per_sm = 0;
  cudaFuncAttributes attr;
  float us = 0;
  unsigned grid = 0;
  if constexpr (std::is_same_v<T, reducelab::half>) {
    using P = pair_columns_t<T, op::sum>;
    auto k = reduceColumns<std::uint32_t, P>;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, 256, 0));
    CK(cudaFuncGetAttributes(&attr, k));
    const std::uint64_t held = std::uint64_t(per_sm) * sms;
    const ColumnShape shape = column_shape<typename P::Acc>(column_vector_pieces(p, 2), held, held * kWarps);
    grid = static_cast<unsigned>(std::min<std::uint64_t>(held, column_blocks(shape)));
    us = cold_us(flush, [&] {
      k<<<grid, 256>>>(reinterpret_cast<const std::uint32_t*>(x), shape, static_cast<typename P::Acc*>(b.partials),
                       b.tickets, reinterpret_cast<typename P::Out*>(b.out), b.redo);
    }, repeats);
  } else {
    using Sem = piece_semantics_t<T, op::sum>;
    auto k = reduceColumns<T, Sem>;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, 256, 0));
    CK(cudaFuncGetAttributes(&attr, k));
    const std::uint64_t held = std::uint64_t(per_sm) * sms;
    const ColumnShape shape = column_shape<typename Sem::Acc>(p, held, held * kWarps);
    grid = static_cast<unsigned>(std::min<std::uint64_t>(held, column_blocks(shape)));
    us = cold_us(flush, [&] {
      k<<<grid, 256>>>(x, shape, static_cast<typename Sem::Acc*>(b.partials), b.tickets, b.out, b.redo);
    }, repeats);
  }
  CK(cudaGetLastError());
  report("column kernel (before)", us, double(rows) * cols * sizeof(T), want, b.out, cols, attr.numRegs,
         attr.localSizeBytes, per_sm, grid);
  if constexpr (std::is_same_v<T, float>) {  // two columns a lane (VecColumns), as the library took 8 and 16
    using V = VecColumns<T, piece_semantics_t<T, op::sum>>;
    if (cols % V::K == 0) {
      auto k = reduceColumns<typename V::Vec, V>;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, 256, 0));
      CK(cudaFuncGetAttributes(&attr, k));
      const std::uint64_t held = std::uint64_t(per_sm) * sms;
      const ColumnShape shape = column_shape<typename V::Acc>(column_vector_pieces(p, V::K), held, held * kWarps);
      grid = static_cast<unsigned>(std::min<std::uint64_t>(held, column_blocks(shape)));
      us = cold_us(flush, [&] {
        k<<<grid, 256>>>(reinterpret_cast<const typename V::Vec*>(x), shape, static_cast<typename V::Acc*>(b.partials),
                         b.tickets, reinterpret_cast<typename V::Out*>(b.out), b.redo);
      }, repeats);
      CK(cudaGetLastError());
      report("column kernel, vectors of columns", us, double(rows) * cols * sizeof(T), want, b.out, cols, attr.numRegs,
             attr.localSizeBytes, per_sm, grid);
    }
  }
}

template <class T, unsigned kCols>
void probe(const L2Flush& flush, int repeats, int sms, std::uint64_t rows, const char* name) {
  const std::uint64_t n = rows * kCols;
  std::vector<T> h(n);
  for (std::uint64_t i = 0; i < n; ++i) h[i] = probe_value<T>(i);
  T* x = nullptr;
  float* lib = nullptr;
  Bufs b;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&lib, 1024));
  CK(cudaMalloc(&b.out, 1024));
  CK(cudaMalloc(&b.partials, 1 << 20));
  CK(cudaMalloc(&b.tickets, 1 << 16));
  CK(cudaMalloc(&b.redo, 1 << 20));
  CK(cudaMemset(b.tickets, 0, 1 << 16));
  CK(cudaMemset(b.redo, 0, 1 << 20));
  CK(cudaMemcpy(x, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  const Matrix m{rows, kCols, 0};
  const float lib_us = cold_us(flush, [&] { check(reduce_axis(x, m, 0, op::sum{}, lib, nullptr, {})); }, repeats);
  const float max_us = cold_us(flush, [&] { check(reduce_axis(x, m, 0, op::max{}, reinterpret_cast<T*>(b.out), nullptr, {})); }, repeats);
  const float all_us = cold_us(flush, [&] { check(reduce(x, n, op::sum{}, b.out, nullptr, {})); }, repeats);
  const float read_us = cold_us(flush, [&] { read_units<4><<<sms * 8, 256>>>(reinterpret_cast<const int4*>(x), n * sizeof(T) / 16, reinterpret_cast<int*>(b.redo) + 1024); }, repeats);
  std::vector<float> want(kCols);
  CK(cudaMemcpy(want.data(), lib, kCols * sizeof(float), cudaMemcpyDeviceToHost));
  const double bytes = double(n) * sizeof(T);
  std::printf("%llu x %u %s: reduce_axis sum %.1f us (%.0f GB/s); max along axis 0 %.1f us; whole-array exact sum %.1f us; read %.1f us\n",
              static_cast<unsigned long long>(rows), kCols, name, lib_us, bytes / (lib_us * 1e3), max_us, all_us, read_us);
  columns<T>(flush, repeats, sms, x, rows, kCols, want, b);
  // The library's loads and blocks an SM first, then the other variants.
  constexpr unsigned kIn = kNarrowLoads<T, kCols>;
  constexpr int kMin = kNarrowBlocksPerSm<T, kCols>;
  narrow<T, kCols, kIn, kMin>(flush, repeats, sms, x, rows, want, b);
  if constexpr (kIn != 4 || kMin != 3) narrow<T, kCols, 4, 3>(flush, repeats, sms, x, rows, want, b);
  if constexpr (kIn != 8 || kMin != 2) narrow<T, kCols, 8, 2>(flush, repeats, sms, x, rows, want, b);
  narrow<T, kCols, 2, 4>(flush, repeats, sms, x, rows, want, b);
  if constexpr (kIn != 4 || kMin != 4) narrow<T, kCols, 4, 4>(flush, repeats, sms, x, rows, want, b);
  if constexpr (kIn != 8 || kMin != 3) narrow<T, kCols, 8, 3>(flush, repeats, sms, x, rows, want, b);
  CK(cudaFree(x));
  CK(cudaFree(lib));
  CK(cudaFree(b.out));
  CK(cudaFree(b.partials));
  CK(cudaFree(b.tickets));
  CK(cudaFree(b.redo));
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 10;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s; exact sums along axis 0 of 2, 4 and 8 dense columns, cold, median of %d\n", prop.name, repeats);
  L2Flush flush(prop);
  const int sms = prop.multiProcessorCount;
  probe<reducelab::half, 4>(flush, repeats, sms, std::uint64_t(1) << 26, "half");
  probe<reducelab::half, 2>(flush, repeats, sms, std::uint64_t(1) << 27, "half");
  probe<reducelab::half, 8>(flush, repeats, sms, std::uint64_t(1) << 25, "half");
  probe<float, 4>(flush, repeats, sms, std::uint64_t(1) << 26, "float");
  probe<float, 2>(flush, repeats, sms, std::uint64_t(1) << 27, "float");
  probe<reducelab::half, 16>(flush, repeats, sms, std::uint64_t(1) << 24, "half");
  probe<reducelab::half, 32>(flush, repeats, sms, std::uint64_t(1) << 23, "half");
  probe<float, 8>(flush, repeats, sms, std::uint64_t(1) << 25, "float");
  probe<float, 16>(flush, repeats, sms, std::uint64_t(1) << 24, "float");
  probe<reducelab::half, 64>(flush, repeats, sms, std::uint64_t(1) << 22, "half");
  probe<reducelab::half, 128>(flush, repeats, sms, std::uint64_t(1) << 21, "half");
  probe<reducelab::half, 256>(flush, repeats, sms, std::uint64_t(1) << 20, "half");
  return 0;
}
