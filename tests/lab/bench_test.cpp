// reducelab bench: its flags, the limit arithmetic, the JSON it writes, and verified rows on the
// CPU backend (and on the GPU where there is one). These tests check structure and results,
// never speed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "lab/bench.hpp"
#include "lab/bench_shapes.hpp"
#include "lab/errors.hpp"

namespace {
using namespace rl::lab;
namespace b = rl::lab::bench;
using rl::core::OpKind;

std::vector<std::size_t> powers(int from, int to, int step) {
  std::vector<std::size_t> v;
  for (int k = from; k <= to; k += step) v.push_back(std::size_t(1) << k);
  return v;
}

TEST(BenchParse, DefaultsAreTheTargetSweep) {
  const b::Plan p = b::parse({});
  EXPECT_EQ(p.sizes, powers(10, 30, 2));
  ASSERT_EQ(p.cases.size(), 11u);  // int32/float/double x sum/min/max, half and bf16 sums
  EXPECT_EQ(p.cases.front(), (b::Case{rl::core::Dtype::int32, OpKind::sum}));
  EXPECT_EQ(p.cases[8], (b::Case{rl::core::Dtype::float64, OpKind::max}));
  EXPECT_EQ(p.cases[9], (b::Case{rl::core::Dtype::half, OpKind::sum}));
  EXPECT_EQ(p.cases[10], (b::Case{rl::core::Dtype::bf16, OpKind::sum}));
  EXPECT_EQ(p.impls.size(), 4u);
  EXPECT_EQ(p.modes, (std::vector<b::Mode>{b::Mode::cold, b::Mode::batch, b::Mode::sync}));
  EXPECT_EQ(p.batch, 0);  // by size
  EXPECT_FALSE(p.cpu);
  EXPECT_TRUE(p.plot_files.empty());

  b::Args cpu;
  cpu.backend = "cpu";
  EXPECT_EQ(b::parse(cpu).sizes, powers(10, 24, 2));
  EXPECT_TRUE(b::parse(cpu).modes.empty());  // the CPU backend's one mode is its steady clock
}

TEST(BenchParse, RangesListsStepsAndModes) {
  b::Args a;
  a.sizes = "2^10..2^20";
  a.step = "2";
  EXPECT_EQ(b::parse(a).sizes, powers(10, 20, 1));
  a.sizes = "1k..1M";
  a.step = "32";
  EXPECT_EQ(b::parse(a).sizes, (std::vector<std::size_t>{1024, 32768, 1 << 20}));
  a.sizes = "2^10..5000";  // the last step that stays under the bound
  a.step = "";
  EXPECT_EQ(b::parse(a).sizes, (std::vector<std::size_t>{1024, 4096}));
  a.sizes = "16M,1000,1<<20,1000";  // a list: sorted, duplicates dropped
  EXPECT_EQ(b::parse(a).sizes, (std::vector<std::size_t>{1000, 1 << 20, 1 << 24}));
  a.modes = "batch,cold,batch";  // in the order given, each once
  EXPECT_EQ(b::parse(a).modes, (std::vector<b::Mode>{b::Mode::batch, b::Mode::cold}));
  a.modes = "sync";
  EXPECT_EQ(b::parse(a).modes, std::vector<b::Mode>{b::Mode::sync});
  a.modes = "batch";
  a.batch = "50";
  EXPECT_EQ(b::parse(a).batch, 50);
  a.sizes = "2^62";  // the one size parser: exponents to 62
  a.modes = a.batch = "";
  EXPECT_EQ(b::parse(a).sizes, std::vector<std::size_t>{std::size_t(1) << 62});
}

TEST(BenchParse, DtypesAndOpsGiveTheirCrossProduct) {
  b::Args a;
  a.dtypes = "half,int8,fp16";  // fp16 is half again
  const auto p = b::parse(a);
  ASSERT_EQ(p.cases.size(), 6u);
  EXPECT_EQ(p.cases[0], (b::Case{rl::core::Dtype::half, OpKind::sum}));
  EXPECT_EQ(p.cases[5], (b::Case{rl::core::Dtype::int8, OpKind::max}));
  a.dtypes = "";
  a.ops = "min";
  const auto q = b::parse(a);
  ASSERT_EQ(q.cases.size(), 5u);  // the default dtypes, each with min
  for (const auto& c : q.cases) EXPECT_EQ(c.op, OpKind::min);
  a.impls = "cub,thrust";
  EXPECT_EQ(b::parse(a).impls, (std::vector<b::Impl>{b::impl("cub"), b::impl("thrust")}));
}

TEST(BenchParse, BadFlagsNameTheValue) {
  struct Bad {
    void (*set)(b::Args&);
    const char* fragment;
  };
  const Bad cases[] = {
      {[](b::Args& a) { a.sizes = std::string("0"); }, "--sizes 0: a size must be at least 1"},
      {[](b::Args& a) { a.sizes = std::string("0..2^10"); }, "a size must be at least 1"},
      {[](b::Args& a) { a.sizes = std::string("12x"); }, "--sizes 12x: not a size"},
      {[](b::Args& a) { a.sizes = std::string("2^20..2^10"); }, "the range runs downward"},
      {[](b::Args& a) { a.sizes = std::string("-5"); }, "--sizes -5: not a size"},
      {[](b::Args& a) { a.sizes = std::string("2^10..2^20"), a.step = std::string("1"); }, "--step 1: give the factor"},
      {[](b::Args& a) { a.sizes = std::string("1000,2000"), a.step = std::string("2"); }, "--step 2: applies to a range"},
      {[](b::Args& a) { a.dtypes = std::string("int7"); }, "--dtypes int7: unknown dtype; choose int8"},
      {[](b::Args& a) { a.ops = std::string("avg"); }, "--ops avg: unknown op; choose sum, min, max"},
      {[](b::Args& a) { a.impls = std::string("cublas"); }, "--impls cublas: unknown implementation"},
      {[](b::Args& a) { a.repeats = std::string("0"); }, "--repeat 0: give 1..100000"},
      {[](b::Args& a) { a.repeats = std::string("3x"); }, "--repeat 3x"},
      {[](b::Args& a) { a.format = std::string("xml"); }, "--format xml: unknown format"},
      {[](b::Args& a) { a.plot = std::string("out.jpg"); }, "--plot out.jpg: give FILE.png"},
      {[](b::Args& a) { a.backend = std::string("simt"); }, "--backend simt: bench times real hardware"},
      {[](b::Args& a) { a.backend = std::string("tpu"); }, "--backend tpu: unknown backend"},
      {[](b::Args& a) { a.backend = std::string("cpu"), a.impls = std::string("cub"); }, "only reducelab runs with --backend cpu"},
      {[](b::Args& a) { a.modes = std::string("warm"); }, "--modes warm: unknown timing mode; choose cold, batch, sync"},
      {[](b::Args& a) { a.backend = std::string("cpu"), a.modes = std::string("cold"); }, "--modes cold: the CPU backend has one timing mode"},
      {[](b::Args& a) { a.batch = std::string("0"); }, "--batch 0: give 1..100000 calls"},
      {[](b::Args& a) { a.modes = std::string("cold"), a.batch = std::string("8"); }, "--batch 8: applies to the batch mode"},
      {[](b::Args& a) { a.sizes = std::string("2^63"); }, "--sizes 2^63: not a size"},
      {[](b::Args& a) { a.sizes = std::string("2^10..2^63"); }, "--sizes 2^10..2^63: not a size"},
      {[](b::Args& a) { a.out = "r.txt", a.json = "./r.txt"; }, "--out r.txt --json ./r.txt: the same file twice"},
      {[](b::Args& a) { a.out = "r.json", a.plot = "r.png"; }, "--out r.json --plot r.png: the plot writes that file"},
  };
  for (const auto& c : cases) {
    b::Args a;
    c.set(a);
    try {
      b::parse(a);
      ADD_FAILURE() << "no error for: " << c.fragment;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(c.fragment), std::string::npos) << e.what();
    }
  }
}

TEST(BenchParse, PlotFilesFollowTheExtension) {
  b::Args a;
  a.plot = "out/bench.png";
  EXPECT_EQ(b::parse(a).plot_files, std::vector<std::string>{"out/bench.png"});
  a.plot = "bench.SVG";
  EXPECT_EQ(b::parse(a).plot_files, std::vector<std::string>{"bench.SVG"});
  a.plot = "out/bench";
  EXPECT_EQ(b::parse(a).plot_files, (std::vector<std::string>{"out/bench.png", "out/bench.svg"}));
}

// A sweep with a large input says what it takes before it starts; a small one says nothing.
TEST(BenchCost, LargeSweepsSayMemoryAndTimeUpFront) {
  b::Args a;
  a.backend = "cpu", a.sizes = "2^34", a.dtypes = "int8", a.ops = "sum";
  const std::string big = b::cost_estimate(b::parse(a), std::size_t(1) << 40);
  EXPECT_NE(big.find("the largest input (int8, n = 2^34) takes 16 GiB of host memory"), std::string::npos) << big;
  EXPECT_NE(big.find(" s at the "), std::string::npos) << big;
  EXPECT_EQ(b::cost_estimate(b::parse(a), std::size_t(1) << 30), "");  // does not fit: skipped, not announced
  a.sizes = "2^20";
  EXPECT_EQ(b::cost_estimate(b::parse(a), std::size_t(1) << 40), "");
  a.backend = "auto", a.sizes = "2^30", a.dtypes = "float";  // the GPU's plan: memory and a rough time too
  const std::string gpu = b::cost_estimate(b::parse(a), std::size_t(1) << 40);
  EXPECT_NE(gpu.find("takes 4 GiB of host and device memory"), std::string::npos) << gpu;
  EXPECT_NE(gpu.find("roughly "), std::string::npos) << gpu;
  EXPECT_NE(gpu.find(" s, mostly on the host"), std::string::npos) << gpu;
}

// Nothing ran, or a size asked for was skipped: not a success, and the summary says why.
TEST(BenchSummary, NothingRunOrSkippedIsAShortfall) {
  b::Report r;
  EXPECT_EQ(r.shortfall(), "no rows ran");
  r.skipped.push_back("int8 n = 2^40 skipped: too big");
  EXPECT_EQ(r.shortfall(), "no rows ran: int8 n = 2^40 skipped: too big");
  b::Row ok;
  ok.verified = true;
  r.rows.push_back(ok);
  EXPECT_NE(r.shortfall().find("1 part(s) asked for did not run"), std::string::npos);
  r.skipped.clear();
  EXPECT_EQ(r.shortfall(), "");
  EXPECT_EQ(b::summary(r), "all 1 rows verified");
}

TEST(BenchLimit, OneLaunchPlusTheBytesAtTheCeiling) {
  // 4549 GB/s reads 4,549,000 bytes in 1 us; with a 4.4 us launch the limit is 5.4 us.
  EXPECT_DOUBLE_EQ(b::limit_us(4'549'000, 4.4, 4549), 5.4);
  EXPECT_DOUBLE_EQ(b::limit_us(0, 4.4, 4549), 4.4);
  EXPECT_EQ(b::limit_us(1 << 20, 0, 4549), 0);  // a floor not measured: no limit
  EXPECT_EQ(b::limit_us(1 << 20, 4.4, 0), 0);
}

// The shapes' floor on canned numbers: reads at the read ceiling, each written byte at what a copy
// pays for it beyond its read.
TEST(BenchShapesFloor, ReadsAtTheReadCeilingWritesAtTheCopysCost) {
  // 4000 GB/s reads 4e9 bytes in 1000 us; a copy at 3200 GB/s moved spends 2/3200 - 1/4000 =
  // 0.375 us per MB written beyond the read, so 1e9 bytes written add 375 us.
  EXPECT_DOUBLE_EQ(b::moved_floor_us(4e9, 0, 4000, 3200), 1000.0);
  EXPECT_DOUBLE_EQ(b::moved_floor_us(4e9, 1e9, 4000, 3200), 1375.0);
  // A copy's own bytes: the floor is the copy's time.
  EXPECT_DOUBLE_EQ(b::moved_floor_us(1e9, 1e9, 4000, 3200), 2e9 / 3200e3);
  // A copy faster than reading twice would make writes free, never negative.
  EXPECT_DOUBLE_EQ(b::moved_floor_us(4e9, 1e9, 4000, 9000), 1000.0);
  EXPECT_EQ(b::moved_floor_us(4e9, 1e9, 0, 3200), 0);  // a ceiling not measured: no floor
  EXPECT_EQ(b::moved_floor_us(4e9, 1e9, 4000, 0), 0);
}

// %limit on canned numbers: each mode's floor plus the bytes at the ceiling, over the time.
TEST(BenchLimit, PercentOfLimitUsesTheRowsOwnModeFloor) {
  // 4 MiB at 4000 GB/s take 1.048576 us; cold floor 2.5 us -> limit 3.548576 us; at 7.097152 us: 50%.
  EXPECT_DOUBLE_EQ(b::pct_of_limit(b::limit_us(4 << 20, 2.5, 4000), 7.097152), 50.0);
  EXPECT_DOUBLE_EQ(b::pct_of_limit(10, 10), 100.0);
  EXPECT_EQ(b::pct_of_limit(0, 10), 0);  // no limit known
  EXPECT_EQ(b::pct_of_limit(10, 0), 0);  // no time
  EXPECT_EQ(b::batch_calls(0), 200);
  EXPECT_EQ(b::batch_calls(std::size_t(1) << 20), 200);
  EXPECT_EQ(b::batch_calls(std::size_t(1) << 24), 16);
  EXPECT_EQ(b::batch_calls(std::size_t(1) << 32), 4);
}

b::Row row(b::Impl impl, b::Mode mode, double us) {
  b::Row r;
  r.impl = impl;
  r.c = {rl::core::Dtype::int32, OpKind::sum};
  r.n = 1 << 20;
  r.bytes = 4 << 20;
  r.mode = mode;
  r.us_median = r.us_min = r.us_max = r.us_p25 = r.us_p75 = us;
  r.repeats = 3;
  r.status = "ok";
  r.verified = true;
  return r;
}

b::Report synthetic() {
  b::Report r;
  r.backend = "cuda";
  r.device_name = "Test GPU";
  r.device = {{"name", "Test GPU"}, {"sm_count", 132}};
  r.read_ceiling_gbs = 4000;
  r.empty_launch_us = {{b::Mode::cold, 4}, {b::Mode::batch, 2}, {b::Mode::sync, 6}};
  r.plan = b::parse({});
  r.rows = {row(b::impl("cub"), b::Mode::cold, 10), row(b::impl("reducelab"), b::Mode::cold, 8),
            row(b::impl("reducelab"), b::Mode::batch, 5), row(b::impl("cub"), b::Mode::sync, 12),
            row(b::impl("reducelab"), b::Mode::sync, 9)};
  b::derive(r);
  return r;
}

// Batch and sync calls find their input in L2 from the call before: where it fits, their limit
// reads at the L2's ceiling; cold rows, and inputs larger than the L2, at the read ceiling.
TEST(BenchLimit, WarmRowsThatFitInL2AreHeldToTheL2Ceiling) {
  b::Report r;
  r.read_ceiling_gbs = 3000;
  r.l2_read_ceiling_gbs = 6000;
  r.l2_bytes = 50 << 20;
  EXPECT_EQ(b::limit_ceiling_gbs(r, b::Mode::cold, 16 << 20), 3000);
  EXPECT_EQ(b::limit_ceiling_gbs(r, b::Mode::batch, 16 << 20), 6000);
  EXPECT_EQ(b::limit_ceiling_gbs(r, b::Mode::sync, 50 << 20), 6000);
  EXPECT_EQ(b::limit_ceiling_gbs(r, b::Mode::batch, (50 << 20) + 1), 3000);
  r.l2_read_ceiling_gbs = 0;  // not measured: the read ceiling
  EXPECT_EQ(b::limit_ceiling_gbs(r, b::Mode::batch, 16 << 20), 3000);

  // 12 MB at 6000 GB/s take 2 us; batch floor 2.5 us -> limit 4.5 us; a 5 us batch call: 90%.
  r.l2_read_ceiling_gbs = 6000;
  r.empty_launch_us = {{b::Mode::cold, 3}, {b::Mode::batch, 2.5}};
  b::Row cold = row(b::impl("reducelab"), b::Mode::cold, 9), batch = row(b::impl("reducelab"), b::Mode::batch, 5);
  cold.bytes = batch.bytes = 12'000'000;
  r.rows = {cold, batch};
  b::derive(r);
  EXPECT_DOUBLE_EQ(r.rows[0].limit_ceiling_gbs, 3000);
  EXPECT_DOUBLE_EQ(r.rows[0].limit_us, 3 + 4);  // 12 MB at 3000 GB/s: 4 us
  EXPECT_DOUBLE_EQ(r.rows[1].limit_ceiling_gbs, 6000);
  EXPECT_DOUBLE_EQ(r.rows[1].limit_us, 4.5);
  EXPECT_DOUBLE_EQ(r.rows[1].pct_of_limit, 90);
}

TEST(BenchDerive, ColumnsComeFromTheMediansAndTheFloors) {
  const auto r = synthetic();
  const auto& cub = r.rows[0];
  const auto& mine = r.rows[1];
  const auto& warm = r.rows[2];  // batch: no CUB row in that mode
  const auto& sync = r.rows[4];
  EXPECT_DOUBLE_EQ(mine.gb_per_s, 4194304.0 / 8e3);  // bytes / median
  EXPECT_DOUBLE_EQ(mine.pct_of_read_ceiling, 100 * mine.gb_per_s / 4000);
  EXPECT_DOUBLE_EQ(mine.limit_us, 4 + 4194304.0 / 4e6);
  EXPECT_DOUBLE_EQ(mine.pct_of_limit, 100 * mine.limit_us / 8);
  EXPECT_DOUBLE_EQ(mine.ratio_to_cub, 10.0 / 8);
  EXPECT_DOUBLE_EQ(cub.ratio_to_cub, 1.0);
  EXPECT_EQ(warm.ratio_to_cub, 0);  // no batch CUB row to compare with
  // Each row's limit uses its own mode's floor, measured in that mode.
  EXPECT_DOUBLE_EQ(mine.empty_launch_us, 4);
  EXPECT_DOUBLE_EQ(warm.empty_launch_us, 2);
  EXPECT_DOUBLE_EQ(warm.limit_us, 2 + 4194304.0 / 4e6);
  EXPECT_DOUBLE_EQ(warm.pct_of_limit, 100 * (2 + 4194304.0 / 4e6) / 5);
  EXPECT_DOUBLE_EQ(sync.limit_us, 6 + 4194304.0 / 4e6);
  EXPECT_DOUBLE_EQ(sync.ratio_to_cub, 12.0 / 9);  // against CUB's sync row, not its cold one
  EXPECT_TRUE(r.all_verified());
}

TEST(BenchJson, FieldsAreStable) {
  const auto j = b::to_json(synthetic());
  for (const char* key : {"command", "reducelab_version", "device", "params", "read_ceiling_gb_per_s", "l2_read_ceiling_gb_per_s",
                          "modes", "sizes", "cases", "impls", "notes", "skipped", "summary", "all_verified", "rows"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["command"], "bench");
  EXPECT_EQ(j["device"]["name"], "Test GPU");
  EXPECT_EQ(j["device"]["backend"], "cuda");
  for (const char* key : {"backend", "sizes", "dtypes", "ops", "impls", "modes", "batch", "repeats", "seed"})
    EXPECT_TRUE(j["params"].contains(key)) << key;
  EXPECT_EQ(j["params"]["modes"], (nlohmann::json{"cold", "batch", "sync"}));
  EXPECT_EQ(j["read_ceiling_gb_per_s"], 4000.0);
  ASSERT_EQ(j["modes"].size(), 3u);
  EXPECT_EQ(j["modes"][1]["mode"], "batch");
  EXPECT_EQ(j["modes"][1]["empty_launch_us"], 2.0);
  EXPECT_EQ(j["cases"].size(), 11u);
  ASSERT_EQ(j["rows"].size(), 5u);
  for (const char* key : {"impl", "dtype", "op", "n", "bytes", "mode", "calls", "repeats", "median_us", "min_us",
                          "max_us", "p25_us", "p75_us", "gb_per_s", "pct_of_read_ceiling", "empty_launch_us",
                          "limit_ceiling_gb_per_s", "limit_us", "pct_of_limit", "ratio_to_cub", "result", "expected", "check", "status",
                          "verified", "note"})
    EXPECT_TRUE(j["rows"][1].contains(key)) << key;
  EXPECT_EQ(j["rows"][1]["impl"], "reducelab");
  EXPECT_EQ(j["rows"][1]["dtype"], "int32");
  EXPECT_EQ(j["rows"][2]["mode"], "batch");
  EXPECT_DOUBLE_EQ(j["rows"][1]["ratio_to_cub"].get<double>(), 1.25);
}

TEST(BenchTable, NamesTheDeviceAndEveryColumn) {
  std::ostringstream out;
  b::print(synthetic(), Format::table, out);
  const std::string s = out.str();
  for (const char* text : {"Test GPU", "132 SMs", "read ceiling 4000 GB/s", "cold   empty launch 4.00 us",
                           "batch  empty launch 2.00 us", "sync   empty launch 6.00 us", "int32 sum (into int64)",
                           "%limit", "vs CUB", "1.25x", "1.33x", " cold ", " batch/", " sync ", "all 5 rows verified"})
    EXPECT_NE(s.find(text), std::string::npos) << text << " missing from:\n" << s;
  std::ostringstream csv;
  b::print(synthetic(), Format::csv, csv);
  EXPECT_EQ(csv.str().rfind("impl,dtype,op,n,bytes,mode,calls,", 0), 0u) << csv.str();
}

TEST(BenchCpu, EveryTargetCaseVerifiesOnTheCpuBackend) {
  b::Args a;
  a.backend = "cpu";
  a.sizes = "1,33,1000003";
  a.repeats = "1";
  const auto r = b::run_cpu(b::parse(a));
  EXPECT_EQ(r.backend, "cpu");
  ASSERT_EQ(r.rows.size(), 3u * 11u);
  for (const auto& x : r.rows) {
    EXPECT_TRUE(x.verified) << rl::core::name(x.c.elem) << " " << x.n << ": " << x.status << " " << x.result << " vs "
                            << x.expected << " (" << x.check << ") " << x.note;
    EXPECT_EQ(x.impl, b::impl("reducelab"));
    EXPECT_TRUE(x.cpu);
    EXPECT_GT(x.us_median, 0);
    EXPECT_EQ(x.pct_of_limit, 0);  // no GPU floors on the CPU
  }
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.front().find("run only on a GPU"), std::string::npos) << r.notes.front();
  const auto j = b::to_json(r);
  EXPECT_EQ(j["device"]["backend"], "cpu");
  EXPECT_EQ(j["rows"][0]["mode"], "wall");
  EXPECT_EQ(j["modes"][0]["mode"], "wall");
}

TEST(BenchCpu, EveryElementTypeAndOpVerifies) {
  b::Args a;
  a.backend = "cpu";
  a.sizes = "1000,4097";
  a.repeats = "1";
  a.dtypes = "int8,int16,int32,int64,uint8,uint16,uint32,uint64,half,bf16,float,double";
  a.ops = "sum,min,max";
  const auto r = b::run_cpu(b::parse(a));
  ASSERT_EQ(r.rows.size(), 2u * 12u * 3u);
  for (const auto& x : r.rows)
    EXPECT_TRUE(x.verified) << rl::core::name(x.c.elem) << " " << rl::core::name(x.c.op) << " " << x.n << ": " << x.result
                            << " vs " << x.expected << " (" << x.check << ") " << x.note;
}

TEST(BenchGpu, SmallSweepVerifiesEveryImplementation) {
  std::string why;
  if (!cuda_usable(&why)) GTEST_SKIP() << why;
  b::Args a;
  a.sizes = "1000,65539";
  a.repeats = "2";
  auto device = open_cuda_device();
  const auto r = b::run_gpu(b::parse(a), *device);  // all three modes
  EXPECT_GT(r.read_ceiling_gbs, 0);
  for (b::Mode m : rl::lab::kAllTimingModes) EXPECT_GT(r.empty_launch_us.at(m), 0) << rl::lab::name(m);
  std::map<b::Impl, int> count;
  for (const auto& x : r.rows) {
    ++count[x.impl];
    EXPECT_TRUE(x.verified) << b::name(x.impl) << " " << rl::core::name(x.c.elem) << " " << rl::core::name(x.c.op) << " "
                            << x.n << " " << rl::lab::name(x.mode) << ": " << x.status << " " << x.result << " vs "
                            << x.expected << " (" << x.check << ") " << x.note;
    EXPECT_GT(x.limit_us, r.empty_launch_us.at(x.mode));
    if (x.mode == b::Mode::batch) {
      EXPECT_EQ(x.calls, b::batch_calls(x.bytes));
    }
    if (x.impl == b::impl("cub")) EXPECT_DOUBLE_EQ(x.ratio_to_cub, 1.0);
    else EXPECT_GT(x.ratio_to_cub, 0);
  }
  EXPECT_EQ(count[b::impl("cub")], 11 * 2 * 3);  // every target case has CUB and thrust rows, in 3 modes
  EXPECT_EQ(count[b::impl("thrust")], 11 * 2 * 3);
  EXPECT_EQ(count[b::impl("reducelab")], 11 * 2 * 3);
  EXPECT_EQ(count[b::impl("reducelab-nondet")], 4 * 2 * 3);  // float, double, half, bf16 sums
}

}  // namespace

// The table of implementations is what --impls, the notes and the sweep read: every row is
// complete, its name is accepted and listed among the choices, and it says which cases it skips.
TEST(BenchImpls, EveryRowIsCompleteAndNamedInTheChoices) {
  std::string message;
  try {
    b::Args a;
    a.impls = "nope";
    (void)b::parse(a);
  } catch (const rl::lab::UsageError& e) {
    message = e.what();
  }
  ASSERT_FALSE(message.empty());
  ASSERT_FALSE(b::impls().empty());
  for (const auto& row : b::impls()) {
    EXPECT_TRUE(row.make && row.absent) << row.name;
    EXPECT_EQ(&b::info(row.id()), &row);
    EXPECT_NE(message.find(std::string(row.name)), std::string::npos) << message;
    b::Args a;
    a.impls = std::string(row.name);
    EXPECT_EQ(b::parse(a).impls, std::vector<b::Impl>{row.id()});
  }
  const b::Case half_max{rl::core::Dtype::half, OpKind::max}, float_sum{rl::core::Dtype::float32, OpKind::sum};
  EXPECT_EQ(b::info(b::impl("reducelab")).absent(half_max), "");
  EXPECT_NE(b::info(b::impl("cub")).absent(half_max), "");
  EXPECT_NE(b::info(b::impl("reducelab-nondet")).absent({rl::core::Dtype::int32, OpKind::sum}), "");
  EXPECT_EQ(b::info(b::impl("reducelab-nondet")).absent(float_sum), "");
  EXPECT_TRUE(b::info(b::impl("reducelab")).cpu);
  EXPECT_TRUE(b::info(b::impl("thrust")).host_result);
}

// An implementation is its row: its name is its identity, its description is the --impls help,
// and the roles the sweep gives (CPU timing, the CUB ratio, the CPU's bits) come from the rows.
TEST(BenchImpls, TheRowIsTheOnlyPlaceAnImplementationIsNamed) {
  EXPECT_THROW((void)b::impl("nope"), std::logic_error);
  const std::string help = b::impl_help();
  int baselines = 0;
  for (const auto& row : b::impls()) {
    EXPECT_FALSE(row.description.empty()) << row.name;
    EXPECT_NE(help.find(std::string(row.name) + " (" + std::string(row.description) + ")"), std::string::npos) << help;
    EXPECT_EQ(b::impl(row.name), row.id());
    baselines += row.baseline;
  }
  EXPECT_EQ(baselines, 1);
  EXPECT_EQ(b::impl_with(&b::ImplInfo::baseline), b::impl("cub"));
  EXPECT_EQ(b::impl_with(&b::ImplInfo::cpu), b::impl("reducelab"));
  EXPECT_TRUE(b::info(b::impl("reducelab")).cpu_bits);
  EXPECT_FALSE(b::info(b::impl("reducelab-nondet")).cpu_bits);
}
