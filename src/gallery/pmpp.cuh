#pragma once
// Family "pmpp": Programming Massively Parallel Processors ch. 10, reduction and minimizing
// divergence (seed 004_4d66d791ebe812c9.txt).
//
// The book's first three kernels (§10.3, §10.4, §10.6) reduce 2*blockDim.x elements with ONE
// block. To compare them with the rest at the same n, the gallery launches one block per segment
// of 2*blockDim.x elements — block b runs the book's kernel on input + b*2*blockDim.x — and each
// block writes its segment's value as a partial; the shared final pass (final_pass.cuh) then
// reduces the partials. §10.7 and §10.8 are multi-block already and combine with an atomic into
// the result (rl::atomic_combine).
//
// Corrections to the seed:
//   - SimpleReductionKernel: `stride = blockDim.x` (an assignment) as loop condition becomes
//     `stride <= blockDim.x`, and `threadIdx.x % 2 == 0` becomes `threadIdx.x % stride == 0`.
//   - SegmentedSumReductionKernel: `input[t + blockDim.x]` dropped both the segment offset i and
//     the first half; it now loads input[i] and input[i + blockDim.x]. `atomicAdd(&output, ...)`
//     took the address of the pointer; it now combines into *output.
//   - CoarsenedSumReductionKernel: a block owns 2*COARSE_FACTOR tiles, the seed summed only
//     COARSE_FACTOR of them (the book's loop runs tile < COARSE_FACTOR*2).
//   - Every kernel: any n (partners past n are not read; loads past n give the identity),
//     64-bit indices, generic op and types, BLOCK_DIM replaced by dynamic shared memory.
#include "gallery/atomic.cuh"
#include <vector>

#include "gallery/common.cuh"
#include "gallery/dispatch.cuh"
#include "gallery/final_pass.cuh"

namespace rl::gallery::inline RL_GALLERY_BACKEND {

namespace detail {
// The op's identity or op(input[j], input[j + stride]) over what exists, converted to Acc.
template <class In, class Acc, class Op>
__device__ Acc load_pair(rl::gmem<const In> input, std::size_t j, std::size_t stride, std::size_t n,
                         const Op& op) {
  Acc v = Op::identity();
  if (j < n) {
    In x = input[j];
    v = static_cast<Acc>(x);
  }
  if (j + stride < n) {
    In y = input[j + stride];
    v = op(v, static_cast<Acc>(y));
  }
  return v;
}

// §10.6's tree in shared memory: barrier first, then the step, halving the stride.
template <class Acc, class Op>
__device__ void shared_tree(rl::smem<Acc> input_s, const Op& op) {
  const unsigned t = threadIdx.x;
  for (unsigned stride = blockDim.x / 2; stride >= 1; stride /= 2) {
    __syncthreads();  // all partial sums of the previous step are in shared memory
    if (t < stride) {
      const rl::probe::Step probe(stride);
      input_s[t] = op(input_s[t], input_s[t + stride]);
    }
  }
}
}  // namespace detail

// SimpleReductionKernel — §10.3: thread t owns element 2t of its segment; at each step the
// threads with t % stride == 0 add the element `stride` away, in place in global memory. Still
// slow: control divergence in every warp from the second step (PMPP: 35% of the execution
// resources do useful work at 256 elements), and memory divergence: a warp's accesses spread
// over more and more segments, every step through global memory.
template <class T, class Op>
__global__ void SimpleReductionKernel(rl::gmem<T> input, rl::gmem<T> output, std::size_t n) {
  const Op op;
  const std::size_t segment = static_cast<std::size_t>(blockIdx.x) * blockDim.x * 2;
  const std::size_t valid = owned(n, segment, 2 * static_cast<std::size_t>(blockDim.x));
  rl::gmem<T> in = input + segment;
  const unsigned i = threadIdx.x * 2;
  for (unsigned stride = 1; stride <= blockDim.x; stride *= 2) {
    if (threadIdx.x % stride == 0 && i + stride < valid) {
      const rl::probe::Step probe(stride);
      in[i] = op(in[i], in[i + stride]);
    }
    __syncthreads();  // partial sums written before the next step reads them
  }
  if (threadIdx.x == 0) output[blockIdx.x] = in[0];
}

// ConvergentSumReductionKernel — §10.4/10.5: thread t owns element t; the stride starts at
// blockDim.x and halves, so the active threads stay packed at the front: whole warps retire
// together (66% utilisation at 256 elements) and each warp's accesses are coalesced. Still slow:
// every step round-trips through global memory; the last five steps run one partly active warp.
template <class T, class Op>
__global__ void ConvergentSumReductionKernel(rl::gmem<T> input, rl::gmem<T> output, std::size_t n) {
  const Op op;
  const std::size_t segment = static_cast<std::size_t>(blockIdx.x) * blockDim.x * 2;
  const std::size_t valid = owned(n, segment, 2 * static_cast<std::size_t>(blockDim.x));
  rl::gmem<T> in = input + segment;
  const unsigned i = threadIdx.x;
  for (unsigned stride = blockDim.x; stride >= 1; stride /= 2) {
    if (threadIdx.x < stride && i + stride < valid) {
      const rl::probe::Step probe(stride);
      in[i] = op(in[i], in[i + stride]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) output[blockIdx.x] = in[0];
}

// SharedMemoryReductionKernel — §10.6: each thread loads two elements (the first step) and the
// rest of the tree runs in shared memory: global traffic drops to one read of the input and one
// write per block (N/32 + 1 requests). Still slow: one block per 2*blockDim.x elements, so for a
// large n many short blocks each end in a long, mostly idle tree; a partials pass follows.
template <class In, class Acc, class Op>
__global__ void SharedMemoryReductionKernel(rl::gmem<const In> input, rl::gmem<Acc> output, std::size_t n) {
  const Op op;
  RL_DYNAMIC_SHARED(Acc, input_s);
  const std::size_t segment = static_cast<std::size_t>(blockIdx.x) * blockDim.x * 2;
  const unsigned t = threadIdx.x;
  input_s[t] = detail::load_pair<In, Acc>(input, segment + t, blockDim.x, n, op);  // first step
  detail::shared_tree(input_s, op);
  if (t == 0) output[blockIdx.x] = input_s[0];  // the segment's value (the book: input[0])
}

// SegmentedSumReductionKernel — §10.7: hierarchical reduction for arbitrary length; every block
// reduces its segment of 2*blockDim.x elements as §10.6 and combines it into the single result
// with an atomic (atomicAdd for sum). Still slow: one atomic per block serialises at the result
// (cheap for ints, and the order of float atomics varies run to run: float sums are not
// bit-reproducible); each thread still loads only two elements.
template <class In, class Acc, class Op>
__global__ void SegmentedSumReductionKernel(rl::gmem<const In> input, rl::gmem<Acc> output, std::size_t n) {
  const Op op;
  RL_DYNAMIC_SHARED(Acc, input_s);
  const std::size_t segment = static_cast<std::size_t>(blockIdx.x) * blockDim.x * 2;
  const std::size_t i = segment + threadIdx.x;
  const unsigned t = threadIdx.x;
  input_s[t] = detail::load_pair<In, Acc>(input, i, blockDim.x, n, op);
  detail::shared_tree(input_s, op);
  if (t == 0) {
    Acc total = input_s[0];
    rl::atomic_combine(op, output, total);
  }
}

// CoarsenedSumReductionKernel<COARSE_FACTOR> — §10.8: thread coarsening; each block owns
// 2*COARSE_FACTOR tiles of blockDim.x elements, each thread first folds its element of every
// tile serially in a register (no barriers), then one shared-memory tree and one atomic per
// block. Fewer blocks, more work per thread, less tree overhead. Still slow: the serial loads
// of one thread are blockDim.x elements apart (coalesced across the warp, but one 4-byte load
// per thread per tile, no vector loads); float atomics make float sums vary run to run.
template <unsigned COARSE_FACTOR, class In, class Acc, class Op>
__global__ void CoarsenedSumReductionKernel(rl::gmem<const In> input, rl::gmem<Acc> output, std::size_t n) {
  const Op op;
  RL_DYNAMIC_SHARED(Acc, input_s);
  const std::size_t segment = static_cast<std::size_t>(blockIdx.x) * COARSE_FACTOR * blockDim.x * 2;
  const std::size_t i = segment + threadIdx.x;
  const unsigned t = threadIdx.x;
  Acc sum = Op::identity();
  for (unsigned tile = 0; tile < COARSE_FACTOR * 2; ++tile) {  // partial sums accumulated independently
    const std::size_t j = i + static_cast<std::size_t>(tile) * blockDim.x;
    if (j < n) {
      In x = input[j];
      sum = op(sum, static_cast<Acc>(x));
    }
  }
  input_s[t] = sum;
  detail::shared_tree(input_s, op);
  if (t == 0) {
    Acc total = input_s[0];
    rl::atomic_combine(op, output, total);
  }
}

// --- launchers ---

#define RL_GALLERY_PMPP_INPLACE_LAUNCHER(kernel, launcher)                                     \
  template <class In, class Acc, class Op>                                                     \
  void launcher(const LaunchArgs& a) {                                                         \
    require_pow2_block(a, #kernel);                                                            \
    const std::size_t blocks = ceil_div(a.n, 2 * static_cast<std::size_t>(a.block));           \
    rl::launch(kernel<Acc, Op>, config(a, blocks, a.block, 0, #kernel), dev<Acc>(a.input),      \
               dev<Acc>(a.scratch), a.n);                                                      \
    final_pass<Acc, Op>(a, blocks);                                                            \
  }
RL_GALLERY_PMPP_INPLACE_LAUNCHER(SimpleReductionKernel, launch_SimpleReductionKernel)
RL_GALLERY_PMPP_INPLACE_LAUNCHER(ConvergentSumReductionKernel, launch_ConvergentSumReductionKernel)
#undef RL_GALLERY_PMPP_INPLACE_LAUNCHER

template <class In, class Acc, class Op>
void launch_SharedMemoryReductionKernel(const LaunchArgs& a) {
  require_pow2_block(a, "SharedMemoryReductionKernel");
  const std::size_t blocks = ceil_div(a.n, 2 * static_cast<std::size_t>(a.block));
  rl::launch(SharedMemoryReductionKernel<In, Acc, Op>,
             config(a, blocks, a.block, a.block * sizeof(Acc), "SharedMemoryReductionKernel"),
             dev_const<In>(a.input), dev<Acc>(a.scratch), a.n);
  final_pass<Acc, Op>(a, blocks);
}

template <class In, class Acc, class Op>
void launch_SegmentedSumReductionKernel(const LaunchArgs& a) {
  require_pow2_block(a, "SegmentedSumReductionKernel");
  const std::size_t blocks = ceil_div(a.n, 2 * static_cast<std::size_t>(a.block));
  init_identity<Acc, Op>(a);
  rl::launch(SegmentedSumReductionKernel<In, Acc, Op>,
             config(a, blocks, a.block, a.block * sizeof(Acc), "SegmentedSumReductionKernel"),
             dev_const<In>(a.input), dev<Acc>(a.result), a.n);
}

inline constexpr unsigned kDefaultCoarseFactor = 2;

template <unsigned COARSE_FACTOR, class In, class Acc, class Op>
void launch_coarsened(const LaunchArgs& a) {
  const std::size_t blocks = ceil_div(a.n, 2 * static_cast<std::size_t>(COARSE_FACTOR) * a.block);
  init_identity<Acc, Op>(a);
  rl::launch(CoarsenedSumReductionKernel<COARSE_FACTOR, In, Acc, Op>,
             config(a, blocks, a.block, a.block * sizeof(Acc), "CoarsenedSumReductionKernel"),
             dev_const<In>(a.input), dev<Acc>(a.result), a.n);
}

// LaunchArgs::param is COARSE_FACTOR (0: the book's 2); instantiated for 1, 2, 4 and 8.
template <class In, class Acc, class Op>
void launch_CoarsenedSumReductionKernel(const LaunchArgs& a) {
  require_pow2_block(a, "CoarsenedSumReductionKernel");
  switch (a.param == 0 ? kDefaultCoarseFactor : a.param) {
    case 1: return launch_coarsened<1, In, Acc, Op>(a);
    case 2: return launch_coarsened<2, In, Acc, Op>(a);
    case 4: return launch_coarsened<4, In, Acc, Op>(a);
    case 8: return launch_coarsened<8, In, Acc, Op>(a);
  }
  throw std::invalid_argument("CoarsenedSumReductionKernel: coarse factor " + std::to_string(a.param) +
                              " is not instantiated (1, 2, 4 or 8)");
}

// The family's entries, each with its launcher (bound once per backend from the family list
// in gallery/CMakeLists.txt).
inline std::vector<Binding> pmpp_bindings() {
  return {
      RL_GALLERY_BIND(launch_SimpleReductionKernel, {
          .id = "pmpp-simple",
          .name = "SimpleReductionKernel",
          .family = "pmpp",
          .seed = "004 §10.3",
          .technique = "the reduction tree of one block in place: thread t owns element 2t and works while t % "
                       "stride == 0",
          .still_slow = "control divergence in every warp from the second step (35% of execution resources useful "
                        "at 256 elements) and memory divergence; every step through global memory",
          .final_pass = kFinalSegments,
          .constraints = {.items_per_thread = 2, .in_place = true},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<2>,
          .independent_loads = 2,
      }),
      RL_GALLERY_BIND(launch_ConvergentSumReductionKernel, {
          .id = "pmpp-convergent",
          .name = "ConvergentSumReductionKernel",
          .family = "pmpp",
          .seed = "004 §10.4",
          .technique = "the stride starts at blockDim.x and halves: active threads stay packed at the front, "
                       "whole warps retire together, accesses coalesce",
          .still_slow = "every step round-trips through global memory; the last five steps run one partly active "
                        "warp",
          .final_pass = kFinalSegments,
          .constraints = {.items_per_thread = 2, .in_place = true},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<2>,
          .independent_loads = 2,
      }),
      RL_GALLERY_BIND(launch_SharedMemoryReductionKernel, {
          .id = "pmpp-shared",
          .name = "SharedMemoryReductionKernel",
          .family = "pmpp",
          .seed = "004 §10.6",
          .technique = "the first step adds two loaded elements, the rest of the tree runs in shared memory: one "
                       "global read per element and one write per block",
          .still_slow = "one short block per 2*block elements, each ending in a long, mostly idle tree; a "
                        "partials pass follows",
          .final_pass = kFinalSegments,
          .constraints = {.items_per_thread = 2},
          .bytes_read = read_once,
          .scratch_bytes = partials_scratch<2>,
          .independent_loads = 2,
      }),
      RL_GALLERY_BIND(launch_SegmentedSumReductionKernel, {
          .id = "pmpp-segmented",
          .name = "SegmentedSumReductionKernel",
          .family = "pmpp",
          .seed = "004 §10.7",
          .technique = "hierarchical reduction for any length: every block reduces its 2*block segment in shared "
                       "memory and combines it into the result with one atomic",
          .still_slow = "one atomic per block serialises at the result; float atomics make float sums vary run to "
                        "run; two elements per thread",
          .final_pass = kFinalAtomic,
          .constraints = {.items_per_thread = 2, .deterministic = false, .float_atomics = true},
          .bytes_read = read_once,
          .scratch_bytes = no_scratch,
          .independent_loads = 2,
      }),
      RL_GALLERY_BIND(launch_CoarsenedSumReductionKernel, {
          .id = "pmpp-coarsened",
          .name = "CoarsenedSumReductionKernel",
          .family = "pmpp",
          .seed = "004 §10.8",
          .technique = "thread coarsening: a block owns 2*COARSE_FACTOR tiles, each thread folds its element of "
                       "every tile in a register before one tree and one atomic",
          .still_slow = "4-byte loads, one per tile per thread; float atomics make float sums vary run to run",
          .final_pass = kFinalAtomic,
          .constraints = {.items_per_thread = 2 * kDefaultCoarseFactor, .deterministic = false, .float_atomics = true},
          .bytes_read = read_once,
          .scratch_bytes = no_scratch,
          .param = "COARSE_FACTOR: 1, 2, 4 or 8 (default 2); a block covers 2*COARSE_FACTOR*block elements",
          .independent_loads = 4,
      }),
  };
}

}  // namespace rl::gallery::inline RL_GALLERY_BACKEND
