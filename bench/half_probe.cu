// A developer's probe for exact sums of halves as integers (exact_half.cuh: the order-free kernel
// with ExactHalfSum64 or ExactHalfSum128): where the time goes against the same kernel doing less, timed cold
// (each call queued behind an L2 flush) and with warm code (after the flush, one untimed call on
// another input: the data is cold, the kernel's code is not), median of R. Every kernel is launched
// as the library launches it (its grid, one cluster when that grid is small).
//   half_probe [repeats=50]
// Rows:
//   lib      reducelab::reduce, half sum (exact: one of the kernels below)
//   e64      ExactHalfSum64 (the library's where no block sums more than 2^20 elements), 4 vectors a
//            thread per unit
//   e128 / e128x8 / e128x8c   ExactHalfSum128 with 4 or 8 vectors a thread per unit (c: contiguous runs)
//   dbl      the halves summed into one double per thread, Acc double (not exact): the conversions
//            and additions without the integer
//   max      the half max of the library (two keys per word, integer work only)
//   int32    the int32 sum over the same bytes
// The exact rows must give lib's bits.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "reducelab/detail/device_reduce.cuh"
#include "probe_timing.cuh"

using namespace reducelab::detail;
using H = reducelab::half;
namespace op = reducelab::op;

struct DoubleSum {
  using Acc = double;
  using Inner = double;
  using Out = float;
  static constexpr bool order_free = true;
  static constexpr bool has_atomic_combine = false;
  RL_HD_INLINE static Acc identity() { return -0.0; }
  RL_HD_INLINE static Inner inner_identity() { return -0.0; }
  RL_HD_INLINE static Inner lift(H x, std::uint64_t) { return static_cast<double>(widen(x)); }
  RL_HD_INLINE static Inner inner_combine(Inner a, Inner b) { return a + b; }
  RL_HD_INLINE static Acc absorb(Acc a, Inner b) { return a + b; }
  RL_HD_INLINE static Acc combine(Acc a, Acc b) { return a + b; }
  RL_HD_INLINE static Out finish(Acc a, std::uint64_t) { return static_cast<float>(a); }
};

static L2Flush* g_flush = nullptr;
static const void* g_in = nullptr;  // the input the calls read; swapped for the warm-code call
static const void* g_other = nullptr;

enum Mode { cold, code };
float time_us(Mode m, const std::function<void()>& f, int reps) {
  if (m == cold) return cold_us(*g_flush, f, reps);
  return warm_code_us(*g_flush, f, [&] {
    std::swap(g_in, g_other);
    f();
    std::swap(g_in, g_other);
  }, reps);
}

// reduceOrderFree<T, Sem, L, C> over n elements of g_in as the library launches it.
template <class T, class Sem, unsigned L, bool C>
std::function<void()> by_hand(std::uint64_t n, void* out, const Workspace& ws, int device, int sms) {
  constexpr auto kernel = reduceOrderFree<T, Sem, L, C>;
  int per = 0;
  unsigned limit = 1;
  if (!resident_blocks<kernel>(device, &per).ok() || !cluster_limit<kernel>(device, &limit).ok()) std::exit(2);
  const FreeShape s = free_shape<T>(n, g_in, std::min<std::uint64_t>(std::uint64_t(sms) * per, kPartialSlots), L);
  const unsigned cluster = one_cluster(s.grid, limit, false);
  return [=] {
    CK(launch_kernel_clustered(kernel, s.grid, cluster, nullptr, static_cast<const T*>(g_in), s, ws.posts, ws.ticket,
                               static_cast<typename Sem::Out*>(out)));
  };
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 50;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("device %s, %d SMs\n", p.name, p.multiProcessorCount);
  L2Flush flush(p);
  g_flush = &flush;
  const std::size_t maxn = std::size_t(1) << 30;
  std::vector<std::uint16_t> h(maxn);
  std::uint64_t x = 88172645463325252ull;
  for (auto& e : h) {  // finite halves of random sign, exponent field 1..15 (2^-14 to 2^0), random significand
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    e = static_cast<std::uint16_t>((x & 0x83ffu) | ((1 + (x >> 20) % 15) << 10));
  }
  void *a, *b, *out;
  CK(cudaMalloc(&a, maxn * 2));
  CK(cudaMalloc(&b, maxn * 2));
  CK(cudaMalloc(&out, 64));
  CK(cudaMemcpy(a, h.data(), maxn * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b, h.data(), maxn * 2, cudaMemcpyHostToDevice));
  g_in = a;
  g_other = b;
  Workspace ws;
  int device = 0, sms = 0;
  if (!workspace_for(nullptr, &ws).ok() || !current_sm_count(&device, &sms).ok()) return 2;

  const auto result = [&] {
    float r = 0;
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(&r, out, 4, cudaMemcpyDeviceToHost));
    return r;
  };
  bool all_equal = true;
  for (int lg = 10; lg <= 30; lg += 2) {
    const std::uint64_t n = std::uint64_t(1) << lg;
    struct Row {
      const char* name;
      std::function<void()> f;
      bool exact;
    };
    std::vector<Row> rows = {
        {"lib", [&] { if (!launch_reduce<H, op::sum>(static_cast<const H*>(g_in), n, static_cast<float*>(out), nullptr, {}).ok()) std::exit(2); }, true},
        {"e64", by_hand<H, ExactHalfSum64<false>, 4, false>(n, out, ws, device, sms), true},  // halves below 1: no sum near 2^60 units
        {"e128", by_hand<H, ExactHalfSum128<false>, 4, false>(n, out, ws, device, sms), true},
        {"e128x8", by_hand<H, ExactHalfSum128<false>, 8, false>(n, out, ws, device, sms), true},
        {"e128x8c", by_hand<H, ExactHalfSum128<false>, 8, true>(n, out, ws, device, sms), true},
        {"dbl", by_hand<H, DoubleSum, 4, false>(n, out, ws, device, sms), false},
        {"max", by_hand<H, semantics_t<H, op::max>, 4, false>(n, out, ws, device, sms), false},
        {"int32", by_hand<int, semantics_t<int, op::sum>, 4, false>(n / 2, out, ws, device, sms), false},
    };
    float want = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      rows[i].f();
      const float got = result();
      if (i == 0) want = got;
      if (rows[i].exact && std::memcmp(&got, &want, 4) != 0) {
        std::printf("MISMATCH 2^%d %s: %.9g against lib's %.9g\n", lg, rows[i].name, got, want);
        all_equal = false;
      }
    }
    for (Mode m : {cold, code}) {
      if (m == code && lg > 22) continue;
      std::printf("2^%d %-4s", lg, m == cold ? "cold" : "code");
      for (const Row& r : rows) std::printf("  %s %.2f", r.name, time_us(m, r.f, lg >= 26 ? std::max(reps / 5, 5) : reps));
      std::printf("\n");
    }
  }
  std::printf(all_equal ? "every exact row gave lib's bits\n" : "MISMATCHES above\n");
  return all_equal ? 0 : 1;
}
