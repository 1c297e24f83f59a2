#pragma once
// `reducelab bench`: reducelab::reduce, its nondeterministic variant, CUB and thrust, timed in
// one process the same way (the lab's measurement loop, lab/measure.hpp: a verified warm-up,
// then the median and spread of R repeats) in up to three timing modes (cold, batch, sync) over a
// sweep of sizes, element types and ops, beside floors measured in the same run: the read
// ceiling, and an empty launch timed in each mode. Every result is verified. docs/json.md
// documents the JSON; docs/performance.md reads it.
//
// Pieces: bench_plan.cpp (flags -> Plan), bench_measure.cpp (Plan -> Report: inputs, exact
// references, verdicts, the sweeps, derived columns), bench_report.cpp (Report -> table, CSV,
// JSON). Writing files and plotting belong to the CLI (src/cli/bench_command.cpp).
#include <compare>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lab/bench_calls.hpp"
#include "lab/device.hpp"
#include "lab/measure.hpp"
#include "lab/report.hpp"
#include "nlohmann/json.hpp"

namespace rl::lab::bench {

// An implementation bench times, known by its row's name (impls(), bench_plan.cpp): the row is
// the one place an implementation is declared.
struct Impl {
  std::string_view name;
  auto operator<=>(const Impl&) const = default;
};

// The timing modes of lab/measure.hpp. On the CPU backend there is one mode of its own, a
// steady clock around each call (a Row's `cpu`), named "wall".
using Mode = TimingMode;
inline constexpr std::string_view kWallMode = "wall";

struct Case {
  Dtype elem = Dtype::int32;
  OpKind op = OpKind::sum;
  bool operator==(const Case&) const = default;
};

// The implementations bench times, one row each, in report order (bench_plan.cpp): the name
// --impls takes, what it is, the cases it has rows for, the factory of its Call
// (bench_calls.hpp), and the roles the sweep gives it.
struct ImplInfo {
  std::string_view name;
  std::string_view description{};  // for --help: what is called
  bool cpu = false;          // also runs with --backend cpu (as reducelab::cpu::reduce)
  bool host_result = false;  // its Call hands the result to host memory (thrust)
  bool cpu_bits = false;     // its floating-point sums must equal reducelab::cpu::reduce's bits
  bool baseline = false;     // the row every other row's ratio_to_cub is taken against
  std::string_view note{};   // said once in the notes of a run that times it
  // Why it has no row for a case on a GPU; "" where it has one.
  std::string_view (*absent)(const Case&) = nullptr;
  std::unique_ptr<Call> (*make)(const Case&, const void* input, std::size_t n, void* result, void* stream) = nullptr;
  Impl id() const { return Impl{name}; }
};
std::span<const ImplInfo> impls();
// The row of an implementation; throws std::logic_error for a name without one.
const ImplInfo& info(Impl i);
std::string_view name(Impl i);
// The implementation named `name` (as impls() spells it); throws std::logic_error without a row.
Impl impl(std::string_view name);
// The first row with a role (&ImplInfo::cpu, &ImplInfo::baseline); nullopt where none has it.
std::optional<Impl> impl_with(bool ImplInfo::*role);
// "reducelab (reducelab::reduce, deterministic), ...": the --impls help.
std::string impl_help();

// The flags as typed. Empty strings mean "the default".
struct Args {
  std::string sizes;    // "2^10..2^30" (a range stepped by --step) or "1000,2^20,16M"
  std::string step;     // the factor between sizes of a range (default 4)
  std::string dtypes;   // comma-separated element types
  std::string ops;      // sum, min, max
  std::string impls;    // reducelab, reducelab-nondet, cub, thrust
  std::string repeats;  // timed repeats per row
  std::string format = "table";
  std::string plot;     // FILE.png, FILE.svg, or FILE (both)
  std::string out;      // the formatted output goes here instead of stdout
  std::string json;     // the JSON also goes here
  std::string backend = "auto";  // auto, cuda, cpu
  std::string modes;    // cold, batch, sync (default: all three on a GPU)
  std::string batch;    // calls per timed repeat in batch mode (default: by size, 4..200)
  std::uint64_t seed = 1;
};

struct Plan {
  bool cpu = false;                // --backend cpu: reducelab::cpu::reduce only
  std::vector<std::size_t> sizes;  // ascending, distinct
  std::vector<Case> cases;         // in the order they are reported
  std::vector<Impl> impls;
  bool impls_named = false;        // --impls was given: an implementation with no rows at all is a shortfall
  std::vector<Mode> modes;         // in report order; empty with cpu (its one mode is "wall")
  int batch = 0;                   // calls per batch repeat; 0: batch_calls(bytes) per row
  int repeats = 0;                 // 0 until resolved: 20 on a GPU, 10 on the CPU
  std::string sizes_text, step_text;  // the flags as typed, for the JSON's params
  std::uint64_t seed = 1;
  Format format = Format::table;
  std::string format_text = "table", backend_text = "auto", plot_text;
  std::vector<std::string> plot_files;  // what --plot makes: FILE.png and/or FILE.svg
  std::string out, json;
};

// Default sweep: 2^10 .. 2^30 by powers of 4 on a GPU; 2^10 .. 2^24 on the CPU backend.
// Default cases, without --dtypes and --ops: int32/float/double x
// sum/min/max and half/bf16 sums. With either flag: every listed dtype x every listed op
// (an omitted one takes its default: int32,float,double,half,bf16 or sum,min,max).
// Throws UsageError naming the bad value.
Plan parse(const Args& args);

// Calls per timed repeat in batch mode when --batch is not given: enough back-to-back calls that
// the two events' cost is small beside them, few where one call is long: 2^28 bytes' worth,
// clamped to 4..200.
int batch_calls(std::size_t bytes);

struct Row {
  Impl impl;
  Case c;
  std::size_t n = 0, bytes = 0;  // bytes: what must be read, n x the element's size
  Mode mode = Mode::cold;
  bool cpu = false;               // timed with a steady clock around reducelab::cpu::reduce ("wall")
  int calls = 1;                  // calls per timed repeat (batch mode), 1 otherwise
  int repeats = 0;
  double us_median = 0, us_min = 0, us_max = 0, us_p25 = 0, us_p75 = 0;
  double gb_per_s = 0;            // bytes / median
  double pct_of_read_ceiling = 0; // gb_per_s / read ceiling
  double empty_launch_us = 0;     // the floor of this row's mode, measured in this run
  double limit_ceiling_gbs = 0;   // the ceiling its limit reads at: L2's when its input stays in L2
  double limit_us = 0;            // empty_launch_us + bytes / limit_ceiling_gbs
  double pct_of_limit = 0;        // limit_us / us_median
  double ratio_to_cub = 0;        // CUB's median / this median, same case, n and mode
  std::string result, expected;   // the value returned and the reference, printed exactly
  std::string check;              // how result was judged against expected
  std::string status;             // ok | MISMATCH | error
  bool verified = false;
  std::string note;
};

struct Report {
  std::string backend;            // cuda | cpu
  std::string device_name;
  nlohmann::json device;          // lab's device fields (+ cuda_versions), or the CPU's
  std::string versions;           // "CUDA runtime 13.0, driver 13.0"
  double read_ceiling_gbs = 0;
  // Reads that hit in L2, and the L2's size: batch and sync rows leave their input in L2 from one
  // call to the next, so those that fit are held to this ceiling instead (0: not measured).
  double l2_read_ceiling_gbs = 0;
  std::size_t l2_bytes = 0;
  std::map<Mode, double> empty_launch_us;  // each mode's floor: an empty launch timed in that mode
  Plan plan;
  std::vector<Row> rows;
  std::vector<std::string> notes; // what did not run, and why
  std::vector<std::string> skipped;  // what was asked for and did not run, and why (also in notes)
  bool all_verified() const;
  // Why the run does not count as a success (a row failed, no row ran, a size or a named
  // implementation was skipped), or empty.
  std::string shortfall() const;
};

// What a sweep with an input of 1 GiB or more will take, said before it starts: the largest
// input's memory and, on the CPU, roughly how long at this machine's measured read rate. Empty
// for smaller sweeps. Sizes over 80% of host_free are left out (they are skipped).
std::string cost_estimate(const Plan& plan, std::size_t host_free);

// One line: how many rows verified, and the shortfall if there is one.
std::string summary(const Report& r);

// The fastest a reduction of `bytes` can be in a mode: that mode's empty launch, then every byte
// at the read ceiling. 0 when either floor is unknown.
double limit_us(std::size_t bytes, double empty_launch_us, double read_ceiling_gbs);
// limit_us as a percentage of the measured time (at or below 100 up to the run's noise); 0 when
// either is unknown.
double pct_of_limit(double limit_us, double us_median);
// The ceiling a row's limit reads at: the L2's for batch and sync rows whose input fits in L2
// (their input is still there from the call before), the read ceiling otherwise.
double limit_ceiling_gbs(const Report& report, Mode mode, std::size_t bytes);
// Fills the derived columns of every row (GB/s, % of ceiling, its mode's floor, limit, % of
// limit, ratio to CUB in the same mode) from the medians and the report's floors.
void derive(Report& report);

// Runs the plan: on the GPU (device is cuda) or, with plan.cpu, on this CPU.
Report run_gpu(const Plan& plan, Device& device);
Report run_cpu(const Plan& plan);

// Parses nothing: picks the backend the plan names and runs it (bench needs a GPU unless the
// plan is for the CPU: a runtime_error says why there is none).
Report run(const Plan& plan);

// The host's available memory (/proc/meminfo), for what a sweep can hold.
std::size_t host_available_bytes();

nlohmann::json to_json(const Report& report);
void print(const Report& report, Format format, std::ostream& out);

}  // namespace rl::lab::bench
