#pragma once
// reducelab::cpu::reduce — the fixed order of reduce_order.hpp computed on the CPU's cores: the
// GPU's threads, warps and shuffle trees replayed lane by lane, one chunk per task, so the
// result has the GPU's bits. Plain C++ (g++ or nvcc's host compiler).
#include <algorithm>
#include <atomic>
#include <array>
#include <cstdint>
#include <thread>
#include <vector>

#include "reducelab/detail/reduce_ops.cuh"
#include "reducelab/detail/reduce_order.hpp"
#include "reducelab/reduce.hpp"

namespace reducelab::detail {

// shuffle-down steps 16, 8, 4, 2, 1 on 32 lanes; lane 0's value is the warp's fold. A lane only
// ever reads a lane above it, so updating in place in increasing lane order is exact.
template <class Sem>
typename Sem::Acc cpu_warp_fold(std::array<typename Sem::Acc, 32>& lanes) {
  for (unsigned offset = 16; offset > 0; offset >>= 1)
    for (unsigned l = 0; l < offset; ++l) lanes[l] = Sem::combine(lanes[l], lanes[l + offset]);
  return lanes[0];
}

// The block's fold of kThreads accumulators (block_fold in block_reduce.cuh).
template <class Sem>
typename Sem::Acc cpu_block_fold(const std::vector<typename Sem::Acc>& threads) {
  std::array<typename Sem::Acc, 32> lanes;
  std::array<typename Sem::Acc, 32> warps;
  warps.fill(Sem::identity());
  for (unsigned w = 0; w < kWarps; ++w) {
    std::copy_n(threads.begin() + w * 32, 32, lanes.begin());
    warps[w] = cpu_warp_fold<Sem>(lanes);
  }
  return cpu_warp_fold<Sem>(warps);
}

// Step 1 then step 2 for chunk c: the chunk's block result.
template <class T, class Sem>
typename Sem::Acc cpu_fold_chunk(const T* x, const Plan& plan, std::uint64_t c,
                                 std::vector<typename Sem::Acc>& acc) {
  constexpr unsigned kVec = Shape<T>::kVec;
  constexpr std::uint64_t kTile = Shape<T>::kTile;
  using Inner = typename Sem::Inner;
  acc.assign(kThreads, Sem::identity());
  std::vector<Inner> in(kThreads);
  const std::uint64_t end = plan.chunk_begin(c + 1);
  for (std::uint64_t tile = plan.chunk_begin(c); tile < end; tile += kTile) {
    in.assign(kThreads, Sem::inner_identity());
    for (unsigned i = 0; i < kItems; ++i) {
      // Thread t's vector i covers [row + t*kVec, row + (t+1)*kVec): walk the row in memory order.
      const std::uint64_t row = tile + std::uint64_t(i) * kThreads * kVec;
      if (row >= end) break;
      const std::uint64_t stop = std::min<std::uint64_t>(end, row + std::uint64_t(kThreads) * kVec);
      for (std::uint64_t at = row; at < stop; ++at) {
        auto& a = in[(at - row) / kVec];
        a = Sem::inner_combine(a, Sem::lift(x[at], at));
      }
    }
    for (unsigned t = 0; t < kThreads; ++t) acc[t] = Sem::absorb(acc[t], in[t]);
  }
  return cpu_block_fold<Sem>(acc);
}

template <class T, class Sem>
typename Sem::Out cpu_reduce(const T* x, std::uint64_t n, unsigned threads) {
  using Acc = typename Sem::Acc;
  const Plan plan = fixed_plan<T>(n);
  std::vector<Acc> scratch;
  if (plan.chunks == 0) return Sem::finish(cpu_block_fold<Sem>(std::vector<Acc>(kThreads, Sem::identity())), n);
  if (plan.chunks == 1) return Sem::finish(cpu_fold_chunk<T, Sem>(x, plan, 0, scratch), n);

  std::vector<Acc> partials(plan.chunks);
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::uint64_t>(threads, plan.chunks));
  std::atomic<std::uint64_t> next{0};
  auto worker = [&] {
    std::vector<Acc> acc;
    for (std::uint64_t c; (c = next.fetch_add(1)) < plan.chunks;) partials[c] = cpu_fold_chunk<T, Sem>(x, plan, c, acc);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();

  // Step 3: thread t folds chunks t, t + kThreads, ...; then the block tree.
  std::vector<Acc> acc(kThreads, Sem::identity());
  for (std::uint64_t c = 0; c < plan.chunks; ++c) acc[c % kThreads] = Sem::combine(acc[c % kThreads], partials[c]);
  return Sem::finish(cpu_block_fold<Sem>(acc), n);
}

}  // namespace reducelab::detail

namespace reducelab::cpu {
template <class T, class Op>
result_t<T, Op> reduce(const T* input, std::uint64_t n, Op, unsigned threads) {
  return detail::cpu_reduce<T, detail::semantics_t<T, Op>>(input, n, threads);
}
}  // namespace reducelab::cpu
