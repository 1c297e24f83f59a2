#pragma once
// `reducelab explain`: runs one gallery kernel on the SIMT backend with the probes recording and
// returns its counts per step (analysis/recorder.hpp), verified like a `run` row.
#include <string>

#include "analysis/recorder.hpp"
#include "gallery/registry.hpp"
#include "lab/run.hpp"

namespace rl::lab {

struct ExplainReport {
  Plan plan;            // one kernel
  analysis::Counts counts;
  Row row;              // result, expected, status
  bool probed = false;  // the kernel has probes in its reduction steps
};

// Throws UsageError for a plan `validate` rejects, and for a kernel with no SIMT launcher.
ExplainReport explain(const Plan& plan);

}  // namespace rl::lab
