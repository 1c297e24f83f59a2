// pack_probe: short dense rows of 2 or 4 whole 16-byte vectors (4 or 8 doubles, 8 or 16 floats,
// 16 halves), a thread per row, read two ways: each lane loading its own row's vectors (the
// library's reducePackedRows and reduceCutRows: a warp's load touches every other 16 bytes, or
// one in four, of 1 or 2 KiB), or the warp loading neighbouring vectors (512 contiguous bytes a
// load) and trading them between lanes with shuffles until each lane holds a whole row. Each
// variant on the grid the GPU holds (looping over the rows) and on a grid of every step. Rows
// are folded with the library's own steps (packed_row; exact double sums: cut_row, pairs for the
// rows it leaves). Timed cold (behind an L2 flush, median of R), outputs compared bit for bit
// with reduce_axis's, on device 0.
//   pack_probe [repeats=10] [lib: instead, the library's own row kernel for rows of 4 to 256
//                            elements of every type and operation, on both grids;
//                            cut: exact double sums of rows of 256, a warp a row: the library
//                            against a lean kernel of the probe's, on both grids]
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "probe_timing.cuh"
#include "reducelab/segments.hpp"
#include "segments/device_segments.cuh"

namespace {

using namespace reducelab;
using namespace reducelab::detail;

// A matrix of `rows` x `cols` on the device (element i: value(i)), reduce_axis's result along its
// rows (`want`; the call timed cold as `lib_us`), and an output and a redo list for the kernels
// under test.
template <class T, class Op>
struct RowsCase {
  using R = result_t<T, Op>;
  std::uint64_t rows, cols;
  T* x = nullptr;
  R* out = nullptr;
  unsigned long long* redo = nullptr;
  std::vector<R> want;
  float lib_us = 0;

  template <class Value>
  RowsCase(const L2Flush& flush, std::uint64_t rows_, std::uint64_t cols_, int repeats, Value value)
      : rows(rows_), cols(cols_), want(rows_) {
    const std::uint64_t n = rows * cols;
    std::vector<T> h(n);
    for (std::uint64_t i = 0; i < n; ++i) h[i] = value(i);
    R* lib = nullptr;
    CK(cudaMalloc(&x, n * sizeof(T)));
    CK(cudaMalloc(&lib, rows * sizeof(R)));
    CK(cudaMalloc(&out, rows * sizeof(R)));
    CK(cudaMalloc(&redo, 1 << 20));
    CK(cudaMemset(redo, 0, 1 << 20));
    CK(cudaMemcpy(x, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    lib_us = cold_us(flush, [&] { check(reduce_axis(x, matrix(), 1, Op{}, lib, nullptr, {})); }, repeats);
    CK(cudaMemcpy(want.data(), lib, rows * sizeof(R), cudaMemcpyDeviceToHost));
    CK(cudaFree(lib));
  }
  RowsCase(const RowsCase&) = delete;
  RowsCase& operator=(const RowsCase&) = delete;
  ~RowsCase() {
    CK(cudaFree(x));
    CK(cudaFree(out));
    CK(cudaFree(redo));
  }
  Matrix matrix() const { return Matrix{rows, cols, 0}; }
  // launch() timed cold into `out`, and " (BAD)" unless its results have reduce_axis's bits.
  const char* time(const L2Flush& flush, int repeats, const std::function<void()>& launch, float* us) {
    CK(cudaMemset(out, 0xff, rows * sizeof(R)));
    *us = cold_us(flush, launch, repeats);
    CK(cudaGetLastError());
    std::vector<R> got(rows);
    CK(cudaMemcpy(got.data(), out, rows * sizeof(R), cudaMemcpyDeviceToHost));
    return std::memcmp(got.data(), want.data(), rows * sizeof(R)) == 0 ? "" : " (BAD)";
  }
};

// A kernel's two grids for `every` blocks of work: as many blocks as the GPU holds of it (at most
// `every`), and `every`; with its registers and blocks an SM.
struct Grids {
  unsigned held = 0, every = 0;
  int regs = 0, per_sm = 0;
};
template <class K>
Grids grids_of(K kernel, std::uint64_t every) {
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, kernel));
  int per_sm = 0, sms = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 256, 0));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  return Grids{static_cast<unsigned>(std::min<std::uint64_t>(every, std::uint64_t(per_sm) * sms)),
               static_cast<unsigned>(every), attr.numRegs, per_sm};
}

// Vector `from` of the lane given (every lane of the warp calls it).
template <class T>
__device__ __forceinline__ Vec<T> vec_from(const Vec<T>& v, unsigned from) {
  std::uint32_t w[4];
  memcpy(w, &v, sizeof w);
#pragma unroll
  for (unsigned k = 0; k < 4; ++k) w[k] = __shfl_sync(kFullMask, w[k], from);
  Vec<T> r;
  memcpy(&r, w, sizeof r);
  return r;
}
// a[i] for a run-time i below N, as selects (the array stays in registers).
template <unsigned N, class V>
__device__ __forceinline__ V pick(const V* a, unsigned i) {
  V r = a[0];
#pragma unroll
  for (unsigned k = 1; k < N; ++k)
    if (i == k) r = a[k];
  return r;
}

// Row r of kV vectors in registers, folded and written.
template <class T, class Sem, unsigned kV>
__device__ __forceinline__ void row_out(const Vec<T>* v, std::uint64_t r, const T* input, typename Sem::Out* output,
                                        unsigned long long* redo) {
  constexpr unsigned kVec = Shape<T>::kVec, kLength = kV * kVec;
  if constexpr (cut_rows_v<T, Sem>) {
    const unsigned lane = threadIdx.x % 32;
    if (cut_row<Sem, 1, kV>(v, 1u << lane, true, r, kLength, output, redo))
      packed_row_pairs<T, Sem>(input, r, kLength, output, redo);
  } else {
    T e[kLength];
#pragma unroll
    for (unsigned k = 0; k < kV; ++k)
#pragma unroll
      for (unsigned j = 0; j < kVec; ++j) e[k * kVec + j] = v[k].v[j];
    packed_row<T, Sem, kLength>(e, r, input, output, redo);
  }
}

// Rows of kV whole vectors, four loads in flight a lane (4 / kV rows a lane a warp step). kTraded:
// load q of a step reads the step's vectors q * 32 + lane, and each set of kV loads is
// transposed among groups of kV lanes: lane j of group g ends with the set's row j * 32 / kV + g.
template <class T, class Sem, unsigned kV, bool kTraded>
__global__ void __launch_bounds__(256)
    rows_of(const T* input, std::uint64_t rows, typename Sem::Out* output, unsigned long long* redo) {
  constexpr unsigned kVec = Shape<T>::kVec, kLoads = 4, kSets = kLoads / kV;
  const unsigned lane = threadIdx.x % 32;
  const std::uint64_t warp = std::uint64_t(blockIdx.x) * 8 + threadIdx.x / 32;
  const std::uint64_t warps = std::uint64_t(gridDim.x) * 8;
  const std::uint64_t vectors = rows * kV;
  for (std::uint64_t base = warp * 32 * kSets; base < rows; base += warps * 32 * kSets) {
    Vec<T> v[kLoads];
    if constexpr (kTraded) {
#pragma unroll
      for (unsigned q = 0; q < kLoads; ++q) {
        const std::uint64_t k = base * kV + q * 32 + lane;
        v[q] = k < vectors ? load_vec(input, k * kVec) : Vec<T>{};
      }
      const unsigned j = lane % kV, g0 = lane - j;
#pragma unroll
      for (unsigned s = 0; s < kSets; ++s) {
        Vec<T> w[kV];
        const Vec<T>* set = v + s * kV;
        // Part j of row R(q) lies in lane g0 + j at load q; this lane wants every part of R(j),
        // its own part j first.
        const Vec<T> mine = pick<kV>(set, j);
#pragma unroll
        for (unsigned k = 0; k < kV; ++k) w[k] = mine;
#pragma unroll
        for (unsigned t = 1; t < kV; ++t) {
          // Send my load (j - t) mod kV (part j of row R(j - t)); receive from lane (j + t) mod kV
          // its load j (part (j + t) of row R(j)).
          const Vec<T> got = vec_from(pick<kV>(set, (j + kV - t) % kV), g0 + (j + t) % kV);
#pragma unroll
          for (unsigned k = 0; k < kV; ++k)
            if (k == (j + t) % kV) w[k] = got;
        }
        const std::uint64_t r = base + s * 32 + j * (32 / kV) + g0 / kV;
        if (r < rows) row_out<T, Sem, kV>(w, r, input, output, redo);
      }
    } else {
#pragma unroll
      for (unsigned s = 0; s < kSets; ++s)
#pragma unroll
        for (unsigned k = 0; k < kV; ++k) {
          const std::uint64_t r = base + s * 32 + lane;
          v[s * kV + k] = r < rows ? load_vec(input, (r * kV + k) * kVec) : Vec<T>{};
        }
#pragma unroll
      for (unsigned s = 0; s < kSets; ++s) {
        const std::uint64_t r = base + s * 32 + lane;
        if (r < rows) row_out<T, Sem, kV>(v + s * kV, r, input, output, redo);
      }
    }
  }
}

template <class T, class Op, unsigned kV, bool kTraded>
void variant(const L2Flush& flush, RowsCase<T, Op>& c, int repeats) {
  auto k = rows_of<T, piece_semantics_t<T, Op>, kV, kTraded>;
  constexpr std::uint64_t per_block = 8 * 32 * (4 / kV);
  const Grids g = grids_of(k, (c.rows + per_block - 1) / per_block);
  for (const unsigned grid : {g.held, g.every}) {
    float us = 0;
    const char* bad = c.time(flush, repeats, [&] { k<<<grid, 256>>>(c.x, c.rows, c.out, c.redo); }, &us);
    std::printf("  %s %s grid: %.1f%s", kTraded ? "traded" : "own-row", grid == g.held && grid != g.every ? "held" : "every", us, bad);
  }
  std::printf(" (regs %d, %d blocks an SM)", g.regs, g.per_sm);
}

template <class T, class Op, unsigned kV>
void probe(const L2Flush& flush, std::uint64_t rows, int repeats) {
  const std::uint64_t cols = kV * Shape<T>::kVec, n = rows * cols;
  RowsCase<T, Op> c(flush, rows, cols, repeats, probe_value<T>);
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const float read_us = cold_us(flush, [&] {
    read_units<4><<<sms * 8, 256>>>(reinterpret_cast<const int4*>(c.x), n * sizeof(T) / 16, reinterpret_cast<int*>(c.out));
  }, repeats);
  std::printf("%-6s %-3s %9llu x %-3llu lib %.1f us, read %.1f;", probe_type_name<T>(), std::is_same_v<Op, op::max> ? "max" : "sum",
              static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols), c.lib_us, read_us);
  variant<T, Op, kV, false>(flush, c, repeats);
  variant<T, Op, kV, true>(flush, c, repeats);
  std::printf("\n");
  std::fflush(stdout);
}

// The library's own row kernel for these rows (reducePackedRows, reduceRowGroups or reduceCutRows,
// as plan_pieces picks; reduceFreeRows already takes a grid of every row) on the grid the GPU
// holds and on a grid of every warp step.
template <class T, class Op>
void lib_grids(const L2Flush& flush, std::uint64_t rows, std::uint64_t cols, int repeats) {
  using Sem = piece_semantics_t<T, Op>;
  RowsCase<T, Op> c(flush, rows, cols, repeats, probe_value<T>);
  Pieces p;
  check(matrix_pieces(c.x, c.matrix(), 1, c.out, &p));
  Pieces launched = p;
  const PiecePlan plan = plan_pieces<T, Sem>(&launched);
  std::printf("%-6s %-3s %9llu x %-3llu lib %.1f us;", probe_type_name<T>(), std::is_same_v<Op, op::max> ? "max" : "sum",
              static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols), c.lib_us);
  // kKernel on the grid the GPU holds and on `every` blocks, a step each.
  const auto both = [&]<auto kKernel>(const char* name, std::uint64_t every, auto&&... args) {
    const Grids g = grids_of(kKernel, every);
    std::printf(" %s", name);
    for (const unsigned grid : {g.held, g.every}) {
      float us = 0;
      const char* bad = c.time(flush, repeats, [&] { kKernel<<<grid, kThreads>>>(c.x, launched, args..., c.out, c.redo); }, &us);
      std::printf(" %s %u blocks: %.1f%s", grid == g.every ? "every" : "held", grid, us, bad);
    }
  };
  bool free = false;
  if constexpr (free_rows_v<T, Sem>) free = plan.row_groups && free_rows_shape<T, Sem>(c.x, p).lanes != 0;
  bool packed = false;
  if constexpr (packed_rows_v<T, Sem>) {
    if (plan.row_groups && !free && packed_rows_fit<T, Sem>(c.x, p)) {
      packed = true;
      with_packed_rows_kernel<T, Sem>(p.length, [&]<auto kKernel>() {
        both.template operator()<kKernel>("reducePackedRows", packed_rows_blocks<T>(p));
      });
    }
  }
  if (plan.row_groups && !free && !packed)
    both.template operator()<reduceRowGroups<T, Sem>>("reduceRowGroups", row_groups_blocks(plan.lanes, p.count), plan.lanes,
                                                      row_load_bytes<T>(c.x, p));
  if constexpr (cut_rows_v<T, Sem>) {
    if (plan.cut_rows) {
      const unsigned per = cut_row_per(plan.lanes, p.length);
      with_cut_rows_kernel<T, Sem>(plan.lanes, per, [&]<auto kKernel>() {
        both.template operator()<kKernel>("reduceCutRows", cut_rows_blocks(plan.lanes, per, p.count), row_load_bytes<T>(c.x, p));
      });
    }
  }
  if (free) std::printf(" (reduceFreeRows)");
  std::printf("\n");
  std::fflush(stdout);
}

template <class T, class Op>
void lib_shapes(const L2Flush& flush, int repeats) {
  const std::uint64_t n = std::uint64_t(1) << 28;
  for (const std::uint64_t cols : {4, 8, 16, 64, 256}) lib_grids<T, Op>(flush, n / cols, cols, repeats);
}

// ---- Rows of 256 doubles, a warp each: the sums of the split's two parts over the warp ----------
// Row r's exact sum from the four vectors each of the warp's lanes holds: the library's cut_row
// with 32 lanes. Returns whether the row is left to the pairs (in lane 0).
template <class Sem>
__device__ __forceinline__ bool cut_row32(const Vec<double>* v, std::uint64_t r, std::uint64_t length,
                                          typename Sem::Out* output, unsigned long long* redo) {
  std::uint32_t most = 0, least = 0;
  split_magnitude_range<4>(v, &most, &least);
  most = __reduce_max_sync(kFullMask, most);
  const DoubleSplit grid = double_split(most, length);
  const bool holds = split_holds(grid, least);
  double s1 = 0.0, s2 = 0.0;
  if (grid.usable) {
#pragma unroll
    for (unsigned q = 0; q < 4; ++q)
#pragma unroll
      for (unsigned j = 0; j < 2; ++j) split_add(grid.sigma, v[q].v[j], s1, s2);
  }
  const bool exact = __all_sync(kFullMask, holds);
  const bool mine = threadIdx.x % 32 == 0;
#pragma unroll
  for (unsigned offset = 16; offset > 0; offset >>= 1) {
    s1 += __shfl_down_sync(kFullMask, s1, offset);
    s2 += __shfl_down_sync(kFullMask, s2, offset);
  }
  if (!exact) return mine;
  if (mine) store_piece<Sem>(output, r, ExactPair{s1, s2}, length, redo);
  return false;
}

// Rows of 256 doubles, a warp a row a step (the library's reduceCutRows<32, 4> reads the same way);
// the rows the cut leaves go through pairs element by element in lane 0, out of line.
template <class Sem>
__global__ void __launch_bounds__(256)
    cut_rows32(const double* input, std::uint64_t rows, typename Sem::Out* output, unsigned long long* redo) {
  constexpr std::uint64_t kLength = 256;
  const unsigned lane = threadIdx.x % 32;
  const std::uint64_t warp = std::uint64_t(blockIdx.x) * 8 + threadIdx.x / 32;
  const std::uint64_t warps = std::uint64_t(gridDim.x) * 8;
  for (std::uint64_t r = warp; r < rows; r += warps) {
    Vec<double> v[4];
#pragma unroll
    for (unsigned q = 0; q < 4; ++q) v[q] = load_vec(input + r * kLength, (lane + q * 32) * 2);
    if (__any_sync(kFullMask, cut_row32<Sem>(v, r, kLength, output, redo)) && lane == 0)
      packed_row_pairs<double, Sem>(input, r, kLength, output, redo);
  }
}

// Exact double sums of 2^20 rows of 256: the library against the probe's lean kernel. `wide`:
// probe_value's scaled by 2^-11 to 2^11, where some rows hold more binades than the cut takes on
// one grid for rows of 256 (36) and go to the pairs; otherwise probe_value's.
void cut_probe(const L2Flush& flush, int repeats, bool wide) {
  using Sem = piece_semantics_t<double, op::sum>;
  const std::uint64_t rows = std::uint64_t(1) << 20;
  RowsCase<double, op::sum> c(flush, rows, 256, repeats, [&](std::uint64_t i) {
    const double v = probe_value<double>(i);
    return wide ? std::ldexp(v, static_cast<int>((i * 0x9E3779B97F4A7C15ull >> 58) % 23) - 11) : v;
  });
  std::printf("double sum %llu x 256%s: lib %.1f us;", static_cast<unsigned long long>(rows), wide ? " (wide exponents)" : "", c.lib_us);
  auto k = cut_rows32<Sem>;
  const Grids g = grids_of(k, (rows + 7) / 8);
  std::printf(" probe's kernel (regs %d, %d blocks an SM):", g.regs, g.per_sm);
  for (const unsigned grid : {g.held, g.every}) {
    float us = 0;
    const char* bad = c.time(flush, repeats, [&] { k<<<grid, 256>>>(c.x, rows, c.out, c.redo); }, &us);
    std::printf(" %s %.1f%s", grid == g.every ? "every" : "held", us, bad);
  }
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 10;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s; cold, median of %d, us\n", prop.name, repeats);
  L2Flush flush(prop);
  if (argc > 2 && std::strcmp(argv[2], "cut") == 0) {  // rows of 256 doubles: the library and a lean kernel
    for (int twice = 0; twice < 2; ++twice) {
      cut_probe(flush, repeats, false);
      cut_probe(flush, repeats, true);
    }
    return 0;
  }
  if (argc > 2 && std::strcmp(argv[2], "lib") == 0) {  // the library's row kernels on two grids
    lib_shapes<double, op::sum>(flush, repeats);
    lib_shapes<double, op::max>(flush, repeats);
    lib_shapes<float, op::sum>(flush, repeats);
    lib_shapes<float, op::max>(flush, repeats);
    lib_shapes<int, op::sum>(flush, repeats);
    lib_shapes<int, op::max>(flush, repeats);
    lib_shapes<reducelab::half, op::sum>(flush, repeats);
    lib_shapes<reducelab::half, op::max>(flush, repeats);
    return 0;
  }
  for (int twice = 0; twice < 2; ++twice) {
    probe<double, op::sum, 2>(flush, std::uint64_t(1) << 26, repeats);  // the listed 2^26 x 4
    probe<double, op::max, 2>(flush, std::uint64_t(1) << 26, repeats);
    probe<double, op::sum, 4>(flush, std::uint64_t(1) << 25, repeats);
    probe<double, op::max, 4>(flush, std::uint64_t(1) << 25, repeats);
    probe<float, op::sum, 4>(flush, std::uint64_t(1) << 24, repeats);  // the listed 2^24 x 16
    probe<float, op::sum, 2>(flush, std::uint64_t(1) << 25, repeats);
    probe<float, op::max, 2>(flush, std::uint64_t(1) << 25, repeats);
    probe<int, op::sum, 2>(flush, std::uint64_t(1) << 25, repeats);
    probe<reducelab::half, op::sum, 2>(flush, std::uint64_t(1) << 24, repeats);  // the listed 2^24 x 16
  }
  return 0;
}
