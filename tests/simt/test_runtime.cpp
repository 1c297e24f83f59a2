// Tests of the SIMT runtime: built-ins and their semantics, schedules, and the planted bugs the
// runtime must report (with kernel, block, thread/lane and source line).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels.cuh"

namespace {

using namespace simt_test;

// A device buffer for tests: allocated with simt::device_malloc, copied with memcpy.
template <class T>
class Buffer {
 public:
  explicit Buffer(std::size_t n, T fill = T{}) : n_(n) {
    p_ = static_cast<T*>(simt::device_malloc(n * sizeof(T)));
    std::fill(p_, p_ + n, fill);
  }
  explicit Buffer(const std::vector<T>& v) : Buffer(v.size()) {
    std::copy(v.begin(), v.end(), p_);
  }
  ~Buffer() { simt::device_free(p_); }
  Buffer(const Buffer&) = delete;
  T* get() const { return p_; }
  operator T*() const { return p_; }
  std::vector<T> host() const { return std::vector<T>(p_, p_ + n_); }
  T& operator[](std::size_t i) { return p_[i]; }

 private:
  T* p_;
  std::size_t n_;
};

// Resets the runtime's settings around each test.
class Simt : public ::testing::Test {
 protected:
  void SetUp() override {
    simt::set_checks(true);
    simt::set_schedule(simt::Schedule::in_order);
    simt::set_worker_threads(0);
    simt::set_access_observer(nullptr);
  }
  void TearDown() override { SetUp(); }
};

// Runs a launch that must fail; returns the KernelError's message.
template <class F>
std::string error_of(F&& launch) {
  try {
    launch();
  } catch (const simt::KernelError& e) {
    return e.what();
  }
  ADD_FAILURE() << "the launch did not fail";
  return "";
}

void expect_contains(const std::string& text, std::initializer_list<const char*> parts) {
  for (const char* p : parts) EXPECT_NE(text.find(p), std::string::npos) << "'" << p << "' not in: " << text;
}

std::vector<int> random_ints(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<int> v(n);
  for (int& x : v) x = int(gen() & 0xff);
  return v;
}

// ---- built-ins ---------------------------------------------------------------------------------

TEST_F(Simt, IndicesOfMultiDimensionalGridsAndBlocks) {
  const dim3 grid(3, 2, 2), block(4, 3, 2);
  const unsigned threads = 24, blocks = 12;
  Buffer<unsigned> out(blocks * threads * 10, 0xdeadbeef);
  simt::launch(write_indices, {grid, block, 0, nullptr, "write_indices"}, out.get());
  std::vector<unsigned> h = out.host();
  for (unsigned bz = 0; bz < 2; ++bz)
    for (unsigned by = 0; by < 2; ++by)
      for (unsigned bx = 0; bx < 3; ++bx)
        for (unsigned tz = 0; tz < 2; ++tz)
          for (unsigned ty = 0; ty < 3; ++ty)
            for (unsigned tx = 0; tx < 4; ++tx) {
              const unsigned b = bx + by * 3 + bz * 6, t = tx + ty * 4 + tz * 12;
              const unsigned* rec = &h[(b * threads + t) * 10];
              ASSERT_EQ(rec[0], tx);
              ASSERT_EQ(rec[1], ty);
              ASSERT_EQ(rec[2], tz);
              ASSERT_EQ(rec[3], bx);
              ASSERT_EQ(rec[4], by);
              ASSERT_EQ(rec[5], bz);
              ASSERT_EQ(rec[6], 40302u);
              ASSERT_EQ(rec[7], 30202u);
              ASSERT_EQ(rec[8], t / 32);
              ASSERT_EQ(rec[9], t % 32);
            }
  simt::LaunchReport r = simt::last_launch_report();
  EXPECT_EQ(r.blocks, 12u);
  EXPECT_EQ(r.threads, 288u);
  EXPECT_FALSE(r.has_races());
}

TEST_F(Simt, SharedMemoryIsPerBlock) {
  Buffer<int> bad(1, 0);
  simt::launch(shared_is_per_block, {64, 256, 0, nullptr, "shared_is_per_block"}, bad.get());
  EXPECT_EQ(bad[0], 0);
  EXPECT_FALSE(simt::last_launch_report().has_races());
}

TEST_F(Simt, BlockReductionIsCorrectAndClean) {
  const unsigned n = 10000, block = 256, grid = (n + block - 1) / block;
  std::vector<int> in = random_ints(n, 1);
  Buffer<int> d_in(in), d_out(grid, -1);
  simt::launch(block_sum<256>, {grid, block, 0, nullptr, "block_sum"}, d_in.get(), d_out.get(),
               n);
  std::vector<int> out = d_out.host();
  EXPECT_EQ(std::accumulate(out.begin(), out.end(), 0L), std::accumulate(in.begin(), in.end(), 0L));
  simt::LaunchReport r = simt::last_launch_report();
  EXPECT_TRUE(r.checked);
  EXPECT_FALSE(r.has_races()) << (r.races.empty() ? "" : r.races[0].message);
}

TEST_F(Simt, DynamicSharedMemory) {
  const unsigned n = 5000, block = 128, grid = (n + block - 1) / block;
  std::vector<int> in = random_ints(n, 2);
  Buffer<int> d_in(in), d_out(grid, -1);
  simt::launch(block_sum_dynamic, {grid, block, block * sizeof(int), nullptr, "dyn"}, d_in.get(),
               d_out.get(), n);
  std::vector<int> out = d_out.host();
  EXPECT_EQ(std::accumulate(out.begin(), out.end(), 0L), std::accumulate(in.begin(), in.end(), 0L));
  EXPECT_FALSE(simt::last_launch_report().has_races());
}

// The GPU's answers for each collective, lane by lane (PTX shfl.sync semantics).
template <int Width>
void check_collectives() {
  Buffer<long long> out(32 * 24, -999);
  simt::launch(collectives<Width>, {1, 32, 0, nullptr, "collectives"}, out.get());
  std::vector<long long> h = out.host();
  const int w = Width;
  for (int lane = 0; lane < 32; ++lane) {
    const long long* rec = &h[lane * 24];
    const int base = lane / w * w, last = base + w - 1;
    SCOPED_TRACE("width " + std::to_string(w) + " lane " + std::to_string(lane));
    EXPECT_EQ(rec[0], (base + 3 % w) * 10);
    EXPECT_EQ(rec[1], (lane - 2 >= base ? lane - 2 : lane) * 10);
    EXPECT_EQ(rec[2], (lane + 2 <= last ? lane + 2 : lane) * 10);
    EXPECT_EQ(rec[3], ((lane ^ 1) <= last ? lane ^ 1 : lane) * 10);
    EXPECT_EQ(rec[4], 0x49249249LL);
    EXPECT_EQ(rec[5], 1);
    EXPECT_EQ(rec[6], 1);
    EXPECT_EQ(rec[7], 0);
    EXPECT_EQ(rec[8], 496);
    EXPECT_EQ(rec[9], 10 - 31);
    EXPECT_EQ(rec[10], 10);
    EXPECT_EQ(rec[11], 0xffffffffLL);
    EXPECT_EQ(rec[12], (long long)(1.5 * base));
    EXPECT_EQ(rec[13], (long long)(2.0f * (lane + 1 <= last ? lane + 1 : lane)));
    EXPECT_EQ(rec[14], (lane ^ 2) <= last ? lane ^ 2 : lane);
    EXPECT_EQ(rec[15], last);
    const int hbase = lane / 16 * 16;
    EXPECT_EQ(rec[16], lane + 8 <= hbase + 15 ? lane + 8 : lane);
    EXPECT_EQ(rec[17], hbase + 15);
    EXPECT_EQ(rec[18], 8 + 100 * 8);
  }
}

TEST_F(Simt, WarpCollectivesWidth32) { check_collectives<32>(); }
TEST_F(Simt, WarpCollectivesWidth16) { check_collectives<16>(); }
TEST_F(Simt, WarpCollectivesWidth8) { check_collectives<8>(); }
TEST_F(Simt, WarpCollectivesWidth4) { check_collectives<4>(); }
TEST_F(Simt, WarpCollectivesWidth2) { check_collectives<2>(); }

TEST_F(Simt, CountingBarriers) {
  Buffer<int> out(4, -1);
  simt::launch(counting_barriers, {1, 100, 0, nullptr, "counting_barriers"}, out.get());
  EXPECT_EQ(out.host(), (std::vector<int>{34, 1, 1, 0}));
}

TEST_F(Simt, AtomicsFromManyBlocks) {
  const unsigned grid = 64, block = 128, total = grid * block;
  Buffer<int> i32(5, 0);
  i32[3] = 0;
  Buffer<unsigned> u32(2, 0);
  Buffer<long long> i64(1, 0);
  Buffer<unsigned long long> u64(3, 0);
  Buffer<float> f32(3, 0.0f);
  Buffer<double> f64(3, 0.0);
  f64[2] = 1e9;
  simt::launch(atomics, {grid, block, 0, nullptr, "atomics"}, i32.get(), u32.get(), i64.get(),
               u64.get(), f32.get(), f64.get());
  EXPECT_EQ(i32[0], int(total));
  EXPECT_EQ(i32[1], -2 * int(total));
  EXPECT_EQ(i32[2], int(total) - 1);
  EXPECT_EQ(i32[3], -(int(total) - 1));
  EXPECT_EQ(i32[4], int(total / 2));
  EXPECT_EQ(u32[0], 3 * total);
  EXPECT_EQ(u32[1], total % 10);
  EXPECT_EQ(i64[0], (long long)total * (total - 1) / 2 << 20);
  EXPECT_EQ(u64.host()[0], total);
  EXPECT_GE(u64.host()[1], 1u);
  EXPECT_LE(u64.host()[1], total);
  EXPECT_EQ(u64.host()[2], 7u);
  EXPECT_EQ(f32[0], 0.5f * total);
  EXPECT_EQ(f32[1], float(total - 1) * 0.25f);
  EXPECT_EQ(f32[2], -float(total - 1));
  EXPECT_EQ(f64[0], 0.25 * total);
  EXPECT_EQ(f64[1], double(total - 1));
  EXPECT_EQ(f64[2], 1.0);
  EXPECT_FALSE(simt::last_launch_report().has_races());  // atomics never race with atomics
}

TEST_F(Simt, CooperativeGroupsTiles) {
  const unsigned n = 1000, block = 128, grid = (n + block - 1) / block;
  std::vector<int> in = random_ints(n, 3);
  Buffer<int> d_in(in), d_out(5, 0);
  simt::launch(tile_sum, {grid, block, 0, nullptr, "tile_sum"}, d_in.get(), d_out.get(), n);
  const long sum = std::accumulate(in.begin(), in.end(), 0L);
  EXPECT_EQ(d_out[0], sum);
  EXPECT_EQ(d_out[1], sum);
  EXPECT_EQ(d_out[2], 3);  // four warps per block
  EXPECT_EQ(d_out[3], 4);
  // Max thread rank in each tile of 8: 7, 15, ..., 127, per block.
  int per_block = 0;
  for (int t = 0; t < 16; ++t) per_block += 8 * t + 7;
  EXPECT_EQ(d_out[4], per_block * int(grid));
  EXPECT_FALSE(simt::last_launch_report().has_races());
}

TEST_F(Simt, TailLaunchesRunAfterTheGridDepthFirst) {
  Buffer<int> log(8, -1), count(1, 0);
  simt::launch(tail_logger, {4, 32, 0, nullptr, "tail_logger"}, log.get(), count.get(), 1);
  EXPECT_EQ(count[0], 4);
  EXPECT_EQ(log.host(), (std::vector<int>{1, 2, 4, 3, -1, -1, -1, -1}));
  simt::LaunchReport r = simt::last_launch_report();
  EXPECT_EQ(r.grids.size(), 4u);
  EXPECT_EQ(r.blocks, 4u + 1 + 1 + 2);
}

TEST_F(Simt, SyncwarpMakesWarpSynchronousCodeClean) {
  std::vector<int> in = random_ints(64, 4);
  Buffer<int> d(in);
  simt::launch(warp_sum_syncwarp, {1, 64, 0, nullptr, "warp_sum_syncwarp"}, d.get());
  EXPECT_EQ(d[0], std::accumulate(in.begin(), in.end(), 0));
  simt::LaunchReport r = simt::last_launch_report();
  EXPECT_FALSE(r.has_races()) << (r.races.empty() ? "" : r.races[0].message);
}

// A correct kernel gives the same answer under every schedule and worker count.
TEST_F(Simt, SchedulesGiveIdenticalResultsForACorrectKernel) {
  const unsigned n = 20000, block = 512, grid = (n + block - 1) / block;
  std::vector<int> in = random_ints(n, 5);
  std::vector<int> first;
  const std::pair<simt::Schedule, unsigned> runs[] = {{simt::Schedule::in_order, 0},
                                                      {simt::Schedule::reverse, 0},
                                                      {simt::Schedule::random, 1},
                                                      {simt::Schedule::random, 77}};
  for (unsigned workers : {1u, 2u, 3u})
    for (auto [schedule, seed] : runs) {
      simt::set_schedule(schedule, seed);
      simt::set_worker_threads(workers);
      Buffer<int> d_in(in), d_out(grid, -1);
      simt::launch(block_sum<512>, {grid, block, 0, nullptr, "block_sum"}, d_in.get(),
                   d_out.get(), n);
      if (first.empty()) first = d_out.host();
      EXPECT_EQ(d_out.host(), first) << simt::name(schedule) << " seed " << seed;
      EXPECT_FALSE(simt::last_launch_report().has_races());
    }
}

TEST_F(Simt, InvalidConfigurationsAreRefused) {
  Buffer<int> out(1);
  expect_contains(error_of([&] {
                    simt::launch(shared_race, {1, 2048, 0, nullptr, "big"}, out.get());
                  }),
                  {"launch of 'big'", "block (2048,1,1)", "at most 1024"});
  expect_contains(error_of([&] {
                    simt::launch(shared_race, {dim3(0, 1, 1), 32, 0, nullptr, "empty"}, out.get());
                  }),
                  {"'empty'", "grid (0,1,1)", "zero"});
}

TEST_F(Simt, ObserverSeesEveryCheckedAccess) {
  struct Counter : simt::AccessObserver {
    std::atomic<int> reads{0}, writes{0}, shared{0}, with_site{0};
    void on_access(const simt::AccessEvent& e) override {
      (e.is_write ? writes : reads)++;
      if (e.space == simt::Space::shared) shared++;
      if (std::string(e.where.file_name()).find("kernels.cuh") != std::string::npos) with_site++;
    }
  } counter;
  simt::set_checks(false);
  simt::set_access_observer(&counter);
  const unsigned n = 64;
  std::vector<int> in = random_ints(n, 6);
  Buffer<int> d_in(in), d_out(1);
  simt::launch(block_sum<64>, {1, 64, 0, nullptr, "block_sum"}, d_in.get(), d_out.get(), n);
  // 64 loads + 64 stores, then 32+16+...+1 = 63 steps of 2 reads and 1 write, then 1 + 1.
  EXPECT_EQ(counter.reads, 64 + 2 * 63 + 1);
  EXPECT_EQ(counter.writes, 64 + 63 + 1);
  EXPECT_EQ(counter.shared, 64 + 3 * 63 + 1);
  EXPECT_EQ(counter.with_site, counter.reads + counter.writes);
}

// ---- planted bugs ------------------------------------------------------------------------------

TEST_F(Simt, MissingBarrierIsARaceAndAWrongAnswer) {
  const unsigned block = 256;
  std::vector<int> in = random_ints(block, 7);
  const int sum = std::accumulate(in.begin(), in.end(), 0);
  Buffer<int> d_in(in), d_out(1, -1);
  // Without the barrier each thread runs its whole loop when resumed. In order, thread 0 reads
  // partial[64] before thread 64 added to it: a wrong sum. In reverse, the higher threads run
  // first, which happens to be the tree's dataflow order: the right sum, but still a race.
  std::vector<int> sums;
  for (simt::Schedule s : {simt::Schedule::in_order, simt::Schedule::reverse,
                           simt::Schedule::random}) {
    simt::set_schedule(s, 3);
    simt::launch(missing_barrier<256>, {1, block, 0, nullptr, "missing_barrier"}, d_in.get(),
                 d_out.get());
    sums.push_back(d_out[0]);
    simt::LaunchReport r = simt::last_launch_report();
    ASSERT_TRUE(r.has_races()) << simt::name(s);
    const simt::RaceReport& race = r.races.at(0);
    EXPECT_EQ(race.kernel, "missing_barrier");
    EXPECT_EQ(race.space, simt::Space::shared);
    expect_contains(race.message, {"race in kernel 'missing_barrier' block (0,0,0)",
                                   "shared memory at offset", "kernels.cuh:", "thread ("});
  }
  EXPECT_NE(sums[0], sum);
  EXPECT_EQ(sums[1], sum);
  // Checks off: the same wrong answer, no tracking.
  simt::set_checks(false);
  simt::set_schedule(simt::Schedule::in_order);
  simt::launch(missing_barrier<256>, {1, block, 0, nullptr, "missing_barrier"}, d_in.get(),
               d_out.get());
  EXPECT_EQ(d_out[0], sums[0]);
  EXPECT_FALSE(simt::last_launch_report().has_races());
}

TEST_F(Simt, DivergentBarrierNamesBothSites) {
  Buffer<int> out(32);
  std::string msg = error_of(
      [&] { simt::launch(divergent_barrier, {1, 32, 0, nullptr, "divergent"}, out.get()); });
  expect_contains(msg, {"kernel 'divergent' block (0,0,0)", "divergent __syncthreads",
                        "threads 0-15 reached the one at", "threads 16-31 reached the one at",
                        "kernels.cuh:"});
}

TEST_F(Simt, EarlyReturnBeforeBarrier) {
  const unsigned n = 100;
  std::vector<int> in = random_ints(n, 8);
  Buffer<int> d_in(in), d_out(2);
  for (simt::Schedule s : {simt::Schedule::in_order, simt::Schedule::reverse}) {
    simt::set_schedule(s);
    simt::set_worker_threads(1);
    std::string msg = error_of([&] {
      simt::launch(early_return, {2, 64, 0, nullptr, "early_return"}, d_in.get(), d_out.get(), n);
    });
    expect_contains(msg, {"kernel 'early_return' block (1,0,0)", "__syncthreads at",
                          "reached by threads 0-35", "after threads 36-63 had exited"});
  }
}

TEST_F(Simt, AccumulatedReportMergesLaunches) {
  Buffer<int> out(1);
  simt::reset_accumulated_report();
  simt::launch(shared_race, {2, 64, 0, nullptr, "shared_race"}, out.get());
  simt::launch(write_indices, {1, 32, 0, nullptr, "write_indices"},
               Buffer<unsigned>(320).get());
  EXPECT_FALSE(simt::last_launch_report().has_races());
  simt::LaunchReport acc = simt::accumulated_report();
  EXPECT_EQ(acc.kernel, "shared_race");
  EXPECT_EQ(acc.grids, (std::vector<std::string>{"shared_race", "write_indices"}));
  EXPECT_EQ(acc.blocks, 3u);
  EXPECT_EQ(acc.threads, 160u);
  EXPECT_TRUE(acc.has_races());
  simt::reset_accumulated_report();
  EXPECT_FALSE(simt::accumulated_report().has_races());
}

TEST_F(Simt, SharedRaceIsReported) {
  Buffer<int> out(1);
  simt::launch(shared_race, {2, 64, 0, nullptr, "shared_race"}, out.get());
  simt::LaunchReport r = simt::last_launch_report();
  ASSERT_TRUE(r.has_races());
  const simt::RaceReport& race = r.races.at(0);
  EXPECT_EQ(race.kind_a, simt::AccessKind::write);
  EXPECT_EQ(race.kind_b, simt::AccessKind::write);
  EXPECT_EQ(race.offset, 0u);
  EXPECT_EQ(race.linear_a, 0u);
  EXPECT_EQ(race.linear_b, 1u);
  EXPECT_GE(race.occurrences, 2u);
  expect_contains(race.message, {"kernel 'shared_race'", "shared memory at offset 0",
                                 "thread (0,0,0) (warp 0, lane 0) write at",
                                 "thread (1,0,0) (warp 0, lane 1) write at"});
}

TEST_F(Simt, TextbookLockstepWarpIsARaceInGlobalMemory) {
  std::vector<int> in = random_ints(128, 9);
  Buffer<int> d(in);
  simt::launch(lockstep_warp, {2, 64, 0, nullptr, "lockstep_warp"}, d.get());
  simt::LaunchReport r = simt::last_launch_report();
  ASSERT_TRUE(r.has_races());
  const simt::RaceReport& race = r.races.at(0);
  EXPECT_EQ(race.space, simt::Space::global);
  EXPECT_EQ(race.linear_a / 32, race.linear_b / 32);  // two lanes of one warp
  expect_contains(race.message, {"kernel 'lockstep_warp'", "global memory", "kernels.cuh:"});
}

TEST_F(Simt, ShuffleMaskNamingAnExitedLane) {
  Buffer<int> out(32);
  for (simt::Schedule s : {simt::Schedule::in_order, simt::Schedule::reverse}) {
    simt::set_schedule(s);
    std::string msg = error_of(
        [&] { simt::launch(shuffle_exited_lane, {1, 32, 0, nullptr, "shfl_exited"}, out.get()); });
    expect_contains(msg, {"kernel 'shfl_exited' block (0,0,0) thread (", "__shfl_down_sync at",
                          "kernels.cuh:", "mask 0xffffffff names lane(s) 5 of warp 0",
                          "already exited"});
  }
}

TEST_F(Simt, LaneExitsWhileOthersWaitForItInAShuffle) {
  Buffer<int> out(32);
  for (simt::Schedule s : {simt::Schedule::in_order, simt::Schedule::reverse}) {
    simt::set_schedule(s);
    std::string msg = error_of([&] {
      simt::launch(shuffle_waits_for_exited_lane, {1, 32, 0, nullptr, "shfl_wait"}, out.get());
    });
    expect_contains(msg, {"kernel 'shfl_wait' block (0,0,0) thread (5,0,0) (warp 0, lane 5)",
                          "lane 5 exited while lanes", "wait for it in __shfl_down_sync",
                          "mask 0xffffffff", "kernels.cuh:"});
  }
}

TEST_F(Simt, ShuffleMaskNamingAnAbsentLane) {
  Buffer<int> out(48);
  std::string msg = error_of(
      [&] { simt::launch(shuffle_absent_lane, {1, 48, 0, nullptr, "shfl_absent"}, out.get()); });
  expect_contains(msg, {"kernel 'shfl_absent' block (0,0,0) thread (32,0,0) (warp 1, lane 0)",
                        "absent lane(s) 16-31 of warp 1", "kernels.cuh:"});
}

TEST_F(Simt, DeadlockIsReportedNotAHang) {
  Buffer<int> out(32);
  std::string msg =
      error_of([&] { simt::launch(deadlock, {1, 32, 0, nullptr, "deadlock"}, out.get()); });
  expect_contains(msg, {"kernel 'deadlock' block (0,0,0)", "deadlock",
                        "threads 0-15 wait at __syncthreads", "warp 0 lanes 16-31 wait in __syncwarp",
                        "for lanes 0-15"});
}

TEST_F(Simt, OutOfBoundsGlobalRead) {
  const unsigned n = 256;
  Buffer<int> in(n, 1), out(n);
  simt::set_worker_threads(1);
  std::string msg = error_of(
      [&] { simt::launch(read_past_end, {2, 128, 0, nullptr, "read_past_end"}, in.get(), out.get()); });
  expect_contains(msg, {"kernel 'read_past_end' block (1,0,0) thread (127,0,0) (warp 3, lane 31)",
                        "out-of-bounds read of 4 bytes in global memory at offset 1024 (index 256)",
                        "region of 1024 bytes (256 elements)", "kernels.cuh:"});
}

TEST_F(Simt, OutOfBoundsGlobalWriteAndTheRuntimeStaysUsable) {
  const unsigned n = 64;
  Buffer<int> out(n);
  std::string msg = error_of(
      [&] { simt::launch(write_past_end, {1, 64, 0, nullptr, "write_past_end"}, out.get()); });
  expect_contains(msg, {"kernel 'write_past_end' block (0,0,0) thread (63,0,0)",
                        "out-of-bounds write", "offset 256 (index 64)"});
  // After a fatal error every fiber unwound; the runtime runs the next launch normally.
  std::vector<int> in = random_ints(1000, 10);
  Buffer<int> d_in(in), d_out(4, -1);
  simt::launch(block_sum<256>, {4, 256, 0, nullptr, "block_sum"}, d_in.get(), d_out.get(), 1000u);
  std::vector<int> h = d_out.host();
  EXPECT_EQ(std::accumulate(h.begin(), h.end(), 0), std::accumulate(in.begin(), in.end(), 0));
}

TEST_F(Simt, CollectivesAndBarriersOutsideAKernelAreErrors) {
  expect_contains(error_of([] { __syncthreads(); }), {"outside a kernel", "test_runtime.cpp:"});
}

}  // namespace
