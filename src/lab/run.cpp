#include "lab/run.hpp"

#include "lab/measure.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <exception>

#include "fmt/format.h"
#include "lab/errors.hpp"
#include "lab/kernel_launch.hpp"
#include "lab/littles_law.hpp"
#include "lab/verify.hpp"
#include "lab/launch_log.hpp"
#include "simt/launch_observer.hpp"
#if RL_WITH_CUDA
#include "lab/kernel_resources.hpp"
#endif

namespace rl::lab {

std::size_t default_n(Backend b) { return b == Backend::cuda ? std::size_t(1) << 24 : std::size_t(1) << 16; }
int default_repeats(Backend b) { return b == Backend::cuda ? 20 : 3; }

std::size_t RunReport::count(const char* status) const {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [&](const Row& r) { return r.status == status; }));
}

std::size_t RunReport::failed() const {
  // An unsafe kernel (a race on purpose) may give a wrong answer: that is its lesson, not a failure.
  return static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [](const Row& r) {
    return !r.ok && r.status != "skipped" && !(r.unsafe && r.status == "MISMATCH");
  }));
}

std::string RunReport::shortfall() const {
  if (const auto bad = failed()) return fmt::format("{} row(s) failed verification or errored", bad);
  if (count("ok") == 0)
    return rows.empty() ? "no kernel was asked for"
                        : fmt::format("nothing was verified: {} of {} row(s) skipped", count("skipped"), rows.size());
  if (!plan.all_kernels && count("skipped") > 0) {
    for (const auto& r : rows)
      if (r.status == "skipped") return fmt::format("{} was asked for but skipped: {}", r.id, r.note);
  }
  return {};
}

bool RunReport::all_ok() const { return shortfall().empty(); }

std::string incompatibility(const gallery::Entry& e, unsigned block, Backend backend,
                            const DeviceInfo& device) {
  const auto& c = e.constraints;
  if (backend == Backend::simt && c.gpu_only) return fmt::format("GPU only: {}", c.gpu_only_reason);
  if (!gallery::launcher(e, backend))
    return backend == Backend::cuda ? "not built into this binary's CUDA backend"
                                    : "no SIMT launcher";
  if (c.pow2_block && !std::has_single_bit(block))
    return fmt::format("block {} is not a power of two, which {} needs", block, e.name);
  if (block < c.min_block || block > c.max_block)
    return fmt::format("block {} is outside {}..{}, the range {} takes", block, c.min_block,
                       c.max_block, e.name);
  if (block > static_cast<unsigned>(device.max_threads_per_block))
    return fmt::format("block {} is over the device's limit of {} threads", block,
                       device.max_threads_per_block);
  return {};
}

gallery::LaunchArgs launch_shape(const Plan& plan) {
  gallery::LaunchArgs a;
  a.n = plan.n;
  a.block = plan.block;
  a.dtype = plan.dtype;
  a.op = plan.op;
  a.accumulate = plan.accumulate;
  a.param = plan.param;
  return a;
}

void validate(const Plan& plan, Device& device) {
  const DeviceInfo& info = device.info();
  if (plan.n == 0) throw UsageError("--n 0: there is nothing to reduce; give n >= 1");
  if (plan.repeats < 1) throw UsageError(fmt::format("--repeats {}: give at least 1", plan.repeats));
  if (plan.block < static_cast<unsigned>(info.warp_size))
    throw UsageError(fmt::format("--block {}: under one warp ({} threads); give {}..{}", plan.block,
                                 info.warp_size, info.warp_size, info.max_threads_per_block));
  if (plan.block > static_cast<unsigned>(info.max_threads_per_block))
    throw UsageError(fmt::format("--block {}: over the device's limit of {} threads per block",
                                 plan.block, info.max_threads_per_block));
  if (plan.kernels.empty()) throw UsageError("--kernels: no kernel selected");
  if (plan.accumulate == Accumulate::wrap && plan.dtype != Dtype::int32)
    throw UsageError(fmt::format("--accumulate wrap: only int32 wraps; {} accumulates in its own type",
                                 core::name(plan.dtype)));
  if (!plan.all_kernels)
    for (const auto* e : plan.kernels)
      if (auto why = incompatibility(*e, plan.block, info.backend, info); !why.empty())
        throw UsageError(fmt::format("--kernels {}: {}", e->id, why));
  // Memory: the input (twice for in-place kernels, which need a pristine copy), scratch, result.
  std::size_t need = 0;
  for (const auto* e : plan.kernels)
    need = std::max(need, gallery::footprint(*e, plan.n, plan.block, plan.dtype, plan.accumulate).device_bytes());
  const std::size_t free = device.free_memory();
  if (need > free)
    throw UsageError(fmt::format("--n {}: needs {:.3f} GiB of device memory ({} bytes); {:.3f} GiB are free ({} bytes)",
                                 plan.n, need / 1073741824.0, need, free / 1073741824.0, free));
}

namespace {


// Little's law for the row, from the occupancy of the launch that reads the input: the one with the
// most threads, helpers aside (the atomic kernels launch a one-block init_identity first, and the
// final passes are smaller).
void predict(Row& row, const gallery::Entry& e, const Plan& plan, const std::vector<LaunchRecord>& launches,
             const DeviceInfo& info, const MemoryLatency& latency, double ceiling) {
#if RL_WITH_CUDA
  if (launches.empty()) return;
  auto threads = [](const LaunchRecord& l) {
    return static_cast<std::uint64_t>(l.grid[0]) * l.grid[1] * l.grid[2] * l.block[0] * l.block[1] * l.block[2];
  };
  const LaunchRecord* reader = nullptr;
  for (const auto& l : launches)
    if (!l.helper && (!reader || threads(l) > threads(*reader))) reader = &l;
  if (!reader) reader = &launches.front();
  const KernelResources k = kernel_resources(*reader);
  row.bytes_in_flight_per_sm = bytes_in_flight_per_sm(e, gallery::input_bytes(e, plan.dtype, plan.accumulate), k.block,
                                                      k.max_blocks_per_sm, k.grid, info.sm_count);
  if (row.bytes_in_flight_per_sm)
    row.predicted_gb_per_s = predicted_gb_per_s(*row.bytes_in_flight_per_sm, info.sm_count, latency.dram_ns, ceiling);
#else
  (void)row, (void)e, (void)plan, (void)launches, (void)info, (void)latency, (void)ceiling;
#endif
}

Row run_one(const gallery::Entry& e, const Plan& plan, Device& device, const HostArray& input,
            const Expected& expected, const std::optional<MemoryLatency>& latency, double ceiling) {
  Row row;
  row.id = e.id;
  row.name = e.name;
  row.family = e.family;
  row.n = plan.n;
  row.block = plan.block;
  row.unsafe = e.constraints.unsafe;
  row.expected = expected.text;
  const DeviceInfo& info = device.info();
  if (auto why = incompatibility(e, plan.block, info.backend, info); !why.empty()) {
    row.status = "skipped";
    row.note = why;
    return row;
  }
  const gallery::LaunchFn launch = gallery::launcher(e, info.backend);
  const gallery::Footprint size = gallery::footprint(e, plan.n, plan.block, plan.dtype, plan.accumulate);
  const std::size_t acc_bytes = size.acc_bytes;
  row.bytes_read = size.bytes_read;

  try {
    // In-place kernels destroy their input: keep a pristine copy and restore it (untimed).
    KernelLaunch kernel(e, launch_shape(plan), device, input, /*keep_pristine=*/true);
    const gallery::LaunchArgs& args = kernel.args();

    std::vector<unsigned char> got(acc_bytes), first(acc_bytes);
    bool all_ok = true;
    std::string first_bad;
    const int repeats = plan.timed ? plan.repeats : 0;
    // The lab's loop: warm-up (verified, not timed), then the repeats, each verified. Flushed:
    // every call queued behind an L2 flush (cold); --hot: the call alone between two events.
    Measured m;
    m.prepare = [&] {
      kernel.restore_input();                         // untimed: in-place kernels destroy their input
      device.fill(kernel.result(), 0xFF, acc_bytes);  // poison: an unwritten result cannot pass
    };
    m.call = [&] { launch(args); };
    m.around_warmup = [&](const std::function<void()>& warmup) {
      LaunchLog log;
      warmup();
      if (latency) predict(row, e, plan, log.records(), info, *latency, ceiling);
    };
    m.verify = [&](int rep) {
      device.download(got.data(), kernel.result(), acc_bytes);
      const Verdict v = judge(expected, got.data());
      if (rep < 0) {
        first = got;
        row.result = v.result;
      } else if (got != first) {
        row.deterministic = false;
      }
      if (!v.ok && all_ok) {
        all_ok = false;
        first_bad = v.result;
      }
    };
    const TimeStats t = time_stats(measure(&device, plan.flush_l2 ? TimingMode::cold : TimingMode::batch, repeats, 1, m));
    row.repeats = repeats;
    row.ms_median = t.median;
    row.ms_min = t.min;
    row.ms_max = t.max;
    if (info.backend == Backend::cuda && row.ms_median > 0) {
      row.gb_per_s = row.bytes_read / (row.ms_median * 1e-3) / 1e9;
      if (info.theoretical_gbs > 0) row.pct_of_theoretical = 100.0 * row.gb_per_s / info.theoretical_gbs;
    }
    row.ok = all_ok;
    row.status = all_ok ? "ok" : "MISMATCH";
    if (!all_ok && first_bad != row.result) row.result = first_bad;
    std::string note = device.take_diagnostics();
    if (!row.deterministic) note += std::string(note.empty() ? "" : "; ") + "results differ between repeats";
    if (row.unsafe && !all_ok)
      note += std::string(note.empty() ? "" : "; ") + "unsafe textbook variant: its data race gives a wrong answer";
    if (expected.wraps) note += std::string(note.empty() ? "" : "; ") + "int32 arithmetic, wraps modulo 2^32";
    row.note = note;
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& ex) {
    row.status = "error";
    row.ok = false;
    row.note = ex.what();
    device.take_diagnostics();
  }
  return row;
}

}  // namespace

RunReport run(const Plan& plan, Device& device) {
  validate(plan, device);
  RunReport report;
  report.device = device.info();
  report.plan = plan;
  if (device.info().backend == Backend::cuda && plan.measure_ceiling) report.read_ceiling_gbs = device.read_ceiling_gbs();
  if (device.info().backend == Backend::cuda && plan.littles_law && plan.timed) report.latency = device.memory_latency();
  const HostArray input = make_input(plan.dtype, plan.n, plan.seed);
  const Expected expected = expect(input, plan.op, plan.accumulate);
  for (const auto* e : plan.kernels)
    report.rows.push_back(run_one(*e, plan, device, input, expected, report.latency, report.read_ceiling_gbs));

  // Speedups: against the previous timed row, and against the registry's baseline entry
  // (reduceNeighbored, the first rung).
  double baseline = 0, previous = 0;
  for (const auto& r : report.rows)
    if (const gallery::Entry* e = gallery::find(r.id); e && e->speedup_baseline && r.ms_median > 0)
      baseline = r.ms_median;
  for (auto& r : report.rows) {
    if (r.ms_median <= 0) continue;
    if (report.read_ceiling_gbs > 0) r.pct_of_read_ceiling = 100.0 * r.gb_per_s / report.read_ceiling_gbs;
    if (previous > 0) r.step_speedup = previous / r.ms_median;
    if (baseline > 0) r.cumulative_speedup = baseline / r.ms_median;
    previous = r.ms_median;
  }
  return report;
}

}  // namespace rl::lab
