// rows_probe: reduceRowGroups (src/segments/agent_rows.cuh) with other lanes per row than
// plan_pieces gives it, beside the library's reduce_axis, on device 0. Each call is timed cold
// (behind an L2 flush, median of R) and its output compared bit for bit with reduce_axis's.
//   rows_probe [repeats=10] [16: rows of 16 elements (2^24 of them), of 256, and of 32 to 128;
//                            half: half maxima of rows of 32 to 512, reduceFreeRows two or four
//                            vectors a lane]
// Rows of 256 and of 64 elements (2^28 elements in all; 2^27 for double), the max of int32, float,
// half and double and the int32 sum, lanes from 1 to 32. "lib" is reduce_axis as shipped; the
// lanes it picks are printed beside it.
#include <cuda_runtime.h>

#include <algorithm>
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

// Rows of whole vectors a few lanes each with every load of a step issued first, as
// reduceCutRows reads (kLanes lanes a row, kPer vectors a lane, 4 / kPer rows a lane a step),
// folded with the operation's own steps and a shuffle tree of the row's lanes.
template <class T, class Sem, unsigned kLanes, unsigned kPer>
__global__ void __launch_bounds__(256, 4)
    free_rows(const T* input, std::uint64_t count, std::uint64_t length, typename Sem::Out* output,
              unsigned long long* redo) {
  constexpr unsigned kVec = Shape<T>::kVec;
  constexpr unsigned kRows = kPer < 4 ? 4 / kPer : 1;
  constexpr unsigned kLoads = kRows * kPer;
  constexpr std::uint64_t kRowsPerWarp = 32 / kLanes, kRowsPerStep = kRowsPerWarp * kRows;
  const unsigned lane = threadIdx.x % 32, sub = lane % kLanes;
  const std::uint64_t vectors = length / kVec;
  const std::uint64_t warp = std::uint64_t(blockIdx.x) * 8 + threadIdx.x / 32;
  const std::uint64_t warps = std::uint64_t(gridDim.x) * 8;
  for (std::uint64_t base = warp * kRowsPerStep; base < count; base += warps * kRowsPerStep) {
    const std::uint64_t first = base + lane / kLanes;
    Vec<T> v[kLoads];
#pragma unroll
    for (unsigned q = 0; q < kLoads; ++q) {
      const std::uint64_t r = first + (q / kPer) * kRowsPerWarp, k = sub + std::uint64_t(q % kPer) * kLanes;
      if (r < count && k < vectors) v[q] = load_vec(input + r * length, k * kVec);
    }
#pragma unroll
    for (unsigned i = 0; i < kRows; ++i) {
      const std::uint64_t r = first + i * kRowsPerWarp;
      typename Sem::Inner in = Sem::inner_identity();
#pragma unroll
      for (unsigned q = 0; q < kPer; ++q) {
        const std::uint64_t k = sub + std::uint64_t(q) * kLanes;
        if (r < count && k < vectors)
#pragma unroll
          for (unsigned j = 0; j < kVec; ++j) in = Sem::inner_combine(in, Sem::lift(v[i * kPer + q].v[j], k * kVec + j));
      }
      typename Sem::Acc a = Sem::absorb(Sem::identity(), in);
#pragma unroll
      for (unsigned offset = kLanes / 2; offset > 0; offset >>= 1) a = Sem::combine(a, shuffle_down(a, offset));
      if (sub == 0 && r < count) store_piece<Sem>(output, r, a, length, redo);
    }
  }
}

template <class T, class Op, unsigned kLanes, unsigned kPer>
void free_rows_variant(const L2Flush& flush, const T* x, std::uint64_t rows, std::uint64_t cols, int repeats,
                       const std::vector<result_t<T, Op>>& want, result_t<T, Op>* out, unsigned long long* redo) {
  using Sem = piece_semantics_t<T, Op>;
  using R = result_t<T, Op>;
  auto k = free_rows<T, Sem, kLanes, kPer>;
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, k));
  constexpr std::uint64_t per_block = 8 * (32 / kLanes) * (kPer < 4 ? 4 / kPer : 1);
  const unsigned grid = static_cast<unsigned>((rows + per_block - 1) / per_block);
  CK(cudaMemset(out, 0xff, rows * sizeof(R)));
  const float us = cold_us(flush, [&] { k<<<grid, 256>>>(x, rows, cols, out, redo); }, repeats);
  CK(cudaGetLastError());
  std::vector<R> got(rows);
  CK(cudaMemcpy(got.data(), out, rows * sizeof(R), cudaMemcpyDeviceToHost));
  std::printf("  free rows %u lanes x %u vectors: %.1f us (regs %d)%s", kLanes, kPer, us, attr.numRegs,
              std::memcmp(got.data(), want.data(), rows * sizeof(R)) == 0 ? "" : " (BAD)");
}

// The library's reduceFreeRows with `lanes` lanes a row and kPer vectors a lane.
template <class T, class Op, unsigned kPer>
void lib_free_rows_variant(const L2Flush& flush, const T* x, const Pieces& p, unsigned lanes, int repeats,
                           const std::vector<result_t<T, Op>>& want, result_t<T, Op>* out, unsigned long long* redo) {
  using Sem = piece_semantics_t<T, Op>;
  using R = result_t<T, Op>;
  auto k = reduceFreeRows<T, Sem, kPer>;
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, k));
  const FreeRows shape{lanes, kPer};
  const unsigned grid = static_cast<unsigned>((p.count + free_rows_per_block(shape) - 1) / free_rows_per_block(shape));
  CK(cudaMemset(out, 0xff, p.count * sizeof(R)));
  const float us = cold_us(flush, [&] { k<<<grid, kThreads>>>(x, p, lanes, out, redo); }, repeats);
  CK(cudaGetLastError());
  std::vector<R> got(p.count);
  CK(cudaMemcpy(got.data(), out, p.count * sizeof(R), cudaMemcpyDeviceToHost));
  std::printf("  reduceFreeRows %u lanes x %u vectors: %.1f us (regs %d)%s", lanes, kPer, us, attr.numRegs,
              std::memcmp(got.data(), want.data(), p.count * sizeof(R)) == 0 ? "" : " (BAD)");
}

template <class T, class Op>
void probe(const L2Flush& flush, std::uint64_t rows, std::uint64_t cols, int repeats) {
  using Sem = piece_semantics_t<T, Op>;
  using R = result_t<T, Op>;
  const Matrix m{rows, cols, 0};
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
  const float lib_us = cold_us(flush, [&] { check(reduce_axis(x, m, 1, Op{}, lib, nullptr, {})); }, repeats);
  Pieces p;
  check(matrix_pieces(x, m, 1, lib, &p));
  Pieces planned = p;
  const PiecePlan plan = plan_pieces<T, Sem>(&planned);
  int device = 0, sms = 0;
  check(current_sm_count(&device, &sms));
  std::uint64_t held = 0;
  check(blocks_held<reduceRowGroups<T, Sem>>(device, sms, &held));
  std::printf("%-6s %-3s %7llu x %-4llu lib %7.1f us (lanes %u, %s)", probe_type_name<T>(), std::is_same_v<Op, op::max> ? "max" : std::is_same_v<Op, op::min> ? "min" : "sum",
              static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols), lib_us, plan.lanes,
              free_rows_shape<T, Sem>(x, p).lanes != 0 ? "free rows" : plan.row_groups ? "row groups" : "another kernel");
  std::vector<R> want(rows), got(rows);
  CK(cudaMemcpy(want.data(), lib, rows * sizeof(R), cudaMemcpyDeviceToHost));
  const std::uint64_t vectors = (cols + Shape<T>::kVec - 1) / Shape<T>::kVec;
  for (unsigned lanes = 1; lanes <= 32; lanes *= 2) {
    if (lanes > vectors) break;
    const unsigned grid = pieces_grid({}, held, row_groups_blocks(lanes, rows));
    const unsigned load = row_load_bytes<T>(x, p);
    CK(cudaMemset(out, 0xff, rows * sizeof(R)));
    const float us = cold_us(flush, [&] { reduceRowGroups<T, Sem><<<grid, kThreads>>>(x, p, lanes, load, out, redo); }, repeats);
    CK(cudaGetLastError());
    CK(cudaMemcpy(got.data(), out, rows * sizeof(R), cudaMemcpyDeviceToHost));
    const bool same = std::memcmp(got.data(), want.data(), rows * sizeof(R)) == 0;
    std::printf("  %u:%.1f%s", lanes, us, same ? "" : "(BAD)");
  }
  if (cols % Shape<T>::kVec == 0 && sizeof(T) == 2 && vectors >= 4) {  // 16-bit minima and maxima as words
    std::printf("\n");
    lib_free_rows_variant<T, Op, 2>(flush, x, p, static_cast<unsigned>(vectors / 2), repeats, want, out, redo);
    lib_free_rows_variant<T, Op, 4>(flush, x, p, static_cast<unsigned>(vectors / 4), repeats, want, out, redo);
  }
  if (cols % Shape<T>::kVec == 0 && (cols == 16 || cols == 256) && sizeof(T) >= 4) {
    std::printf("\n");
    if (cols == 16 && sizeof(T) == 8) {
      free_rows_variant<T, Op, 2, 4>(flush, x, rows, cols, repeats, want, out, redo);
      free_rows_variant<T, Op, 4, 2>(flush, x, rows, cols, repeats, want, out, redo);
      free_rows_variant<T, Op, 8, 1>(flush, x, rows, cols, repeats, want, out, redo);
    } else if (cols == 16) {
      free_rows_variant<T, Op, 1, 4>(flush, x, rows, cols, repeats, want, out, redo);
      free_rows_variant<T, Op, 2, 2>(flush, x, rows, cols, repeats, want, out, redo);
      free_rows_variant<T, Op, 4, 1>(flush, x, rows, cols, repeats, want, out, redo);
    } else if (sizeof(T) == 8) {
      free_rows_variant<T, Op, 32, 4>(flush, x, rows, cols, repeats, want, out, redo);
      free_rows_variant<T, Op, 16, 8>(flush, x, rows, cols, repeats, want, out, redo);
    } else {
      free_rows_variant<T, Op, 16, 4>(flush, x, rows, cols, repeats, want, out, redo);
      free_rows_variant<T, Op, 32, 2>(flush, x, rows, cols, repeats, want, out, redo);
    }
  }
  std::printf("\n");
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
  std::printf("device %s; cold, median of %d, us; lanes:time per row-group launch\n", prop.name, repeats);
  L2Flush flush(prop);
  if (argc > 2 && std::strcmp(argv[2], "half") == 0) {  // 16-bit maxima of rows of 32 to 512 halves
    for (const std::uint64_t cols : {256, 32, 64, 128, 512})
      probe<reducelab::half, op::max>(flush, (std::uint64_t(1) << 28) / cols, cols, repeats);
    probe<reducelab::bfloat16, op::min>(flush, std::uint64_t(1) << 20, 256, repeats);
    return 0;
  }
  if (argc > 2 && std::strcmp(argv[2], "16") == 0) {  // the listed shape 2^24 x 16
    probe<double, op::max>(flush, std::uint64_t(1) << 24, 16, repeats);
    probe<float, op::max>(flush, std::uint64_t(1) << 24, 16, repeats);
    probe<int, op::max>(flush, std::uint64_t(1) << 24, 16, repeats);
    probe<reducelab::half, op::max>(flush, std::uint64_t(1) << 24, 16, repeats);
    probe<double, op::max>(flush, std::uint64_t(1) << 20, 256, repeats);
    probe<float, op::max>(flush, std::uint64_t(1) << 20, 256, repeats);
    for (const std::uint64_t cols : {32, 64, 128}) {  // rows the library gives reduceFreeRows too
      probe<double, op::max>(flush, (std::uint64_t(1) << 28) / cols, cols, repeats);
      probe<float, op::max>(flush, (std::uint64_t(1) << 28) / cols, cols, repeats);
      probe<int, op::max>(flush, (std::uint64_t(1) << 28) / cols, cols, repeats);
    }
    return 0;
  }
  for (const std::uint64_t cols : {256, 64}) {
    const std::uint64_t rows = (std::uint64_t(1) << 28) / cols;
    probe<int, op::max>(flush, rows, cols, repeats);
    probe<int, op::sum>(flush, rows, cols, repeats);
    probe<float, op::max>(flush, rows, cols, repeats);
    probe<reducelab::half, op::max>(flush, rows, cols, repeats);
    probe<double, op::max>(flush, rows / 2, cols, repeats);
  }
  return 0;
}
