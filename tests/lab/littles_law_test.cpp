// The Little's-law table without a GPU: each row's ratio and tolerance, the cause named from
// measured warp states, occupancy and DRAM traffic, and the table built from canned `run` and
// `profile --stalls` JSON.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "fmt/format.h"
#include "lab/errors.hpp"
#include "lab/littles_law.hpp"
#include "lab/report.hpp"

namespace {
using namespace rl;

lab::StallBreakdown states(std::vector<lab::StallShare> reasons, double achieved = 90, double theoretical = 100,
                           double dram_read = 0, double dram_write = 0) {
  lab::StallBreakdown s;
  s.reasons = std::move(reasons);
  s.achieved_occupancy_pct = achieved;
  s.theoretical_occupancy_pct = theoretical;
  s.dram_read_bytes = dram_read;
  s.dram_write_bytes = dram_write;
  return s;
}

lab::LittlesInput input(double measured, double predicted, std::optional<lab::StallBreakdown> s = std::nullopt) {
  return lab::LittlesInput{.kernel = "k",
                           .measured_gb_per_s = measured,
                           .predicted_gb_per_s = predicted,
                           .bytes_in_flight_per_sm = 16384,
                           .input_bytes = 1000,
                           .stalls = std::move(s),
                           .l1_bytes_per_input_byte = std::nullopt};
}

TEST(LittlesLaw, InsideTheToleranceOnBothEdges) {
  EXPECT_TRUE(lab::littles_row(input(750, 1000)).within);
  EXPECT_TRUE(lab::littles_row(input(1250, 1000)).within);
  EXPECT_FALSE(lab::littles_row(input(749, 1000)).within);
  EXPECT_FALSE(lab::littles_row(input(1251, 1000)).within);
  EXPECT_TRUE(lab::littles_row(input(900, 1000), 0.1).within);
  EXPECT_FALSE(lab::littles_row(input(899, 1000), 0.1).within);
  const auto r = lab::littles_row(input(800, 1000));
  EXPECT_DOUBLE_EQ(*r.ratio, 0.8);
  EXPECT_EQ(r.cause, lab::LittlesCause::none);
  EXPECT_TRUE(r.cause_text.empty());
}

TEST(LittlesLaw, NoPredictionIsNeitherInsideNorAnException) {
  auto in = input(500, 0);
  in.predicted_gb_per_s.reset();
  const auto r = lab::littles_row(in);
  EXPECT_FALSE(r.predicted);
  EXPECT_FALSE(r.within);
  EXPECT_FALSE(r.ratio);
  EXPECT_EQ(r.cause, lab::LittlesCause::none);
}

TEST(LittlesLaw, OutsideWithoutMeasurementSaysSo) {
  const auto r = lab::littles_row(input(200, 1000));
  EXPECT_FALSE(r.within);
  EXPECT_EQ(r.cause, lab::LittlesCause::unmeasured);
  EXPECT_NE(r.cause_text.find("profile --stalls"), std::string::npos);
}

TEST(LittlesLaw, TheLargestWarpStateNamesTheCause) {
  const auto r = lab::littles_row(
      input(130, 1000, states({{"barrier", 34.4}, {"long_scoreboard", 21.0}, {"selected", 9.0}}, 90, 100, 1000, 0)));
  EXPECT_EQ(r.cause, lab::LittlesCause::barriers);
  EXPECT_EQ(lab::name(r.cause), "barriers");
  EXPECT_EQ(r.cause_text.rfind("34% of warp time at a barrier (__syncthreads)", 0), 0u) << r.cause_text;
  // The second state is named too (21% >= 10%), the third (9%) is not.
  EXPECT_NE(r.cause_text.find("21% of warp time waiting for a global-memory load"), std::string::npos) << r.cause_text;
  EXPECT_EQ(r.cause_text.find("issuing"), std::string::npos) << r.cause_text;
  EXPECT_NE(r.cause_text.find("achieved occupancy 90% (theoretical 100%)"), std::string::npos) << r.cause_text;
  EXPECT_NE(r.cause_text.find("DRAM moves 1.00 bytes per input byte"), std::string::npos) << r.cause_text;
  ASSERT_EQ(r.top_states.size(), 3u);

  EXPECT_EQ(lab::littles_row(input(100, 1000, states({{"long_scoreboard", 60}, {"barrier", 5}}))).cause,
            lab::LittlesCause::memory_latency);
  EXPECT_EQ(lab::littles_row(input(100, 1000, states({{"short_scoreboard", 40}}))).cause, lab::LittlesCause::shared_memory);
  EXPECT_EQ(lab::littles_row(input(100, 1000, states({{"mio_throttle", 40}}))).cause, lab::LittlesCause::shared_memory);
  EXPECT_EQ(lab::littles_row(input(100, 1000, states({{"not_selected", 30}, {"selected", 25}}))).cause,
            lab::LittlesCause::issue);
  EXPECT_EQ(lab::littles_row(input(100, 1000, states({{"sleeping", 30}}))).cause, lab::LittlesCause::other);
  EXPECT_EQ(lab::littles_row(input(100, 1000, states({{"membar", 30}}))).cause, lab::LittlesCause::barriers);
  EXPECT_EQ(lab::littles_row(input(100, 1000, states({}))).cause, lab::LittlesCause::unmeasured);
}

TEST(LittlesLaw, FewResidentWarpsComeBeforeTheStates) {
  // Achieved 40% of a theoretical 100%: under 60% of it, so occupancy is the named cause.
  const auto r = lab::littles_row(input(300, 1000, states({{"long_scoreboard", 70}}, 40, 100)));
  EXPECT_EQ(r.cause, lab::LittlesCause::occupancy);
  EXPECT_EQ(r.cause_text.rfind("40% of the SM's warps resident against the 100% the law assumes", 0), 0u) << r.cause_text;
  // 61% of theoretical is not a shortfall.
  EXPECT_EQ(lab::littles_row(input(300, 1000, states({{"long_scoreboard", 70}}, 61, 100))).cause,
            lab::LittlesCause::memory_latency);
}

TEST(LittlesLaw, DramTrafficThatExplainsTheRateIsTheCause) {
  // 2.5 bytes through DRAM per input byte: the law's 1000 GB/s of traffic is 400 GB/s of input,
  // and 380 measured is inside +-25 % of that.
  const auto r = lab::littles_row(input(380, 1000, states({{"barrier", 50}}, 90, 100, 1500, 1000)));
  EXPECT_EQ(r.cause, lab::LittlesCause::dram_traffic);
  EXPECT_DOUBLE_EQ(*r.dram_bytes_per_input_byte, 2.5);
  EXPECT_DOUBLE_EQ(*r.traffic_predicted_gb_per_s, 400);
  EXPECT_DOUBLE_EQ(*r.traffic_ratio, 0.95);
  EXPECT_EQ(r.cause_text.rfind("moves 2.50 bytes through DRAM per byte of input", 0), 0u) << r.cause_text;
  // The same traffic with 100 GB/s measured does not explain it: the warp states do.
  EXPECT_EQ(lab::littles_row(input(100, 1000, states({{"barrier", 50}}, 90, 100, 1500, 1000))).cause,
            lab::LittlesCause::barriers);
}

TEST(LittlesLaw, FasterThanPredicted) {
  const auto r = lab::littles_row(input(2000, 1000, states({{"long_scoreboard", 80}})));
  EXPECT_EQ(r.cause, lab::LittlesCause::faster);
  EXPECT_NE(r.cause_text.find("80% of warp time waiting for a global-memory load"), std::string::npos);
}

TEST(LittlesLaw, StatesMapToCauses) {
  EXPECT_EQ(lab::cause_of_state("barrier"), lab::LittlesCause::barriers);
  EXPECT_EQ(lab::cause_of_state("long_scoreboard"), lab::LittlesCause::memory_latency);
  EXPECT_EQ(lab::cause_of_state("lg_throttle"), lab::LittlesCause::memory_latency);
  EXPECT_EQ(lab::cause_of_state("short_scoreboard"), lab::LittlesCause::shared_memory);
  EXPECT_EQ(lab::cause_of_state("wait"), lab::LittlesCause::issue);
  EXPECT_EQ(lab::cause_of_state("no_such_state"), lab::LittlesCause::other);
  for (const auto& r : lab::stall_reasons()) EXPECT_NE(lab::stall_meaning(r.reason), r.reason) << r.reason;
}

// What `run --backend cuda --format json` writes, trimmed to the fields the table reads.
std::string run_json(const char* backend = "cuda") {
  return fmt::format(R"json({{
  "command": "run", "device": {{"name": "NVIDIA H200"}},
  "params": {{"backend": "{}", "n": 67108864, "block": 512, "dtype": "int32"}},
  "read_ceiling_gb_per_s": 4451.0, "latency": {{"dram_ns": 340.0, "l2_ns": 145.0}},
  "rows": [
    {{"kernel": "neighbored", "gb_per_s": 575.0, "bytes": 268435456, "bytes_in_flight_per_sm": 16384, "predicted_gb_per_s": 4451.0}},
    {{"kernel": "vectorized", "gb_per_s": 3843.0, "bytes": 268435456, "bytes_in_flight_per_sm": 32768, "predicted_gb_per_s": 4411.0}},
    {{"kernel": "unroll8", "gb_per_s": 3175.0, "bytes": 268435456, "bytes_in_flight_per_sm": 131072, "predicted_gb_per_s": 4451.0}},
    {{"kernel": "cub", "gb_per_s": 4000.0, "bytes": 268435456, "bytes_in_flight_per_sm": null, "predicted_gb_per_s": null}}
  ]}})json",
                     backend);
}

std::string profile_json(const char* kernel, unsigned long long n = 67108864) {
  return fmt::format(R"json({{
  "command": "profile", "kernel": "{}", "params": {{"backend": "cuda", "n": {}, "block": 512, "dtype": "int32", "stalls": true}},
  "stalls": {{"reasons": [{{"reason": "long_scoreboard", "pct_of_warp_time": 20.5}}, {{"reason": "barrier", "pct_of_warp_time": 41.0}}],
             "achieved_occupancy_pct": 92.0, "theoretical_occupancy_pct": 100.0, "waves_per_sm": 248.2,
             "dram_read_bytes": 268435456, "dram_write_bytes": 268435456, "dram_throughput_pct": 14.0}}
}})json",
                     kernel, n);
}

TEST(LittlesLaw, TableFromRunAndProfileJson) {
  const auto rep = lab::littles_law_report(run_json(), {profile_json("neighbored")}, 0);
  EXPECT_EQ(rep.device, "NVIDIA H200");
  EXPECT_EQ(rep.n, 67108864u);
  EXPECT_EQ(rep.dtype, "int32");
  EXPECT_DOUBLE_EQ(*rep.dram_latency_ns, 340);
  ASSERT_EQ(rep.rows.size(), 4u);
  const auto& nb = rep.rows[0];
  EXPECT_FALSE(nb.within);
  EXPECT_EQ(nb.cause, lab::LittlesCause::barriers);  // states are sorted: barrier 41% leads
  EXPECT_DOUBLE_EQ(*nb.dram_bytes_per_input_byte, 2.0);
  EXPECT_TRUE(rep.rows[1].within);                       // vectorized 0.87
  EXPECT_EQ(rep.rows[2].cause, lab::LittlesCause::unmeasured);  // unroll8 0.71, not profiled
  EXPECT_FALSE(rep.rows[3].predicted);

  std::ostringstream table;
  lab::print_littles_law(rep, lab::Format::table, table);
  const std::string t = table.str();
  EXPECT_NE(t.find("| kernel | bytes in flight / SM |"), std::string::npos) << t;
  EXPECT_NE(t.find("| neighbored | 16384 | 4451 | 575 | 0.13 (outside +-25%) | 2.00 | 2226 (0.26) | - |"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("| vectorized | 32768 | 4411 | 3843 | 0.87 |"), std::string::npos) << t;
  EXPECT_NE(t.find("barriers: 41% of warp time at a barrier"), std::string::npos) << t;
  EXPECT_NE(t.find("2 of 3 predicted rows outside +-25% (1 barriers, 1 not measured)"), std::string::npos) << t;

  std::ostringstream json;
  lab::print_littles_law(rep, lab::Format::json, json);
  const auto j = nlohmann::json::parse(json.str());
  EXPECT_EQ(j["outside_rows"], 2);
  EXPECT_EQ(j["rows"][0]["cause"], "barriers");
  EXPECT_EQ(j["rows"][1]["cause"], nullptr);
  EXPECT_EQ(j["rows"][3]["within"], nullptr);
}

TEST(LittlesLaw, MismatchedOrMalformedFilesAreUsageErrors) {
  EXPECT_THROW(lab::littles_law_report("not json", {}, 0), lab::UsageError);
  EXPECT_THROW(lab::littles_law_report(run_json("simt"), {}, 0), lab::UsageError);
  EXPECT_THROW(lab::littles_law_report(run_json(), {profile_json("neighbored", 1024)}, 0), lab::UsageError);
  EXPECT_THROW(lab::littles_law_report(run_json(), {run_json()}, 0), lab::UsageError);
  EXPECT_THROW(lab::littles_law_report(run_json(), {}, 0, 1.5), lab::UsageError);
}

// The L1 traffic the SIMT recorder counts: vectorized reads each byte once in coalesced 16-byte
// loads and keeps its sums in registers, so it moves about 1 byte per input byte; neighbored's
// in-place tree reads and writes global memory at every step, so it moves several.
TEST(LittlesLaw, SimtL1TrafficPerInputByte) {
  const auto once = lab::simt_l1_bytes_per_input_byte(*gallery::find("vectorized"), 1 << 16, 256, rl::core::Dtype::int32);
  ASSERT_TRUE(once);
  EXPECT_GT(*once, 0.99);
  EXPECT_LT(*once, 1.1);
  const auto tree = lab::simt_l1_bytes_per_input_byte(*gallery::find("neighbored"), 1 << 16, 256, rl::core::Dtype::int32);
  ASSERT_TRUE(tree);
  EXPECT_GT(*tree, 2.0);
  EXPECT_FALSE(lab::simt_l1_bytes_per_input_byte(*gallery::find("cub"), 1 << 16, 256, rl::core::Dtype::int32));
}

}  // namespace
