// reducelab::dist on the CPU backend with ranks simulated by threads: for every type and op and
// random splits (empty shards, uneven, any alignment), the bits of one process.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "dist_support.hpp"
#include "reducelab/detail/dist_record.hpp"
#include "reducelab/dist.hpp"

namespace rltest {
namespace {

namespace rdist = reducelab::dist;

// Runs fn(rank, transport) on `ranks` threads; returns each rank's result.
template <class R>
std::vector<R> run_ranks(int ranks, const std::function<R(int, rdist::Transport&)>& fn) {
  auto t = rdist::simulated_ranks(ranks);
  std::vector<R> out(ranks);
  std::vector<std::thread> th;
  for (int r = 0; r < ranks; ++r) th.emplace_back([&, r] { out[r] = fn(r, *t[r]); });
  for (auto& x : th) x.join();
  return out;
}

template <class T>
class DistCpu : public ::testing::Test {};
TYPED_TEST_SUITE(DistCpu, AllTypes);

template <class T, class Op>
void check_splits(const std::vector<std::uint64_t>& sizes, int splits) {
  using R = result_t<T, Op>;
  for (const std::uint64_t n : sizes) {
    for (int s = 0; s < splits; ++s) {
      const std::uint64_t seed = n * 131 + s;
      const int ranks = 1 + static_cast<int>(seed % 5);
      const auto x = dist_input<T, Op>(n, seed);
      const auto one = cpu::reduce(x.data(), n, Op{}, 1);
      const auto off = random_split(n, ranks, seed ^ 0x5eed);
      auto got = run_ranks<Result<R>>(ranks, [&](int r, rdist::Transport& t) {
        const T* p = off[r + 1] > off[r] ? x.data() + off[r] : nullptr;
        return rdist::cpu::reduce(p, off[r + 1] - off[r], Op{}, t, rdist::Options{}, 1);
      });
      std::string split;
      for (int r = 0; r < ranks; ++r) split += std::to_string(off[r + 1] - off[r]) + (r + 1 < ranks ? "+" : "");
      for (int r = 0; r < ranks; ++r) {
        ASSERT_EQ(got[r].status.ok(), one.status.ok()) << type_name<T>() << " " << op_name<Op>() << " n=" << n
                                                     << " split " << split << ": " << got[r].status.message();
        if (!one.status.ok()) {
          EXPECT_EQ(got[r].status.code(), one.status.code());
          continue;
        }
        ASSERT_TRUE(same_bits(got[r].value, one.value))
            << type_name<T>() << " " << op_name<Op>() << " n=" << n << " split " << split << " rank " << r << ": "
            << show(got[r].value) << " vs one process " << show(one.value);
      }
    }
  }
}

template <class T>
std::vector<std::uint64_t> dist_sizes() {
  const std::uint64_t tile = detail::Shape<T>::kTile;
  // past kChunks / 2 tiles the order has many chunks; at 2112+ tiles, two tiles per chunk
  return {0, 1, 2, 33, tile - 1, tile + 1, 5 * tile + 3, 40 * tile + 7};
}

TYPED_TEST(DistCpu, EveryOpAnySplitGivesTheBitsOfOneProcess) {
  using T = TypeParam;
  const auto sizes = dist_sizes<T>();
  check_splits<T, op::sum>(sizes, 3);
  check_splits<T, op::prod>(sizes, 3);
  check_splits<T, op::min>(sizes, 2);
  check_splits<T, op::max>(sizes, 2);
  check_splits<T, op::mean>(sizes, 2);
  check_splits<T, op::argmin>(sizes, 2);
  check_splits<T, op::argmax>(sizes, 2);
}

// Floating-point products over many chunks (between kChunks / 2 and kChunks tiles, and past
// kChunks): chunks straddle shards, halos cross empty shards.
TYPED_TEST(DistCpu, ProductsOverManyChunksGiveTheBitsOfOneProcess) {
  using T = TypeParam;
  if constexpr (is_floating<T>) {
    const std::uint64_t tile = detail::Shape<T>::kTile;
    check_splits<T, op::prod>({1100 * tile + 77, 2150 * tile + 5}, 2);
  } else {
    GTEST_SKIP() << "integer products are order-free: covered above";
  }
}

// The chunk bookkeeping alone: every chunk has exactly one owner, halos cover the tails.
TEST(DistOwnership, EveryChunkHasOneOwnerAndEveryHaloIsTheChunkTail) {
  for (std::uint64_t n : {1ull, 8191ull, 8193ull, 100000ull, 9000000ull, 17300000ull}) {
    const detail::Plan p = detail::fixed_plan<float>(n);
    for (int s = 0; s < 30; ++s) {
      const int ranks = 1 + s % 7;
      const auto off = random_split(n, ranks, n + s);
      std::vector<int> owner(p.chunks, -1);
      for (int r = 0; r < ranks; ++r) {
        const auto o = detail::dist::ownership(p, off[r], off[r + 1] - off[r]);
        for (auto c = o.c0; c < o.c1; ++c) {
          ASSERT_EQ(owner[c], -1) << "chunk " << c << " owned twice";
          owner[c] = r;
          ASSERT_GE(p.chunk_begin(c), off[r]);
          ASSERT_LT(p.chunk_begin(c), off[r + 1]);
        }
        if (o.c1 > o.c0) EXPECT_EQ(std::max(o.halo_end, off[r + 1]), std::max(p.chunk_begin(o.c1), off[r + 1]));
      }
      for (std::uint64_t c = 0; c < p.chunks; ++c) ASSERT_NE(owner[c], -1) << "chunk " << c << " has no owner, n=" << n;
    }
  }
}

// ---- errors: one line on every rank, no hang ----

TEST(DistCpuErrors, RanksThatDisagreeOnTheDtypeAllFailNamingTheRank) {
  std::vector<float> f(100, 1.f);
  std::vector<std::int32_t> i(100, 1);
  auto got = run_ranks<Status>(3, [&](int r, rdist::Transport& t) -> Status {
    if (r == 1) return rdist::cpu::reduce(i.data(), i.size(), op::sum{}, t).status;
    return rdist::cpu::reduce(f.data(), f.size(), op::sum{}, t).status;
  });
  for (int r = 0; r < 3; ++r) {
    ASSERT_FALSE(got[r].ok());
    EXPECT_NE(got[r].message().find("rank 1 reduces int32 but rank 0 reduces float"), std::string::npos) << got[r].message();
  }
}

TEST(DistCpuErrors, RanksThatDisagreeOnTheOpFailEvenAcrossPaths) {
  std::vector<double> x(5000, 1.5);
  auto got = run_ranks<Status>(2, [&](int r, rdist::Transport& t) -> Status {
    if (r == 0) return rdist::cpu::reduce(x.data(), x.size(), op::prod{}, t).status;  // chunked path
    return rdist::cpu::reduce(x.data(), x.size(), op::max{}, t).status;               // order-free path
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_FALSE(got[r].ok());
    EXPECT_NE(got[r].message().find("rank 1 asks for max but rank 0 for prod"), std::string::npos) << got[r].message();
  }
}

TEST(DistCpuErrors, ANullShardWithElementsFailsOnEveryRank) {
  std::vector<float> x(10, 2.f);
  auto got = run_ranks<Status>(3, [&](int r, rdist::Transport& t) -> Status {
    return rdist::cpu::reduce(r == 2 ? nullptr : x.data(), x.size(), op::prod{}, t).status;
  });
  for (int r = 0; r < 3; ++r) {
    ASSERT_FALSE(got[r].ok());
    EXPECT_EQ(got[r].code(), Errc::invalid_argument);
    EXPECT_NE(got[r].message().find("rank 2's shard is null but its n = 10"), std::string::npos) << got[r].message();
  }
}

TEST(DistCpuErrors, AWrongExpectedTotalIsReported) {
  std::vector<std::uint8_t> x(10, 2);
  auto got = run_ranks<Status>(2, [&](int r, rdist::Transport& t) -> Status {
    rdist::Options o;
    if (r == 1) o.total = 21;
    return rdist::cpu::reduce(x.data(), x.size(), op::sum{}, t, o).status;
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_FALSE(got[r].ok());
    EXPECT_NE(got[r].message().find("rank 1 expects a total of 21 elements but the shards hold 20"), std::string::npos) << got[r].message();
  }
}

TEST(DistCpuErrors, MinOfNothingAnywhereIsEmptyInputOnEveryRank) {
  auto got = run_ranks<Status>(2, [&](int, rdist::Transport& t) -> Status {
    return rdist::cpu::reduce(static_cast<const float*>(nullptr), 0, op::min{}, t).status;
  });
  for (int r = 0; r < 2; ++r) EXPECT_EQ(got[r].code(), Errc::empty_input) << got[r].message();
}

TEST(DistCpuErrors, ARankThatNeverJoinsGivesATimeoutNotAHang) {
  std::vector<float> x(10, 2.f);
  auto got = run_ranks<Status>(3, [&](int r, rdist::Transport& t) -> Status {
    if (r == 2) return {};  // never calls
    rdist::Options o;
    o.timeout_s = 0.3;
    return rdist::cpu::reduce(x.data(), x.size(), op::sum{}, t, o).status;
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_FALSE(got[r].ok());
    EXPECT_NE(got[r].message().find("rank " + std::to_string(r) + " of 3"), std::string::npos) << got[r].message();
    EXPECT_NE(got[r].message().find("did not complete within 0.3 s"), std::string::npos) << got[r].message();
  }
}

TEST(DistGpu, WithoutNcclOrAGpuTheCommunicatorSaysWhy) {
  std::vector<rdist::Comm> comms;
  const Status s = rdist::Comm::local(64, &comms);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(comms.empty());
  EXPECT_FALSE(s.message().empty());
}

}  // namespace
}  // namespace rltest
