#pragma once
// Probes: points a kernel marks so that reducelab can count which lanes of which warps reach
// them (issue "explain"). A kernel writes
//     rl::probe::active(step);
// inside the branch whose divergence matters (the body of a reduction step, a boundary check).
// On the SIMT backend, while a recorder is on (analysis/lanes.hpp), each call sets the calling
// lane's bit in a mask kept per (block, warp, step); with no recorder it is one branch on a
// global flag. The timed CUDA build compiles it to nothing.
#include "simt/portable.cuh"

#if RL_SIMT
#include "analysis/lanes.hpp"
#endif

namespace rl::probe {

#if RL_SIMT
inline void active(unsigned step) {
  if (analysis::LaneRecorder* r = analysis::LaneRecorder::current()) [[unlikely]]
    r->hit(::simt::detail::tl_block->linear, ::simt::detail::tl_thread->warp, ::simt::detail::tl_thread->lane, step);
}
#else
__device__ __forceinline__ void active(unsigned) {}
#endif

}  // namespace rl::probe
