// rows_probe: reduceRowGroups (src/segments/agent_segments.cuh) with other lanes per row than
// plan_pieces gives it, beside the library's reduce_axis, on device 0. Each call is timed cold
// (behind an L2 flush, median of R) and its output compared bit for bit with reduce_axis's.
//   rows_probe [repeats=10]
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

template <class T>
const char* name_of() {
  if constexpr (std::is_same_v<T, int>) return "int32";
  else if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else return "half";
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
  std::printf("%-6s %-3s %7llu x %-4llu lib %7.1f us (lanes %u, %s)", name_of<T>(), std::is_same_v<Op, op::max> ? "max" : "sum",
              static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols), lib_us, plan.lanes,
              plan.row_groups ? "row groups" : "another kernel");
  std::vector<R> want(rows), got(rows);
  CK(cudaMemcpy(want.data(), lib, rows * sizeof(R), cudaMemcpyDeviceToHost));
  const std::uint64_t vectors = (cols + Shape<T>::kVec - 1) / Shape<T>::kVec;
  for (unsigned lanes = 1; lanes <= 32; lanes *= 2) {
    if (lanes > vectors) break;
    const std::uint64_t per_block = std::uint64_t(kWarps) * (32 / lanes) * kRowUnroll;
    const unsigned grid = pieces_grid({}, held, (rows + per_block - 1) / per_block);
    const unsigned load = row_load_bytes<T>(x, p);
    CK(cudaMemset(out, 0xff, rows * sizeof(R)));
    const float us = cold_us(flush, [&] { reduceRowGroups<T, Sem><<<grid, kThreads>>>(x, p, lanes, load, out, redo); }, repeats);
    CK(cudaGetLastError());
    CK(cudaMemcpy(got.data(), out, rows * sizeof(R), cudaMemcpyDeviceToHost));
    const bool same = std::memcmp(got.data(), want.data(), rows * sizeof(R)) == 0;
    std::printf("  %u:%.1f%s", lanes, us, same ? "" : "(BAD)");
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
