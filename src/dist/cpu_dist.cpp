// reducelab::dist on the CPU backend: every rank's part computed with cpu_reduce.hpp's code, the
// records and chunk results exchanged over a Transport (threads of this process, or MPI).
#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "dist/internal.hpp"
#include "reducelab/detail/cpu_reduce.hpp"
#include "reducelab/detail/dist_record.hpp"
#include "reducelab/dist.hpp"

namespace reducelab::dist {

namespace rd = reducelab::detail::dist;
namespace dd = reducelab::detail;

// ---- ranks simulated by threads ---------------------------------------------------------------

namespace {

struct SimShared {
  explicit SimShared(int n) : ranks(n), slots(n) {}
  int ranks;
  std::mutex m;
  std::condition_variable cv;
  // allgather: a generation counter and one slot per rank
  std::uint64_t generation = 0;
  int arrived = 0, left = 0;
  std::vector<std::vector<unsigned char>> slots;
  // point to point: FIFO per (from, to)
  std::map<std::pair<int, int>, std::deque<std::vector<unsigned char>>> mail;
};

class SimTransport final : public Transport {
 public:
  SimTransport(std::shared_ptr<SimShared> s, int rank) : s_(std::move(s)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return s_->ranks; }

  Status allgather(const void* mine, void* all, std::size_t bytes, double timeout_s) override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    std::unique_lock lock(s_->m);
    // Wait until the previous round has been read by everyone.
    if (!s_->cv.wait_until(lock, deadline, [&] { return s_->left == 0; }))
      return detail::timeout_status(rank_, s_->ranks, timeout_s, "an all-gather");
    const std::uint64_t gen = s_->generation;
    s_->slots[rank_].assign(static_cast<const unsigned char*>(mine), static_cast<const unsigned char*>(mine) + bytes);
    if (++s_->arrived == s_->ranks) {
      s_->arrived = 0;
      s_->left = s_->ranks;
      ++s_->generation;
      s_->cv.notify_all();
    } else if (!s_->cv.wait_until(lock, deadline, [&] { return s_->generation != gen; })) {
      --s_->arrived;
      return detail::timeout_status(rank_, s_->ranks, timeout_s, "an all-gather");
    }
    for (int r = 0; r < s_->ranks; ++r) {
      if (s_->slots[r].size() != bytes)
        return Status(Errc::invalid_argument, "dist: rank " + std::to_string(r) + " gathered " + std::to_string(s_->slots[r].size()) +
                                                  " bytes, rank " + std::to_string(rank_) + " " + std::to_string(bytes));
      std::memcpy(static_cast<unsigned char*>(all) + r * bytes, s_->slots[r].data(), bytes);
    }
    if (--s_->left == 0) s_->cv.notify_all();
    return {};
  }

  Status exchange(const std::vector<Piece>& sends, const std::vector<Piece>& recvs, double timeout_s) override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    std::unique_lock lock(s_->m);
    for (const Piece& p : sends) {
      const auto* b = static_cast<const unsigned char*>(p.data);
      s_->mail[{rank_, p.peer}].emplace_back(b, b + p.bytes);
    }
    s_->cv.notify_all();
    for (const Piece& p : recvs) {
      auto& box = s_->mail[{p.peer, rank_}];
      if (!s_->cv.wait_until(lock, deadline, [&] { return !box.empty(); }))
        return detail::timeout_status(rank_, s_->ranks, timeout_s, "a receive from rank " + std::to_string(p.peer));
      if (box.front().size() != p.bytes)
        return Status(Errc::invalid_argument, "dist: rank " + std::to_string(p.peer) + " sent " + std::to_string(box.front().size()) +
                                                  " bytes where rank " + std::to_string(rank_) + " expected " + std::to_string(p.bytes));
      std::memcpy(p.data, box.front().data(), p.bytes);
      box.pop_front();
    }
    return {};
  }

 private:
  std::shared_ptr<SimShared> s_;
  int rank_;
};

}  // namespace

std::vector<std::unique_ptr<Transport>> simulated_ranks(int ranks) {
  std::vector<std::unique_ptr<Transport>> out;
  if (ranks < 1) return out;
  auto shared = std::make_shared<SimShared>(ranks);
  for (int r = 0; r < ranks; ++r) out.push_back(std::make_unique<SimTransport>(shared, r));
  return out;
}

// ---- the reduction ----------------------------------------------------------------------------

namespace {

// A rank's exact digits and flags, as cpu_exact computes them before it rounds.
template <class T>
void cpu_exact_digits(const T* x, std::uint64_t n, std::uint64_t* payload) {
  using X = dd::ExactTraits<T>;
  constexpr std::uint64_t kSlice = std::uint64_t(1) << 24;
  std::array<std::int64_t, X::kDigits> total{};
  unsigned flags = 0;
  for (std::uint64_t s = 0; s * kSlice < n; ++s) {
    std::array<std::int64_t, X::kDigits> digits{};
    const auto spill = [&](double v) { dd::add_to_digits(digits.data(), v, X::kBase); };
    dd::ExactCarry carry;
    const std::uint64_t end = std::min(n, (s + 1) * kSlice);
    for (std::uint64_t i = s * kSlice; i < end; ++i) carry.add(static_cast<double>(dd::widen(x[i])), spill);
    flags |= carry.finish(spill);
    for (int d = 0; d + 1 < X::kDigits; ++d) {  // carry every digit but the top into [0, 2^32)
      const std::int64_t c = digits[d] >> 32;
      digits[d] -= c * (std::int64_t(1) << 32);
      digits[d + 1] += c;
    }
    for (int d = 0; d < X::kDigits; ++d) total[d] += digits[d];
  }
  for (int d = 0; d < X::kDigits; ++d) payload[d] = static_cast<std::uint64_t>(total[d]);
  payload[rd::kFlagWord] = flags;
}

template <class T, class Op>
Result<result_t<T, Op>> chunked(const T* local, std::uint64_t local_n, const std::vector<rd::Record>& recs,
                                std::uint64_t total, Transport& t, const Options& options) {
  using Sem = dd::semantics_t<T, Op>;
  using Acc = typename Sem::Acc;
  (void)local_n;
  Result<result_t<T, Op>> res;
  const int me = t.rank(), ranks = t.size();
  const dd::Plan plan = dd::fixed_plan<T>(total);
  std::vector<rd::Ownership> own(ranks);
  rd::ownerships(plan, recs.data(), ranks, own.data());
  const rd::Ownership& mine = own[me];

  // The halo: what this rank sends to owners before it, and receives from ranks after it.
  std::vector<T> staging;  // this rank's last chunk, whole, when it runs past the shard
  std::uint64_t staged_begin = 0;
  std::vector<Transport::Piece> sends, recvs;
  for (int r = 0; r < ranks; ++r) {
    if (r == me) continue;
    const rd::Ownership& o = own[r];
    const std::uint64_t lo = std::max(o.halo_begin, mine.offset), hi = std::min(o.halo_end, mine.offset + mine.n);
    if (lo < hi) sends.push_back({r, const_cast<T*>(local) + (lo - mine.offset), (hi - lo) * sizeof(T)});
  }
  if (mine.halo_end > mine.halo_begin) {
    staged_begin = plan.chunk_begin(mine.c1 - 1);
    staging.resize(mine.halo_end - staged_begin);
    std::copy(local + (staged_begin - mine.offset), local + mine.n, staging.begin());
    for (int r = me + 1; r < ranks; ++r) {
      const std::uint64_t lo = std::max(mine.halo_begin, own[r].offset), hi = std::min(mine.halo_end, own[r].offset + own[r].n);
      if (lo < hi) recvs.push_back({r, staging.data() + (lo - staged_begin), (hi - lo) * sizeof(T)});
    }
  }
  if (!sends.empty() || !recvs.empty()) {
    res.status = t.exchange(sends, recvs, options.timeout_s);
    if (!res.status) return res;
  }

  // This rank's chunk results: each chunk whole, by the one-GPU recipe (cpu_fold_chunk).
  const std::uint64_t slots = rd::most_owned(plan, recs.data(), ranks);
  std::vector<Acc> part(std::max<std::uint64_t>(slots, 1), Sem::identity());
  std::vector<Acc> scratch;
  for (std::uint64_t c = mine.c0; c < mine.c1; ++c) {
    const bool staged = !staging.empty() && c + 1 == mine.c1;
    // The chunk's elements addressed by their global index.
    const T* base = staged ? staging.data() - staged_begin : local - mine.offset;
    part[c - mine.c0] = dd::cpu_fold_chunk<T, Sem>(base, plan, c, scratch);
  }
  std::vector<Acc> all(part.size() * ranks);
  res.status = t.allgather(part.data(), all.data(), part.size() * sizeof(Acc), options.timeout_s);
  if (!res.status) return res;

  // Step 3 of the fixed order, as cpu_reduce does it.
  if (plan.chunks == 0) {
    res.value = Sem::finish(dd::cpu_block_fold<Sem>(std::vector<Acc>(dd::kThreads, Sem::identity())), total);
    return res;
  }
  std::vector<Acc> chunk(plan.chunks);
  for (int r = 0; r < ranks; ++r)
    for (std::uint64_t c = own[r].c0; c < own[r].c1; ++c) chunk[c] = all[r * part.size() + (c - own[r].c0)];
  if (plan.chunks == 1) {
    res.value = Sem::finish(chunk[0], total);
    return res;
  }
  std::vector<Acc> acc(dd::kThreads, Sem::identity());
  for (std::uint64_t c = 0; c < plan.chunks; ++c) acc[c % dd::kThreads] = Sem::combine(acc[c % dd::kThreads], chunk[c]);
  res.value = Sem::finish(dd::cpu_block_fold<Sem>(acc), total);
  return res;
}

}  // namespace

namespace cpu {

template <class T, class Op>
Result<result_t<T, Op>> reduce(const T* local, std::uint64_t local_n, Op, Transport& t, const Options& options,
                               unsigned threads) {
  (void)threads;
  Result<result_t<T, Op>> res;
  const bool bad = local == nullptr && local_n > 0;
  rd::Record mine{};
  rd::write_header<T, Op>(mine, local_n, options.total, bad);
  if (!bad) {
    if constexpr (rd::path_of<T, Op> == rd::Path::order_free) {
      using Sem = dd::semantics_t<T, Op>;
      const auto acc = dd::cpu_reduce<T, rd::RawSem<Sem>>(local, local_n, threads);
      static_assert(sizeof(acc) <= sizeof(mine.payload));
      std::memcpy(mine.payload, &acc, sizeof acc);
    } else if constexpr (rd::path_of<T, Op> == rd::Path::exact) {
      cpu_exact_digits<T>(local, local_n, mine.payload);
    }
  }
  std::vector<rd::Record> recs(t.size());
  res.status = t.allgather(&mine, recs.data(), sizeof mine, options.timeout_s);
  if (!res.status) return res;
  if constexpr (rd::path_of<T, Op> == rd::Path::chunked) {
    std::uint64_t total = 0;
    const rd::Failure f = rd::check_records(recs.data(), t.size(), &total);
    if (f.code != 0) {
      res.status = detail::failure_status(f, t.rank(), t.size());
      return res;
    }
    return chunked<T, Op>(local, local_n, recs, total, t, options);
  } else {
    const rd::Failure f = rd::fold_records<T, Op>(recs.data(), t.size(), &res.value);
    if (f.code != 0) res.status = detail::failure_status(f, t.rank(), t.size());
    return res;
  }
}

}  // namespace cpu

#define REDUCELAB_DIST_CPU_INSTANTIATE_(T, OP)                                                    \
  template Result<result_t<T, op::OP>> cpu::reduce<T, op::OP>(const T*, std::uint64_t, op::OP, Transport&, \
                                                             const Options&, unsigned);
#define REDUCELAB_DIST_CPU_INSTANTIATE_TYPE_(T) REDUCELAB_FOR_EACH_OP(REDUCELAB_DIST_CPU_INSTANTIATE_, T)
REDUCELAB_FOR_EACH_TYPE(REDUCELAB_DIST_CPU_INSTANTIATE_TYPE_)

}  // namespace reducelab::dist
