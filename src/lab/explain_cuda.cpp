// `explain --backend cuda`: the kernel's resources as the CUDA runtime reports them, and the
// active-lane counts of its instrumented build (gallery/probed.hpp), on the GPU.
#include <memory>
#include <stdexcept>
#include <string_view>

#include "analysis/gpu_counters.hpp"
#include "fmt/format.h"
#include "gallery/probed.hpp"
#include "lab/errors.hpp"
#include "lab/explain.hpp"
#include "lab/kernel_launch.hpp"
#include "lab/verify.hpp"
#include "lab/launch_log.hpp"
#include "simt/launch_observer.hpp"

namespace rl::lab {
namespace {


// Stops the instrumented kernels' probes on every way out.
struct Detach {
  ~Detach() {
    try {
      gallery::cuda_probes_attach(nullptr);
    } catch (...) {
    }
  }
};

}  // namespace

analysis::Counts instrumented_lane_counts(const Plan& plan, Device& device, Row* row_out, std::uint64_t* irregular) {
  const gallery::Entry& e = *plan.kernels.front();
  const gallery::LaunchFn launch = gallery::cuda_probed_launcher(e.id);
  if (!launch)
    throw UsageError(fmt::format("explain {}: no instrumented GPU build of this kernel; its lanes are counted on simt only", e.id));
  if (device.info().backend != Backend::cuda) throw std::logic_error("instrumented_lane_counts: not a CUDA device");
  constexpr Dtype dtype = Dtype::int32;
  constexpr Accumulate acc = Accumulate::wide;
  const HostArray input = make_input(dtype, plan.n, plan.seed);
  const Expected expected = expect(input, OpKind::sum, acc);
  gallery::LaunchArgs shape = launch_shape(plan);
  shape.dtype = dtype;
  shape.op = OpKind::sum;
  shape.accumulate = acc;
  KernelLaunch kernel(e, shape, device, input, /*keep_pristine=*/false);
  const std::size_t acc_bytes = kernel.footprint().acc_bytes;
  Buffer counters(device, sizeof(analysis::GpuProbeCounters));
  device.fill(counters.get(), 0, sizeof(analysis::GpuProbeCounters));
  device.fill(kernel.result(), 0xFF, acc_bytes);
  device.synchronize();

  {
    const Detach detach;
    gallery::cuda_probes_attach(static_cast<analysis::GpuProbeCounters*>(counters.get()));
    launch(kernel.args());
    device.synchronize();
  }
  auto raw = std::make_unique<analysis::GpuProbeCounters>();
  device.download(raw.get(), counters.get(), sizeof(analysis::GpuProbeCounters));
  std::vector<unsigned char> got(acc_bytes);
  device.download(got.data(), kernel.result(), acc_bytes);
  const Verdict v = judge(expected, got.data());
  if (row_out) {
    row_out->id = e.id;
    row_out->name = e.name;
    row_out->family = e.family;
    row_out->n = plan.n;
    row_out->block = plan.block;
    row_out->result = v.result;
    row_out->expected = expected.text;
    row_out->ok = v.ok;
    row_out->status = v.ok ? "ok" : "MISMATCH";
    row_out->note = "instrumented build, int32 summed in int64";
  }
  if (irregular) *irregular = raw->irregular;
  return analysis::counts_from_gpu(*raw);
}

ExplainReport explain_cuda(const Plan& plan, Device& device) {
  validate(plan, device);
  const gallery::Entry& e = *plan.kernels.front();
  ExplainReport report;
  report.plan = plan;
  report.plan.timed = false;
  report.plan.flush_l2 = false;
  report.plan.measure_ceiling = false;
  report.backend = Backend::cuda;
  report.device = device.info();
  GpuExplain gpu;
  gpu.device = device.info();
  {
    LaunchLog log;
    const RunReport r = run(report.plan, device);  // the timed build, one verified launch
    report.row = r.rows.front();
    for (const LaunchRecord& rec : log.records()) gpu.launches.push_back(kernel_resources(rec));
  }
  if (gallery::cuda_probed_launcher(e.id)) {
    gpu.lanes = instrumented_lane_counts(report.plan, device, &gpu.instrumented_row, &gpu.irregular_probes);
    gpu.instrumented = true;
  }
  if (plan.n <= kSimtCompareMaxN && gallery::launcher(e, Backend::simt)) {
    ExplainReport simt = explain(plan);
    report.counts = simt.counts;
    report.simt_ran = true;
    if (gpu.instrumented) {
      gpu.simt_compared = true;
      gpu.lanes_equal = same_lane_counts(simt.counts, gpu.lanes);
    }
  }
  report.probed = gpu.instrumented ? !gpu.lanes.steps.empty() : !report.counts.steps.empty();
  report.gpu = std::move(gpu);
  return report;
}

}  // namespace rl::lab
