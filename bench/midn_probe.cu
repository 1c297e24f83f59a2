// A developer's probe for small and mid sizes (2^10..2^24): reducelab::reduce against CUB and
// against "plain", the textbook last-block-done kernel in several shapes (threads x 16-byte loads
// per thread), in the three timing modes of `reducelab bench` (cold: queued behind an L2 flush;
// batch: 100 back-to-back calls between two events; sync: event, one call, event) and a fourth,
// "code": cold data, warm code (see time_us). Also a
// producer kernel followed by a reduce, to see what overlapping launches save.
//   midn_probe [repeats=50] [filter] [ncu]      (RL_PROBE_SIZES=11,13 times other sizes: log2 n <= 26;
//                                                RL_PROBE_MODES=cold,code picks the timing modes;
//                                                RL_PROBE_READ=1 times the read kernel instead, below)
// Rows: cub/cubf/cubd/cubmax (CUB), rl/rlf/rlmax/rlmaxi/rld (reducelab::reduce), rlk/rlkp and
// rlfk/rlfkp (the int32 sum's and exact float sum's large kernels launched by hand: <<<>>> or
// with the library's launch attribute), p<threads>x<loads>
// (plain, ticket), p4acq/p4pollL/p4poll0/p4lib/p4lib1/p8pollL (plain, 256 threads, other ends:
// see plain).
// filter keeps the rows whose name it contains (e.g. "cub,rl,cubf,rlf"); a third argument makes
// one launch of each kernel at 2^16 and 2^20, for `ncu -k regex:'reduce|plain'`.
#include <cub/cub.cuh>
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


__global__ void empty_kernel() {}

// plain last-block-done, int32 sum into int64
// END: how the blocks' partials meet. 0: __threadfence + atomicInc ticket, the last block reads
// the partials back; 1: one acq_rel atom as the ticket (the library's exact kernels); 2: no ticket,
// each block stores {partial, epoch} as one 16-byte store and the grid's last block polls the
// slots until every one carries this call's epoch; 3: the same, block 0 polls (the library's
// order-free kernel, whose posts carry a flag in every 64-bit word instead: posted_results.cuh).
// 4: block 0 collects posts in the library's format (posted_results.cuh: a 1 in every word's
// high half, the slot zeroed as it is taken), four slots a thread in flight as collect_posts
// polls them; 5: the same format, one slot at a time as 3 polls. `partials` is then a zeroed
// buffer of its own. The probe's own check below runs 2 to 5 at four sizes.
template <int THREADS, int LOADS, int END = 0>
__global__ void __launch_bounds__(THREADS) plain(const int* in, std::size_t n, long long* partials, unsigned* ticket, long long* out,
                                                 unsigned epoch = 0) {
  const int4* v = reinterpret_cast<const int4*>(in);
  const std::size_t nv = n / 4;
  long long acc = 0;
  const std::size_t stride = std::size_t(gridDim.x) * THREADS * LOADS;
  for (std::size_t base = std::size_t(blockIdx.x) * THREADS * LOADS + threadIdx.x; base < nv; base += stride) {
    int4 x[LOADS];
#pragma unroll
    for (int i = 0; i < LOADS; ++i) { std::size_t at = base + std::size_t(i) * THREADS; x[i] = at < nv ? __ldg(v + at) : make_int4(0,0,0,0); }
#pragma unroll
    for (int i = 0; i < LOADS; ++i) acc += (long long)x[i].x + x[i].y + x[i].z + x[i].w;
  }
  __shared__ long long s[THREADS / 32];
  __shared__ bool last;
  for (int o = 16; o; o >>= 1) acc += __shfl_down_sync(~0u, acc, o);
  if (threadIdx.x % 32 == 0) s[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    acc = threadIdx.x < THREADS / 32 ? s[threadIdx.x] : 0;
    for (int o = 16; o; o >>= 1) acc += __shfl_down_sync(~0u, acc, o);
  }
  if constexpr (END >= 4) {
    using namespace reducelab::detail;
    unsigned long long* posts = reinterpret_cast<unsigned long long*>(partials);
    if (blockIdx.x != 0) {
      if (threadIdx.x == 0) post_result<long long>(posts, blockIdx.x, acc);
      return;
    }
    acc = threadIdx.x == 0 ? acc : 0;
    constexpr unsigned kBatch = END == 4 ? 4 : 1;
    for (unsigned first = threadIdx.x; first < gridDim.x; first += kBatch * THREADS) {
      unsigned pending = 0;
#pragma unroll
      for (unsigned k = 0; k < kBatch; ++k) {
        const unsigned b = first + k * THREADS;
        if (b < gridDim.x && b != 0) pending |= 1u << k;
      }
      while (pending != 0) {
        unsigned long long w[kBatch][kPostWords<long long>];
#pragma unroll
        for (unsigned k = 0; k < kBatch; ++k)
          if ((pending >> k) & 1u) poll_post<long long>(posts, first + k * THREADS, w[k]);
#pragma unroll
        for (unsigned k = 0; k < kBatch; ++k)
          if (((pending >> k) & 1u) && post_is_full<long long>(w[k])) {
            acc += take_post<long long>(posts, first + k * THREADS, w[k]);
            pending &= ~(1u << k);
          }
      }
    }
    __syncthreads();  // s[] is read again below
  } else if constexpr (END >= 2) {
    const unsigned collector = END == 2 ? gridDim.x - 1 : 0;
    longlong2* slot = reinterpret_cast<longlong2*>(partials);
    if (blockIdx.x != collector) {
      if (threadIdx.x == 0)
        asm volatile("st.relaxed.gpu.global.v2.s64 [%0], {%1, %2};" ::"l"(slot + blockIdx.x), "l"(acc), "l"((long long)epoch) : "memory");
      return;
    }
    const long long own = threadIdx.x == 0 ? acc : 0;
    acc = own;
    for (unsigned i = threadIdx.x; i < gridDim.x; i += THREADS) {
      if (i == collector) continue;
      long long v, e;
      do {
        asm volatile("ld.relaxed.gpu.global.v2.s64 {%0, %1}, [%2];" : "=l"(v), "=l"(e) : "l"(slot + i) : "memory");
      } while (e != (long long)epoch);
      acc += v;
    }
    __syncthreads();  // s[] is read again below
  } else {
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    if constexpr (END == 0) {
      __threadfence();
      last = atomicInc(ticket, gridDim.x - 1) == gridDim.x - 1;
    } else {
      unsigned taken;
      asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(taken) : "l"(ticket), "r"(gridDim.x - 1) : "memory");
      last = taken == gridDim.x - 1;
    }
  }
  __syncthreads();
  if (!last) return;
  acc = 0;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += THREADS) acc += __ldcg(partials + i);
  }
  for (int o = 16; o; o >>= 1) acc += __shfl_down_sync(~0u, acc, o);
  if (threadIdx.x % 32 == 0) s[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) { long long t = 0; for (int i = 0; i < THREADS / 32; ++i) t += s[i]; *out = t; }
}

// a producer kernel for PDL tests: writes n ints
__global__ void producer(int* p, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) p[i] = int(i & 7);
}

static L2Flush* g_flush = nullptr;
static unsigned g_epoch = 0;  // the poll ends' call count
// "code": cold data, warm code: after the L2 flush, one untimed call of the same function on a
// second copy of the input (g_swap points the calls at it and back), then the timed call on the
// flushed input. The difference to cold is what fetching the kernel's code (and its constants)
// from DRAM costs the call.
enum Mode { cold, batch, synced, code };
static const char* mode_name[] = {"cold", "batch", "sync", "code"};
static std::function<void()> g_swap;

float time_us(Mode m, const std::function<void()>& f, int reps) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<float> v;
  for (int r = 0; r < reps + 3; ++r) {
    float ms = 0;
    if (m == cold) {
      (*g_flush)();
      CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
      CK(cudaEventElapsedTime(&ms, a, b));
    } else if (m == code) {
      (*g_flush)();
      g_swap(); f(); g_swap();
      CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
      CK(cudaEventElapsedTime(&ms, a, b));
    } else if (m == batch) {
      const int k = 100;
      f(); CK(cudaDeviceSynchronize());
      CK(cudaEventRecord(a)); for (int i = 0; i < k; ++i) f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
      CK(cudaEventElapsedTime(&ms, a, b)); ms /= k;
    } else {
      CK(cudaDeviceSynchronize());
      CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
      CK(cudaEventElapsedTime(&ms, a, b));
    }
    if (r >= 3) v.push_back(ms * 1000);
  }
  CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// reduceExact<float>'s small instantiation (agent_exact.cuh) at up to 16 tiles: a grid of one
// block, or a cluster of a block per tile.
void exact_small_by_hand(const float* in, std::size_t n, float* out, bool cluster) {
  using namespace reducelab::detail;
  constexpr auto kernel = reduceExact<float, float, false, true>;
  Workspace ws;
  if (!workspace_for(nullptr, &ws).ok()) std::exit(2);
  const unsigned tiles = static_cast<unsigned>((n + Shape<float>::kTile - 1) / Shape<float>::kTile);
  const unsigned grid = cluster && tiles > 1 ? tiles : 1;
  CK(launch_kernel_clustered(kernel, grid, grid, nullptr, in, std::uint64_t(n), unsigned(kAligned), ws.exact, ws.ticket,
                             out));
}

// The library's kernels launched by hand, to see what the launch itself costs: the order-free
// int32 sum (grids of more than 16 blocks) and the exact float sum's large kernel, each either
// with the library's attribute (programmatic stream serialization: "pdl") or with <<<>>>.
void free_sum_by_hand(const int* in, std::size_t n, std::int64_t* out, bool pdl) {
  using namespace reducelab::detail;
  using Sem = semantics_t<int, reducelab::op::sum>;
  constexpr auto kernel = reduceOrderFree<int, Sem, kFreeLoads, false>;
  Workspace ws;
  if (!workspace_for(nullptr, &ws).ok()) std::exit(2);
  int device = 0, sms = 0, per_sm = 0;
  if (!current_sm_count(&device, &sms).ok() || !resident_blocks<kernel>(device, &per_sm).ok()) std::exit(2);
  const FreeShape shape = free_shape<int>(n, in, std::uint64_t(sms) * per_sm);
  if (pdl) CK(launch_kernel(kernel, shape.grid, nullptr, in, shape, ws.posts, ws.ticket, out));
  else kernel<<<shape.grid, kThreads>>>(in, shape, ws.posts, ws.ticket, out);
}
void exact_large_by_hand(const float* in, std::size_t n, float* out, bool pdl) {
  using namespace reducelab::detail;
  constexpr auto kernel = reduceExact<float, float, false>;
  Workspace ws;
  if (!workspace_for(nullptr, &ws).ok()) std::exit(2);
  int device = 0, sms = 0, per_sm = 0;
  if (!current_sm_count(&device, &sms).ok() || !resident_blocks<kernel>(device, &per_sm).ok()) std::exit(2);
  const std::uint64_t tiles = (n + Shape<float>::kTile - 1) / Shape<float>::kTile;
  const unsigned grid = unsigned(std::max<std::uint64_t>(1, std::min<std::uint64_t>(tiles, std::uint64_t(sms) * per_sm)));
  if (pdl) CK(launch_kernel(kernel, grid, nullptr, in, std::uint64_t(n), unsigned(kAligned), ws.exact, ws.ticket, out));
  else kernel<<<grid, kThreads>>>(in, std::uint64_t(n), unsigned(kAligned), ws.exact, ws.ticket, out);
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 50;
  const char* only = argc > 2 ? argv[2] : "";
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  const int sms = p.multiProcessorCount;
#ifndef RL_PROBE_VARIANT
#define RL_PROBE_VARIANT "library as built"
#endif
  std::printf("device %s, %d SMs, L2 %d MiB, variant %s\n", p.name, sms, p.l2CacheSize >> 20, RL_PROBE_VARIANT);
  L2Flush flush(p);
  g_flush = &flush;
  const std::size_t maxn = std::size_t(1) << 26;
  int* in; CK(cudaMalloc(&in, maxn * 4));
  std::vector<int> h(maxn); for (std::size_t i = 0; i < maxn; ++i) h[i] = int((i * 2654435761u) >> 20) - 2048;
  CK(cudaMemcpy(in, h.data(), maxn * 4, cudaMemcpyHostToDevice));
  std::vector<float> hf(maxn); for (std::size_t i = 0; i < maxn; ++i) hf[i] = float(h[i]) * 0.37f;
  float* fin; CK(cudaMalloc(&fin, maxn * 4)); CK(cudaMemcpy(fin, hf.data(), maxn * 4, cudaMemcpyHostToDevice));
  std::vector<double> hd(maxn); for (std::size_t i = 0; i < maxn; ++i) hd[i] = double(hf[i]) * 1.0000001;
  double* din; CK(cudaMalloc(&din, maxn * 8)); CK(cudaMemcpy(din, hd.data(), maxn * 8, cudaMemcpyHostToDevice));
  long long* partials; CK(cudaMalloc(&partials, 1 << 20)); unsigned* ticket; CK(cudaMalloc(&ticket, 4)); CK(cudaMemset(ticket, 0, 4)); CK(cudaMemset(partials, 0, 1 << 20));
  long long* out; CK(cudaMalloc(&out, 64));
  long long* posts4; CK(cudaMalloc(&posts4, 1 << 20)); CK(cudaMemset(posts4, 0, 1 << 20));  // ends 4 and 5
  std::size_t tb = 0; CK(cub::DeviceReduce::Sum(nullptr, tb, in, out, maxn)); tb = std::max<std::size_t>(tb, 1 << 22); void* temp; CK(cudaMalloc(&temp, tb));
  namespace op = reducelab::op; using reducelab::detail::launch_reduce;
  std::vector<int> sizes = {10, 12, 14, 16, 18, 20, 22, 24, 26};
  if (const char* env = std::getenv("RL_PROBE_SIZES")) {  // e.g. "11,13,15": other powers of two
    sizes.clear();
    for (const char* p = env; *p != 0;) {
      char* end = nullptr;
      const long v = std::strtol(p, &end, 10);
      if (end == p || v < 1 || v > 26) break;
      sizes.push_back(static_cast<int>(v));
      p = *end == ',' ? end + 1 : end;
    }
  }
  if (std::getenv("RL_PROBE_READ")) {
    // The bench's read kernel (read_units, probe_timing.cuh) at every size, cold, beside the library
    // and CUB, int32, 2^22..2^28: what one read of n elements costs in the bench's cold mode, the
    // floor of every reduction of that size, as a share of a 1 GiB read in the same run.
    const std::size_t big = std::size_t(1) << 28;
    int* rin; CK(cudaMalloc(&rin, big * 4)); CK(cudaMemset(rin, 1, big * 4));
    int* rin2; CK(cudaMalloc(&rin2, big * 4)); CK(cudaMemset(rin2, 1, big * 4));
    int* sink; CK(cudaMalloc(&sink, 4));
    g_swap = [&] { std::swap(rin, rin2); };
    const float floor_us = time_us(cold, [] { empty_kernel<<<1, 32>>>(); }, reps);
    const float full = time_us(cold, [&] { read_units<4><<<sms * 8, 256>>>(reinterpret_cast<const int4*>(rin), big / 4, sink); }, reps);
    const double ceiling = big * 4.0 / (full * 1e3);
    std::printf("[read] empty %.2f us; 1 GiB read %.1f us = %.0f GB/s (the ceiling below)\n", floor_us, full, ceiling);
    for (int lg = 22; lg <= 28; lg += 2) {
      const std::size_t n = std::size_t(1) << lg;
      const float r = time_us(cold, [&] { read_units<4><<<sms * 8, 256>>>(reinterpret_cast<const int4*>(rin), n / 4, sink); }, reps);
      const float l = time_us(cold, [&] { if (!launch_reduce<int, op::sum>(rin, n, reinterpret_cast<std::int64_t*>(out), nullptr, {}).ok()) std::exit(2); }, reps);
      size_t tbytes = tb;
      const float c = time_us(cold, [&] { CK(cub::DeviceReduce::Sum(temp, tbytes, rin, out, n)); }, reps);
      auto pct = [&](float us) { return 100.0 * (n * 4.0 / (us * 1e3)) / ceiling; };
      {  // the order-free kernel in each shape, launched by hand, and the read kernel with 8 loads
        using namespace reducelab::detail;
        using SemS = semantics_t<int, reducelab::op::sum>;
        using SemM = semantics_t<int, reducelab::op::max>;
        Workspace ws;
        if (!workspace_for(nullptr, &ws).ok()) std::exit(2);
        int device = 0, per4 = 0, per8 = 0;
        if (!current_sm_count(&device, &per4).ok()) std::exit(2);
        constexpr auto k4 = reduceOrderFree<int, SemS, 4, false>;
        constexpr auto k8 = reduceOrderFree<int, SemS, 8, false>;
        constexpr auto m4 = reduceOrderFree<int, SemM, 4, false>;
        constexpr auto m8 = reduceOrderFree<int, SemM, 8, false>;
        if (!resident_blocks<k4>(device, &per4).ok() || !resident_blocks<k8>(device, &per8).ok()) std::exit(2);
        const FreeShape s4 = free_shape<int>(n, rin, std::uint64_t(sms) * per4, 4);
        const FreeShape s8 = free_shape<int>(n, rin, std::uint64_t(sms) * per8, 8);
        std::int64_t* o64 = reinterpret_cast<std::int64_t*>(out);
        const float f4 = time_us(cold, [&] { k4<<<s4.grid, kThreads>>>(rin, s4, ws.posts, ws.ticket, o64); }, reps);
        const float f8 = time_us(cold, [&] { k8<<<s8.grid, kThreads>>>(rin, s8, ws.posts, ws.ticket, o64); }, reps);
        const float x4 = time_us(cold, [&] { m4<<<s4.grid, kThreads>>>(rin, s4, ws.posts, ws.ticket, reinterpret_cast<int*>(out)); }, reps);
        const float x8 = time_us(cold, [&] { m8<<<s8.grid, kThreads>>>(rin, s8, ws.posts, ws.ticket, reinterpret_cast<int*>(out)); }, reps);
        const float r8 = time_us(cold, [&] { read_units<8><<<sms * 8, 256>>>(reinterpret_cast<const int4*>(rin), n / 4, sink); }, reps);
        const float r8g = time_us(cold, [&] { read_units<8><<<s8.grid, 256>>>(reinterpret_cast<const int4*>(rin), n / 4, sink); }, reps);
        std::printf("[read] 2^%d int32: sum 4 loads %.2f (%.1f%%, grid %u)  sum 8 loads %.2f (%.1f%%, grid %u)  max 4 %.2f  max 8 %.2f  read 8 loads %.2f (%.1f%%)  read 8 loads on the sum's grid %.2f\n",
                    lg, f4, pct(f4), s4.grid, f8, pct(f8), s8.grid, x4, x8, r8, pct(r8), r8g);
      }
      std::printf("[read] 2^%d int32: read %.2f us (%.1f%%)  reducelab sum %.2f (%.1f%%)  cub %.2f (%.1f%%)  floor+bytes/ceiling %.2f (%.1f%%)\n", lg, r,
                  pct(r), l, pct(l), c, pct(c), floor_us + n * 4.0 / ceiling / 1e3, pct(floor_us + n * 4.0 / ceiling / 1e3));
    }
    return 0;
  }
  if (argc > 3) {  // ncu mode: one launch of each at 2^16 and 2^20 (or the sizes asked for), CUB's int and float sums
    if (!std::getenv("RL_PROBE_SIZES")) sizes = {16, 20};
    for (int lg : sizes) {
      const std::size_t n = std::size_t(1) << lg;
      if (!launch_reduce<int, op::sum>(in, n, reinterpret_cast<std::int64_t*>(out), nullptr, {}).ok()) std::exit(2);
      if (!launch_reduce<float, op::sum>(fin, n, reinterpret_cast<float*>(out), nullptr, {}).ok()) std::exit(2);
      const unsigned g = unsigned(std::min<std::size_t>((n / 4 + 2047) / 2048, std::size_t(sms) * 4));
      plain<512, 4><<<g, 512>>>(in, n, partials, ticket, out);
      const unsigned g4 = unsigned(std::min<std::size_t>((n / 4 + 1023) / 1024, std::size_t(sms) * 8));
      plain<256, 4, 3><<<g4, 256>>>(in, n, partials, ticket, out, ++g_epoch);  // p4poll0
      size_t tbytes = tb; CK(cub::DeviceReduce::Sum(temp, tbytes, in, out, n));
      CK(cub::DeviceReduce::Sum(temp, tbytes, fin, reinterpret_cast<float*>(out), n));
    }
    CK(cudaDeviceSynchronize());
    return 0;
  }
  int* in2; CK(cudaMalloc(&in2, maxn * 4)); CK(cudaMemcpy(in2, in, maxn * 4, cudaMemcpyDeviceToDevice));
  float* fin2; CK(cudaMalloc(&fin2, maxn * 4)); CK(cudaMemcpy(fin2, fin, maxn * 4, cudaMemcpyDeviceToDevice));
  double* din2; CK(cudaMalloc(&din2, maxn * 8)); CK(cudaMemcpy(din2, din, maxn * 8, cudaMemcpyDeviceToDevice));
  g_swap = [&] { std::swap(in, in2); std::swap(fin, fin2); std::swap(din, din2); };
  std::vector<Mode> modes = {cold, batch, synced, code};
  if (const char* env = std::getenv("RL_PROBE_MODES")) {  // e.g. "cold,code"
    modes.clear();
    for (Mode m : {cold, batch, synced, code})
      if (std::strstr(env, mode_name[m])) modes.push_back(m);
  }
  for (Mode m : modes) {
    std::printf("[%s] empty %.2f us\n", mode_name[m], time_us(m, [] { empty_kernel<<<1, 32>>>(); }, reps));
    for (int lg : sizes) {
      const std::size_t n = std::size_t(1) << lg;
      std::string line = "[" + std::string(mode_name[m]) + "] 2^" + std::to_string(lg);
      auto add = [&](const char* name, const std::function<void()>& f) {
        if (*only && !strstr(only, name)) return;
        char buf[64]; std::snprintf(buf, sizeof buf, "  %s %.2f", name, time_us(m, f, reps)); line += buf; };
      size_t tbytes = tb;
      add("cub", [&] { CK(cub::DeviceReduce::Sum(temp, tbytes, in, out, n)); });
      add("cubf", [&] { CK(cub::DeviceReduce::Sum(temp, tbytes, fin, reinterpret_cast<float*>(out), n)); });
      add("rl", [&] { if (!launch_reduce<int, op::sum>(in, n, reinterpret_cast<std::int64_t*>(out), nullptr, {}).ok()) std::exit(2); });
      add("rlf", [&] { if (!launch_reduce<float, op::sum>(fin, n, reinterpret_cast<float*>(out), nullptr, {}).ok()) std::exit(2); });
      add("rlmax", [&] { if (!launch_reduce<float, op::max>(fin, n, reinterpret_cast<float*>(out), nullptr, {}).ok()) std::exit(2); });
      auto grid_for = [&](int threads, int loads, int cap) { std::size_t g = (n / 4 + std::size_t(threads) * loads - 1) / (std::size_t(threads) * loads); return unsigned(std::max<std::size_t>(1, std::min<std::size_t>(g, std::size_t(cap)))); };
      add("p512x4", [&] { plain<512, 4><<<grid_for(512, 4, sms * 4), 512>>>(in, n, partials, ticket, out); });
      add("p256x8", [&] { plain<256, 8><<<grid_for(256, 8, sms * 8), 256>>>(in, n, partials, ticket, out); });
      add("p256x4", [&] { plain<256, 4><<<grid_for(256, 4, sms * 8), 256>>>(in, n, partials, ticket, out); });
      add("p256x2", [&] { plain<256, 2><<<grid_for(256, 2, sms * 8), 256>>>(in, n, partials, ticket, out); });
      // the same 256 x 4 kernel with the other ends (see plain)
      add("p4acq", [&] { plain<256, 4, 1><<<grid_for(256, 4, sms * 8), 256>>>(in, n, partials, ticket, out); });
      add("p4pollL", [&] { plain<256, 4, 2><<<grid_for(256, 4, sms * 8), 256>>>(in, n, partials, ticket, out, ++g_epoch); });
      add("p4poll0", [&] { plain<256, 4, 3><<<grid_for(256, 4, sms * 8), 256>>>(in, n, partials, ticket, out, ++g_epoch); });
      add("p4lib", [&] { plain<256, 4, 4><<<grid_for(256, 4, sms * 8), 256>>>(in, n, posts4, ticket, out); });
      add("p4lib1", [&] { plain<256, 4, 5><<<grid_for(256, 4, sms * 8), 256>>>(in, n, posts4, ticket, out); });
      add("p8pollL", [&] { plain<256, 8, 2><<<grid_for(256, 8, sms * 8), 256>>>(in, n, partials, ticket, out, ++g_epoch); });
      add("prod", [&] { producer<<<sms * 4, 512>>>(in, n); });
      add("prod+rl", [&] { producer<<<sms * 4, 512>>>(in, n); if (!launch_reduce<int, op::sum>(in, n, reinterpret_cast<std::int64_t*>(out), nullptr, {}).ok()) std::exit(2); });
      add("prod+cub", [&] { producer<<<sms * 4, 512>>>(in, n); CK(cub::DeviceReduce::Sum(temp, tbytes, in, out, n)); });
      // the exact float kernel's small instantiation, launched by hand: one block for the whole
      // input ("rlf1") against one cluster of a block per tile ("rlfc", what the library does)
      add("rlf1", [&] { exact_small_by_hand(fin, n, reinterpret_cast<float*>(out), false); });
      add("rlfc", [&] { exact_small_by_hand(fin, n, reinterpret_cast<float*>(out), true); });
      add("rlkp", [&] { free_sum_by_hand(in, n, reinterpret_cast<std::int64_t*>(out), true); });
      add("rlk", [&] { free_sum_by_hand(in, n, reinterpret_cast<std::int64_t*>(out), false); });
      add("rlfkp", [&] { exact_large_by_hand(fin, n, reinterpret_cast<float*>(out), true); });
      add("rlfk", [&] { exact_large_by_hand(fin, n, reinterpret_cast<float*>(out), false); });
      add("rlmaxi", [&] { if (!launch_reduce<int, op::max>(in, n, reinterpret_cast<int*>(out), nullptr, {}).ok()) std::exit(2); });
      add("rld", [&] { if (!launch_reduce<double, op::sum>(din, n, reinterpret_cast<double*>(out), nullptr, {}).ok()) std::exit(2); });
      add("cubd", [&] { CK(cub::DeviceReduce::Sum(temp, tbytes, din, reinterpret_cast<double*>(out), n)); });
      add("cubmax", [&] { CK(cub::DeviceReduce::Max(temp, tbytes, fin, reinterpret_cast<float*>(out), n)); });
      add("p512x4full", [&] { plain<512, 4><<<sms * 4, 512>>>(in, n, partials, ticket, out); });
      std::puts(line.c_str()); std::fflush(stdout);
    }
  }
  // correctness
  CK(cudaMemcpy(in, h.data(), maxn * 4, cudaMemcpyHostToDevice));
  {
    std::int64_t got = 0;
    if (!launch_reduce<int, op::sum>(in, maxn - 3, reinterpret_cast<std::int64_t*>(out), nullptr, {}).ok()) std::exit(2);
    CK(cudaMemcpy(&got, out, 8, cudaMemcpyDeviceToHost));
    std::int64_t want = 0; for (std::size_t i = 0; i < maxn - 3; ++i) want += h[i];
    std::printf("rl check %s\n", got == want ? "ok" : "BAD");
    for (int off = 0; off < 4; ++off) for (std::size_t m : {std::size_t(1), std::size_t(5), std::size_t(4096), std::size_t(4099), std::size_t(70000), std::size_t(1) << 22}) {
      if (!launch_reduce<int, op::sum>(in + off, m, reinterpret_cast<std::int64_t*>(out), nullptr, {}).ok()) std::exit(2);
      CK(cudaMemcpy(&got, out, 8, cudaMemcpyDeviceToHost));
      want = 0; for (std::size_t i = 0; i < m; ++i) want += h[off + i];
      if (got != want) std::printf("rl BAD off %d n %zu\n", off, m);
    }
  }
  // correctness of plain
  plain<512, 4><<<sms * 4, 512>>>(in, maxn, partials, ticket, out);
  long long got; CK(cudaMemcpy(&got, out, 8, cudaMemcpyDeviceToHost));
  long long want = 0; for (std::size_t i = 0; i < maxn; ++i) want += h[i];
  std::printf("plain check %s\n", got == want ? "ok" : "BAD");
  for (std::size_t m : {std::size_t(1) << 14, std::size_t(1) << 18, std::size_t(1) << 22, maxn}) {
    const unsigned g = unsigned(std::max<std::size_t>(1, std::min<std::size_t>((m / 4 + 1023) / 1024, std::size_t(sms) * 8)));
    long long w = 0; for (std::size_t i = 0; i < m; ++i) w += h[i];
    for (int end = 2; end <= 5; ++end) {
      CK(cudaMemset(out, 0, 8));
      if (end == 2) plain<256, 4, 2><<<g, 256>>>(in, m, partials, ticket, out, ++g_epoch);
      else if (end == 3) plain<256, 4, 3><<<g, 256>>>(in, m, partials, ticket, out, ++g_epoch);
      else if (end == 4) plain<256, 4, 4><<<g, 256>>>(in, m, posts4, ticket, out);
      else plain<256, 4, 5><<<g, 256>>>(in, m, posts4, ticket, out);
      CK(cudaGetLastError());
      CK(cudaMemcpy(&got, out, 8, cudaMemcpyDeviceToHost));
      std::printf("poll%d check n %zu grid %u %s\n", end, m, g, got == w ? "ok" : "BAD");
    }
  }
  return 0;
}
