// A developer's probe for the posted-results hand-over (posted_results.cuh) by the size of what a
// block posts: 4 bytes (the int32 sum), 8 (a double min), 40 (the exact float sum's 320-bit
// integer, exact_wide.cuh). Each block spins for a given time (its work), folds a value with
// block_fold and posts it; block 0 collects with the library's collect_posts_in. No input is read,
// so what is left is the hand-over itself.
//
// Per launch, `%globaltimer` (ns): every poster's post, and the collector's stages (its own fold,
// its lanes' loop done, its block fold, the answer); and, in a copy of the collector's loop with
// a stamp per lane, when each lane issued its first poll and when it took its post and after how
// many polls, with and without the polling lanes rejoining their warp before the fold. Medians of
// 20 cold launches (each queued behind an L2 flush).
//   post_probe [spin_ns=1500]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "reducelab/detail/agent_order_free.cuh"
#include "reducelab/detail/block_reduce.cuh"
#include "reducelab/detail/exact_wide.cuh"
#include "reducelab/detail/posted_results.cuh"
#include "reducelab/detail/workspace.hpp"
#include "probe_timing.cuh"

using namespace reducelab::detail;

__device__ unsigned long long g_block[kPartialSlots][8];  // thread 0 of each block, by stage
__device__ unsigned long long g_lane[256][3];  // the copy's lanes: first poll, taken, polls

__device__ __forceinline__ unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void stamp(unsigned stage) {
  if (threadIdx.x == 0) g_block[blockIdx.x][stage] = now();
}

struct U32Sum {
  using Acc = unsigned;
  using Out = unsigned;
  __device__ static Acc identity() { return 0; }
  __device__ static Acc combine(Acc a, Acc b) { return a + b; }
  __device__ static Out finish(Acc a, std::uint64_t) { return a; }
  __device__ static Acc make(unsigned x) { return x; }
  __device__ static void trace(unsigned s) { stamp(s); }
};
struct U64Min {
  using Acc = unsigned long long;
  using Out = unsigned long long;
  __device__ static Acc identity() { return ~0ull; }
  __device__ static Acc combine(Acc a, Acc b) { return a < b ? a : b; }
  __device__ static Out finish(Acc a, std::uint64_t) { return a; }
  __device__ static Acc make(unsigned x) { return 0x100000000ull + x; }
  __device__ static void trace(unsigned s) { stamp(s); }
};
struct WideSum {
  using Acc = Wide320;
  using Out = unsigned long long;
  __device__ static Acc identity() { return Wide320{}; }
  __device__ static Acc combine(Acc a, Acc b) { return add_wide(a, b); }
  __device__ static Out finish(Acc a, std::uint64_t) { return a.w[0] ^ a.w[1] ^ a.w[2] ^ a.w[3] ^ a.w[4]; }
  __device__ static Acc make(unsigned x) {
    Wide320 r{};
    r.w[0] = x;
    r.w[2] = x;
    return r;
  }
  __device__ static void trace(unsigned s) { stamp(s); }
};

// The collector's loop as collect_posts_in has it, one slot a lane, with the lanes' stamps;
// kRejoin: the polling lanes rejoin their warp (__syncwarp) before the fold, as the library's do.
template <class Sem, bool kRejoin>
__device__ void collect_stamped(typename Sem::Acc own, unsigned long long* posts, rl::smem<typename Sem::Acc> slots,
                                typename Sem::Out* output) {
  using Acc = typename Sem::Acc;
  Acc got = threadIdx.x == 0 ? own : Sem::identity();
  const unsigned b = threadIdx.x;
  if (b < gridDim.x && b != 0) {
    unsigned polls = 0;
    const unsigned long long first = now();
    for (;;) {
      unsigned long long w[kPostWords<Acc>];
      poll_post<Acc>(posts, b, w);
      ++polls;
      if (post_is_full<Acc>(w)) {
        got = Sem::combine(got, take_post<Acc>(posts, b, w));
        break;
      }
    }
    g_lane[b][0] = first;
    g_lane[b][1] = now();
    g_lane[b][2] = polls;
  }
  if constexpr (kRejoin) __syncwarp();
  stamp(4);
  got = block_fold<Sem>(got, slots);
  stamp(5);
  if (threadIdx.x == 0) output[0] = Sem::finish(got, 0);
  stamp(6);
}

// kStamped: 0 the library's collect_posts_in, 1 the stamped copy, 2 the stamped copy with the rejoin.
template <class Sem, int kStamped>
__global__ void __launch_bounds__(kThreads) hand_over(unsigned long long* posts, typename Sem::Out* output,
                                                      unsigned spin_ns) {
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[kWarps];
  rl::smem<Acc> slots = slot_storage;
  if (blockIdx.x == 0) prefetch_posts<Acc>(posts);
  stamp(0);
  const unsigned long long start = now();
  while (now() - start < spin_ns) {
  }
  Acc acc = block_fold<Sem>(Sem::make(blockIdx.x * kThreads + threadIdx.x), slots);
  stamp(2);
  if (blockIdx.x != 0) {
    if (threadIdx.x == 0) post_result<Acc>(posts, blockIdx.x, acc);
    stamp(3);
    return;
  }
  __syncthreads();
  stamp(3);
  if constexpr (kStamped != 0) collect_stamped<Sem, kStamped == 2>(acc, posts, slots, output);
  else collect_posts_in<Sem, Sem>(acc, posts, slots, output, 0);
}

template <class T>
T median(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class Sem, int kStamped>
void run(const char* name, const L2Flush& flush, unsigned grid, unsigned spin_ns, unsigned long long* posts,
         void* out) {
  constexpr int kRuns = 20;
  unsigned long long* gb = nullptr;
  unsigned long long* gl = nullptr;
  CK(cudaGetSymbolAddress(reinterpret_cast<void**>(&gb), g_block));
  CK(cudaGetSymbolAddress(reinterpret_cast<void**>(&gl), g_lane));
  std::vector<double> last_post, loop_done, folded, written, kernel_us, first_poll, last_take, polls;
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int r = 0; r < kRuns + 3; ++r) {
    CK(cudaMemset(gb, 0, grid * 64));
    CK(cudaMemset(gl, 0, sizeof(unsigned long long) * 256 * 3));
    flush();
    CK(cudaEventRecord(a));
    hand_over<Sem, kStamped><<<grid, kThreads>>>(posts, static_cast<typename Sem::Out*>(out), spin_ns);
    CK(cudaGetLastError());
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    std::vector<unsigned long long> t(std::size_t(grid) * 8), l(256 * 3);
    CK(cudaMemcpy(t.data(), gb, t.size() * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(l.data(), gl, l.size() * 8, cudaMemcpyDeviceToHost));
    if (r < 3) continue;
    unsigned long long t0 = ~0ull, lp = 0, fp = ~0ull, lt = 0, np = 0;
    for (unsigned k = 0; k < grid; ++k) t0 = std::min(t0, t[k * 8]);
    for (unsigned k = 1; k < grid; ++k) lp = std::max(lp, t[k * 8 + 3]);
    if (kStamped != 0)
      for (unsigned k = 1; k < grid && k < 256; ++k) {
        fp = std::min(fp, l[k * 3]);
        lt = std::max(lt, l[k * 3 + 1]);
        np = std::max(np, l[k * 3 + 2]);
      }
    last_post.push_back(double(lp - t0));
    loop_done.push_back(double(t[4] - t0));
    folded.push_back(double(t[5] - t0));
    written.push_back(double(t[6] - t0));
    kernel_us.push_back(ms * 1000.0);
    if (kStamped != 0) {
      first_poll.push_back(double(fp - t0));
      last_take.push_back(double(lt - t0));
      polls.push_back(double(np));
    }
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::printf("%-22s grid %4u spin %5u | posts done %6.0f | collector: loop %6.0f folded %6.0f written %6.0f",
              name, grid, spin_ns, median(last_post), median(loop_done), median(folded), median(written));
  if (kStamped != 0)
    std::printf(" | lanes: first poll %6.0f last take %6.0f polls %3.0f", median(first_poll), median(last_take),
                median(polls));
  std::printf(" | kernel %6.2f us\n", median(kernel_us));
}

int main(int argc, char** argv) {
  const unsigned spin = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 1500u;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("device %s, %d SMs; ns from the first block's start, medians of 20 cold launches\n", p.name,
              p.multiProcessorCount);
  const L2Flush flush(p);
  unsigned long long* posts = nullptr;
  void* out = nullptr;
  CK(cudaMalloc(&posts, kPostBytes));
  CK(cudaMemset(posts, 0, kPostBytes));
  CK(cudaMalloc(&out, 64));
  for (unsigned grid : {4u, 16u, 128u, 512u}) {
    for (unsigned s : {0u, spin}) {
      run<U32Sum, 0>("4 B (library)", flush, grid, s, posts, out);
      run<U64Min, 0>("8 B (library)", flush, grid, s, posts, out);
      run<WideSum, 0>("40 B (library)", flush, grid, s, posts, out);
      if (grid <= 256) {
        run<U32Sum, 1>("4 B (copy)", flush, grid, s, posts, out);
        run<U32Sum, 2>("4 B (copy, rejoin)", flush, grid, s, posts, out);
        run<WideSum, 1>("40 B (copy)", flush, grid, s, posts, out);
        run<WideSum, 2>("40 B (copy, rejoin)", flush, grid, s, posts, out);
      }
    }
  }
  return 0;
}
