#pragma once
// Probes: points a kernel marks so that reducelab can count, per reduction step, which lanes of
// which warps did the step's work and what memory that work touched (`reducelab explain`).
//
//   if (tid % (2 * stride) == 0) {
//     const rl::probe::Step probe(stride);   // first statement of the step's body
//     idata[tid] = op(idata[tid], idata[tid + stride]);
//   }
//
// On the SIMT backend, while a recorder is on (analysis/recorder.hpp), constructing a Step sets
// the calling lane's bit in a mask kept per (block, warp, step), and every global or shared
// access the thread makes until the Step goes out of scope is attributed to that step. With no
// recorder it is one load and branch. In the CUDA build it is an empty object: no cost.
// rl::probe::active(step) marks a point without attributing accesses.
#include "simt/portable.cuh"

#if RL_SIMT
#include "analysis/recorder.hpp"
#endif

namespace rl::probe {

#if RL_SIMT
class Step {
 public:
  explicit Step(unsigned step) : recorder_(analysis::Recorder::current()) {
    if (recorder_) [[unlikely]]
      recorder_->enter(::simt::detail::tl_block->linear, ::simt::detail::tl_thread->linear,
                       ::simt::detail::tl_thread->warp, ::simt::detail::tl_thread->lane, step);
  }
  ~Step() {
    if (recorder_) [[unlikely]]
      recorder_->leave(::simt::detail::tl_block->linear, ::simt::detail::tl_thread->linear);
  }
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;

 private:
  analysis::Recorder* recorder_;
};

inline void active(unsigned step) { const Step probe(step); }

// Marks a whole kernel as bookkeeping the counts leave out (the gallery's final pass over
// partials): its accesses are dropped while it lives.
class Exclude {
 public:
  Exclude() : recorder_(analysis::Recorder::current()) {
    if (recorder_) [[unlikely]]
      recorder_->exclude(::simt::detail::tl_block->linear, ::simt::detail::tl_thread->linear);
  }
  ~Exclude() {
    if (recorder_) [[unlikely]]
      recorder_->leave(::simt::detail::tl_block->linear, ::simt::detail::tl_thread->linear);
  }
  Exclude(const Exclude&) = delete;
  Exclude& operator=(const Exclude&) = delete;

 private:
  analysis::Recorder* recorder_;
};
#else
struct Step {
  __device__ explicit Step(unsigned) {}
};
struct Exclude {
  __device__ Exclude() {}
};
__device__ __forceinline__ void active(unsigned) {}
#endif

}  // namespace rl::probe
