// A developer's probe: does a thread-block cluster's shared-memory exchange beat the
// last-block-done handshake at small and mid sizes? Cold mode (each call behind an L2 flush),
// against reducelab::reduce and CUB in the same process.
//   cluster_probe [repeats=40]
// Kernels (int32 sum into int64, and the exact float sum):
//   clC   C blocks a cluster, 256 threads x 4 vectors a unit, grid-stride; each block's sum is
//         stored into the leader's shared memory (DSMEM), one cluster barrier, the leader folds.
//         With more than one cluster the leaders take a ticket and the last folds their sums.
//   xclC  the library's exact tile fold and block digits, then the block digits are added into
//         the leader's digits (DSMEM atomics); one cluster: the leader rounds; more: the leaders
//         flush to the global digits and take the ticket, as reduceExact does.
#include <cooperative_groups.h>
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "probe_timing.cuh"
#include "reducelab/detail/device_reduce.cuh"

namespace cg = cooperative_groups;
using namespace reducelab::detail;

// cluster_arrive_relaxed, cluster_arrive, cluster_wait: the library's (reducelab/detail/cluster.cuh).

template <int C, int LOADS, int TH = 256>
__global__ void __launch_bounds__(TH) clsum(const int* in, std::size_t n, long long* partials, unsigned* ticket,
                                             long long* out) {
  cg::cluster_group cl = cg::this_cluster();
  __shared__ long long s[32];
  __shared__ long long cslots[C];
  __shared__ unsigned last;
  cluster_arrive_relaxed();  // phase 1: every block of the cluster has started
  wait_for_producer();
  const int4* v = reinterpret_cast<const int4*>(in);
  const std::size_t nv = n / 4;
  long long acc = 0;
  const std::size_t unit = std::size_t(TH) * LOADS;
  for (std::size_t base = blockIdx.x * unit + threadIdx.x; base < nv; base += std::size_t(gridDim.x) * unit) {
    int4 x[LOADS];
#pragma unroll
    for (int i = 0; i < LOADS; ++i) {
      const std::size_t at = base + std::size_t(i) * TH;
      x[i] = at < nv ? __ldg(v + at) : make_int4(0, 0, 0, 0);
    }
#pragma unroll
    for (int i = 0; i < LOADS; ++i) acc += (long long)x[i].x + x[i].y + x[i].z + x[i].w;
  }
  if (blockIdx.x == 0 && threadIdx.x < n % 4) acc += in[nv * 4 + threadIdx.x];
  let_consumer_start();
  for (int o = 16; o; o >>= 1) acc += __shfl_down_sync(~0u, acc, o);
  if (threadIdx.x % 32 == 0) s[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    acc = threadIdx.x < TH / 32 ? s[threadIdx.x] : 0;
    for (int o = 16; o; o >>= 1) acc += __shfl_down_sync(~0u, acc, o);
  }
  const unsigned rank = cl.block_rank();
  cluster_wait();
  if (threadIdx.x == 0) *cl.map_shared_rank(&cslots[rank], 0) = acc;
  cluster_arrive();
  cluster_wait();
  if (rank != 0) return;
  if (threadIdx.x < 32) {
    acc = threadIdx.x < C ? cslots[threadIdx.x] : 0;
    for (int o = 16; o; o >>= 1) acc += __shfl_down_sync(~0u, acc, o);
  }
  const unsigned clusters = gridDim.x / C, me = blockIdx.x / C;
  if (clusters == 1) {
    if (threadIdx.x == 0) *out = acc;
    return;
  }
  if (threadIdx.x == 0) {
    partials[me] = acc;
    last = take_ticket(ticket) == clusters - 1;
  }
  __syncthreads();
  if (!last) return;
  acc = 0;
  for (unsigned i = threadIdx.x; i < clusters; i += TH) acc += __ldcg(partials + i);
  for (int o = 16; o; o >>= 1) acc += __shfl_down_sync(~0u, acc, o);
  __syncthreads();
  if (threadIdx.x % 32 == 0) s[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    long long t = 0;
    for (int i = 0; i < TH / 32; ++i) t += s[i];
    *out = t;
    *ticket = 0;
  }
}

// The exact float sum with a cluster stage between the block digits and the global ones.
__device__ __forceinline__ void stamp(long long* stamps, int k) {
  if (stamps != nullptr && threadIdx.x == 0 && blockIdx.x == 0) stamps[k] = clock64();
}

template <int C>
__global__ void __launch_bounds__(kThreads) clexact(const float* input_raw, std::uint64_t n, unsigned long long* exact,
                                                    unsigned* ticket, float* output, long long* stamps = nullptr) {
  using T = float;
  constexpr int kD = ExactTraits<T>::kDigits;
  constexpr std::uint64_t kTile = Shape<T>::kTile;
  cg::cluster_group cl = cg::this_cluster();
  const rl::gmem<const T> input = input_raw;
  __shared__ unsigned long long digit_storage[kD];
  rl::smem<unsigned long long> digits = digit_storage;
  __shared__ unsigned misc[5];
  if (threadIdx.x < static_cast<unsigned>(kD)) digits[threadIdx.x] = 0ull;
  if (threadIdx.x == 0) misc[0] = 0u;
  __syncthreads();
  cluster_arrive_relaxed();
  wait_for_producer();
  stamp(stamps, 0);
  const BlockDigits<T> spill{digits};
  ExactCarry carry;
  const std::uint64_t tiles = (n + kTile - 1) / kTile;
  for (std::uint64_t t = blockIdx.x; t < tiles; t += gridDim.x) fold_tile_exact<T, 1>(input, t * kTile, n, true, carry, spill);
  let_consumer_start();
  if (stamps != nullptr && threadIdx.x == 0 && blockIdx.x == 0) stamps[1] = clock64() + (carry.a == 12345.0 ? 1 : 0);
  const unsigned seen = warp_finish<T>(carry, digits);
  if (threadIdx.x % 32 == 0 && seen != 0) atomicOr(&misc[0], seen);
  __syncthreads();
  stamp(stamps, 2);
  const unsigned rank = cl.block_rank();
  cluster_wait();
  if (rank != 0) {  // add this block's digits and flags into the leader's
    if (threadIdx.x < static_cast<unsigned>(kD)) {
      const unsigned long long d = digits[threadIdx.x];
      if (d != 0) atomicAdd(cl.map_shared_rank(&digit_storage[threadIdx.x], 0), d);
    }
    if (threadIdx.x == 0 && misc[0] != 0) atomicOr(cl.map_shared_rank(&misc[0], 0), misc[0]);
  }
  cluster_arrive();
  cluster_wait();
  if (rank != 0) return;
  stamp(stamps, 3);
  const unsigned clusters = gridDim.x / C;
  if (clusters == 1) {
    write_result<T, float, false>(digits, misc[0], n, output);
    stamp(stamps, 4);
    return;
  }
  flush_digits<T>(digits, exact);
  if (threadIdx.x == 0 && misc[0] != 0) atomicOr(&exact[kMaxExactDigits], static_cast<unsigned long long>(misc[0]));
  __syncthreads();
  if (threadIdx.x == 0) misc[1] = take_ticket(ticket) == clusters - 1 ? 1u : 0u;
  __syncthreads();
  if (misc[1] == 0) return;
  if (threadIdx.x < static_cast<unsigned>(kD)) digits[threadIdx.x] = load_other_block(rl::gmem<unsigned long long>(exact), threadIdx.x);
  if (threadIdx.x == 0) misc[0] = static_cast<unsigned>(load_other_block(rl::gmem<unsigned long long>(exact), kMaxExactDigits));
  __syncthreads();
  const unsigned flags = misc[0];
  if (threadIdx.x < static_cast<unsigned>(kD)) exact[threadIdx.x] = 0ull;
  if (threadIdx.x == 0) {
    exact[kMaxExactDigits] = 0ull;
    ticket[0] = 0u;
  }
  write_result<T, float, false>(digits, flags, n, output);
}

template <class... P, class... A>
void launch_cluster_t(void (*k)(P...), unsigned threads, unsigned grid, unsigned cluster, A... args) {
  cudaLaunchConfig_t c = {};
  c.gridDim = dim3(grid);
  c.blockDim = dim3(threads);
  cudaLaunchAttribute at[2];
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = cluster;
  at[0].val.clusterDim.y = 1;
  at[0].val.clusterDim.z = 1;
  at[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[1].val.programmaticStreamSerializationAllowed = 1;
  c.attrs = at;
  c.numAttrs = 2;
  CK(cudaLaunchKernelEx(&c, k, static_cast<P>(args)...));
}
template <class... P, class... A>
void launch_cluster(void (*k)(P...), unsigned grid, unsigned cluster, A... args) {
  launch_cluster_t(k, 256, grid, cluster, args...);
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 40;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  const int sms = p.multiProcessorCount;
  std::printf("device %s, %d SMs\n", p.name, sms);
  L2Flush flush(p);
  CK(cudaFuncSetAttribute(clsum<16, 4>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CK(cudaFuncSetAttribute(clexact<16>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  for (int c : {8, 16}) {
    cudaLaunchConfig_t q = {};
    q.gridDim = dim3(c);
    q.blockDim = dim3(256);
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = c;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    q.attrs = at;
    q.numAttrs = 1;
    int clusters = 0;
    CK(cudaOccupancyMaxActiveClusters(&clusters, c == 8 ? (void*)clsum<8, 4> : (void*)clsum<16, 4>, &q));
    std::printf("max active clusters of %d (clsum): %d\n", c, clusters);
  }
  const std::size_t maxn = std::size_t(1) << 24;
  std::vector<int> h(maxn);
  for (std::size_t i = 0; i < maxn; ++i) h[i] = int((i * 2654435761u) >> 20) - 2048;
  std::vector<float> hf(maxn);
  for (std::size_t i = 0; i < maxn; ++i) hf[i] = float(h[i]) * 0.37f + float(i % 7) * 1e-3f;
  int* in;
  float* fin;
  CK(cudaMalloc(&in, maxn * 4));
  CK(cudaMalloc(&fin, maxn * 4));
  CK(cudaMemcpy(in, h.data(), maxn * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(fin, hf.data(), maxn * 4, cudaMemcpyHostToDevice));
  long long* partials;
  unsigned* ticket;
  unsigned long long* exact;
  long long* out;
  CK(cudaMalloc(&partials, 1 << 20));
  CK(cudaMalloc(&ticket, 4));
  CK(cudaMemset(ticket, 0, 4));
  CK(cudaMalloc(&exact, 8 * 80));
  CK(cudaMemset(exact, 0, 8 * 80));
  CK(cudaMalloc(&out, 64));
  std::size_t tb = 0;
  CK(cub::DeviceReduce::Sum(nullptr, tb, in, out, maxn));
  tb = std::max<std::size_t>(tb, 1 << 22);
  void* temp;
  CK(cudaMalloc(&temp, tb));
  namespace op = reducelab::op;

  // Grids: int32 units of 16 KiB; clusters cover the units, up to `cap` blocks.
  auto cl_grid = [&](std::size_t n, int c, unsigned cap) {
    std::size_t units = (n / 4 + 1023) / 1024;
    std::size_t g = (units + c - 1) / c * c;
    return unsigned(std::max<std::size_t>(c, std::min<std::size_t>(g, cap / c * c)));
  };
  auto x_grid = [&](std::size_t n, int c, unsigned cap) {
    std::size_t tiles = (n + 8191) / 8192;
    std::size_t g = (tiles + c - 1) / c * c;
    return unsigned(std::max<std::size_t>(c, std::min<std::size_t>(g, cap / c * c)));
  };
  // correctness first
  bool bad = false;
  for (int lg : {10, 12, 14, 16, 18, 20, 22}) {
    const std::size_t n = (std::size_t(1) << lg) + (lg % 3);
    long long want = 0;
    for (std::size_t i = 0; i < n; ++i) want += h[i];
    for (int c : {8, 16}) {
      long long got = -1;
      const unsigned g = cl_grid(n, c, unsigned(sms) * 8);
      if (c == 8) launch_cluster(clsum<8, 4>, g, 8, (const int*)in, n, partials, ticket, out);
      else launch_cluster(clsum<16, 4>, g, 16, (const int*)in, n, partials, ticket, out);
      CK(cudaMemcpy(&got, out, 8, cudaMemcpyDeviceToHost));
      if (got != want) { std::printf("clsum<%d> BAD at n %zu: %lld vs %lld\n", c, n, got, want); bad = true; }
      float fx = 0, fr = 1;
      const unsigned gx = x_grid(n, c, unsigned(sms) * 4);
      if (c == 8) launch_cluster(clexact<8>, gx, 8, (const float*)fin, std::uint64_t(n), exact, ticket, (float*)out, (long long*)nullptr);
      else launch_cluster(clexact<16>, gx, 16, (const float*)fin, std::uint64_t(n), exact, ticket, (float*)out, (long long*)nullptr);
      CK(cudaMemcpy(&fx, out, 4, cudaMemcpyDeviceToHost));
      if (!reducelab::detail::launch_reduce<float, op::sum>(fin, n, reinterpret_cast<float*>(out), nullptr, {}).ok()) std::exit(2);
      CK(cudaMemcpy(&fr, out, 4, cudaMemcpyDeviceToHost));
      if (std::memcmp(&fx, &fr, 4) != 0) { std::printf("clexact<%d> BAD at n %zu: %a vs %a\n", c, n, fx, fr); bad = true; }
    }
  }
  CK(cudaDeviceSynchronize());
  std::printf("checks %s\n", bad ? "FAILED" : "ok");

  // One cluster, no ticket: C blocks of TH threads x LOADS vectors, grid-stride.
  struct One { const char* name; void (*k)(const int*, std::size_t, long long*, unsigned*, long long*); unsigned c, th; };
  const One ones[] = {
      {"1x1024x4", clsum<1, 4, 1024>, 1, 1024},   {"1x1024x8", clsum<1, 8, 1024>, 1, 1024},
      {"8x256x4", clsum<8, 4, 256>, 8, 256},      {"8x256x8", clsum<8, 8, 256>, 8, 256},
      {"8x1024x4", clsum<8, 4, 1024>, 8, 1024},   {"16x256x4", clsum<16, 4, 256>, 16, 256},
      {"16x256x8", clsum<16, 8, 256>, 16, 256},   {"16x512x4", clsum<16, 4, 512>, 16, 512},
      {"16x1024x4", clsum<16, 4, 1024>, 16, 1024}};
  for (const One& o : ones) {
    if (o.c > 8) CK(cudaFuncSetAttribute(o.k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchConfig_t q = {};
    q.gridDim = dim3(o.c);
    q.blockDim = dim3(o.th);
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = o.c;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    q.attrs = at;
    q.numAttrs = 1;
    int clusters = 0;
    CK(cudaOccupancyMaxActiveClusters(&clusters, (void*)o.k, &q));
    std::printf("%s: max active clusters %d\n", o.name, clusters);
    for (std::size_t n : {std::size_t(1000), std::size_t(1) << 16, (std::size_t(1) << 20) + 3}) {
      long long want = 0, got = -1;
      for (std::size_t i = 0; i < n; ++i) want += h[i];
      launch_cluster_t(o.k, o.th, o.c, o.c, (const int*)in, n, partials, ticket, out);
      CK(cudaMemcpy(&got, out, 8, cudaMemcpyDeviceToHost));
      if (got != want) { std::printf("%s BAD at n %zu\n", o.name, n); bad = true; }
    }
  }
  {  // where the exact cluster kernel's time goes: clock64 stamps in block 0, thread 0
    long long* st;
    CK(cudaMalloc(&st, 8 * 8));
    for (int lg : {10, 14, 16}) {
      const std::size_t n = std::size_t(1) << lg;
      std::vector<long long> d[4];
      for (int r = 0; r < 25; ++r) {
        flush();
        launch_cluster(clexact<8>, 8, 8, (const float*)fin, std::uint64_t(n), exact, ticket, (float*)out, st);
        long long h8[8];
        CK(cudaMemcpy(h8, st, 64, cudaMemcpyDeviceToHost));
        for (int k = 0; k < 4; ++k) d[k].push_back(h8[k + 1] - h8[k]);
      }
      std::printf("phases 2^%d (cycles, median of 25, cold): fold %lld  hand-over+barrier %lld  cluster %lld  rounding %lld\n", lg,
                  [&] { auto v = d[0]; std::sort(v.begin(), v.end()); return v[12]; }(),
                  [&] { auto v = d[1]; std::sort(v.begin(), v.end()); return v[12]; }(),
                  [&] { auto v = d[2]; std::sort(v.begin(), v.end()); return v[12]; }(),
                  [&] { auto v = d[3]; std::sort(v.begin(), v.end()); return v[12]; }());
    }
  }
  if (argc > 2) {  // ncu mode: one launch each at 2^14 and 2^16
    for (int lg : {14, 16}) {
      const std::size_t n = std::size_t(1) << lg;
      if (!launch_reduce<int, op::sum>(in, n, reinterpret_cast<std::int64_t*>(out), nullptr, {}).ok()) std::exit(2);
      if (!launch_reduce<float, op::sum>(fin, n, reinterpret_cast<float*>(out), nullptr, {}).ok()) std::exit(2);
    }
    CK(cudaDeviceSynchronize());
    return 0;
  }
  for (int lg : {10, 12, 14, 15, 16, 17, 18, 19, 20, 22}) {
    const std::size_t n = std::size_t(1) << lg;
    std::string line = "[cold] 2^" + std::to_string(lg);
    auto add = [&](const char* name, const std::function<void()>& f) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "  %s %.2f", name, cold_us(flush, f, reps));
      line += buf;
    };
    std::size_t tbytes = tb;
    add("cub", [&] { CK(cub::DeviceReduce::Sum(temp, tbytes, in, out, n)); });
    add("rl", [&] { if (!launch_reduce<int, op::sum>(in, n, reinterpret_cast<std::int64_t*>(out), nullptr, {}).ok()) std::exit(2); });
    for (const One& o : ones) add(o.name, [&] { launch_cluster_t(o.k, o.th, o.c, o.c, (const int*)in, n, partials, ticket, out); });
    add("cubf", [&] { CK(cub::DeviceReduce::Sum(temp, tbytes, fin, reinterpret_cast<float*>(out), n)); });
    add("rlf", [&] { if (!launch_reduce<float, op::sum>(fin, n, reinterpret_cast<float*>(out), nullptr, {}).ok()) std::exit(2); });
    add("xcl8", [&] { launch_cluster(clexact<8>, x_grid(n, 8, unsigned(sms) * 4), 8, (const float*)fin, std::uint64_t(n), exact, ticket, (float*)out, (long long*)nullptr); });
    add("xcl16", [&] { launch_cluster(clexact<16>, x_grid(n, 16, unsigned(sms) * 4), 16, (const float*)fin, std::uint64_t(n), exact, ticket, (float*)out, (long long*)nullptr); });
    std::puts(line.c_str());
    std::fflush(stdout);
  }
  std::printf("all checks %s\n", bad ? "FAILED" : "ok");
  return bad ? 1 : 0;
}
