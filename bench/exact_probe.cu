// A developer's probe for the exact floating-point sum (include/reducelab/detail/agent_exact.cuh):
// the library's kernel against variants of it, cold (queued behind an L2 flush), median of R:
//   items  vectors per thread per tile (8: the library's 32 KiB float tile; 4: half of it)
//   sums   independent double sums in a tile's fast path (1: the library's one chain)
//   dyn    tiles handed out by an atomic counter (the block asks for its next tile while it folds
//          the current one) instead of the fixed grid stride
//   end    0: no hand-over at all (a floor: the result is wrong), 1: the library's (block digits,
//          global digit atomics, ticket, the last block rounds), 2: the same with the blocks'
//          digit atomics spread over 16 copies that the last block adds up
// Every variant with an end must give the library's bits; the probe checks it.
//   exact_probe [repeats=30]
//   exact_probe REPEATS shapes   the library's own kernel (reduceExact) in other launch shapes
//                                (vectors per thread per tile, blocks per SM) for float, half and
//                                bfloat16 at 2^22..2^30, beside CUB and a bare read of the same bytes
#include <cub/cub.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>
#include "reducelab/detail/device_reduce.cuh"
#include "probe_timing.cuh"


using namespace reducelab::detail;
namespace op = reducelab::op;


constexpr unsigned kCopies = 16;

// One full, aligned tile of ITEMS vectors per thread (the probe's sizes are whole tiles).
template <class T, unsigned ITEMS, unsigned SUMS, class Spill>
__device__ __forceinline__ void fold_full_tile(const T* input, std::uint64_t tile, ExactCarry& carry, ExactCarry& odd,
                                               const Spill& spill) {
  constexpr unsigned kVec = Shape<T>::kVec;
  const std::uint64_t base = tile + std::uint64_t(threadIdx.x) * kVec;
  Vec<T> v[ITEMS];
#pragma unroll
  for (unsigned i = 0; i < ITEMS; ++i) v[i] = load_vec(rl::gmem<const T>(input), base + std::uint64_t(i) * kThreads * kVec);
  if constexpr (std::is_same_v<T, double>) {
#pragma unroll
    for (unsigned i = 0; i < ITEMS; ++i) {
      carry.add(v[i].v[0], spill);
      odd.add(v[i].v[1], spill);
    }
  } else {
    std::uint32_t most = 0, least = 0xffffffffu;
#pragma unroll
    for (unsigned i = 0; i < ITEMS; ++i)
#pragma unroll
      for (unsigned j = 0; j < kVec; ++j) {
        const std::uint32_t m = ExactBits<T>::magnitude(v[i].v[j]);
        most = m > most ? m : most;
        least = m - 1u < least ? m - 1u : least;
      }
    constexpr int kLog2Count = ITEMS * kVec == 16 ? 4 : ITEMS * kVec == 32 ? 5 : 6;
    const int emax = static_cast<int>(most >> ExactBits<T>::kShift);
    const int emin = static_cast<int>(least >> ExactBits<T>::kShift);
    if (emax < static_cast<int>(ExactBits<T>::kSpecial) && tile_sum_is_exact<T>(emin, emax, kLog2Count)) {
      double s[SUMS];
#pragma unroll
      for (unsigned k = 0; k < SUMS; ++k) s[k] = -0.0;
#pragma unroll
      for (unsigned i = 0; i < ITEMS; ++i)
#pragma unroll
        for (unsigned j = 0; j < kVec; ++j) s[(i * kVec + j) % SUMS] += exact_value(v[i].v[j]);
#pragma unroll
      for (unsigned k = 1; k < SUMS; ++k) s[0] += s[k];  // every partial sum is exact: any order
      carry.add(s[0], spill);
    } else {
#pragma unroll 1
      for (unsigned i = 0; i < ITEMS; ++i)
#pragma unroll 1
        for (unsigned j = 0; j < kVec; ++j) carry.add(exact_value(input[base + std::uint64_t(i) * kThreads * kVec + j]), spill);
    }
  }
}

template <class T, class Out, unsigned ITEMS, unsigned SUMS, bool DYN, int END>
__global__ void __launch_bounds__(kThreads)
    probeExact(const T* input, std::uint64_t n, unsigned long long* exact, unsigned* ticket,
               unsigned long long* counter, Out* output) {
  constexpr int kD = ExactTraits<T>::kDigits;
  constexpr std::uint64_t kTile = std::uint64_t(kThreads) * Shape<T>::kVec * ITEMS;
  __shared__ unsigned long long digit_storage[kD];
  rl::smem<unsigned long long> digits = digit_storage;
  __shared__ unsigned misc_storage[5];
  rl::smem<unsigned> misc = misc_storage;
  __shared__ unsigned long long next_tile[2];
  if (threadIdx.x < static_cast<unsigned>(kD)) digits[threadIdx.x] = 0ull;
  if (threadIdx.x == 0) misc[0] = 0u;
  __syncthreads();
  const BlockDigits<T> spill{digits};
  ExactCarry carry, odd;
  const std::uint64_t tiles = n / kTile;
  std::uint64_t since_flush = 0;
  unsigned long long* my_exact = exact + (END == 2 ? (blockIdx.x % kCopies) * kExactWords : 0);
  auto after_tile = [&] {
    if (++since_flush == kFlushTiles) {
      since_flush = 0;
      __syncthreads();
      flush_digits<T>(digits, rl::gmem<unsigned long long>(my_exact));
      __syncthreads();
    }
  };
  if constexpr (DYN) {
    unsigned parity = 0;
    for (std::uint64_t t = blockIdx.x; t < tiles;) {
      unsigned long long nxt = 0;
      if (threadIdx.x == 0) nxt = gridDim.x + atomicAdd(counter, 1ull);  // waited for after the fold
      fold_full_tile<T, ITEMS, SUMS>(input, t * kTile, carry, odd, spill);
      if (threadIdx.x == 0) next_tile[parity] = nxt;
      __syncthreads();
      t = next_tile[parity];
      parity ^= 1;
      after_tile();
    }
  } else {
    for (std::uint64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
      fold_full_tile<T, ITEMS, SUMS>(input, t * kTile, carry, odd, spill);
      after_tile();
    }
  }
  if constexpr (std::is_same_v<T, double>) carry.merge(odd, spill);
  if constexpr (END == 0) {
    if (carry.a == 1.2345e300) output[0] = Out(carry.b);  // keeps the loop; never true here
    if (DYN) {
      __syncthreads();
      if (threadIdx.x == 0 && take_ticket(rl::gmem<unsigned>(ticket)) == gridDim.x - 1) {
        *counter = 0;
        *ticket = 0;
      }
    }
    return;
  } else {
    const unsigned seen = warp_finish<T>(carry, digits);
    if (threadIdx.x % 32 == 0 && seen != 0) atomicOr(&misc[0], seen);
    __syncthreads();
    flush_digits<T>(digits, rl::gmem<unsigned long long>(my_exact));
    if (threadIdx.x == 0 && misc[0] != 0)
      atomicOr(&exact[kMaxExactDigits], static_cast<unsigned long long>(misc[0]));
    __syncthreads();
    if (threadIdx.x == 0) misc[1] = take_ticket(rl::gmem<unsigned>(ticket)) == gridDim.x - 1 ? 1u : 0u;
    __syncthreads();
    if (misc[1] == 0) return;
    rl::gmem<unsigned long long> g(exact);
    if (threadIdx.x < static_cast<unsigned>(kD)) {
      unsigned long long v = 0;
      for (unsigned c = 0; c < (END == 2 ? kCopies : 1u); ++c) {
        v += load_other_block(g, c * kExactWords + threadIdx.x);
        exact[c * kExactWords + threadIdx.x] = 0ull;
      }
      digits[threadIdx.x] = v;
    }
    if (threadIdx.x == 0) misc[0] = static_cast<unsigned>(load_other_block(g, kMaxExactDigits));
    __syncthreads();
    const unsigned seen_flags = misc[0];
    if (threadIdx.x == 0) {
      exact[kMaxExactDigits] = 0ull;
      *ticket = 0u;
      *counter = 0ull;
    }
    write_result<T, Out, false>(digits, seen_flags, n, rl::gmem<Out>(output));
  }
}

static L2Flush* g_flush = nullptr;
int g_sms = 0;
unsigned long long* g_exact;
unsigned* g_ticket;
unsigned long long* g_counter;

template <class T, class Out, unsigned ITEMS, unsigned SUMS, bool DYN, int END>
void variant(const char* name, const T* in, std::size_t n, Out* out, int reps, Out want, bool* ok) {
  constexpr auto kernel = probeExact<T, Out, ITEMS, SUMS, DYN, END>;
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  const std::uint64_t tiles = n / (std::uint64_t(kThreads) * Shape<T>::kVec * ITEMS);
  const unsigned grid = unsigned(std::max<std::uint64_t>(1, std::min<std::uint64_t>(tiles, std::uint64_t(g_sms) * per_sm)));
  auto launch = [&] { kernel<<<grid, kThreads>>>(in, n, g_exact, g_ticket, g_counter, out); };
  launch();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  Out got;
  CK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
  const bool same = std::memcmp(&got, &want, sizeof got) == 0;
  if (END != 0 && !same) *ok = false;
  std::printf("  %-22s %8.2f%s", name, cold_us(*g_flush, launch, reps), END == 0 ? "" : same ? "" : " WRONG");
  CK(cudaGetLastError());
}

template <class T, class Out>
void sweep(const char* type, const T* in, int reps, bool* ok) {
  Out* out;
  CK(cudaMalloc(&out, 64));
  std::size_t tb = 0;
  CK(cub::DeviceReduce::Sum(nullptr, tb, in, out, std::size_t(1) << 28));
  void* temp;
  CK(cudaMalloc(&temp, tb));
  for (int lg : {14, 16, 18, 20, 22, 24, 26, 28}) {
    const std::size_t n = std::size_t(1) << lg;
    if (!launch_reduce<T, op::sum>(in, n, out, nullptr, {}).ok()) std::exit(2);
    CK(cudaDeviceSynchronize());
    Out want;
    CK(cudaMemcpy(&want, out, sizeof want, cudaMemcpyDeviceToHost));
    std::printf("%s 2^%d  library %8.2f  cub %8.2f\n", type, lg, cold_us(*g_flush, [&] {
      if (!launch_reduce<T, op::sum>(in, n, out, nullptr, {}).ok()) std::exit(2);
    }, reps), cold_us(*g_flush, [&] { std::size_t t = tb; CK(cub::DeviceReduce::Sum(temp, t, in, out, n)); }, reps));
    variant<T, Out, 8, 1, false, 1>("i8 s1 static end1", in, n, out, reps, want, ok);
    variant<T, Out, 8, 1, false, 0>("i8 s1 static end0", in, n, out, reps, want, ok);
    variant<T, Out, 8, 1, false, 2>("i8 s1 static end2", in, n, out, reps, want, ok);
    std::printf("\n");
    variant<T, Out, 8, 4, false, 1>("i8 s4 static end1", in, n, out, reps, want, ok);
    variant<T, Out, 8, 1, true, 1>("i8 s1 dyn end1", in, n, out, reps, want, ok);
    variant<T, Out, 8, 4, true, 2>("i8 s4 dyn end2", in, n, out, reps, want, ok);
    std::printf("\n");
    variant<T, Out, 4, 1, false, 1>("i4 s1 static end1", in, n, out, reps, want, ok);
    variant<T, Out, 4, 4, true, 2>("i4 s4 dyn end2", in, n, out, reps, want, ok);
    variant<T, Out, 4, 4, true, 0>("i4 s4 dyn end0", in, n, out, reps, want, ok);
    std::printf("\n");
    std::fflush(stdout);
  }
  CK(cudaFree(temp));
  CK(cudaFree(out));
}

// reduceExact<T> itself (not a copy) with kLoads vectors per thread per tile, compiled for
// kBlocks blocks per SM and launched with as many as fit; returns its cold time, or -1 when its
// bits differ from the library's.
template <class T, class Out, unsigned kLoads, int kBlocks>
float exact_shape(const T* in, std::size_t n, Out* out, int reps, Out want, unsigned* grid_out) {
  constexpr auto kernel = reduceExact<T, Out, false, false, kLoads, kBlocks>;
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  const std::uint64_t tile = std::uint64_t(kThreads) * Shape<T>::kVec * kLoads;
  const std::uint64_t tiles = (n + tile - 1) / tile;
  const unsigned grid = unsigned(std::max<std::uint64_t>(1, std::min<std::uint64_t>(tiles, std::uint64_t(g_sms) * per_sm)));
  *grid_out = grid;
  auto launch = [&] {
    kernel<<<grid, kThreads>>>(rl::gmem<const T>(in), n, kAligned, rl::gmem<unsigned long long>(g_exact),
                               rl::gmem<unsigned>(g_ticket), rl::gmem<Out>(out));
  };
  launch();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  Out got;
  CK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
  const float us = cold_us(*g_flush, launch, reps);
  return std::memcmp(&got, &want, sizeof got) == 0 ? us : -1.0f;
}

// What CUB reads the elements as: CUDA's own 16-bit types, which convert to float.
template <class T> struct CubElement { using type = T; };
template <> struct CubElement<reducelab::half> { using type = __half; };
template <> struct CubElement<reducelab::bfloat16> { using type = __nv_bfloat16; };

template <class T, class Out>
void shape_sweep(const char* type, const T* in, int reps, bool* ok, int* sink) {
  const auto* cin = reinterpret_cast<const typename CubElement<T>::type*>(in);
  Out* out;
  CK(cudaMalloc(&out, 64));
  std::size_t tb = 0;
  CK(cub::DeviceReduce::Reduce(nullptr, tb, cin, out, std::size_t(1) << 30, cuda::std::plus<Out>{}, Out(0)));
  void* temp;
  CK(cudaMalloc(&temp, tb));
  const int top = sizeof(T) == 8 ? 28 : 30;
  for (int lg = 18; lg <= top; lg += 2) {
    const std::size_t n = std::size_t(1) << lg;
    if (!launch_reduce<T, op::sum>(in, n, out, nullptr, {}).ok()) std::exit(2);
    CK(cudaDeviceSynchronize());
    Out want;
    CK(cudaMemcpy(&want, out, sizeof want, cudaMemcpyDeviceToHost));
    const float lib = cold_us(*g_flush, [&] { if (!launch_reduce<T, op::sum>(in, n, out, nullptr, {}).ok()) std::exit(2); }, reps);
    const float cub = cold_us(*g_flush, [&] {
      std::size_t t = tb;
      CK(cub::DeviceReduce::Reduce(temp, t, cin, out, n, cuda::std::plus<Out>{}, Out(0)));
    }, reps);
    const float read = cold_us(*g_flush, [&] {
      read_units<4><<<g_sms * 8, 256>>>(reinterpret_cast<const int4*>(in), n * sizeof(T) / 16, sink);
    }, reps);
    std::printf("%s 2^%d  library %8.2f  cub %8.2f  bare read %8.2f |", type, lg, lib, cub, read);
    unsigned g = 0;
    auto show = [&](const char* name, float us) {
      if (us < 0) *ok = false;
      std::printf("  %s %8.2f%s (grid %u)", name, us < 0 ? 0.0f : us, us < 0 ? " WRONG" : "", g);
    };
    if constexpr (sizeof(T) == 4) {
      show("8x5", exact_shape<T, Out, 8, 5>(in, n, out, reps, want, &g));
      show("4x5", exact_shape<T, Out, 4, 5>(in, n, out, reps, want, &g));
      show("2x6", exact_shape<T, Out, 2, 6>(in, n, out, reps, want, &g));
    } else if constexpr (sizeof(T) == 2) {
      show("8x3", exact_shape<T, Out, 8, 3>(in, n, out, reps, want, &g));
      show("4x4", exact_shape<T, Out, 4, 4>(in, n, out, reps, want, &g));
      show("2x6", exact_shape<T, Out, 2, 6>(in, n, out, reps, want, &g));
    } else {
      show("8x4", exact_shape<T, Out, 8, 4>(in, n, out, reps, want, &g));
      show("4x4", exact_shape<T, Out, 4, 4>(in, n, out, reps, want, &g));
      show("4x5", exact_shape<T, Out, 4, 5>(in, n, out, reps, want, &g));
      show("2x6", exact_shape<T, Out, 2, 6>(in, n, out, reps, want, &g));
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  CK(cudaFree(temp));
  CK(cudaFree(out));
}

// The values in `h` converted to T, on the device, through shape_sweep.
template <class T, class Out, class Convert>
void sweep_as(const char* type, const std::vector<float>& h, std::size_t n, Convert convert, int reps, bool* ok,
              int* sink) {
  std::vector<T> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = convert(h[i]);
  T* d;
  CK(cudaMalloc(&d, n * sizeof(T)));
  CK(cudaMemcpy(d, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  shape_sweep<T, Out>(type, d, reps, ok, sink);
  CK(cudaFree(d));
}

int shapes_main(int reps) {
  const std::size_t maxn = std::size_t(1) << 30;
  int* sink;
  CK(cudaMalloc(&sink, 4));
  bool ok = true;
  std::vector<float> h(maxn);  // uniform in [-1, 1), as `reducelab bench` draws
  std::uint64_t x = 88172645463325252ull;
  for (auto& v : h) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    v = float((x >> 40) * 0x1p-24 * 2.0 - 1.0);
  }
  sweep_as<float, float>("float", h, maxn, [](float v) { return v; }, reps, &ok, sink);
  sweep_as<reducelab::half, float>("half", h, maxn, [](float v) { return reducelab::to_half(v); }, reps, &ok, sink);
  sweep_as<reducelab::bfloat16, float>("bf16", h, maxn, [](float v) { return reducelab::to_bfloat16(v); }, reps, &ok, sink);
  // Doubles with full significands, 2^28 of them.
  sweep_as<double, double>("double", h, std::size_t(1) << 28, [](float v) { return double(v) * 1.0000001; }, reps, &ok,
                           sink);
  std::printf("%s\n", ok ? "every shape gave the library's bits" : "SOME SHAPE DIFFERED");
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 30;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  g_sms = p.multiProcessorCount;
  std::printf("device %s, %d SMs; cold us (median of %d); library = reducelab::reduce's exact sum\n", p.name, g_sms, reps);
  L2Flush flush(p);
  g_flush = &flush;
  CK(cudaMalloc(&g_exact, kCopies * kExactWords * 8));
  CK(cudaMemset(g_exact, 0, kCopies * kExactWords * 8));
  CK(cudaMalloc(&g_ticket, 4));
  CK(cudaMemset(g_ticket, 0, 4));
  CK(cudaMalloc(&g_counter, 8));
  CK(cudaMemset(g_counter, 0, 8));
  if (argc > 2 && std::string(argv[2]) == "shapes") return shapes_main(reps);
  const std::size_t maxn = std::size_t(1) << 28;
  std::vector<float> hf(maxn);
  for (std::size_t i = 0; i < maxn; ++i) hf[i] = float(int((i * 2654435761u) >> 20) - 2048) * 0.37f;
  float* fin;
  CK(cudaMalloc(&fin, maxn * 4));
  CK(cudaMemcpy(fin, hf.data(), maxn * 4, cudaMemcpyHostToDevice));
  bool ok = true;
  sweep<float, float>("float", fin, reps, &ok);
  CK(cudaFree(fin));
  std::vector<double> hd(maxn);
  for (std::size_t i = 0; i < maxn; ++i) hd[i] = double(hf[i]) * 1.0000001;
  double* din;
  CK(cudaMalloc(&din, maxn * 8));
  CK(cudaMemcpy(din, hd.data(), maxn * 8, cudaMemcpyHostToDevice));
  sweep<double, double>("double", din, reps, &ok);
  std::printf("%s\n", ok ? "every variant with an end gave the library's bits" : "SOME VARIANT DIFFERED");
  return ok ? 0 : 1;
}
