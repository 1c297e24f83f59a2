// cut_probe: exact double sums along matrix rows (reduce_axis, axis 1) against variants of the
// row kernel's cut (cut_rows in src/segments/agent_rows.cuh), on device 0, cold (behind an L2
// flush), median of R. Rows of 4, 16 and 256 doubles, 2^28 elements in all.
//   cut_probe [repeats=10] [library: only the library's kernel, at its row shape and at others]
// Each variant: `lanes` lanes per row, `per` 16-byte vectors of the row a lane, `rows` rows a lane
// in flight, `pre` whether the next step's loads are issued before this step's arithmetic.
//   plain  a plain double sum of each row (not exact): what the loads and shuffles cost alone
//   row    the row kernel's cut before its split (double_cut below, two grids): the
//          row's largest magnitude (shuffled across its lanes) sets the grids, two plain sums,
//          shuffled and rounded once
//   lane   each lane cuts its own elements on its own grid (no shuffle before the arithmetic),
//          its two sums become one exact pair, and the row's lanes merge pairs
// Every exact variant must give reduce_axis's bits; the probe checks them and counts the rows a
// variant could not sum (none on this data).
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
using Sem = piece_semantics_t<double, op::sum>;

// ---- doubles cut on a shared grid (the library's cut before its split: exact_sum.cuh's double_split)
// Double elements carry full 53-bit significands, so a plain double sum of them is rarely exact.
// But a group of at most 2^(l-1) doubles, all below 2^e in magnitude, sums exactly as two plain
// double sums when their bits are cut at two fixed places shared by the whole group:
//   with sigma1 = 2^(e + l), q = (sigma1 + x) - sigma1 is x rounded to the grid 2^(e + l - 53),
//   and p = x - q is exact (|x| <= sigma1: the error of that addition). Every q lies on the grid
//   and together they stay below 2^(e + l - 1), 2^52 grid steps, so their sum is exact in any
//   order. The p's lie below 2^(e + l - 53) and go through the same cut with
//   sigma2 = 2^(e + 2l - 53); what is left, r = p - q2, is zero for every element whose lowest
//   bit is at or above 2^(e + 2l - 106).
// So when every r is zero, s1 + s2 (sums of the q's and the q2's) is the exact sum of the group:
// true of any group whose exponents span up to about 51 - 2l binades (44 for 16 elements), and
// always checked. Per element: six additions and a comparison, no branch, no dependency between
// elements but the two running sums (a TwoSum pair chains two dependent TwoSums per element).
struct DoubleCut {
  double sigma1;
  double sigma2;
  bool usable;  // false: zeros only, an infinity or NaN, or a group too near the ends of the range
};
// The cut for `count` doubles whose largest magnitude has the high word `most` (bits 32..62).
__host__ __device__ __forceinline__ DoubleCut double_cut(std::uint32_t most, std::uint64_t count) {
  const int field = static_cast<int>(most >> 20);
  const int l = ceil_log2(count) + 1;
  const int e = (field == 0 ? 1 : field) - 1022;  // every |x| < 2^e
  const int k1 = e + l, k2 = k1 - 53 + l;
  DoubleCut c;
  // sigma1 finite (sigma1 + x then is too), and the second grid 2^(k2 - 53) no finer than the
  // smallest subnormal, so sigma2 is normal and the cut's arithmetic exact as above.
  c.usable = most != 0 && field != 0x7ff && k1 <= 1023 && k2 >= -1021;
  c.sigma1 = c.usable ? double_from_bits(static_cast<std::uint64_t>(k1 + 1023) << 52) : 0.0;
  c.sigma2 = c.usable ? double_from_bits(static_cast<std::uint64_t>(k2 + 1023) << 52) : 0.0;
  return c;
}
// The magnitude bits of a double's high word (what double_cut takes the largest of).
__host__ __device__ __forceinline__ std::uint32_t high_magnitude(double x) {
  return static_cast<std::uint32_t>(bits_of_double(x) >> 32) & 0x7fffffffu;
}
// The two sums of a cut group and whether any element left a remainder (then they are not exact).
struct CutSum {
  double s1 = 0.0;
  double s2 = 0.0;
  bool left = false;
};
__host__ __device__ __forceinline__ void cut_add(CutSum& s, const DoubleCut& c, double x) {
  const double q = (c.sigma1 + x) - c.sigma1;
  const double p = x - q;
  const double q2 = (c.sigma2 + p) - c.sigma2;
  s.s1 += q;
  s.s2 += q2;
  s.left = s.left | ((p - q2) != 0);
}

enum Mode { kPlain, kRow, kLane };

template <unsigned kLanes, unsigned kPer, unsigned kRows, bool kPre, int kMode, int kBlocks>
__global__ void __launch_bounds__(256, kBlocks)
    cut_kernel(const double* x, std::uint64_t count, double* out, unsigned long long* missed) {
  constexpr unsigned kLength = kLanes * kPer * 2;
  constexpr unsigned kLoads = kPer * kRows;
  constexpr unsigned kRowsPerWarp = 32 / kLanes;
  const unsigned lane = threadIdx.x % 32, sub = lane % kLanes;
  const std::uint64_t warp = std::uint64_t(blockIdx.x) * 8 + threadIdx.x / 32;
  const std::uint64_t warps = std::uint64_t(gridDim.x) * 8;
  constexpr std::uint64_t kStepRows = std::uint64_t(kRowsPerWarp) * kRows;
  auto row_of = [&](std::uint64_t step, unsigned i) { return step * kStepRows + i * kRowsPerWarp + lane / kLanes; };
  auto load = [&](std::uint64_t step, Vec<double>* v) {
#pragma unroll
    for (unsigned q = 0; q < kLoads; ++q) {
      const std::uint64_t r = row_of(step, q / kPer);
      v[q] = r < count ? load_vec<double>(x + r * kLength, (sub + std::uint64_t(q % kPer) * kLanes) * 2) : Vec<double>{};
    }
  };
  const std::uint64_t steps = (count + kStepRows - 1) / kStepRows;
  Vec<double> v[kLoads];
  std::uint64_t step = warp;
  if (step < steps) load(step, v);
  for (; step < steps; step += warps) {
    Vec<double> next[kPre ? kLoads : 1];
    if constexpr (kPre)
      if (step + warps < steps) load(step + warps, next);
#pragma unroll
    for (unsigned i = 0; i < kRows; ++i) {
      const std::uint64_t r = row_of(step, i);
      const bool mine = sub == 0 && r < count;
      if constexpr (kMode == kPlain) {
        double s = 0;
#pragma unroll
        for (unsigned q = i * kPer; q < (i + 1) * kPer; ++q) s += v[q].v[0] + v[q].v[1];
        for (unsigned o = kLanes / 2; o > 0; o >>= 1) s += __shfl_down_sync(kFullMask, s, o);
        if (mine) out[r] = s;
      } else {
        std::uint32_t most = 0;
#pragma unroll
        for (unsigned q = i * kPer; q < (i + 1) * kPer; ++q)
#pragma unroll
          for (unsigned j = 0; j < 2; ++j) {
            const std::uint32_t m = high_magnitude(v[q].v[j]);
            most = m > most ? m : most;
          }
        if constexpr (kMode == kRow)
          for (unsigned o = kLanes / 2; o > 0; o >>= 1) {
            const std::uint32_t m = __shfl_xor_sync(kFullMask, most, o);
            most = m > most ? m : most;
          }
        const DoubleCut cut = double_cut(most, kMode == kRow ? kLength : kPer * 2);
        CutSum s;
        if (cut.usable) {
#pragma unroll
          for (unsigned q = i * kPer; q < (i + 1) * kPer; ++q)
#pragma unroll
            for (unsigned j = 0; j < 2; ++j) cut_add(s, cut, v[q].v[j]);
        }
        if constexpr (kMode == kRow) {
          for (unsigned o = kLanes / 2; o > 0; o >>= 1) {
            s.s1 += __shfl_down_sync(kFullMask, s.s1, o);
            s.s2 += __shfl_down_sync(kFullMask, s.s2, o);
          }
          const bool bad = (__ballot_sync(kFullMask, s.left || !cut.usable) >> (lane - sub)) & ((kLanes == 32 ? 0xffffffffu : (1u << kLanes) - 1u));
          if (mine && !bad) store_piece<Sem>(out, r, ExactPair{s.s1, s.s2}, kLength, missed + 1);
          if (mine && bad) atomicAdd(missed, 1ull);
        } else {
          ExactPair p;
          if (cut.usable && !s.left) {
            double a, b;
            two_sum(s.s1, s.s2, a, b);
            p = ExactPair{a, b};
          } else {
            p = special_pair(kPairLost);
          }
          for (unsigned o = kLanes / 2; o > 0; o >>= 1) p = Sem::combine(p, shuffle_down(p, o));
          if (mine && Sem::needs_redo(p)) atomicAdd(missed, 1ull);
          else if (mine) store_piece<Sem>(out, r, p, kLength, missed + 1);
        }
      }
    }
    if constexpr (kPre) {
#pragma unroll
      for (unsigned q = 0; q < kLoads; ++q) v[q] = next[q];
    } else if (step + warps < steps) {
      load(step + warps, v);
    }
  }
}

// The cut as reduceRowGroups ran it before reduceCutRows (four rows a step of the row loop, the
// loads through load_part), or reading whole vectors (kWhole: load_vec) and knowing its lanes at
// compile time (kLanes; 0: at run time).
template <unsigned kPer, bool kWhole, unsigned kLanes>
__device__ __forceinline__ unsigned cut_rows_copy(const double* input, const Pieces& pieces, unsigned lanes_rt,
                                                  unsigned load, const std::uint64_t* row, double* output,
                                                  unsigned long long* redo) {
  constexpr unsigned kVec = 2;
  constexpr unsigned kRows = kPer < 4 ? 4 / kPer : 1;
  constexpr unsigned kLoads = kRows * kPer;
  const unsigned lanes = kLanes ? kLanes : lanes_rt;
  const unsigned lane = threadIdx.x % 32, sub = lane % lanes;
  const unsigned group = lanes == 32 ? kFullMask : ((1u << lanes) - 1u) << (lane - sub);
  const std::uint64_t length = pieces.length;
  const std::uint64_t vectors = (length + kVec - 1) / kVec;
  unsigned todo = 0;
#pragma unroll
  for (unsigned u0 = 0; u0 < kRowUnroll; u0 += kRows) {
    Vec<double> v[kLoads];
#pragma unroll
    for (unsigned q = 0; q < kLoads; ++q) {
      const std::uint64_t r = row[u0 + q / kPer], k = sub + std::uint64_t(q % kPer) * lanes;
      if constexpr (kWhole)
        v[q] = r < pieces.count && k < vectors ? load_vec<double>(input + r * pieces.step, k * kVec) : Vec<double>{};
      else
        v[q] = r < pieces.count && k < vectors ? load_part<double>(input + r * pieces.step, k * kVec, length, load) : Vec<double>{};
    }
#pragma unroll
    for (unsigned i = 0; i < kRows; ++i) {
      const unsigned u = u0 + i;
      std::uint32_t most = 0;
#pragma unroll
      for (unsigned q = i * kPer; q < (i + 1) * kPer; ++q)
#pragma unroll
        for (unsigned j = 0; j < kVec; ++j) {
          const std::uint32_t m = high_magnitude(v[q].v[j]);
          most = m > most ? m : most;
        }
      for (unsigned offset = lanes / 2; offset > 0; offset >>= 1) {
        const std::uint32_t m = __shfl_xor_sync(kFullMask, most, offset);
        most = m > most ? m : most;
      }
      const DoubleCut cut = double_cut(most, length);
      CutSum s;
      if (cut.usable) {
#pragma unroll
        for (unsigned q = i * kPer; q < (i + 1) * kPer; ++q)
#pragma unroll
          for (unsigned j = 0; j < kVec; ++j) cut_add(s, cut, v[q].v[j]);
      }
      for (unsigned offset = lanes / 2; offset > 0; offset >>= 1) {
        s.s1 += __shfl_down_sync(kFullMask, s.s1, offset);
        s.s2 += __shfl_down_sync(kFullMask, s.s2, offset);
      }
      const bool left = (__ballot_sync(kFullMask, s.left) & group) != 0;
      const bool mine = sub == 0 && row[u] < pieces.count;
      const bool exact = cut.usable && !left;
      if (mine && exact) store_piece<Sem>(output, row[u], ExactPair{s.s1, s.s2}, length, redo);
      todo |= (__ballot_sync(kFullMask, mine && !exact) != 0u ? 1u : 0u) << u;
    }
  }
  return todo;
}

// The row loop of reduceRowGroups (four rows a step) around the copy above.
template <unsigned kPer, bool kWhole, unsigned kLanes, int kBlocks>
__global__ void __launch_bounds__(256, kBlocks)
    loop_kernel(const double* input, Pieces pieces, unsigned lanes, unsigned load, double* output,
                unsigned long long* missed) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned rows_per_warp = 32 / lanes;
  const std::uint64_t rows_per_step = std::uint64_t(rows_per_warp) * kRowUnroll;
  const std::uint64_t warp = std::uint64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  const std::uint64_t warps = std::uint64_t(gridDim.x) * kWarps;
  for (std::uint64_t base = warp * rows_per_step; base < pieces.count; base += warps * rows_per_step) {
    std::uint64_t row[kRowUnroll];
#pragma unroll
    for (unsigned u = 0; u < kRowUnroll; ++u) row[u] = base + std::uint64_t(u) * rows_per_warp + lane / lanes;
    unsigned todo = 0;
    todo = cut_rows_copy<kPer, kWhole, kLanes>(input, pieces, lanes, load, row, output, missed + 1);
    if (todo != 0 && lane == 0) atomicAdd(missed, 1ull);
  }
}

struct Setup {
  const L2Flush& flush;
  int repeats;
  std::uint64_t rows, cols;
  const double* x;
  double* out;
  unsigned long long* missed;
  const std::vector<double>& want;
  int sms;
};

template <unsigned kLanes, unsigned kPer, unsigned kRows, bool kPre, int kMode, int kBlocks>
void variant(const Setup& s) {
  static_assert(kLanes * kPer * 2 > 0);
  if (kLanes * kPer * 2 != s.cols) return;
  auto k = cut_kernel<kLanes, kPer, kRows, kPre, kMode, kBlocks>;
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, 256, 0));
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, k));
  const std::uint64_t step_rows = std::uint64_t(32 / kLanes) * kRows;
  const std::uint64_t blocks_needed = (s.rows + step_rows * 8 - 1) / (step_rows * 8);
  const unsigned grid = static_cast<unsigned>(std::min<std::uint64_t>(blocks_needed, std::uint64_t(per_sm) * s.sms));
  CK(cudaMemset(s.out, 0xff, s.rows * sizeof(double)));
  CK(cudaMemset(s.missed, 0, 16));
  const float us = cold_us(s.flush, [&] { k<<<grid, 256>>>(s.x, s.rows, s.out, s.missed); }, s.repeats);
  CK(cudaGetLastError());
  std::vector<double> got(s.rows);
  CK(cudaMemcpy(got.data(), s.out, s.rows * sizeof(double), cudaMemcpyDeviceToHost));
  unsigned long long missed[2];
  CK(cudaMemcpy(missed, s.missed, sizeof missed, cudaMemcpyDeviceToHost));
  const char* names[] = {"plain", "row", "lane"};
  const bool same = std::memcmp(got.data(), s.want.data(), s.rows * sizeof(double)) == 0;
  const double gbs = double(s.rows) * s.cols * 8 / (us * 1e3);
  std::printf("  %-5s lanes %2u per %2u rows %u pre %d: %8.1f us %6.0f GB/s  regs %3d, %d blocks/SM%s%s\n", names[kMode],
              kLanes, kPer, kRows, int(kPre), us, gbs, attr.numRegs, per_sm,
              kMode == kPlain ? "" : (same ? "  bits equal" : "  BITS DIFFER"),
              missed[0] ? "  (rows missed)" : "");
  std::fflush(stdout);
}

template <unsigned kPer, bool kWhole, unsigned kLanes, int kBlocks>
void loop_variant(const Setup& s, unsigned lanes) {
  if ((kLanes ? kLanes : lanes) * kPer * 2 != s.cols) return;
  auto k = loop_kernel<kPer, kWhole, kLanes, kBlocks>;
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, 256, 0));
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, k));
  Pieces p;
  p.count = s.rows;
  p.step = s.cols;
  p.length = s.cols;
  p.elements = s.rows * s.cols;
  const unsigned grid = static_cast<unsigned>(std::min<std::uint64_t>(row_groups_blocks(lanes, s.rows), std::uint64_t(per_sm) * s.sms));
  CK(cudaMemset(s.out, 0xff, s.rows * sizeof(double)));
  CK(cudaMemset(s.missed, 0, 16));
  const float us = cold_us(s.flush, [&] { k<<<grid, 256>>>(s.x, p, lanes, 16, s.out, s.missed); }, s.repeats);
  CK(cudaGetLastError());
  std::vector<double> got(s.rows);
  CK(cudaMemcpy(got.data(), s.out, s.rows * sizeof(double), cudaMemcpyDeviceToHost));
  unsigned long long missed[2];
  CK(cudaMemcpy(missed, s.missed, sizeof missed, cudaMemcpyDeviceToHost));
  const bool same = std::memcmp(got.data(), s.want.data(), s.rows * sizeof(double)) == 0;
  const double gbs = double(s.rows) * s.cols * 8 / (us * 1e3);
  std::printf("  %-5s lanes %2u per %2u whole %d lanes-known %d: %8.1f us %6.0f GB/s  regs %3d, %d blocks/SM%s%s\n",
              "before", lanes, kPer, int(kWhole), int(kLanes != 0), us, gbs, attr.numRegs,
              per_sm, same ? "  bits equal" : "  BITS DIFFER", missed[0] ? "  (rows missed)" : "");
  std::fflush(stdout);
}

void probe(const L2Flush& flush, std::uint64_t cols, int repeats, int sms, bool only_library) {
  const std::uint64_t rows = (std::uint64_t(1) << 28) / cols;
  const std::uint64_t n = rows * cols;
  std::vector<double> h(n);
  for (std::uint64_t i = 0; i < n; ++i) h[i] = probe_value<double>(i);
  double *x = nullptr, *lib = nullptr, *out = nullptr, *mx = nullptr;
  unsigned long long* missed = nullptr;
  CK(cudaMalloc(&x, n * sizeof(double)));
  CK(cudaMalloc(&lib, rows * sizeof(double)));
  CK(cudaMalloc(&mx, rows * sizeof(double)));
  CK(cudaMalloc(&out, rows * sizeof(double)));
  CK(cudaMalloc(&missed, 1 << 20));
  CK(cudaMemcpy(x, h.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  const Matrix m{rows, cols, 0};
  const float sum_us = cold_us(flush, [&] { check(reduce_axis(x, m, 1, op::sum{}, lib, nullptr, {})); }, repeats);
  const float max_us = cold_us(flush, [&] { check(reduce_axis(x, m, 1, op::max{}, mx, nullptr, {})); }, repeats);
  const float read_us = cold_us(flush, [&] { read_units<4><<<sms * 8, 256>>>(reinterpret_cast<const int4*>(x), n / 2, reinterpret_cast<int*>(out)); }, repeats);
  std::vector<double> want(rows);
  CK(cudaMemcpy(want.data(), lib, rows * sizeof(double), cudaMemcpyDeviceToHost));
  const double bytes = double(n) * 8;
  std::printf("%llu x %llu doubles: reduce_axis sum %.1f us (%.0f GB/s), max %.1f us, read %.1f us (%.0f GB/s)\n",
              static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols), sum_us, bytes / (sum_us * 1e3),
              max_us, read_us, bytes / (read_us * 1e3));
  const Setup s{flush, repeats, rows, cols, x, out, missed, want, sms};
  const auto release = [&] {
    CK(cudaFree(x));
    CK(cudaFree(lib));
    CK(cudaFree(mx));
    CK(cudaFree(out));
    CK(cudaFree(missed));
  };
  // The library's kernel alone, as reduce_axis launches it (no redo launch after it), at the
  // row shape it takes or at another (kLanes lanes of kPer vectors: a row of up to 2 kLanes kPer).
  Pieces p;
  check(matrix_pieces(x, m, 1, lib, &p));
  Pieces planned = p;
  const PiecePlan plan = plan_pieces<double, Sem>(&planned);
  const auto library_kernel = [&]<auto kKernel>(unsigned lanes, unsigned per) {
    std::uint64_t held = 0;
    check(blocks_held<kKernel>(0, sms, &held));
    const unsigned grid = pieces_grid({}, held, cut_rows_blocks(lanes, per, rows));
    cudaFuncAttributes attr;
    CK(cudaFuncGetAttributes(&attr, kKernel));
    CK(cudaMemset(out, 0xff, rows * sizeof(double)));
    CK(cudaMemset(missed, 0, 16));
    const float us = cold_us(flush, [&] { kKernel<<<grid, kThreads>>>(x, planned, row_load_bytes<double>(x, p), out, missed); }, repeats);
    CK(cudaGetLastError());
    std::vector<double> got(rows);
    CK(cudaMemcpy(got.data(), out, rows * sizeof(double), cudaMemcpyDeviceToHost));
    std::printf("  reduceCutRows lanes %2u per %2u%s: %8.1f us %6.0f GB/s  regs %3d, local %zu bytes, %llu blocks/SM%s\n", lanes, per,
                lanes == plan.lanes && per == cut_row_per(plan.lanes, cols) ? " (the library's)" : "", us, bytes / (us * 1e3),
                attr.numRegs, attr.localSizeBytes, static_cast<unsigned long long>(held / sms),
                std::memcmp(got.data(), want.data(), rows * sizeof(double)) == 0 ? "  bits equal" : "  BITS DIFFER");
    std::fflush(stdout);
  };
  with_cut_rows_kernel<double, Sem>(plan.lanes, cut_row_per(plan.lanes, cols), [&]<auto kKernel>() {
    library_kernel.template operator()<kKernel>(plan.lanes, cut_row_per(plan.lanes, cols));
  });
  if (only_library) {  // the same kernel at other row shapes, twice
    for (int pass = 0; pass < 2; ++pass) {
      if (cols == 256) {
        library_kernel.template operator()<reduceCutRows<double, Sem, 32, 4>>(32, 4);
        library_kernel.template operator()<reduceCutRows<double, Sem, 16, 8>>(16, 8);
      } else if (cols == 16) {
        library_kernel.template operator()<reduceCutRows<double, Sem, 2, 4>>(2, 4);
        library_kernel.template operator()<reduceCutRows<double, Sem, 1, 8>>(1, 8);
      }
    }
    release();
    return;
  }
  // The cut as it was, then with whole-vector loads and lanes known at compile time.
  if (cols == 256) {
    loop_variant<8, false, 0, 3>(s, 16);
    loop_variant<8, true, 0, 3>(s, 16);
    loop_variant<8, false, 16, 3>(s, 16);
    loop_variant<8, true, 16, 3>(s, 16);
    loop_variant<4, false, 0, 3>(s, 32);
    loop_variant<4, true, 0, 3>(s, 32);
    loop_variant<4, true, 32, 3>(s, 32);
  } else if (cols == 16) {
    loop_variant<8, false, 0, 3>(s, 1);
    loop_variant<8, true, 0, 3>(s, 1);
    loop_variant<8, true, 1, 3>(s, 1);
    loop_variant<4, false, 0, 3>(s, 2);
    loop_variant<4, true, 0, 3>(s, 2);
    loop_variant<4, true, 2, 3>(s, 2);
  } else {
    loop_variant<2, false, 0, 3>(s, 1);
    loop_variant<2, true, 0, 3>(s, 1);
    loop_variant<2, true, 1, 3>(s, 1);
  }
  // rows of 256
  variant<16, 8, 1, false, kPlain, 3>(s);
  variant<16, 8, 1, false, kRow, 3>(s);
  variant<16, 8, 1, true, kRow, 2>(s);
  variant<16, 8, 1, true, kRow, 3>(s);
  variant<32, 4, 1, false, kRow, 3>(s);
  variant<32, 4, 1, true, kRow, 3>(s);
  variant<32, 4, 1, true, kRow, 4>(s);
  variant<32, 4, 2, false, kRow, 3>(s);
  variant<16, 8, 1, false, kLane, 3>(s);
  variant<16, 8, 1, true, kLane, 2>(s);
  variant<32, 4, 1, true, kLane, 3>(s);
  variant<8, 16, 1, false, kLane, 2>(s);
  // rows of 16
  variant<1, 8, 1, false, kPlain, 3>(s);
  variant<1, 8, 1, false, kRow, 3>(s);
  variant<1, 8, 1, true, kRow, 2>(s);
  variant<2, 4, 1, false, kRow, 3>(s);
  variant<2, 4, 1, true, kRow, 3>(s);
  variant<2, 4, 2, false, kRow, 3>(s);
  variant<4, 2, 2, false, kRow, 3>(s);
  variant<4, 2, 2, true, kRow, 3>(s);
  // rows of 4
  variant<1, 2, 1, false, kPlain, 3>(s);
  variant<1, 2, 2, false, kRow, 3>(s);
  variant<1, 2, 4, false, kRow, 3>(s);
  variant<1, 2, 2, true, kRow, 3>(s);
  variant<1, 2, 4, true, kRow, 2>(s);
  variant<2, 1, 4, false, kRow, 3>(s);
  variant<2, 1, 4, true, kRow, 3>(s);
  release();
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 10;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s; exact double sums along rows, cold, median of %d\n", prop.name, repeats);
  L2Flush flush(prop);
  const bool only_library = argc > 2 && std::strcmp(argv[2], "library") == 0;
  for (const std::uint64_t cols : {256, 16, 4}) probe(flush, cols, repeats, prop.multiProcessorCount, only_library);
  return 0;
}
