// `reducelab profile` without a GPU: the nvprof -> ncu table, the parsing of ncu's CSV (canned
// output in both of its layouts), the conversion to nvprof's scale, and the missing-ncu path.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "fmt/format.h"
#include "lab/errors.hpp"
#include "lab/explain.hpp"
#include "lab/profile.hpp"

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
// so 840 of them are bank conflicts. The canned counters split the same totals into loads and
// stores as ncu does; a second page differs by one sector.
std::string canned(int load_sectors) {
  return fmt::format(R"csv("ID","Kernel Name","Block Size","Grid Size","smsp__inst_executed_op_global_ld.sum","smsp__inst_executed_op_global_st.sum","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","l1tex__t_requests_pipe_lsu_mem_global_op_st.sum","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum","l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum","smsp__inst_executed_op_shared_ld.sum","smsp__inst_executed_op_shared_st.sum","l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum","l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum","smsp__thread_inst_executed_per_inst_executed.ratio"
"","","","","inst","inst","","","sector","sector","inst","inst","","","","",""
"0","BC_addKernel","(256, 1, 1)","(8, 1, 1)","64","8","64","8","{}","8","240","120","800","400","560","280","21.7"
)csv",
                     load_sectors);
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
  const auto same = lab::compare_counts(simt.counts, kernels[0]);
  ASSERT_EQ(same.size(), 7u);
  const double expected_simt[] = {72, 72, 264, 360, 1200, 840};
  for (std::size_t k = 0; k < 6; ++k) {
    EXPECT_TRUE(same[k].comparable) << same[k].what;
    EXPECT_DOUBLE_EQ(*same[k].simt, expected_simt[k]) << same[k].what;
    EXPECT_TRUE(same[k].equal) << same[k].what << ": simt " << *same[k].simt << " ncu " << *same[k].gpu;
  }
  EXPECT_FALSE(same[6].comparable);  // lanes per instruction: counted on the GPU only
  EXPECT_DOUBLE_EQ(*same[6].gpu, 21.7);

  const auto off = lab::compare_counts(simt.counts, lab::parse_ncu_csv(canned(257))[0]);
  EXPECT_FALSE(off[2].equal);
  EXPECT_DOUBLE_EQ(*off[2].gpu, 265);
  EXPECT_TRUE(off[0].equal);

  // A counter ncu did not print is not called equal.
  auto partial = kernels[0];
  partial.values.erase("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum");
  const auto missing = lab::compare_counts(simt.counts, partial);
  EXPECT_FALSE(missing[2].gpu);
  EXPECT_FALSE(missing[2].equal);
  EXPECT_EQ(missing[2].note, "ncu did not report it");
}

TEST(ProfileCompare, AsksNcuForEveryComparedMetric) {
  const std::string list = lab::ncu_compare_metric_list();
  for (const char* m : {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "smsp__inst_executed_op_shared_st.sum",
                        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
                        "smsp__thread_inst_executed_per_inst_executed.ratio"})
    EXPECT_NE(list.find(m), std::string::npos) << m;
}

}  // namespace
