// The lab on the SIMT device: plans are validated, rows verified, reports carry stable fields.
#include <gtest/gtest.h>

#include <sstream>

#include "lab/device.hpp"
#include "lab/errors.hpp"
#include "lab/report.hpp"
#include "lab/run.hpp"

namespace {
using namespace rl;

lab::Plan small_plan(std::initializer_list<const char*> ids, std::size_t n) {
  lab::Plan p;
  for (const char* id : ids) {
    const auto* e = gallery::find(id);
    EXPECT_NE(e, nullptr) << id;
    if (e) p.kernels.push_back(e);
  }
  p.n = n;
  p.repeats = 1;
  return p;
}

TEST(Validate, RejectsBadPlansWithTheValueInTheMessage) {
  auto device = lab::open_simt_device();
  auto expect_usage = [&](lab::Plan p, const std::string& fragment) {
    try {
      lab::validate(p, *device);
      ADD_FAILURE() << "no error for: " << fragment;
    } catch (const lab::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  auto p = small_plan({"neighbored"}, 0);
  expect_usage(p, "--n 0");
  p = small_plan({"neighbored"}, 1000);
  p.block = 48;
  expect_usage(p, "block 48 is not a power of two");
  p.block = 16;
  expect_usage(p, "--block 16: under one warp");
  p.block = 2048;
  expect_usage(p, "--block 2048");
  p = small_plan({"neighbored"}, std::size_t(1) << 40);
  expect_usage(p, "GiB of device memory");
  p = small_plan({"neighbored"}, 1000);
  p.dtype = rl::core::Dtype::float32;
  p.accumulate = gallery::Accumulate::wrap;
  expect_usage(p, "only int32 wraps");
}

TEST(Validate, AllKernelsSkipsWhatCannotRunInsteadOfFailing) {
  auto device = lab::open_simt_device();
  lab::Plan p;
  for (const auto& e : gallery::registry()) p.kernels.push_back(&e);
  p.all_kernels = true;
  p.n = 1000;
  p.block = 32;
  p.repeats = 1;
  const auto report = lab::run(p, *device);
  ASSERT_EQ(report.rows.size(), gallery::registry().size());
  EXPECT_TRUE(report.all_ok());
  for (const auto& r : report.rows) {
    if (r.status == "skipped") {
      EXPECT_FALSE(r.note.empty()) << r.id;
    } else if (r.unsafe) {  // the textbook's lockstep warp: its race must be reported
      EXPECT_NE(r.note.find("race reported"), std::string::npos) << r.id << ": " << r.note;
    } else {
      EXPECT_TRUE(r.ok) << r.id << ": " << r.status << " " << r.note << " got " << r.result << " want " << r.expected;
    }
  }
}

// A run that verified nothing, or skipped a kernel it was asked for, is not a success; the
// summary credits the unsafe variant's race only when it ran, was wrong and the race was seen.
TEST(Report, NothingVerifiedOrANamedKernelSkippedIsAShortfall) {
  auto device = lab::open_simt_device();
  lab::Plan p;
  for (const auto& e : gallery::registry()) p.kernels.push_back(&e);
  p.all_kernels = true;
  p.n = 33;
  p.block = 96;  // no kernel takes a block that is not a power of two
  p.repeats = 1;
  const auto report = lab::run(p, *device);
  EXPECT_EQ(report.count("ok"), 0u);
  EXPECT_FALSE(report.all_ok());
  const std::string s = lab::summary(report);
  EXPECT_NE(s.find("nothing was verified"), std::string::npos) << s;
  EXPECT_EQ(s.find("verified ("), std::string::npos) << s;
  EXPECT_EQ(s.find("race"), std::string::npos) << s;  // the unsafe variant never ran

  lab::RunReport named;
  named.plan.all_kernels = false;
  lab::Row ok, skipped;
  ok.id = "neighbored", ok.status = "ok", ok.ok = true;
  skipped.id = "warp-shuffle", skipped.status = "skipped", skipped.note = "GPU only: shuffles";
  named.rows = {ok, skipped};
  EXPECT_EQ(named.shortfall(), "warp-shuffle was asked for but skipped: GPU only: shuffles");
  named.plan.all_kernels = true;  // `all` runs what can run here
  EXPECT_TRUE(named.all_ok());
  EXPECT_EQ(lab::summary(named), "all rows verified (1 ran; 1 skipped, see their notes)");

  lab::Row unsafe;
  unsafe.id = "unroll-warps8", unsafe.status = "MISMATCH", unsafe.unsafe = true;
  named.rows = {ok, unsafe};
  EXPECT_TRUE(named.all_ok());
  EXPECT_EQ(lab::summary(named).find("reported its data race"), std::string::npos);  // checks were off
  named.rows[1].note = "race reported (3 racing pairs): ...";
  EXPECT_NE(lab::summary(named).find("reported its data race"), std::string::npos);
}

TEST(Run, VerifiesEveryOpAndDtype) {
  auto device = lab::open_simt_device();
  for (auto dtype : rl::core::kGalleryDtypes)
    for (auto op : rl::core::kLabOps) {
      auto p = small_plan({"neighbored", "pmpp-shared", "warp-shuffle"}, 3001);
      p.dtype = dtype;
      p.op = op;
      const auto report = lab::run(p, *device);
      for (const auto& r : report.rows)
        EXPECT_TRUE(r.ok) << r.id << " " << rl::core::name(dtype) << " " << rl::core::name(op) << ": " << r.result
                          << " vs " << r.expected << " " << r.note;
    }
}

// 2^24 values drawn as rand() & 0xFF sum to about 2^31: int32 arithmetic wraps for some seeds and
// sizes, int64 never. With 2^16 values of at most 255 nothing wraps, so force it: the wrap
// accumulator must equal the exact sum modulo 2^32, and be labelled.
TEST(Run, WrapModeIsLabelled) {
  auto device = lab::open_simt_device();
  auto p = small_plan({"pmpp-shared"}, 4096);
  p.accumulate = gallery::Accumulate::wrap;
  const auto report = lab::run(p, *device);
  ASSERT_EQ(report.rows.size(), 1u);
  EXPECT_TRUE(report.rows[0].ok);
  EXPECT_NE(report.rows[0].note.find("wraps modulo 2^32"), std::string::npos);
}

TEST(Report, JsonHasTheDocumentedFields) {
  auto device = lab::open_simt_device();
  auto p = small_plan({"neighbored", "interleaved"}, 1000);
  const auto j = lab::to_json(lab::run(p, *device));
  for (const char* k : {"command", "device", "params", "reducelab_version", "l2_flushed", "all_verified", "rows",
                        "read_ceiling_gb_per_s"})
    EXPECT_TRUE(j.contains(k)) << k;
  for (const char* k : {"backend", "kernels", "n", "block", "dtype", "op", "accumulate", "param", "repeats", "seed",
                        "hot", "no_ceiling"})
    EXPECT_TRUE(j["params"].contains(k)) << k;
  EXPECT_EQ(j["command"], "run");
  EXPECT_EQ(j["device"]["backend"], "simt");
  EXPECT_EQ(j["device"]["emulated"], true);
  EXPECT_EQ(j["params"]["n"], 1000);
  EXPECT_EQ(j["params"]["kernels"], nlohmann::json({"neighbored", "interleaved"}));
  ASSERT_EQ(j["rows"].size(), 2u);
  for (const char* k : {"kernel", "kernel_function", "family", "n", "block", "bytes", "us_median", "us_min", "us_max",
                        "gb_per_s", "pct_of_theoretical", "pct_of_read_ceiling", "step_speedup", "cumulative_speedup",
                        "result", "expected", "status", "verified", "deterministic", "unsafe", "note"})
    EXPECT_TRUE(j["rows"][0].contains(k)) << k;
  EXPECT_EQ(j["rows"][0]["kernel"], "neighbored");
  EXPECT_EQ(j["rows"][0]["kernel_function"], "reduceNeighbored");
  EXPECT_EQ(j["rows"][0]["status"], "ok");
  EXPECT_EQ(j["rows"][0]["verified"], true);
  EXPECT_GT(j["rows"][1]["cumulative_speedup"].get<double>(), 0.0);
}

TEST(Report, TableNamesTheDeviceAndSaysEmulation) {
  auto device = lab::open_simt_device();
  std::ostringstream out;
  lab::print_run(lab::run(small_plan({"neighbored"}, 100), *device), lab::Format::table, out);
  EXPECT_NE(out.str().find("SIMT emulator"), std::string::npos);
  EXPECT_NE(out.str().find("times are CPU emulation, not GPU figures"), std::string::npos);
  EXPECT_NE(out.str().find("all rows verified"), std::string::npos);
}

TEST(Device, AutoSaysWhatItChose) {
  auto d = lab::open_device(lab::BackendChoice::automatic);
  EXPECT_FALSE(d->info().chosen_because.empty());
  EXPECT_NE(d->info().chosen_because.find("auto"), std::string::npos);
}

// The header of a GPU run: the ceiling it measured, or that it measured none (--no-ceiling),
// never "0 GB/s".
TEST(Report, DeviceLineWithoutACeilingSaysSo) {
  lab::DeviceInfo d;
  d.name = "Test GPU";
  d.backend = lab::Backend::cuda;
  d.sm_count = 132;
  d.theoretical_gbs = 4800;
  const std::string with = lab::device_line(d, 3350.4);
  EXPECT_NE(with.find("measured read ceiling 3350 GB/s"), std::string::npos) << with;
  const std::string without = lab::device_line(d, 0);
  EXPECT_EQ(without.find("ceiling 0 GB/s"), std::string::npos) << without;
  EXPECT_NE(without.find("read ceiling not measured (--no-ceiling)"), std::string::npos) << without;
}

}  // namespace
