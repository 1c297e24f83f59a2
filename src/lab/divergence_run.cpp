#include "lab/divergence_run.hpp"

#include "analysis/recorder.hpp"
#include "gallery/demos.cuh"

namespace rl::lab {

std::optional<std::uint64_t> executed_boundary_divergence(analysis::Extent2 extent, analysis::Extent2 block) {
  const std::uint64_t elements = extent.x * extent.y;
  if (elements > kMaxExecutedExtent) return std::nullopt;
  void* out = simt::device_malloc(elements);
  try {
    analysis::Recorder recorder(static_cast<unsigned>(block.x * block.y));
    const dim3 b(static_cast<unsigned>(block.x), static_cast<unsigned>(block.y));
    const dim3 g(static_cast<unsigned>((extent.x + block.x - 1) / block.x),
                 static_cast<unsigned>((extent.y + block.y - 1) / block.y));
    rl::launch(gallery::boundaryCheck2D<unsigned char>, rl::LaunchConfig{g, b, 0, nullptr, "boundaryCheck2D"},
               static_cast<unsigned char*>(out), static_cast<unsigned>(extent.x), static_cast<unsigned>(extent.y));
    simt::device_free(out);
    return recorder.counts().totals.divergent_warps;
  } catch (...) {
    simt::device_free(out);
    throw;
  }
}

}  // namespace rl::lab
