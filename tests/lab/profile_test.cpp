// `reducelab profile` without a GPU: the nvprof -> ncu table, the parsing of ncu's CSV (canned
// output in both of its layouts), the conversion to nvprof's scale, and the missing-ncu path.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "fmt/format.h"
#include "lab/errors.hpp"
#include "lab/explain.hpp"
#include "lab/profile.hpp"
#include "lab/report.hpp"

namespace {
using namespace rl;

// What `ncu --csv --page raw --print-units base` prints for one kernel of a `reducelab run`:
// ncu's own lines, the application's CSV (which starts with a quote-less header), then the
// report: metric names, their units (ID empty), one row per profiled kernel. Values as ncu
// writes them, thousands grouped with commas.
constexpr const char* kRawPage = R"csv(==PROF== Connected to process 4242 (/work/.gpu/reducelab)
==PROF== Profiling "reduceNeighbored": 0%....50%....100% - 9 passes
kernel,name,block,ms
neighbored,reduceNeighbored,512,0.2400
==PROF== Disconnected from process 4242
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpu__time_duration.sum","l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second","smsp__average_inst_executed_per_warp.ratio","smsp__thread_inst_executed_per_inst_executed.ratio","sm__warps_active.avg.pct_of_peak_sustained_active"
"","","","","","","","","","","","nsecond","byte/second","inst","","%"
"0","4242","reducelab","gpu1","void rl::gallery::cuda_backend::reduceNeighbored<int, reducelab::Sum<int>>(int *, int *, unsigned long)","1","13","(512, 1, 1)","(32768, 1, 1)","0","9.0","238,112","1,234,567,890,123.5","412.25","12.5","87.5"
)csv";

// The details page (one row per metric), which ncu prints without --page raw.
constexpr const char* kDetailsPage = R"csv("ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","7","reducelab","h","BC_addKernel","1","13","(512, 1, 1)","(32768, 1, 1)","0","9.0","Command line profiler metrics","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum","","1,032,192"
"0","7","reducelab","h","BC_addKernel","1","13","(512, 1, 1)","(32768, 1, 1)","0","9.0","Command line profiler metrics","smsp__sass_average_branch_targets_threads_uniform.pct","%","n/a"
)csv";

TEST(Profile, MappingCoversTheSeedsMetricsWithNcuNames) {
  std::set<std::string> nvprof;
  for (const auto& m : lab::metric_mappings()) nvprof.insert(std::string(m.nvprof));
  for (const char* want : {"inst_per_warp", "gld_throughput", "gld_efficiency", "branch_efficiency",
                           "warp_execution_efficiency", "shared_ld_bank_conflict", "shared_st_bank_conflict",
                           "achieved_occupancy"})
    EXPECT_TRUE(nvprof.count(want)) << want;
  auto ncu_of = [](std::string_view nv) {
    for (const auto& m : lab::metric_mappings())
      if (m.nvprof == nv) return std::string(m.ncu);
    return std::string();
  };
  EXPECT_EQ(ncu_of("inst_per_warp"), "smsp__average_inst_executed_per_warp.ratio");
  EXPECT_EQ(ncu_of("gld_throughput"), "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second");
  EXPECT_EQ(ncu_of("gld_efficiency"), "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct");
  EXPECT_EQ(ncu_of("branch_efficiency"), "smsp__sass_average_branch_targets_threads_uniform.pct");
  EXPECT_EQ(ncu_of("warp_execution_efficiency"), "smsp__thread_inst_executed_per_inst_executed.ratio");
  EXPECT_EQ(ncu_of("shared_ld_bank_conflict"), "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum");
  EXPECT_EQ(ncu_of("shared_st_bank_conflict"), "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum");
  EXPECT_EQ(ncu_of("achieved_occupancy"), "sm__warps_active.avg.pct_of_peak_sustained_active");
  const std::string list = lab::ncu_metric_list();
  for (const auto& m : lab::metric_mappings()) EXPECT_NE(list.find(std::string(m.ncu)), std::string::npos) << m.ncu;
  EXPECT_EQ(list.rfind("gpu__time_duration.sum", 0), 0u);
}

TEST(Profile, NumbersAsNcuWritesThem) {
  EXPECT_EQ(lab::parse_ncu_number("1,234.5"), 1234.5);
  EXPECT_EQ(lab::parse_ncu_number("1,032,192"), 1032192.0);
  EXPECT_EQ(lab::parse_ncu_number("0"), 0.0);
  EXPECT_FALSE(lab::parse_ncu_number("n/a"));
  EXPECT_FALSE(lab::parse_ncu_number(""));
}

TEST(Profile, RawPageSkipsTheApplicationAndReadsUnits) {
  const auto kernels = lab::parse_ncu_csv(kRawPage);
  ASSERT_EQ(kernels.size(), 1u);
  const auto& k = kernels[0];
  EXPECT_EQ(k.name, "void rl::gallery::cuda_backend::reduceNeighbored<int, reducelab::Sum<int>>(int *, int *, unsigned long)");
  EXPECT_EQ(k.grid, "(32768, 1, 1)");
  EXPECT_EQ(k.block, "(512, 1, 1)");
  EXPECT_EQ(k.values.at("gpu__time_duration.sum"), "238,112");
  EXPECT_EQ(k.units.at("l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second"), "byte/second");
  EXPECT_EQ(k.values.count("Process ID"), 1u);  // identification columns other than the four are kept as text

  // In nvprof's scale: GB/s, % of 32 lanes, occupancy as a ratio; absent metrics stay n/a.
  const auto metrics = lab::profile_metrics(k);
  auto find = [&](std::string_view nv) {
    for (const auto& m : metrics)
      if (m.nvprof == nv) return m;
    ADD_FAILURE() << nv;
    return lab::ProfileMetric{};
  };
  EXPECT_DOUBLE_EQ(*find("inst_per_warp").value, 412.25);
  EXPECT_DOUBLE_EQ(*find("inst_per_warp").nvprof_value, 412.25);
  EXPECT_DOUBLE_EQ(*find("gld_throughput").nvprof_value, 1234.5678901235);
  EXPECT_DOUBLE_EQ(*find("warp_execution_efficiency").nvprof_value, 12.5 / 32 * 100);  // 39.0625 %
  EXPECT_DOUBLE_EQ(*find("achieved_occupancy").nvprof_value, 0.875);
  EXPECT_FALSE(find("gld_efficiency").value);
  EXPECT_FALSE(find("gld_efficiency").nvprof_value);
}

TEST(Profile, DetailsPageOneRowPerMetric) {
  const auto kernels = lab::parse_ncu_csv(kDetailsPage);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].name, "BC_addKernel");
  EXPECT_EQ(lab::parse_ncu_number(kernels[0].values.at("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")),
            1032192.0);
  EXPECT_EQ(kernels[0].units.at("smsp__sass_average_branch_targets_threads_uniform.pct"), "%");
  EXPECT_FALSE(lab::parse_ncu_number(kernels[0].values.at("smsp__sass_average_branch_targets_threads_uniform.pct")));
}

TEST(Profile, NoReportIsAnError) {
  EXPECT_THROW(lab::parse_ncu_csv("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n"), std::runtime_error);
  EXPECT_TRUE(lab::parse_ncu_csv(std::string(kRawPage).substr(0, std::string(kRawPage).find("\"\",\"\""))).empty());
}

TEST(Profile, NcuFromTheEnvironmentMustBeExecutable) {
  ::setenv("REDUCELAB_NCU", "/nonexistent/ncu", 1);
  EXPECT_THROW(lab::find_ncu(), lab::UsageError);
  ::setenv("REDUCELAB_NCU", "/bin/sh", 1);
  EXPECT_EQ(lab::find_ncu(), "/bin/sh");
  ::unsetenv("REDUCELAB_NCU");
}

}  // namespace

namespace {
using namespace rl;

// `profile --compare` on canned ncu output: BC_addKernel, n = 2048, block 256, float, as ncu
// reports it for the kernel's launch (8 blocks). The SIMT recorder's counts of the same plan:
// 64 warp loads of 32 floats (64 requests, 256 sectors) and 8 one-lane stores of the block's
// partial (8 requests, 8 sectors); in shared memory 360 warp accesses taking 1200 wavefronts,
// so 840 of them are bank conflicts. Per block the shared accesses are 8 full-warp stores of the
// loaded elements, then at stride i = 1..128 the 128/i working threads (12 warp executions in
// all) each load two words and store one, and thread 0 loads the block's sum: 25 loads with
// 511 lanes and 20 stores with 511 lanes per block. The canned counters split the same totals
// into loads and stores as ncu does; a second page differs by one sector.
std::string canned(int load_sectors) {
  return fmt::format(R"csv("ID","Kernel Name","Block Size","Grid Size","smsp__sass_inst_executed_op_global_ld.sum","smsp__sass_inst_executed_op_global_st.sum","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","l1tex__t_requests_pipe_lsu_mem_global_op_st.sum","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum","l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum","smsp__sass_inst_executed_op_shared_ld.sum","smsp__sass_inst_executed_op_shared_st.sum","l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum","l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum","smsp__thread_inst_executed_per_inst_executed.ratio"
"","","","","inst","inst","","","sector","sector","inst","inst","","","","",""
"0","BC_addKernel","(256, 1, 1)","(8, 1, 1)","64","8","64","8","{}","8","200","160","600","600","400","440","21.7"
)csv",
                     load_sectors);
}

// ncu's source page for the same launch, cut to the columns the parser reads, in ncu's order and
// spelling (an H200's page has 70 columns). Every memory class once or twice, a fully predicated-off
// load that still counts as executed, a generic load that fell in shared memory, and instructions
// the recorder does not see (an atomic, a spill, a barrier) that must be left out. `shared_load_threads`
// lets a test take one lane away.
std::string canned_source(int shared_load_threads = 8 * 511) {
  return fmt::format(R"csv(==PROF== Connected to process 515
"Kernel Name","BC_addKernel(float *, float *, unsigned int)",
"Address","Source","Instructions Executed","Thread Instructions Executed","Predicated-On Thread Instructions Executed","Address Space","Access Operation","Access Size"
"0x7f0000000010","      LDG.E R4, desc[UR4][R2.64]","64","2048","2048","Global","Load","32"
"0x7f0000000020","@!P0  LDG.E R5, desc[UR4][R2.64+0x4]","0","0","0","","Load","32"
"0x7f0000000030","      STS [R7], R4","64","2048","2048","Shared","Store","32"
"0x7f0000000040","@P1   LD.E R8, [R10.64]","160","5120","{}","Shared","Load","32"
"0x7f0000000050","@P1   LDS R9, [R7+0x4]","40","1280","40","Shared","Load","32"
"0x7f0000000060","@P1   STS [R7], R8","96","3072","2040","Shared","Store","32"
"0x7f0000000070","      ATOMS.ADD RZ, [R7], R8","8","256","8","Shared","Atomic","32"
"0x7f0000000080","      STL [R1], R8","8","256","256","Local","Store","32"
"0x7f0000000090","      BAR.SYNC.DEFER_BLOCKING 0x0","400","12800","12800","-","-","-"
"0x7f00000000a0","@!P2  STG.E desc[UR4][R12.64], R9","8","256","8","Global","Store","32"
==PROF== Disconnected from process 515
)csv",
                     shared_load_threads - 40);
}

TEST(ProfileCompare, SourcePageSumsEachMemoryClass) {
  const auto s = lab::parse_ncu_sass_source(canned_source());
  EXPECT_EQ(s.instructions_listed, 10u);
  EXPECT_EQ(s.global_loads, 2048);
  EXPECT_EQ(s.global_stores, 8);
  EXPECT_EQ(s.shared_loads, 8 * 511);        // LD in shared space + LDS
  EXPECT_EQ(s.shared_stores, 2048 + 2040);  // the atomic and the spill are not stores here
  EXPECT_THROW(lab::parse_ncu_sass_source("==PROF== no page\n"), std::runtime_error);
  EXPECT_THROW(lab::parse_ncu_sass_source("\"Address\",\"Source\",\"Instructions Executed\"\n"), std::runtime_error);
}

// A real source page: ncu 2025 on an NVIDIA H200, BC_addKernel at n = 65536, block 256, float
// (the launch the GPU check profiles). Its lanes per class equal the SIMT recorder's for that plan.
TEST(ProfileCompare, SourcePageOfAnH200) {
  const std::string path = std::string(RL_SOURCE_DIR) + "/tests/lab/data/ncu-source-bc-add-h200.csv";
  std::ifstream in(path);
  if (!in) GTEST_SKIP() << "no source tree here (" << path << ")";
  std::stringstream text;
  text << in.rdbuf();
  const auto s = lab::parse_ncu_sass_source(text.str());
  EXPECT_EQ(s.global_loads, 65536);
  EXPECT_EQ(s.global_stores, 256);
  EXPECT_EQ(s.shared_loads, 130816);
  EXPECT_EQ(s.shared_stores, 130816);
  EXPECT_GT(s.instructions_listed, 40u);
}

TEST(ProfileCompare, SimtCountsBesideNcuCountersOfTheSameLaunch) {
  lab::Plan p;
  p.kernels = {gallery::find("bc-add")};
  p.n = 2048;
  p.block = 256;
  p.dtype = rl::core::Dtype::float32;
  const auto simt = lab::explain(p);
  ASSERT_EQ(simt.row.status, "ok");
  const auto kernels = lab::parse_ncu_csv(canned(256));
  ASSERT_EQ(kernels.size(), 1u);
  const auto sass = lab::parse_ncu_sass_source(canned_source());
  const auto same = lab::compare_counts(simt.counts, kernels[0], &sass);
  ASSERT_EQ(same.size(), 11u);
  const double expected_simt[] = {72, 72, 264, 360, 1200, 840, 2048.0 / 64, 1, 4088.0 / 200, 4088.0 / 160};
  for (std::size_t k = 0; k < 10; ++k) {
    // requests: different quantities on the two sides
    EXPECT_EQ(same[k].comparable, k != 1) << same[k].what;
    EXPECT_DOUBLE_EQ(*same[k].simt, expected_simt[k]) << same[k].what;
    EXPECT_TRUE(same[k].equal) << same[k].what << ": simt " << *same[k].simt << " ncu " << *same[k].gpu << " "
                               << same[k].note;
  }
  EXPECT_EQ(same[3].ncu, "smsp__sass_inst_executed_op_shared_ld.sum + smsp__sass_inst_executed_op_shared_st.sum");
  EXPECT_TRUE(same[8].ratio);
  EXPECT_EQ(same[8].what, "lanes per instruction: shared loads");
  EXPECT_NE(same[8].note.find("lanes/instructions: simt 4088/200, ncu 4088/200"), std::string::npos);
  EXPECT_FALSE(same[10].comparable);  // every instruction's lanes: counted on the GPU only
  EXPECT_DOUBLE_EQ(*same[10].gpu, 21.7);
  EXPECT_NE(same[10].note.find("ncu only"), std::string::npos);
  EXPECT_NE(same[1].note.find("not compared"), std::string::npos);
  EXPECT_EQ(lab::equal_of_comparable(same), std::make_pair(std::size_t{9}, std::size_t{9}));

  const auto off = lab::compare_counts(simt.counts, lab::parse_ncu_csv(canned(257))[0], &sass);
  EXPECT_FALSE(off[2].equal);
  EXPECT_DOUBLE_EQ(*off[2].gpu, 265);
  EXPECT_TRUE(off[0].equal);
  EXPECT_EQ(lab::equal_of_comparable(off), std::make_pair(std::size_t{8}, std::size_t{9}));

  // One lane fewer on ncu's shared loads: the instruction counts still agree, the lanes do not.
  const auto fewer = lab::parse_ncu_sass_source(canned_source(8 * 511 - 1));
  const auto lanes_off = lab::compare_counts(simt.counts, kernels[0], &fewer);
  EXPECT_TRUE(lanes_off[3].equal);
  EXPECT_TRUE(lanes_off[9].equal);
  EXPECT_FALSE(lanes_off[8].equal);

  // A counter ncu did not print, or a source page it did not give, is not called equal.
  auto partial = kernels[0];
  partial.values.erase("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum");
  const auto missing = lab::compare_counts(simt.counts, partial);
  EXPECT_FALSE(missing[2].gpu);
  EXPECT_FALSE(missing[2].equal);
  EXPECT_EQ(missing[2].note, "ncu did not report it");
  EXPECT_FALSE(missing[6].gpu);
  EXPECT_FALSE(missing[6].equal);
  EXPECT_TRUE(missing[6].comparable);
  EXPECT_EQ(missing[6].note, "ncu's source page was not read");
}

// The lane ratio on hand-made counts: equal only when the lanes and the instructions behind it
// both agree.
TEST(ProfileCompare, LaneRatiosCompareTheCountsBehindThem) {
  analysis::Counts c;
  c.totals.global_loads = {10, 320};
  c.outside.global_loads = {6, 96};  // outside the steps: added in
  lab::NcuKernel k;
  k.values = {{"smsp__sass_inst_executed_op_global_ld.sum", "16"},
              {"smsp__sass_inst_executed_op_global_st.sum", "0"},
              {"smsp__sass_inst_executed_op_shared_ld.sum", "0"},
              {"smsp__sass_inst_executed_op_shared_st.sum", "0"}};
  lab::SassMemoryLanes s;
  s.global_loads = 416;
  auto rows = lab::compare_counts(c, k, &s);
  ASSERT_EQ(rows.size(), 11u);
  EXPECT_TRUE(rows[6].equal);
  EXPECT_DOUBLE_EQ(*rows[6].simt, 26);
  EXPECT_DOUBLE_EQ(*rows[6].gpu, 26);
  EXPECT_TRUE(rows[7].equal);  // no global stores on either side
  // The same ratio from other counts is not equal: twice the instructions and twice the lanes.
  k.values["smsp__sass_inst_executed_op_global_ld.sum"] = "32";
  s.global_loads = 832;
  rows = lab::compare_counts(c, k, &s);
  EXPECT_DOUBLE_EQ(*rows[6].gpu, 26);
  EXPECT_FALSE(rows[6].equal);
  k.values.erase("smsp__sass_inst_executed_op_shared_st.sum");  // ncu printed no counter for a class
  EXPECT_FALSE(lab::compare_counts(c, k, &s)[9].gpu);
  EXPECT_EQ(lab::compare_counts(c, k, &s)[9].note, "ncu did not report it");
}

TEST(ProfileCompare, AsksNcuForEveryComparedMetric) {
  const std::string list = lab::ncu_compare_metric_list();
  for (const char* m : {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
                        "smsp__sass_inst_executed_op_global_ld.sum",
                        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
                        "smsp__thread_inst_executed_per_inst_executed.ratio"})
    EXPECT_NE(list.find(m), std::string::npos) << m;
  // The warp-level counters are the SASS ones (one per executed load/store instruction), not
  // smsp__inst_executed_op_*, which count more than the kernel's loads and stores.
  EXPECT_EQ(list.find("smsp__inst_executed_op_"), std::string::npos);
  // The lanes per class come from the source page, not from a counter.
  EXPECT_EQ(list.find("thread_inst_executed_op_memory"), std::string::npos);
  // Each metric once.
  std::set<std::string> seen;
  std::size_t count = 0;
  for (std::size_t at = 0; at <= list.size();) {
    const auto comma = list.find(',', at);
    seen.insert(list.substr(at, comma - at));
    ++count;
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  EXPECT_EQ(seen.size(), count);
}

// `profile --stalls` on canned ncu output: the warp states, largest first; the occupancy and the
// DRAM bytes; a state ncu did not print is left out rather than read as 0.
TEST(ProfileStalls, WarpStatesOccupancyAndDramFromNcu) {
  const std::string csv = R"csv(==PROF== Connected to process 9 (/x/reducelab)
"ID","Kernel Name","Block Size","Grid Size","smsp__warp_issue_stalled_barrier_per_warp_active.pct","smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct","smsp__warp_issue_stalled_selected_per_warp_active.pct","smsp__warp_issue_stalled_membar_per_warp_active.pct","sm__warps_active.avg.pct_of_peak_sustained_active","sm__maximum_warps_per_active_cycle_pct","launch__waves_per_multiprocessor","dram__bytes_read.sum","dram__bytes_write.sum","dram__throughput.avg.pct_of_peak_sustained_elapsed"
"","","","","%","%","%","%","%","%","","byte","byte","%"
"0","reduceNeighbored","(512, 1, 1)","(131072, 1, 1)","34.5","21.25","9.5","n/a","87.5","100","248.24","268,435,456","134,217,728","12.5"
)csv";
  const auto k = lab::parse_ncu_csv(csv);
  ASSERT_EQ(k.size(), 1u);
  const auto s = lab::stall_breakdown(k[0]);
  ASSERT_EQ(s.reasons.size(), 3u);
  EXPECT_EQ(s.reasons[0].reason, "barrier");
  EXPECT_DOUBLE_EQ(s.reasons[0].pct, 34.5);
  EXPECT_EQ(s.reasons[1].reason, "long_scoreboard");
  EXPECT_EQ(s.reasons[2].reason, "selected");
  EXPECT_DOUBLE_EQ(*s.achieved_occupancy_pct, 87.5);
  EXPECT_DOUBLE_EQ(*s.theoretical_occupancy_pct, 100);
  EXPECT_DOUBLE_EQ(*s.waves_per_sm, 248.24);
  EXPECT_DOUBLE_EQ(*s.dram_read_bytes, 268435456.0);
  EXPECT_DOUBLE_EQ(*s.dram_write_bytes, 134217728.0);
  EXPECT_DOUBLE_EQ(*s.dram_throughput_pct, 12.5);
  EXPECT_EQ(lab::stall_metric("barrier"), "smsp__warp_issue_stalled_barrier_per_warp_active.pct");

  const std::string list = lab::ncu_stall_metric_list();
  for (const char* m : {"smsp__warp_issue_stalled_barrier_per_warp_active.pct",
                        "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
                        "smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct",
                        "smsp__warp_issue_stalled_membar_per_warp_active.pct",
                        "smsp__warp_issue_stalled_not_selected_per_warp_active.pct", "dram__bytes_read.sum",
                        "dram__bytes_write.sum", "sm__maximum_warps_per_active_cycle_pct"})
    EXPECT_NE(list.find(m), std::string::npos) << m;
}

// A metric ncu does not know is named on an ==ERROR== line; only whole names count.
TEST(ProfileStalls, RejectedMetricsAreTheOnesNcuNames) {
  const std::vector<std::string> asked = {"smsp__warp_issue_stalled_misc_per_warp_active.pct", "dram__bytes_read.sum",
                                          "dram__bytes_read.sum.per_second", "gpu__time_duration.sum"};
  const std::string out =
      "==PROF== Connected to process 1\n"
      "==ERROR== Failed to find metric smsp__warp_issue_stalled_misc_per_warp_active.pct\n"
      "==ERROR== Failed to find metric dram__bytes_read.sum.per_second.\n"
      "==WARNING== gpu__time_duration.sum is slow\n";
  EXPECT_EQ(lab::rejected_metrics(out, asked),
            (std::vector<std::string>{"smsp__warp_issue_stalled_misc_per_warp_active.pct", "dram__bytes_read.sum.per_second"}));
  EXPECT_TRUE(lab::rejected_metrics("==PROF== Disconnected\n", asked).empty());
  // Named without its rollup, in quotes: still that metric (and only that one).
  EXPECT_EQ(lab::rejected_metrics("==ERROR== Metric 'smsp__warp_issue_stalled_misc_per_warp_active' not found\n", asked),
            std::vector<std::string>{"smsp__warp_issue_stalled_misc_per_warp_active.pct"});
  // A name on a line that is not an error is not a rejection.
  EXPECT_TRUE(lab::rejected_metrics("gpu__time_duration.sum 1,234\n", asked).empty());
}

}  // namespace

namespace {
using namespace rl;

// What print_profile shows of --compare and --stalls: the "N/M metrics equal" line (the ncu-only
// row left out of M), whole numbers for counts, and the warp states with their words.
TEST(ProfilePrint, CompareSummaryAndStalls) {
  lab::ProfileReport r;
  r.plan.kernels = {gallery::find("bc-add")};
  r.plan.n = 2048;
  r.plan.block = 256;
  r.device = "NVIDIA H200";
  r.compared = true;
  r.simt_status = "ok";
  lab::ComparedCount same{"global sectors (32 bytes)", "a + b", 264.0, 264.0, true, true, false, ""};
  lab::ComparedCount other{"shared instructions (warp accesses)", "c + d", 360.0, 361.0, true, false, false, ""};
  lab::ComparedCount lanes{"lanes per shared load instruction", "t / w", 4088.0 / 200, 4088.0 / 200, true, true, true, "n"};
  lab::ComparedCount only{"thread instructions per warp instruction (every instruction)", "r", std::nullopt, 21.7,
                          false, false, true, "ncu only: why"};
  r.comparison = {same, other, lanes, only};
  r.stalled = true;
  r.stalls.reasons = {{"barrier", 34.4}, {"long_scoreboard", 20.0}};
  r.stalls.achieved_occupancy_pct = 91.0;
  r.stalls.theoretical_occupancy_pct = 100.0;
  r.stalls.dram_read_bytes = 8192;
  r.stalls.dram_write_bytes = 8192;
  std::ostringstream table;
  lab::print_profile(r, lab::Format::table, table);
  const std::string t = table.str();
  EXPECT_NE(t.find("2/3 metrics equal"), std::string::npos) << t;
  EXPECT_NE(t.find("DIFFERENT"), std::string::npos) << t;
  EXPECT_NE(t.find("ncu only"), std::string::npos) << t;
  EXPECT_NE(t.find("20.440"), std::string::npos) << t;  // 4088 / 200
  EXPECT_EQ(t.find("264.000"), std::string::npos) << t;
  EXPECT_NE(t.find("34.4%"), std::string::npos) << t;
  EXPECT_NE(t.find("at a barrier (__syncthreads)"), std::string::npos) << t;
  EXPECT_NE(t.find("achieved occupancy 91.0% of the SM's warps (theoretical 100.0%)"), std::string::npos) << t;
  EXPECT_NE(t.find("= 2.00 x the input's 8192 bytes"), std::string::npos) << t;

  std::ostringstream json;
  lab::print_profile(r, lab::Format::json, json);
  const auto j = nlohmann::json::parse(json.str());
  EXPECT_EQ(j["compare"]["equal"], 2);
  EXPECT_EQ(j["compare"]["comparable"], 3);
  EXPECT_EQ(j["compare"]["counts"][3]["equal"], nullptr);
  EXPECT_EQ(j["stalls"]["reasons"][0]["reason"], "barrier");
  EXPECT_DOUBLE_EQ(j["stalls"]["reasons"][0]["pct_of_warp_time"].get<double>(), 34.4);
  EXPECT_EQ(j["params"]["stalls"], true);
}

}  // namespace
