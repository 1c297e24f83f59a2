// A developer's probe for exact float sums as one wide integer (exact_wide.cuh: the order-free
// kernel with ExactWideSum, at every size; the library takes it up to 2^16) against the digits'
// kernel (agent_exact.cuh: reduceExact, launched as the library launches it for float) and CUB's
// float sum, on three inputs,
// timed cold (each call queued behind an L2 flush) and, up to 2^22, with warm code (after the
// flush, one untimed call on another copy of the input: the data is cold, the kernel's code is
// not), median of R:
//   uniform   the bench's values, uniform in [-1, 1)
//   range     random signs, exponents over every binade from 2^-149 to 2^127, random significands
//             (most units take the wide sum's cut path, several levels deep)
//   cancel    [1e30, 1, -1e30, 3] repeated (every unit takes the cut path, two levels)
//   wide_probe [repeats=50]
//   wide_probe mid      every power of two from 2^16 to 2^22, cold only, median of 30 (where the
//                       library's choice between the two kernels is made)
//   wide_probe bf16     bfloat16 sums: the wide integer against the library's launch, every power
//                       of two from 2^14 to 2^24, cold, median of 30, same three inputs (the library
//                       takes the wide integer itself from 16385 to 2^20 elements, the digits outside)
//   wide_probe ncu trace  the stages' %globaltimer stamps (below) at 2^16 floats on 16 blocks and
//                       at 2^20 on the library's grid, the wide integer beside the int32 sum
// Both exact kernels must give the same bits on every input.
#include <cuda_runtime.h>
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "reducelab/detail/device_reduce.cuh"
#include "probe_timing.cuh"

using namespace reducelab::detail;
namespace op = reducelab::op;

// The stages of one launch (agent_order_free.cuh, trace_stage): %globaltimer of thread 0 of each block.
__device__ unsigned long long g_trace[4096][8];
__device__ __forceinline__ void stamp(unsigned stage) {
  if (threadIdx.x == 0) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    g_trace[blockIdx.x][stage] = t;
  }
}
struct TracedWide : ExactWideSum<float, false> {
  __device__ static void trace(unsigned stage) { stamp(stage); }
};
struct TracedInt : semantics_t<int, op::sum> {
  __device__ static void trace(unsigned stage) { stamp(stage); }
};

// One cold launch of reduceOrderFree<T, Sem> over n elements at `grid` blocks (never one cluster),
// its stages printed per block in ns from the first block's start.
template <class T, class Sem>
void trace_launch(const char* name, const L2Flush& flush, const T* in, std::uint64_t n, unsigned grid, void* out,
                  const Workspace& ws) {
  const FreeShape s = free_shape<T>(n, in, grid, kFreeLoads);
  std::vector<unsigned long long> t(std::size_t(s.grid) * 8);
  for (int r = 0; r < 4; ++r) {
    unsigned long long* p = nullptr;
    CK(cudaGetSymbolAddress(reinterpret_cast<void**>(&p), g_trace));
    CK(cudaMemset(p, 0, t.size() * 8));
    flush();
    CK(launch_kernel_clustered(reduceOrderFree<T, Sem, kFreeLoads, false>, s.grid, 1u, nullptr, in, s, ws.posts,
                               ws.ticket, static_cast<typename Sem::Out*>(out)));
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(t.data(), p, t.size() * 8, cudaMemcpyDeviceToHost));
  }
  unsigned long long t0 = ~0ull;
  for (unsigned b = 0; b < s.grid; ++b) t0 = std::min(t0, t[b * 8]);
  std::printf("trace %s n=%llu grid %u (ns from the first start; stages 0 start, 1 units, 2 folded, 3 posted/collecting, 4 taken, 5 folded, 6 written)\n",
              name, static_cast<unsigned long long>(n), s.grid);
  for (unsigned b = 0; b < s.grid; b += (b < 4 || b + 4 >= s.grid) ? 1 : (s.grid / 8 > 1 ? s.grid / 8 : 1)) {
    std::printf("  block %3u:", b);
    for (int k = 0; k < 7; ++k)
      if (t[b * 8 + k] != 0) std::printf(" %d:%lld", k, static_cast<long long>(t[b * 8 + k] - t0));
    std::printf("\n");
  }
}

int main(int argc, char** argv) {
  const bool profile = argc > 1 && std::strcmp(argv[1], "ncu") == 0;  // a few launches for Nsight Compute
  const bool grids_only = argc > 1 && std::strcmp(argv[1], "grids") == 0;  // only the forced grids' table
  const bool mid = argc > 1 && std::strcmp(argv[1], "mid") == 0;  // every power of two of the mid sizes, cold
  const bool bf16 = argc > 1 && std::strcmp(argv[1], "bf16") == 0;  // bfloat16 sums, every power of two, cold
  const int reps = argc > 1 && !profile && !grids_only && !mid && !bf16 ? std::atoi(argv[1]) : 30;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("device %s, %d SMs\n", p.name, p.multiProcessorCount);
  L2Flush flush(p);
  const std::size_t maxn = std::size_t(1) << 30;
  std::vector<float> h(maxn);
  float *in, *out, *other;
  const std::size_t kWarmMax = std::size_t(1) << 22;
  CK(cudaMalloc(&in, maxn * 4));
  CK(cudaMalloc(&other, kWarmMax * 4));
  const float* cur = in;  // what the timed calls read
  CK(cudaMalloc(&out, 64));
  Workspace ws;
  int device = 0, sms = 0;
  if (!workspace_for(nullptr, &ws).ok() || !current_sm_count(&device, &sms).ok()) return 2;
  std::size_t cub_bytes = 0;
  CK(cub::DeviceReduce::Sum(nullptr, cub_bytes, in, out, static_cast<int>(maxn)));
  void* cub_temp = nullptr;
  CK(cudaMalloc(&cub_temp, cub_bytes));

  // The digits' kernel for n floats, as launch_reduce launched it before the wide integer.
  const auto digits = [&](std::uint64_t n) {
    constexpr auto kernel = reduceExact<float, float, false>;
    constexpr auto small = reduceExact<float, float, false, true>;
    unsigned grid = 1, limit = 1;
    if (!exact_grid<kernel>(n, Shape<float>::kTile, {}, device, sms, &grid).ok()) std::exit(2);
    if (!cluster_limit<small>(device, &limit).ok()) std::exit(2);
    const std::uint64_t tiles = (n + Shape<float>::kTile - 1) / Shape<float>::kTile;
    const unsigned cluster = tiles <= grid ? one_cluster(grid, limit, false) : 1u;
    const bool one_block = tiles <= 1;
    return std::function<void()>([=, &cur] {
      CK(cluster > 1 || one_block
             ? launch_kernel_clustered(small, grid, cluster, nullptr, cur, n, kAligned, ws.exact, ws.ticket, out)
             : launch_kernel(kernel, grid, nullptr, cur, n, kAligned, ws.exact, ws.ticket, out));
    });
  };
  const auto result = [&] {
    float r = 0;
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(&r, out, 4, cudaMemcpyDeviceToHost));
    return r;
  };

  if (profile) {  // 2^16 uniform floats at the default grid (one cluster), then at a forced grid of 16 (posts)
    for (std::size_t i = 0; i < (std::size_t(1) << 16); ++i) h[i] = static_cast<float>(i % 1000) * 0x1p-10f;
    CK(cudaMemcpy(in, h.data(), std::size_t(4) << 16, cudaMemcpyHostToDevice));
    trace_launch<float, TracedWide>("wide", flush, in, std::uint64_t(1) << 16, 16, out, ws);
    trace_launch<int, TracedInt>("int32", flush, reinterpret_cast<const int*>(in), std::uint64_t(1) << 16, 16, out, ws);
    trace_launch<float, TracedWide>("wide", flush, in, std::uint64_t(1) << 16, 4, out, ws);
    if (argc > 2) {
      for (std::size_t i = 0; i < (std::size_t(1) << 20); ++i) h[i] = static_cast<float>(i % 1000) * 0x1p-10f;
      CK(cudaMemcpy(in, h.data(), std::size_t(4) << 20, cudaMemcpyHostToDevice));
      FreeShape s;
      if (!order_free_shape<float, ExactWideSum<float, false>, kFreeLoads, false>(in, std::uint64_t(1) << 20, {}, device, sms, &s).ok())
        return 2;
      trace_launch<float, TracedWide>("wide", flush, in, std::uint64_t(1) << 20, s.grid, out, ws);
      trace_launch<int, TracedInt>("int32", flush, reinterpret_cast<const int*>(in), std::uint64_t(1) << 20, s.grid, out, ws);
      return 0;
    }
    for (unsigned g : {0u, 16u})
      for (int r = 0; r < 3; ++r) {
        reducelab::Options o;
        o.grid = g;
        flush();
        if (!launch_reduce<float, op::sum>(in, std::uint64_t(1) << 16, out, nullptr, o).ok()) return 2;
        CK(cudaDeviceSynchronize());
      }
    return 0;
  }
  bool all_equal = true;
  std::mt19937_64 rng(5);
  if (bf16) {  // bfloat16: the wide integer against the library's own launch (the digits' kernel)
    using reducelab::bfloat16;
    std::vector<bfloat16> b(std::size_t(1) << 24);
    auto* bin = reinterpret_cast<bfloat16*>(in);
    for (const char* data : {"uniform", "range", "cancel"}) {
      for (std::size_t i = 0; i < b.size(); ++i) {
        const std::uint64_t r = rng();
        if (data[0] == 'u') b[i].bits = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(static_cast<float>(static_cast<std::int64_t>(r >> 40) - (1 << 23)) * 0x1p-23f) >> 16);
        else if (data[0] == 'r') b[i].bits = static_cast<std::uint16_t>(((r >> 16) & 0x8000u) | ((1 + r % 254) << 7) | ((r >> 24) & 0x7fu));
        else b[i].bits = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(std::array<float, 4>{1e30f, 1.0f, -1e30f, 3.0f}[i % 4]) >> 16);
      }
      CK(cudaMemcpy(bin, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
      for (int lg = 14; lg <= 24; ++lg) {
        const std::uint64_t n = std::uint64_t(1) << lg;
        const auto wide = [&] {
          if (!launch_order_free<bfloat16, ExactWideSum<bfloat16, false>, kFreeLoads, false>(bin, n, out, nullptr, {}, ws, device, sms).ok())
            std::exit(2);
        };
        const auto lib = [&] {
          if (!launch_reduce<bfloat16, op::sum>(bin, n, out, nullptr, {}).ok()) std::exit(2);
        };
        wide();
        const float a = result();
        lib();
        const float c = result();
        if (std::memcmp(&a, &c, 4) != 0) {
          std::printf("MISMATCH bf16 %s 2^%d: wide %.9g, library %.9g\n", data, lg, a, c);
          all_equal = false;
        }
        std::printf("bf16 %-8s 2^%d  wide %.2f  library %.2f  (sum %.9g)\n", data, lg, cold_us(flush, wide, reps),
                    cold_us(flush, lib, reps), a);
      }
    }
    std::printf(all_equal ? "the wide integer and the library gave the same bits on every input\n" : "MISMATCHES above\n");
    return all_equal ? 0 : 1;
  }
  for (const char* data : {"uniform", "range", "cancel"}) {
    if (grids_only) break;
    for (std::size_t i = 0; i < maxn; ++i) {
      if (data[0] == 'u') {
        h[i] = static_cast<float>(static_cast<std::int64_t>(rng() >> 40) - (1 << 23)) * 0x1p-23f;
      } else if (data[0] == 'r') {
        const std::uint64_t r = rng();
        h[i] = float_from_bits(static_cast<std::uint32_t>(((r >> 40) & 0x80000000u) | ((r % 254) << 23) | (r >> 41 & 0x7fffffu)));
      } else {
        const float pattern[4] = {1e30f, 1.0f, -1e30f, 3.0f};
        h[i] = pattern[i % 4];
      }
    }
    CK(cudaMemcpy(in, h.data(), maxn * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(other, h.data(), kWarmMax * 4, cudaMemcpyHostToDevice));
    const auto warm_us = [&](const std::function<void()>& f, int r) {  // f on the other copy first
      return warm_code_us(flush, f, [&] {
        cur = other;
        f();
        cur = in;
      }, r);
    };
    for (int lg = mid ? 16 : 10; lg <= (mid ? 22 : 30); lg += mid ? 1 : 2) {
      const std::uint64_t n = std::uint64_t(1) << lg;
      const auto lib = [&] {  // the wide integer at every size, as the library launches it up to 2^20
        if (!launch_order_free<float, ExactWideSum<float, false>, kFreeLoads, false>(cur, n, out, nullptr, {}, ws, device, sms).ok())
          std::exit(2);
      };
      const auto dig = digits(n);
      const auto cub = [&] { CK(cub::DeviceReduce::Sum(cub_temp, cub_bytes, cur, out, static_cast<int>(n))); };
      lib();
      const float a = result();
      dig();
      const float b = result();
      if (std::memcmp(&a, &b, 4) != 0) {
        std::printf("MISMATCH %s 2^%d: wide %.9g, digits %.9g\n", data, lg, a, b);
        all_equal = false;
      }
      const int r = lg >= 26 ? std::max(reps / 5, 5) : reps;
      std::printf("%-8s 2^%d  wide %.2f  digits %.2f  cub %.2f", data, lg, cold_us(flush, lib, r), cold_us(flush, dig, r),
                  cold_us(flush, cub, r));
      if (n <= kWarmMax && !mid)
        std::printf("  | warm code: wide %.2f  digits %.2f  cub %.2f", warm_us(lib, r), warm_us(dig, r),
                    warm_us(cub, r));
      std::printf("  (sum %.9g)\n", a);
    }
  }
  // Where the mid sizes' time goes: the same sums at forced grids (Options::grid; a forced grid is
  // never one cluster, so every block but block 0 posts its result), the exact float sum beside the
  // int32 sum (4-byte posts) and the exact half sum (16-byte posts) over the same bytes.
  for (std::size_t i = 0; i < (std::size_t(1) << 22); ++i)
    h[i] = static_cast<float>(static_cast<std::int64_t>(rng() >> 40) - (1 << 23)) * 0x1p-23f;
  CK(cudaMemcpy(in, h.data(), std::size_t(4) << 22, cudaMemcpyHostToDevice));
  for (int lg : {16, 18, 20}) {
    const std::uint64_t n = std::uint64_t(1) << lg;
    for (unsigned g : {0u, 1u, 4u, 16u, 32u, 64u, 128u, 256u}) {
      reducelab::Options o;
      o.grid = g;
      const auto f = [&] {
        if (!launch_order_free<float, ExactWideSum<float, false>, kFreeLoads, false>(cur, n, out, nullptr, o, ws, device, sms).ok())
          std::exit(2);
      };
      const auto i32 = [&] {
        if (!launch_reduce<int, op::sum>(reinterpret_cast<const int*>(cur), n, reinterpret_cast<std::int64_t*>(out), nullptr, o).ok()) std::exit(2);
      };
      const auto h16 = [&] {
        if (!launch_reduce<reducelab::half, op::sum>(reinterpret_cast<const reducelab::half*>(cur), 2 * n, out, nullptr, o).ok()) std::exit(2);
      };
      std::printf("grid 2^%d g=%u  float exact %.2f  int32 %.2f  half exact (2n) %.2f\n", lg, g, cold_us(flush, f, reps),
                  cold_us(flush, i32, reps), cold_us(flush, h16, reps));
    }
  }
  std::printf(all_equal ? "the wide integer and the digits gave the same bits on every input\n" : "MISMATCHES above\n");
  return all_equal ? 0 : 1;
}
