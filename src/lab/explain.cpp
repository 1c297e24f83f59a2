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
  report.plan.timed = false;  // one verified launch: the counts are of exactly one execution
  report.plan.flush_l2 = false;
  {
    analysis::Recorder recorder(plan.block);
    RunReport r = run(report.plan, *device);
    report.row = r.rows.front();
    report.counts = recorder.counts();
  }
  report.probed = !report.counts.steps.empty();
  return report;
}

}  // namespace rl::lab
