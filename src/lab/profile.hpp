#pragma once
// `reducelab profile KERNEL`: the seeds' nvprof metrics, read today with Nsight Compute. The
// command runs this reducelab again under `ncu --clock-control none` (a `run` of the one kernel,
// one warm-up launch profiled), reads ncu's CSV and prints, for each nvprof metric the seeds
// use, the ncu metric that replaces it and its value, also in nvprof's scale where they differ.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/recorder.hpp"
#include "lab/run.hpp"

namespace rl::lab {

// One line of NVIDIA's nvprof-to-ncu table that the seeds need.
struct MetricMapping {
  std::string_view nvprof;       // e.g. "gld_efficiency"
  std::string_view ncu;          // the replacing metric, e.g. "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"
  std::string_view meaning;      // one line
  std::string_view nvprof_unit;  // the unit nvprof reported in ("%", "GB/s", "" for a count or ratio)
  double to_nvprof = 1;          // nvprof's value = ncu's value (in base units) x to_nvprof
};
const std::vector<MetricMapping>& metric_mappings();
// Every ncu metric the profile asks for, comma-separated (the mappings plus the duration).
std::string ncu_metric_list();
inline constexpr std::string_view kNcuDuration = "gpu__time_duration.sum";

// One profiled kernel of ncu's CSV: its identification columns and every metric as printed.
struct NcuKernel {
  std::string name, block, grid;
  std::map<std::string, std::string> values;  // metric -> value text ("1,234.5", "n/a")
  std::map<std::string, std::string> units;   // metric -> unit ("byte/second", "%")
};
// Parses the output of `ncu --csv`: the raw page (a header of metric names, a row of units,
// one row per kernel) or the details page (one row per metric). Lines before the CSV header
// (ncu's ==PROF== lines, the application's own output) are skipped. Throws std::runtime_error
// when there is no header.
std::vector<NcuKernel> parse_ncu_csv(std::string_view text);
// "1,234.5" -> 1234.5 (ncu groups thousands with commas); "n/a", "" -> nullopt.
std::optional<double> parse_ncu_number(std::string_view text);

struct ProfileMetric {
  std::string nvprof, ncu, unit, meaning, nvprof_unit;
  std::optional<double> value;         // as ncu printed it, in `unit`
  std::optional<double> nvprof_value;  // in nvprof's scale
};

// `profile --compare`: one count the SIMT recorder and Nsight Compute both take of the same
// launch (the kernel's first launch; the gallery's final pass is a separate kernel and is left
// out by both), summed over loads and stores where ncu splits them. Instructions are ncu's SASS
// counters (smsp__sass_inst_executed_op_*): one per warp-wide load or store the kernel executed.
// The lanes per instruction are compared per class (global/shared x load/store): the predicated-on
// thread executions of that class's SASS instructions (ncu's source page, SassMemoryLanes) over its
// warp instructions (the SASS counter), against the SIMT recorder's lanes over its accesses.
struct ComparedCount {
  std::string what;                 // e.g. "global sectors"
  std::string ncu;                  // the ncu metric(s), " + " between summed ones, " / " for a ratio
  std::optional<double> simt, gpu;  // gpu: empty when ncu did not report every metric
  bool comparable = true;           // false: the emulator does not count this quantity
  bool equal = false;
  bool ratio = false;               // lanes per instruction: equal when both counts behind it are
  std::string note;
};
// The ncu metrics --compare adds to the profile's.
std::string ncu_compare_metric_list();

// Hopper's ncu has no thread counter per memory class, but its source page (`--section
// SourceCounters --page source --print-source sass --csv`) lists every SASS instruction of the
// kernel with the threads that executed it with the predicate on ("Predicated-On Thread
// Instructions Executed"). Summed over the instructions of a class they are the class's lanes.
// The class is read from the opcode (LDG/STG global, LDS/LDSM/STS shared; generic LD/ST by the
// page's address space); atomics, local-memory spills and every other instruction are left out,
// as the recorder leaves them out. The page's "Instructions Executed" also counts warps whose
// every thread was predicated off (an H200, BC_addKernel: 16384 per LDS against 6400 warp loads
// with a thread on), so the warp instructions of a class come from the SASS counters instead.
struct SassMemoryLanes {
  double global_loads = 0, global_stores = 0, shared_loads = 0, shared_stores = 0;  // thread executions
  std::size_t instructions_listed = 0;  // SASS lines on the page (every opcode)
};
// Parses the source page of the first kernel in `text` (lines before its "Address","Source" header
// are skipped). Throws std::runtime_error when there is no such header or a needed column is missing.
SassMemoryLanes parse_ncu_sass_source(std::string_view text);

// The SIMT counts (the steps and the accesses outside them) beside ncu's counters; `sass` the
// source page's per-class lanes (nullptr: those rows have no GPU figure).
std::vector<ComparedCount> compare_counts(const analysis::Counts& simt, const NcuKernel& gpu,
                                          const SassMemoryLanes* sass = nullptr);
// "N of M counts equal" over the comparable rows.
std::pair<std::size_t, std::size_t> equal_of_comparable(const std::vector<ComparedCount>& rows);

// `profile --stalls`: where the launch's warps spend their time. Nsight Compute samples each
// warp's state every cycle it is resident; smsp__warp_issue_stalled_REASON_per_warp_active.pct is
// the share of those warp-cycles spent in REASON ("selected" is the share spent issuing), so the
// reasons add up to about 100 % of warp time. Beside them: achieved and theoretical occupancy,
// the launch's waves, and what it moved through DRAM.
struct StallReason {
  std::string_view reason;   // ncu's word: "barrier", "long_scoreboard", ...
  std::string_view meaning;  // what the warp waits for, in a phrase: "at a barrier (__syncthreads)"
};
const std::vector<StallReason>& stall_reasons();
std::string stall_metric(std::string_view reason);  // smsp__warp_issue_stalled_<reason>_per_warp_active.pct
inline constexpr std::string_view kNcuAchievedOccupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr std::string_view kNcuTheoreticalOccupancy = "sm__maximum_warps_per_active_cycle_pct";
inline constexpr std::string_view kNcuWaves = "launch__waves_per_multiprocessor";
inline constexpr std::string_view kNcuDramRead = "dram__bytes_read.sum";
inline constexpr std::string_view kNcuDramWrite = "dram__bytes_write.sum";
inline constexpr std::string_view kNcuDramThroughput = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
// The ncu metrics --stalls adds to the profile's.
std::string ncu_stall_metric_list();

struct StallShare {
  std::string reason;
  double pct = 0;  // of the warps' active time
};
struct StallBreakdown {
  std::vector<StallShare> reasons;  // those ncu reported, largest first
  std::optional<double> achieved_occupancy_pct, theoretical_occupancy_pct, waves_per_sm;
  std::optional<double> dram_read_bytes, dram_write_bytes, dram_throughput_pct;
};
StallBreakdown stall_breakdown(const NcuKernel& k);
// The words for a reason (stall_reasons()), or the reason itself when it is not in the list.
std::string_view stall_meaning(std::string_view reason);

// Metrics an ncu run rejected: the requested names that appear on ncu's ==ERROR== lines (a
// metric this GPU or this ncu does not have). profile() drops them and asks again once.
std::vector<std::string> rejected_metrics(std::string_view ncu_output, const std::vector<std::string>& asked);

struct ProfileReport {
  Plan plan;
  std::string device;       // the GPU's name
  std::string ncu;          // the ncu binary
  std::string command;      // what ran under ncu
  std::string kernel_name;  // as ncu names it
  std::string grid, block;
  std::optional<double> duration_ns;
  std::vector<ProfileMetric> metrics;
  bool compared = false;               // --compare ran the SIMT recorder too
  std::vector<ComparedCount> comparison;
  std::optional<SassMemoryLanes> sass;  // --compare: the source page's per-class lanes, when ncu gave it
  std::string simt_status;             // the SIMT run's verification (ok, MISMATCH)
  bool stalled = false;                // --stalls asked for the warp-state breakdown
  StallBreakdown stalls;
  std::vector<std::string> unavailable;  // metrics this ncu rejected (dropped, reported n/a)
};
// The seeds' metrics out of one parsed kernel.
std::vector<ProfileMetric> profile_metrics(const NcuKernel& k);

// The ncu to run: $REDUCELAB_NCU when set (it must be executable), else the first of PATH,
// /usr/local/cuda/bin/ncu and /opt/nvidia/nsight-compute/*/ncu. Throws UsageError naming what
// was searched when there is none.
std::string find_ncu();
// Profiles the plan's kernel. Throws UsageError (no ncu, no GPU, a plan the GPU cannot run) and
// std::runtime_error (counters not permitted: ERR_NVGPUCTRPERM; ncu failed; no kernel profiled).
// `compare`: also run the plan on the SIMT backend with the recorder (n <= kSimtCompareMaxN, else
// UsageError) and set its counts beside ncu's (ProfileReport::comparison).
// `stalls`: also collect the warp-state breakdown (ProfileReport::stalls).
ProfileReport profile(const Plan& plan, bool compare = false, bool stalls = false);  // printed by print_profile (report.hpp)

}  // namespace rl::lab
