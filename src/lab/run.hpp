#pragma once
// `reducelab run`: each kernel of a plan is uploaded, warmed up, timed over repeats, verified
// against the CPU reference and turned into a Row.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gallery/registry.hpp"
#include "lab/device.hpp"
#include "lab/input.hpp"

namespace rl::lab {

struct Plan {
  std::vector<const gallery::Entry*> kernels;
  bool all_kernels = false;  // from `--kernels all`: kernels that cannot take this plan are
                             // skipped with the reason instead of failing the run
  std::size_t n = std::size_t(1) << 24;
  unsigned block = 512;
  Dtype dtype = Dtype::int32;
  core::OpKind op = core::OpKind::sum;
  Accumulate accumulate = Accumulate::wide;
  unsigned param = 0;
  int repeats = 20;
  std::uint64_t seed = 1;
  bool flush_l2 = true;
  bool measure_ceiling = true;  // off under compute-sanitizer, where it would take minutes
  bool littles_law = true;      // GPU: measure the latency, predict each row's GB/s from it
  bool timed = true;            // false: one verified launch, no timed repeats (explain)
};

// Defaults that depend on the backend: the emulator runs 2^16 elements and 3 repeats so the
// whole gallery finishes in seconds.
std::size_t default_n(Backend b);
int default_repeats(Backend b);

struct Row {
  std::string id, name, family;
  std::size_t n = 0;
  unsigned block = 0;
  std::size_t bytes_read = 0;
  int repeats = 0;
  double ms_median = 0, ms_min = 0, ms_max = 0;
  double gb_per_s = 0;            // bytes_read / median time (GPU only)
  double pct_of_theoretical = 0;  // of the seed-002 formula's bandwidth
  double pct_of_read_ceiling = 0; // of the measured read ceiling
  double step_speedup = 0;        // previous timed row's time / this time
  double cumulative_speedup = 0;  // reduceNeighbored's time / this time
  std::string result, expected;
  std::string status;             // ok | MISMATCH | skipped | error
  bool ok = false;
  bool deterministic = true;      // repeats gave the same bits
  bool unsafe = false;
  std::string note;               // why skipped, the error, race reports, wrapping
  // Little's law (GPU only; empty on simt and where the registry declares no loads per thread):
  // bytes the kernel keeps in flight per SM = resident threads per SM (occupancy) x independent
  // loads per thread x bytes per load; predicted GB/s = min(read ceiling, SMs x that / latency).
  std::optional<double> bytes_in_flight_per_sm;
  std::optional<double> predicted_gb_per_s;
};


struct RunReport {
  DeviceInfo device;
  double read_ceiling_gbs = 0;
  std::optional<MemoryLatency> latency;  // measured when the plan asks for Little's law (GPU)
  Plan plan;
  std::vector<Row> rows;
  // Rows whose status is `status` (ok, MISMATCH, skipped, error).
  std::size_t count(const char* status) const;
  // Rows that failed verification or errored, the unsafe variant's wrong answer aside.
  std::size_t failed() const;
  // Why the run does not count as a success, or empty: a row failed, nothing was verified, or a
  // kernel named in --kernels was skipped (`all` skips what cannot run here, and says so).
  std::string shortfall() const;
  bool all_ok() const;
};

// The plan's n, block, dtype, op, accumulate and param as the LaunchArgs of one launch (no
// pointers yet: KernelLaunch adds them).
gallery::LaunchArgs launch_shape(const Plan& plan);

// Throws UsageError for a plan the device cannot run (n = 0, n beyond memory, a block the
// device or an explicitly named kernel cannot take).
void validate(const Plan& plan, Device& device);
RunReport run(const Plan& plan, Device& device);

// Why `e` cannot run with this block on this backend, or empty when it can.
std::string incompatibility(const gallery::Entry& e, unsigned block, Backend backend,
                            const DeviceInfo& device);

}  // namespace rl::lab
