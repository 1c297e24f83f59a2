#include "lab/explain.hpp"

#include "fmt/format.h"
#include "lab/errors.hpp"

namespace rl::lab {

ExplainReport explain(const Plan& plan) {
  auto device = open_simt_device();
  validate(plan, *device);
  const gallery::Entry& e = *plan.kernels.front();
  if (!gallery::launcher(e, Backend::simt))
    throw UsageError(fmt::format("explain {}: {}", e.id,
                                 e.constraints.gpu_only ? "GPU only: " + std::string(e.constraints.gpu_only_reason)
                                                        : std::string("no SIMT launcher")));
  ExplainReport report;
  report.plan = plan;
  report.device = device->info();
  report.plan.timed = false;  // one verified launch: the counts are of exactly one execution
  report.plan.flush_l2 = false;
  {
    analysis::Recorder recorder(plan.block);
    RunReport r = run(report.plan, *device);
    report.row = r.rows.front();
    report.counts = recorder.counts();
    report.trace = recorder.trace(1);
  }
  report.simt_ran = true;
  report.probed = !report.counts.steps.empty();
  return report;
}

bool same_lane_counts(const analysis::Counts& a, const analysis::Counts& b, std::string* why) {
  auto differ = [&](std::string text) {
    if (why) *why = std::move(text);
    return false;
  };
  if (a.steps.size() != b.steps.size())
    return differ(fmt::format("{} steps against {}", a.steps.size(), b.steps.size()));
  for (std::size_t k = 0; k < a.steps.size(); ++k) {
    const auto &x = a.steps[k], &y = b.steps[k];
    const unsigned sx = x.step.value_or(~0u), sy = y.step.value_or(~0u);
    if (sx != sy) return differ(fmt::format("step {} is stride {} against {}", k, sx, sy));
    if (x.active_threads != y.active_threads)
      return differ(fmt::format("stride {}: {} active threads against {}", sx, x.active_threads, y.active_threads));
    if (x.active_warps != y.active_warps)
      return differ(fmt::format("stride {}: {} active warps against {}", sx, x.active_warps, y.active_warps));
    if (x.divergent_warps != y.divergent_warps)
      return differ(fmt::format("stride {}: {} divergent warps against {}", sx, x.divergent_warps, y.divergent_warps));
    if (x.lane_slots != y.lane_slots)
      return differ(fmt::format("stride {}: {} lane slots against {}", sx, x.lane_slots, y.lane_slots));
    for (unsigned w = 0; w <= 32; ++w)
      if (x.lanes_histogram[w] != y.lanes_histogram[w])
        return differ(fmt::format("stride {}: {} warp executions with {} lanes against {}", sx, x.lanes_histogram[w], w,
                                  y.lanes_histogram[w]));
  }
  if (why) why->clear();
  return true;
}

#if !RL_WITH_CUDA
ExplainReport explain_cuda(const Plan&, Device&) {
  throw UsageError("explain --backend cuda: this reducelab was built without the CUDA backend");
}
analysis::Counts instrumented_lane_counts(const Plan&, Device&, Row*, std::uint64_t*) {
  throw UsageError("the instrumented GPU build needs the CUDA backend, which this reducelab was built without");
}
#endif

}  // namespace rl::lab
