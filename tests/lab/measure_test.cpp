// The lab's measurement loop: its statistics, the order of its steps, and what each timing mode
// puts between the two events (checked on a device that records what it is asked to do).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lab/device.hpp"
#include "lab/measure.hpp"

namespace {
using namespace rl::lab;

// A device that logs every call the loop makes and "times" work as 1 ms per enqueued call.
class LogDevice final : public Device {
 public:
  std::vector<std::string> log;
  int calls_in_timed_region = 0;
  bool timing = false;

  const DeviceInfo& info() const override { return info_; }
  void* allocate(std::size_t) override { return nullptr; }
  void release(void*) noexcept override {}
  std::size_t free_memory() override { return 0; }
  void upload(void*, const void*, std::size_t) override {}
  void download(void*, const void*, std::size_t) override {}
  void copy(void*, const void*, std::size_t) override {}
  void fill(void*, unsigned char, std::size_t) override {}
  void synchronize() override { log.push_back("sync"); }
  void* stream() override { return nullptr; }
  void flush_l2() override { log.push_back("flush"); }
  double time_ms(const std::function<void()>& work) override {
    log.push_back("start");
    timing = true;
    calls_in_timed_region = 0;
    work();
    timing = false;
    log.push_back("stop");
    return static_cast<double>(calls_in_timed_region);
  }
  double read_ceiling_gbs() override { return 0; }
  void call() {
    log.push_back("call");
    if (timing) ++calls_in_timed_region;
  }

 private:
  DeviceInfo info_;
};

TEST(Measure, StatisticsAreOrderStatistics) {
  const TimeStats s = time_stats({5, 1, 3, 2, 4});
  EXPECT_EQ(s.repeats, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.p25, 2);
  EXPECT_DOUBLE_EQ(s.p75, 4);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);  // even count: halfway between the middle two
  EXPECT_EQ(time_stats({}).repeats, 0);
}

TEST(Measure, ModesHaveTheirNames) {
  for (TimingMode m : kAllTimingModes) EXPECT_EQ(parse_timing_mode(name(m)), m);
  EXPECT_EQ(name(TimingMode::cold), "cold");
  EXPECT_EQ(name(TimingMode::batch), "batch");
  EXPECT_EQ(name(TimingMode::sync), "sync");
  EXPECT_FALSE(parse_timing_mode("flushed"));
}

TEST(Measure, ColdQueuesEachCallBehindAFlush) {
  LogDevice d;
  const double ms = time_ms_per_call(d, TimingMode::cold, [&] { d.call(); });
  EXPECT_EQ(d.log, (std::vector<std::string>{"flush", "start", "call", "stop"}));
  EXPECT_DOUBLE_EQ(ms, 1);
}

TEST(Measure, SyncStartsFromAnIdleDevice) {
  LogDevice d;
  time_ms_per_call(d, TimingMode::sync, [&] { d.call(); });
  EXPECT_EQ(d.log, (std::vector<std::string>{"sync", "start", "call", "stop"}));
}

TEST(Measure, BatchTimesManyCallsAndDividesByTheirCount) {
  LogDevice d;
  const double ms = time_ms_per_call(d, TimingMode::batch, [&] { d.call(); }, 7);
  EXPECT_EQ(d.calls_in_timed_region, 7);
  EXPECT_EQ(d.log.front(), "start");  // no flush, no wait: L2 warm, host dispatch timed
  EXPECT_EQ(d.log.back(), "stop");
  EXPECT_DOUBLE_EQ(ms, 1);  // 7 "ms" / 7 calls
}

TEST(Measure, LoopIsPrepareWarmupVerifyThenTimedRepeats) {
  LogDevice d;
  Measured m;
  m.prepare = [&] { d.log.push_back("prepare"); };
  m.call = [&] { d.call(); };
  m.verify = [&](int rep) { d.log.push_back("verify" + std::to_string(rep)); };
  const auto samples = measure(&d, TimingMode::cold, 2, 1, m);
  EXPECT_EQ(samples.size(), 2u);
  EXPECT_EQ(d.log, (std::vector<std::string>{"prepare", "call", "sync", "verify-1",                  // warm-up
                                             "prepare", "flush", "start", "call", "stop", "verify0",  // repeat 0
                                             "prepare", "flush", "start", "call", "stop", "verify1"}));
}

TEST(Measure, WithoutADeviceTheHostClockTimesTheCall) {
  int calls = 0;
  Measured m;
  m.call = [&] { ++calls; };
  const auto samples = measure(nullptr, TimingMode::cold, 3, 1, m);
  EXPECT_EQ(calls, 4);  // warm-up and three repeats
  ASSERT_EQ(samples.size(), 3u);
  for (double s : samples) EXPECT_GE(s, 0);
}

TEST(Measure, FloorIsTheMedianOfTheEmptyLaunchInThatMode) {
  LogDevice d;
  const double us = floor_us(d, TimingMode::batch, [&] { d.call(); }, 3, 10);
  EXPECT_DOUBLE_EQ(us, 1000);  // 1 "ms" per call
  EXPECT_EQ(d.calls_in_timed_region, 10);
}

}  // namespace
