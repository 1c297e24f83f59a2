// `reducelab profile` without a GPU: the nvprof -> ncu table, the parsing of ncu's CSV (canned
// output in both of its layouts), the conversion to nvprof's scale, and the missing-ncu path.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "lab/errors.hpp"
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
