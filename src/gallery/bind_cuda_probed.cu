// nvcc's instrumented instantiation of the gallery (gallery/probed.hpp): the family headers
// compiled with RL_PROBES_ON_GPU=1, int32 input and int64 sum only, to keep the build short.
#define RL_PROBES_ON_GPU 1

#include <stdexcept>
#include <string>

#include "gallery/dispatch.cuh"

// Every family's table goes through RL_GALLERY_BIND; here it binds one instantiation instead of
// dispatch()'s twelve. The family headers include dispatch.cuh again, which #pragma once skips.
#undef RL_GALLERY_BIND
#define RL_GALLERY_BIND(launcher, ...)                                                      \
  ::rl::gallery::Binding {                                                                  \
    ::rl::gallery::Entry __VA_ARGS__, [](const ::rl::gallery::LaunchArgs& rl_args_) {       \
      ::rl::gallery::require_int32_sum(rl_args_, #launcher);                                \
      launcher<int, long long, ::rl::core::Sum<long long>>(rl_args_);                      \
    }                                                                                       \
  }

namespace rl::gallery::inline RL_GALLERY_BACKEND {
inline void require_int32_sum(const LaunchArgs& a, const char* launcher) {
  if (a.dtype != Dtype::int32 || a.op != OpKind::sum || a.accumulate != Accumulate::wide)
    throw std::invalid_argument(std::string(launcher) + ": the instrumented build is int32 sum (wide) only");
}
}  // namespace rl::gallery::inline RL_GALLERY_BACKEND

#include "gallery/families.inc"         // generated: RL_GALLERY_FOR_EACH_PROBED_FAMILY
#include "gallery/probed.hpp"
#include "gallery/probed_families.inc"  // generated: every family header but the device-launching

namespace rl::gallery {
namespace {
const std::vector<Binding>& probed_bindings() {
  static const std::vector<Binding> all = [] {
    std::vector<Binding> v;
#define RL_GALLERY_APPEND_(family)             \
  for (const Binding& b : family##_bindings()) \
    v.push_back(b);
    RL_GALLERY_FOR_EACH_PROBED_FAMILY(RL_GALLERY_APPEND_)
#undef RL_GALLERY_APPEND_
    return v;
  }();
  return all;
}
}  // namespace

LaunchFn cuda_probed_launcher(std::string_view id) {
  for (const Binding& b : probed_bindings())
    if (b.entry.id == id) return b.launch;
  return nullptr;
}

void cuda_probes_attach(analysis::GpuProbeCounters* device_counters) {
  rl::probe::attach_gpu_counters(device_counters);
}

}  // namespace rl::gallery
