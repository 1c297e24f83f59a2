#pragma once
// Family "nested": dynamic parallelism (seed 002_01fa9b2a59f3b551.txt, "动态并行"; the nested
// reduction is Professional CUDA C Programming §3.6.2, the section seed 002 summarises with its
// nestedHelloWorld). A kernel launches the next level of the reduction from the device.
//
// gpuRecursiveReduce2 — the book's last nested variant: every level folds each block's segment
// in half, in place in global memory, and thread 0 of block 0 launches the next level (same
// grid, half the threads, half the stride); the level with stride 1 writes each segment's value
// as a partial, and the shared final pass (final_pass.cuh) reduces the partials.
//
// Rewritten for CUDA 13 (CDP2): device-side cudaDeviceSynchronize() no longer exists, and the
// book relied on it (and on implicit parent/child ordering) so that a level saw the previous
// one's writes. Here the child level is a *tail launch* (RL_TAIL_LAUNCH, stream
// cudaStreamTailLaunch): it starts only after the whole launching grid has finished, which is
// exactly the grid-wide barrier the next level needs; one launch per grid, so the level count
// (log2(blockDim)+1, at most 11) stays far below the nesting limit (24). The host's stream
// treats the first grid as finished only when its whole chain has, so the final pass that the
// launcher enqueues next sees the partials. The SIMT runtime implements the same tail-launch
// rule. Segments are 2*block elements (block = the threads of the first level, as for every
// other entry); tails: a partner at or beyond n is not read.
//
// Still slow: log2(block)+1 dependent grid launches from the device, each level a full grid of
// ever smaller blocks (the last levels run blocks of 1..16 threads); every level round-trips
// through global memory. The book measures the nested versions far slower than the flat ones;
// dynamic parallelism pays off for irregular, data-dependent work, not for a regular tree.
//
// Built with -rdc=true and linked with cudadevrt, in its own CMake target, so that the rest of
// the gallery is compiled without relocatable device code.
#include <vector>

#include "gallery/common.cuh"
#include "gallery/dispatch.cuh"
#include "gallery/final_pass.cuh"

namespace rl::gallery::inline RL_GALLERY_BACKEND {

// One template parameter (the op; its value_type is the element type) so that the kernel's name
// has no comma and passes through the RL_TAIL_LAUNCH macro as one argument.
template <class Op>
__global__ void gpuRecursiveReduce2(rl::gmem<typename Op::value_type> g_idata,
                                    rl::gmem<typename Op::value_type> g_odata, std::size_t n,
                                    unsigned iStride, std::size_t iDim) {
  using T = typename Op::value_type;
  const Op op;
  const std::size_t segment = static_cast<std::size_t>(blockIdx.x) * iDim;
  rl::gmem<T> idata = g_idata + segment;
  const unsigned tid = threadIdx.x;

  // stop condition: the last level writes the segment's value
  if (iStride == 1) {
    if (tid == 0) {
      T v = idata[0];
      if (segment + 1 < n) v = op(v, idata[1]);
      g_odata[blockIdx.x] = v;
    }
    return;  // no barrier anywhere in this kernel
  }

  // in-place fold of the segment's first 2*iStride elements into its first iStride
  if (segment + tid + iStride < n) idata[tid] = op(idata[tid], idata[tid + iStride]);

  // one child per grid: the next level, after this whole grid (tail launch: no device sync)
  if (tid == 0 && blockIdx.x == 0)
    RL_TAIL_LAUNCH(gpuRecursiveReduce2<Op>, gridDim.x, iStride / 2, g_idata, g_odata, n,
                   iStride / 2, iDim);
}

template <class In, class Acc, class Op>
void launch_gpuRecursiveReduce2(const LaunchArgs& a) {
  require_pow2_block(a, "gpuRecursiveReduce2");
  const std::size_t iDim = 2 * static_cast<std::size_t>(a.block);
  const std::size_t blocks = ceil_div(a.n, iDim);
  rl::launch(gpuRecursiveReduce2<Op>, config(a, blocks, a.block, 0, "gpuRecursiveReduce2"),
             dev<Acc>(a.input), dev<Acc>(a.scratch), a.n, a.block, iDim);
  final_pass<Acc, Op>(a, blocks);
}

// The family's entries, each with its launcher (bound once per backend from the family list
// in gallery/CMakeLists.txt).
inline std::vector<Binding> nested_bindings() {
  return {
      RL_GALLERY_BIND(launch_gpuRecursiveReduce2, {
          .id = "nested",
          .name = "gpuRecursiveReduce2",
          .family = "nested",
          .seed = "002 §3.3 (Professional CUDA C 3.6.2)",
          .technique = "nested reduction: each level folds every 2*block segment in half in place, and thread 0 "
                       "of block 0 tail-launches the next level from the device (CUDA 13 CDP2: the tail launch "
                       "replaces device-side cudaDeviceSynchronize)",
          .still_slow = "log2(block)+1 dependent device-side grid launches, the last ones of 1..16-thread blocks; "
                        "every level round-trips through global memory",
          .final_pass = "the last level writes one partial per 2*block segment into scratch, then finalPass "
                        "(final_pass.cuh) in fixed order",
          .constraints = {.items_per_thread = 2, .in_place = true},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<2>,
          .independent_loads = 2,
      }),
  };
}

}  // namespace rl::gallery::inline RL_GALLERY_BACKEND
