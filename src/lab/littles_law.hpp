#pragma once
// Little's law for the gallery: to sustain B bytes/s against a latency of L seconds, B x L
// bytes must be in flight. A kernel keeps (resident threads per SM) x (independent loads per
// thread, declared in the registry) x (bytes per load) in flight on each SM, so it can read at
// most min(read ceiling, SMs x that / L).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "gallery/registry.hpp"
#include "lab/profile.hpp"

namespace rl::lab {

// Bytes in flight per SM, or empty when the entry declares no loads. Resident threads are the
// occupancy limit (max_blocks_per_sm x block), or fewer when the grid does not fill every SM.
std::optional<double> bytes_in_flight_per_sm(const gallery::Entry& e, std::size_t input_bytes, unsigned block,
                                             int max_blocks_per_sm, std::uint64_t grid, int sm_count);

// min(ceiling, SMs x bytes per SM / latency): bytes per nanosecond are GB/s.
double predicted_gb_per_s(double bytes_per_sm, int sm_count, double latency_ns, double ceiling_gb_per_s);

// ---- The Little's-law table: each kernel's prediction against its measurement, and a measured
// cause for every row outside the tolerance -------------------------------------------------------

// What one row of the table is made of: a `run --format json` row on a GPU, and optionally the
// same kernel's `profile --stalls --format json` at the same n, block and dtype.
struct LittlesInput {
  std::string kernel;
  double measured_gb_per_s = 0;
  std::optional<double> predicted_gb_per_s, bytes_in_flight_per_sm;
  double input_bytes = 0;                        // bytes the kernel must read (what GB/s counts)
  std::optional<StallBreakdown> stalls;          // ncu's warp states, occupancy, DRAM bytes
  std::optional<double> l1_bytes_per_input_byte;  // SIMT: global sectors x 32 per byte read
};

// Where a kernel's warps spend the time the law does not account for.
enum class LittlesCause {
  none,           // within the tolerance
  faster,         // measured above the prediction
  dram_traffic,   // moves more DRAM bytes than it reads as input; with them counted it is within
  occupancy,      // far fewer resident warps than the law assumes (small grid, tail)
  barriers,       // barrier and memory-fence stalls lead
  memory_latency, // waiting on global loads leads: fewer bytes in flight than declared
  shared_memory,  // short scoreboard / MIO throttle lead (shared memory, bank conflicts)
  issue,          // issuing, not selected, math pipes, fixed-latency waits lead: instruction bound
  other,          // another warp state leads
  unmeasured,     // outside, but no warp states were measured
};
std::string_view name(LittlesCause c);
// The cause a warp state points to (barrier -> barriers, long_scoreboard -> memory_latency, ...).
LittlesCause cause_of_state(std::string_view reason);

struct LittlesRow {
  std::string kernel;
  double measured_gb_per_s = 0;
  std::optional<double> predicted_gb_per_s, bytes_in_flight_per_sm, ratio;  // ratio: measured / predicted
  bool predicted = false, within = false;
  std::optional<double> dram_bytes_per_input_byte;  // ncu: DRAM read + write over the bytes read
  std::optional<double> traffic_predicted_gb_per_s, traffic_ratio;  // the prediction over that traffic
  std::optional<double> l1_bytes_per_input_byte;
  std::optional<double> achieved_occupancy_pct, theoretical_occupancy_pct;
  std::vector<StallShare> top_states;  // the largest warp states (up to three)
  LittlesCause cause = LittlesCause::none;
  std::string cause_text;  // e.g. "34% of warp time at a barrier (__syncthreads) ...; achieved occupancy 61% of 100%"
};
// One row: the ratio, inside or outside measured/predicted in [1 - tolerance, 1 + tolerance], and
// for a row outside, its cause named from the measured warp states, occupancy and DRAM traffic.
LittlesRow littles_row(const LittlesInput& in, double tolerance = 0.25);

struct LittlesReport {
  std::string device;
  std::uint64_t n = 0;
  std::string dtype;
  unsigned block = 0;
  std::optional<double> dram_latency_ns, l2_latency_ns;
  double read_ceiling_gb_per_s = 0;
  double tolerance = 0.25;
  std::uint64_t simt_n = 0;  // n of the SIMT runs that counted the L1 traffic (0: not counted)
  std::vector<LittlesRow> rows;
};
// Builds the table from the text of a `run --format json` (on a GPU) and of `profile --stalls
// --format json` files (matched to the run's rows by kernel id; files of another n, block or dtype
// are an error). `simt_n` > 0: also run each kernel on the SIMT backend at that n with the
// recorder for its L1 traffic per input byte. Throws UsageError on a malformed or mismatched file.
LittlesReport littles_law_report(std::string_view run_json, const std::vector<std::string>& profile_jsons,
                                 std::uint64_t simt_n = 0, double tolerance = 0.25);
// Global sectors x 32 per byte read, counted on the SIMT backend (empty where the kernel cannot
// run there).
std::optional<double> simt_l1_bytes_per_input_byte(const gallery::Entry& e, std::uint64_t n, unsigned block,
                                                   core::Dtype dtype);

}  // namespace rl::lab
