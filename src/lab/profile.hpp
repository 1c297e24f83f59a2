#pragma once
// `reducelab profile KERNEL`: the seeds' nvprof metrics, read today with Nsight Compute. The
// command runs this reducelab again under `ncu --clock-control none` (a `run` of the one kernel,
// one warm-up launch profiled), reads ncu's CSV and prints, for each nvprof metric the seeds
// use, the ncu metric that replaces it and its value, also in nvprof's scale where they differ.
#include <map>
#include <optional>
#include <string>
#include <string_view>
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
// out by both), summed over loads and stores where ncu splits them.
struct ComparedCount {
  std::string what;                 // e.g. "global sectors"
  std::string ncu;                  // the ncu metric(s), " + " between summed ones
  std::optional<double> simt, gpu;  // gpu: empty when ncu did not report every metric
  bool comparable = true;           // false: the emulator does not count this quantity
  bool equal = false;
  std::string note;
};
// The ncu metrics --compare adds to the profile's.
std::string ncu_compare_metric_list();
// The SIMT counts (the steps and the accesses outside them) beside ncu's counters.
std::vector<ComparedCount> compare_counts(const analysis::Counts& simt, const NcuKernel& gpu);

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
  std::string simt_status;             // the SIMT run's verification (ok, MISMATCH)
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
ProfileReport profile(const Plan& plan, bool compare = false);  // printed by print_profile (report.hpp)

}  // namespace rl::lab
