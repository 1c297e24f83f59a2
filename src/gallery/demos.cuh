#pragma once
// Kernels that demonstrate divergence rather than reduce (seed 003, PMPP 4.5). Not registry
// entries: `reducelab divergence` runs them.
#include "analysis/probe.cuh"
#include "gallery/common.cuh"

namespace rl::gallery::inline RL_GALLERY_BACKEND {

// boundaryCheck2D — PMPP 4.5: every thread tests its coordinates against the data's extent
// before working, as any kernel over a picture whose size is not a multiple of the block must.
// The probe inside the branch counts, per warp, the lanes that pass.
template <class T>
__global__ void boundaryCheck2D(rl::gmem<T> out, unsigned width, unsigned height) {
  const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) {
    rl::probe::active(0);
    out[static_cast<std::size_t>(y) * width + x] = T(1);
  }
}

}  // namespace rl::gallery::inline RL_GALLERY_BACKEND
