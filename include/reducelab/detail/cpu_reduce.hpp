#pragma once
// reducelab::cpu::reduce — the fixed order of reduce_order.hpp computed on the CPU's cores: the
// GPU's threads, warps and shuffle trees replayed lane by lane, one chunk per task, so the
// result has the GPU's bits. Plain C++ (g++ or nvcc's host compiler).
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <thread>
#include <vector>

#include "reducelab/detail/exact_sum.cuh"
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

// Exact sums on the CPU: every element through the same TwoSum pair and digits as the GPU's
// threads (exact_sum.cuh), in slices of at most 2^24 elements whose digits are carried before
// they are added up, so no digit overflows. The split does not matter: the sum is exact.
template <class T, class Out, bool kMean>
Out cpu_exact(const T* x, std::uint64_t n, unsigned threads) {
  using X = ExactTraits<T>;
  constexpr std::uint64_t kSlice = std::uint64_t(1) << 24;
  const std::uint64_t slices = (n + kSlice - 1) / kSlice;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, slices)));
  struct Part {
    std::array<std::int64_t, X::kDigits> digits{};
    unsigned flags = 0;
  };
  std::vector<Part> parts(threads);
  std::atomic<std::uint64_t> next{0};
  auto worker = [&](Part& part) {
    for (std::uint64_t s; (s = next.fetch_add(1)) < slices;) {
      std::array<std::int64_t, X::kDigits> digits{};
      const auto spill = [&](double v) { add_to_digits(digits.data(), v, X::kBase); };
      ExactCarry carry;
      const std::uint64_t end = std::min(n, (s + 1) * kSlice);
      for (std::uint64_t i = s * kSlice; i < end; ++i) carry.add(static_cast<double>(widen(x[i])), spill);
      part.flags |= carry.finish(spill);
      for (int d = 0; d + 1 < X::kDigits; ++d) {  // carry: every digit but the top into [0, 2^32)
        const std::int64_t c = digits[d] >> 32;
        digits[d] -= c * (std::int64_t(1) << 32);
        digits[d + 1] += c;
      }
      for (int d = 0; d < X::kDigits; ++d) part.digits[d] += digits[d];
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker, std::ref(parts[t]));
  worker(parts[0]);
  for (auto& t : pool) t.join();
  if (n == 0) return kMean ? std::numeric_limits<Out>::quiet_NaN() : Out(0);
  Part total;
  for (const Part& p : parts) {
    for (int d = 0; d < X::kDigits; ++d) total.digits[d] += p.digits[d];
    total.flags |= p.flags;
  }
  std::uint32_t words[X::kDigits + 4];
  return exact_result<T, Out>(total.digits.data(), total.flags, kMean ? n : 1, words);
}

}  // namespace reducelab::detail

namespace reducelab::cpu {
template <class T, class Op>
Result<result_t<T, Op>> reduce(const T* input, std::uint64_t n, Op, unsigned threads) {
  Result<result_t<T, Op>> r;
  r.status = detail::check_input<Op>(input, n);
  if (!r.status) return r;
  if constexpr (detail::exact_sum_v<T, Op>)
    r.value = detail::cpu_exact<T, result_t<T, Op>, std::is_same_v<Op, op::mean>>(input, n, threads);
  else
    r.value = detail::cpu_reduce<T, detail::semantics_t<T, Op>>(input, n, threads);
  return r;
}
}  // namespace reducelab::cpu
