// Without the CUDA backend there is no instrumented GPU build (bind_cuda_probed.cu).
#include "gallery/probed.hpp"

#if !RL_WITH_CUDA
namespace rl::gallery {
LaunchFn cuda_probed_launcher(std::string_view) { return nullptr; }
void cuda_probes_attach(analysis::GpuProbeCounters*) {}
}  // namespace rl::gallery
#endif
