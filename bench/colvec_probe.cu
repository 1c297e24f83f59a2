// colvec_probe: the column kernel (reduceColumns) along axis 0 with a column a lane against vectors
// of columns a lane (VecColumns: 16 bytes of 4- and 8-byte columns, four words of two half columns,
// two floats for exact sums), on the library's band choice, on fewer bands (at most 32 partials a
// thread in the last block's fold) and, where a warp takes a whole group, on bands instead; beside
// reduce_axis, on device 0, cold (behind an L2 flush), median of R, every variant's results
// compared bit for bit with reduce_axis's.
//   colvec_probe [repeats=10] [bands | loads | redo]   (bands: the library's band count against fewer, for a few
//   shapes; loads: exact float sums two floats a lane with 8, 12 and 16 loads in flight a thread;
//   redo: what the redo kernel on an empty list adds after a long read, at several grids)
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
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
  void* out = nullptr;
};

enum class Bands { library, fewer, banded, half, quarter, eighth };
const char* name_of(Bands b) {
  switch (b) {
    case Bands::library: return "library bands";
    case Bands::fewer: return "fewer bands";
    case Bands::banded: return "bands, no warp a group";
    case Bands::half: return "bands for half the blocks";
    case Bands::quarter: return "bands for a quarter";
    default: return "bands for an eighth";
  }
}
bool focus = false;  // `bands` mode: the library's bands against a half, a quarter, an eighth of them
bool loads = false;  // `loads` mode: exact float sums two floats a lane with 8 (the library's), 12 and 16 loads in flight

// reduceColumns<E, S, kLoads> over `p` (counted in E), the bands as `mode` asks.
template <class E, class S, unsigned kLoads = kColumnLoads<S>>
void variant(const L2Flush& flush, int repeats, int sms, const void* x, const Pieces& p, const Bufs& b,
             const std::vector<unsigned char>& want, const char* what, Bands mode) {
  auto k = reduceColumns<E, S, kLoads>;
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, kThreads, 0));
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, k));
  const std::uint64_t held = std::uint64_t(per_sm) * sms;
  ColumnShape shape = column_shape<typename S::Acc>(p, held, held * kWarps);
  if (mode == Bands::fewer) {
    if (shape.warp_per_group || shape.bands <= 32 * (kThreads / shape.width)) return;  // nothing to cut
    // Blocks asked for: about two jobs each, so half the jobs a fold of 32 partials a thread allows.
    const std::uint64_t most = 32 * (kThreads / shape.width) * shape.groups / 2;
    shape = column_shape<typename S::Acc>(p, most, most * kWarps);
  } else if (mode == Bands::banded) {
    if (!shape.warp_per_group) return;
    shape = column_shape<typename S::Acc>(p, held, std::numeric_limits<std::uint64_t>::max());
  } else if (mode != Bands::library) {
    if (shape.warp_per_group) return;
    const std::uint64_t f = mode == Bands::half ? 2 : mode == Bands::quarter ? 4 : 8;
    shape = column_shape<typename S::Acc>(p, held / f, held * kWarps);
  }
  const unsigned grid = static_cast<unsigned>(std::min<std::uint64_t>(held, column_blocks(shape)));
  CK(cudaMemset(b.out, 0xff, want.size()));
  const float us = cold_us(flush, [&] {
    k<<<grid, kThreads>>>(static_cast<const E*>(x), shape, static_cast<typename S::Acc*>(b.partials), b.tickets,
                          static_cast<typename S::Out*>(b.out), b.redo);
  }, repeats);
  CK(cudaGetLastError());
  std::vector<unsigned char> got(want.size());
  CK(cudaMemcpy(got.data(), b.out, got.size(), cudaMemcpyDeviceToHost));
  const double bytes = double(p.length) * p.count * sizeof(E);
  std::printf("  %-22s %-24s %2u loads %8.1f us %6.0f GB/s  regs %3d, %d blocks/SM, grid %u, %llu groups x %llu bands%s%s\n",
              what, name_of(mode), kLoads, us, bytes / (us * 1e3), attr.numRegs, per_sm, grid,
              static_cast<unsigned long long>(shape.groups), static_cast<unsigned long long>(shape.bands),
              shape.warp_per_group ? " (a warp a group)" : "", got == want ? "  bits equal" : "  BITS DIFFER");
  std::fflush(stdout);
}

template <class E, class S>
void variants(const L2Flush& flush, int repeats, int sms, const void* x, const Pieces& p, const Bufs& b,
              const std::vector<unsigned char>& want, const char* what) {
  if (loads) {
    if constexpr (requires { typename S::Column; }) {
      if constexpr (std::is_same_v<S, VecColumns<float, piece_semantics_t<float, op::sum>>>) {
        variant<E, S, 8>(flush, repeats, sms, x, p, b, want, what, Bands::library);
        variant<E, S, 12>(flush, repeats, sms, x, p, b, want, what, Bands::library);
        variant<E, S, 16>(flush, repeats, sms, x, p, b, want, what, Bands::library);
        variant<E, S, 8>(flush, repeats, sms, x, p, b, want, what, Bands::library);
        variant<E, S, 12>(flush, repeats, sms, x, p, b, want, what, Bands::library);
        variant<E, S, 16>(flush, repeats, sms, x, p, b, want, what, Bands::library);
      }
    }
    return;
  }
  if (focus) {
    for (Bands mode : {Bands::library, Bands::half, Bands::quarter, Bands::eighth, Bands::library})
      variant<E, S>(flush, repeats, sms, x, p, b, want, what, mode);
    return;
  }
  for (Bands mode : {Bands::library, Bands::fewer, Bands::banded}) variant<E, S>(flush, repeats, sms, x, p, b, want, what, mode);
}

template <class T, class Op>
void probe(const L2Flush& flush, int repeats, int sms, std::uint64_t rows, std::uint64_t cols, const char* name) {
  using R = result_t<T, Op>;
  using Sem = piece_semantics_t<T, Op>;
  const std::uint64_t n = rows * cols;
  std::vector<T> h(n);
  for (std::uint64_t i = 0; i < n; ++i) h[i] = probe_value<T>(i);
  T* x = nullptr;
  R* lib = nullptr;
  Bufs b;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&lib, cols * sizeof(R)));
  CK(cudaMalloc(&b.out, cols * sizeof(R)));
  CK(cudaMalloc(&b.partials, 1 << 20));
  CK(cudaMalloc(&b.tickets, 1 << 16));
  CK(cudaMalloc(&b.redo, 1 << 20));
  CK(cudaMemset(b.tickets, 0, 1 << 16));
  CK(cudaMemset(b.redo, 0, 1 << 20));
  CK(cudaMemcpy(x, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  const Matrix m{rows, cols, 0};
  const float lib_us = cold_us(flush, [&] { check(reduce_axis(x, m, 0, Op{}, lib, nullptr, {})); }, repeats);
  std::vector<unsigned char> want(cols * sizeof(R));
  CK(cudaMemcpy(want.data(), lib, want.size(), cudaMemcpyDeviceToHost));
  std::printf("%llu x %llu %s: reduce_axis %.1f us (%.0f GB/s)\n", static_cast<unsigned long long>(rows),
              static_cast<unsigned long long>(cols), name, lib_us, double(n) * sizeof(T) / (lib_us * 1e3));
  Pieces p;
  p.count = cols, p.step = 1, p.length = rows, p.stride = cols, p.elements = n;
  if constexpr (pair_columns_v<T, Op>) {
    using P = pair_columns_t<T, Op>;
    const Pieces words = column_vector_pieces(p, 2);
    variants<std::uint32_t, P>(flush, repeats, sms, x, words, b, want, "a word a lane");
    if constexpr (vec_columns_v<std::uint32_t, P>) {
      using V = VecColumns<std::uint32_t, P>;
      variants<typename V::Vec, V>(flush, repeats, sms, x, column_vector_pieces(words, V::K), b, want, "four words a lane");
    }
  } else {
    variants<T, Sem>(flush, repeats, sms, x, p, b, want, "a column a lane");
    if constexpr (vec_columns_v<T, Sem>) {
      using V = VecColumns<T, Sem>;
      variants<typename V::Vec, V>(flush, repeats, sms, x, column_vector_pieces(p, V::K), b, want, "vectors a lane");
    }
  }
  CK(cudaFree(x));
  CK(cudaFree(lib));
  CK(cudaFree(b.out));
  CK(cudaFree(b.partials));
  CK(cudaFree(b.tickets));
  CK(cudaFree(b.redo));
}

template <class T, class Op>
void shapes(const L2Flush& flush, int repeats, int sms, const char* name) {
  probe<T, Op>(flush, repeats, sms, std::uint64_t(1) << 20, 256, name);
  probe<T, Op>(flush, repeats, sms, 256, std::uint64_t(1) << 20, name);
  probe<T, Op>(flush, repeats, sms, std::uint64_t(1) << 14, std::uint64_t(1) << 14, name);
  probe<T, Op>(flush, repeats, sms, std::uint64_t(1) << 24, 16, name);
}

// What the redo kernel on an empty list adds after a kernel that reads 2^28 floats (the bench's read
// kernel), launched as the library launches it (programmatic dependent launch), at several grids.
void redo_cost(const L2Flush& flush, int repeats, int sms) {
  const std::uint64_t n = std::uint64_t(1) << 28;
  float* x = nullptr;
  float* out = nullptr;
  unsigned long long* redo = nullptr;
  CK(cudaMalloc(&x, n * sizeof(float)));
  CK(cudaMalloc(&out, 1 << 20));
  CK(cudaMalloc(&redo, 1 << 20));
  CK(cudaMemset(x, 0, n * sizeof(float)));
  CK(cudaMemset(redo, 0, 1 << 20));
  Pieces p;
  p.count = 256, p.step = 1, p.length = n / 256, p.stride = 256, p.elements = n;
  const auto read = [&] { read_units<4><<<sms * 8, 256>>>(reinterpret_cast<const int4*>(x), n / 4, reinterpret_cast<int*>(out)); };
  std::printf("read of 2^28 floats, then reduceRedoPieces on an empty list (programmatic dependent launch)\n");
  for (int pass = 0; pass < 2; ++pass) {
    std::printf("  read alone %8.1f us\n", cold_us(flush, read, repeats));
    for (unsigned grid : {1u, 8u, 33u, 132u, 264u}) {
      const float us = cold_us(flush, [&] {
        read();
        CK(launch_kernel(reduceRedoPieces<float, float, false>, grid, nullptr, static_cast<const float*>(x), p,
                         static_cast<const std::int64_t*>(nullptr), static_cast<const std::int64_t*>(nullptr), redo,
                         out));
      }, repeats);
      std::printf("  then redo, grid %3u %8.1f us\n", grid, us);
    }
    std::fflush(stdout);
  }
  CK(cudaFree(x));
  CK(cudaFree(out));
  CK(cudaFree(redo));
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 10;
  focus = argc > 2 && std::strcmp(argv[2], "bands") == 0;
  loads = argc > 2 && std::strcmp(argv[2], "loads") == 0;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s; columns a lane against vectors of columns a lane, cold, median of %d\n", prop.name, repeats);
  L2Flush flush(prop);
  const int sms = prop.multiProcessorCount;
  if (argc > 2 && std::strcmp(argv[2], "redo") == 0) {
    redo_cost(flush, repeats, sms);
    return 0;
  }
  if (loads) {  // exact float sums along the columns that take two floats a lane
    probe<float, op::sum>(flush, repeats, sms, std::uint64_t(1) << 20, 256, "float sum");
    probe<float, op::sum>(flush, repeats, sms, std::uint64_t(1) << 14, std::uint64_t(1) << 14, "float sum");
    probe<float, op::sum>(flush, repeats, sms, 256, std::uint64_t(1) << 20, "float sum");
    return 0;
  }
  if (focus) {  // exact float sums along the columns of the shapes that band the most
    probe<float, op::sum>(flush, repeats, sms, std::uint64_t(1) << 20, 256, "float sum");
    probe<float, op::sum>(flush, repeats, sms, std::uint64_t(1) << 14, std::uint64_t(1) << 14, "float sum");
    probe<float, op::max>(flush, repeats, sms, std::uint64_t(1) << 20, 256, "float max");
    probe<double, op::sum>(flush, repeats, sms, std::uint64_t(1) << 20, 256, "double sum");
    return 0;
  }
  shapes<float, op::max>(flush, repeats, sms, "float max");
  shapes<std::int32_t, op::max>(flush, repeats, sms, "int32 max");
  shapes<double, op::max>(flush, repeats, sms, "double max");
  shapes<reducelab::half, op::max>(flush, repeats, sms, "half max");
  shapes<float, op::sum>(flush, repeats, sms, "float sum");
  return 0;
}
