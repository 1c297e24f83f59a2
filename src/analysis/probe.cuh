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
// rl::probe::Accesses(step) attributes a scope's accesses to a step without marking lanes: for
// a step whose work is split by a __syncwarp (read, sync, write), so that the warp counts once.
//
// The instrumented CUDA build (a translation unit compiled with RL_PROBES_ON_GPU=1, see
// gallery/bind_cuda_probed.cu) counts on the GPU instead: at each Step the lowest active lane
// reads __activemask() and adds the warp execution, its __popc lanes, whether it diverged and
// the histogram bin into the counters of analysis/gpu_counters.hpp with atomics. No addresses.
// The timed build never defines RL_PROBES_ON_GPU, so its probes stay empty.
#include "analysis/gpu_counters.hpp"
#include "simt/portable.cuh"

#if RL_SIMT
#include "analysis/recorder.hpp"
#endif

#ifndef RL_PROBES_ON_GPU
#define RL_PROBES_ON_GPU 0
#endif

namespace rl::probe {

#if RL_SIMT
class Step {
 public:
  explicit Step(unsigned step) : recorder_(analysis::Recorder::current()) {
    if (recorder_) [[unlikely]]
      recorder_->enter(::simt::detail::tl_block->linear, ::simt::detail::tl_thread->linear,
                       ::simt::detail::tl_thread->warp, ::simt::detail::tl_thread->lane, step, __activemask());
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

class Accesses {
 public:
  explicit Accesses(unsigned step) : recorder_(analysis::Recorder::current()) {
    if (recorder_) [[unlikely]]
      recorder_->attribute(::simt::detail::tl_block->linear, ::simt::detail::tl_thread->linear, step);
  }
  ~Accesses() {
    if (recorder_) [[unlikely]]
      recorder_->leave(::simt::detail::tl_block->linear, ::simt::detail::tl_thread->linear);
  }
  Accesses(const Accesses&) = delete;
  Accesses& operator=(const Accesses&) = delete;

 private:
  analysis::Recorder* recorder_;
};

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
#elif RL_PROBES_ON_GPU
// Its own inline namespace: the timed and the instrumented builds must never share a symbol.
inline namespace gpu_counting {

// Where the probes count; set from the host (attach_gpu_counters) before an instrumented launch
// and cleared after it. Null: the probes return at once.
__device__ analysis::GpuProbeCounters* g_counters = nullptr;

inline void attach_gpu_counters(analysis::GpuProbeCounters* device_counters) {
  RL_CUDA_CHECK(cudaMemcpyToSymbol(g_counters, &device_counters, sizeof(device_counters)));
}

__device__ __noinline__ void count_step(unsigned step) {
  analysis::GpuProbeCounters* const c = g_counters;
  if (c == nullptr) return;
  const unsigned mask = __activemask();  // the lanes that reached this probe together
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  if (thread % 32 != static_cast<unsigned>(__ffs(mask) - 1)) return;  // one lane counts the warp
  if (step & (step - 1)) {
    atomicAdd(&c->irregular, 1ull);
    return;
  }
  const unsigned slot = step == 0 ? 0u : 32u - static_cast<unsigned>(__clz(step));  // 2^k -> k + 1
  const unsigned lanes = static_cast<unsigned>(__popc(mask));
  const unsigned warp = thread / 32;
  const unsigned live = threads - warp * 32 < 32 ? threads - warp * 32 : 32;
  const unsigned long long block =
      blockIdx.x + static_cast<unsigned long long>(gridDim.x) * (blockIdx.y + static_cast<unsigned long long>(gridDim.y) * blockIdx.z);
  const unsigned long long global_warp = block * ((threads + 31) / 32) + warp;
  auto& s = c->shards[global_warp % analysis::GpuProbeCounters::kShards][slot];
  atomicAdd(&s.executions, 1ull);
  atomicAdd(&s.lanes, static_cast<unsigned long long>(lanes));
  if (lanes < live) atomicAdd(&s.divergent, 1ull);
  atomicAdd(&s.histogram[lanes], 1ull);
  if (global_warp == 0 && c->order[slot] == 0) c->order[slot] = ++c->order_next;
}

struct Step {
  __device__ explicit Step(unsigned step) { count_step(step); }
};
struct Accesses {
  __device__ explicit Accesses(unsigned) {}
};
struct Exclude {
  __device__ Exclude() {}
};
__device__ __forceinline__ void active(unsigned step) { count_step(step); }

}  // namespace gpu_counting
#else
struct Step {
  __device__ explicit Step(unsigned) {}
};
struct Accesses {
  __device__ explicit Accesses(unsigned) {}
};
struct Exclude {
  __device__ Exclude() {}
};
__device__ __forceinline__ void active(unsigned) {}
#endif

}  // namespace rl::probe
