#pragma once
// reducelab::reduce on the GPU: check the arguments, find the workspace, size the grid, launch
// reduceChunks once. nvcc only. The library compiles the built-in types and operations
// (device_reduce_*.cu); a program with its own operation includes reducelab/reduce.cuh, which
// includes this file.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "reducelab/detail/agent_exact.cuh"
#include "reducelab/detail/exact_half.cuh"
#include "reducelab/detail/exact_wide.cuh"
#include "reducelab/detail/agent_order_free.cuh"
#include "reducelab/detail/agent_reduce.cuh"
#include "reducelab/detail/launch.cuh"
#include "reducelab/detail/workspace.hpp"
#include "reducelab/reduce.hpp"

namespace reducelab {
namespace detail {

// How reduceOrderFree in one of its shapes (agent_order_free.cuh: kLoads vectors per thread per
// unit) cuts n elements: a block per unit, up to as many as the GPU holds at once (or the grid a
// test forces).
template <class T, class Sem, unsigned kLoads, bool kContiguous>
Status order_free_shape(const T* input, std::uint64_t n, const Options& options, int device, int sms,
                        FreeShape* shape) {
  int per_sm = 0;
  if (Status s = resident_blocks<reduceOrderFree<T, Sem, kLoads, kContiguous>>(device, &per_sm); !s) return s;
  const std::uint64_t slots =
      std::clamp<std::uint64_t>(options.grid != 0 ? options.grid : std::uint64_t(sms) * per_sm, 1, kPartialSlots);
  *shape = free_shape<T>(n, input, slots, kLoads);
  return {};
}

// reduceOrderFree in one of its shapes, cut as order_free_shape cut it.
template <class T, class Sem, unsigned kLoads, bool kContiguous>
Status launch_order_free(const T* input, const FreeShape& shape, typename Sem::Out* output, stream_t stream,
                         const Options& options, const Workspace& ws, int device) {
  constexpr auto kernel = reduceOrderFree<T, Sem, kLoads, kContiguous>;
  static_assert(kPostWords<typename Sem::Acc> * 8 * kPartialSlots <= kPostBytes, "a post larger than its slot");
  unsigned limit = 1;  // a small input is one cluster (cluster.cuh)
  if (Status s = cluster_limit<kernel>(device, &limit); !s) return s;
  const unsigned cluster = one_cluster(shape.grid, limit, options.grid != 0);
  const cudaError_t e =
      launch_kernel_clustered(kernel, shape.grid, cluster, stream, input, shape, ws.posts, ws.ticket, output);
  if (e != cudaSuccess) return cuda_status(e, "launching reduceOrderFree");
  return {};
}
template <class T, class Sem, unsigned kLoads, bool kContiguous>
Status launch_order_free(const T* input, std::uint64_t n, typename Sem::Out* output, stream_t stream,
                         const Options& options, const Workspace& ws, int device, int sms) {
  FreeShape shape;
  if (Status s = order_free_shape<T, Sem, kLoads, kContiguous>(input, n, options, device, sms, &shape); !s) return s;
  return launch_order_free<T, Sem, kLoads, kContiguous>(input, shape, output, stream, options, ws, device);
}

// An exact sum or mean of halves (exact_half.cuh): the 64-bit accumulator where no block of the
// launch folds more elements than it holds (the collector adds the blocks' sums in 128 bits), else
// the 128-bit one; 4 vectors a thread per unit on every GPU (on an H100 the 8-vector shape was
// slower at every size, bench/half_probe; the order-free kernel's large shape was measured on an
// H200 for min and max only).
template <class T, bool kMean>
Status launch_exact_halves(const T* input, std::uint64_t n, typename ExactHalfSum64<kMean>::Out* output,
                           stream_t stream, const Options& options, const Workspace& ws, int device, int sms) {
  using Narrow = ExactHalfSum64<kMean>;
  FreeShape shape;
  if (Status s = order_free_shape<T, Narrow, kFreeLoads, false>(input, n, options, device, sms, &shape); !s) return s;
  if (most_per_block<T>(shape, kFreeLoads) <= Narrow::kMaxElements)
    return launch_order_free<T, Narrow, kFreeLoads, false>(input, shape, output, stream, options, ws, device);
  return launch_order_free<T, ExactHalfSum128<kMean>, kFreeLoads, false>(input, n, output, stream, options, ws,
                                                                         device, sms);
}

// reduceOrderFree in the shape the size and the GPU call for (free_large: the large shape from
// 2^24 elements of up to 4 bytes on a GPU with wide memory, from 2^27 for 8-byte ones).
template <class T, class Sem>
Status launch_order_free_sized(const T* input, std::uint64_t n, typename Sem::Out* output, stream_t stream,
                               const Options& options, const Workspace& ws, int device, int sms) {
  bool wide = false;
  if (Status s = wide_memory(device, &wide); !s) return s;
  if (free_large<T>(n, wide))
    return launch_order_free<T, Sem, kLargeLoads<T>, kLargeContiguous<T>>(input, n, output, stream, options, ws,
                                                                          device, sms);
  return launch_order_free<T, Sem, kFreeLoads, false>(input, n, output, stream, options, ws, device, sms);
}

// The grid of an exact-sum kernel (agent_exact.cuh) whose tiles hold `tile` elements: a block per
// tile, up to as many as the GPU holds at once (or the grid a test forces).
template <auto kKernel>
Status exact_grid(std::uint64_t n, std::uint64_t tile, const Options& options, int device, int sms, unsigned* grid) {
  int per_sm = 0;
  if (Status s = resident_blocks<kKernel>(device, &per_sm); !s) return s;
  const std::uint64_t tiles = (n + tile - 1) / tile;
  const std::uint64_t slots = options.grid != 0 ? options.grid : std::uint64_t(sms) * per_sm;
  *grid = static_cast<unsigned>(std::clamp<std::uint64_t>(std::min(tiles, slots), 1, 1u << 20));
  return {};
}

template <class T, class Op>
Status launch_reduce(const T* input, std::uint64_t n, result_t<T, Op>* output, stream_t stream,
                     const Options& options, Workspace* used = nullptr) {
  using Sem = semantics_t<T, Op>;
  using Acc = typename Sem::Acc;
  static_assert(sizeof(Acc) <= kPartialSlotBytes, "accumulator larger than a workspace slot");
  static_assert(sizeof(typename Sem::Out) <= kPartialSlotBytes, "result larger than a workspace slot");
  if (output == nullptr) return Status(Errc::invalid_argument, "reduce: output is null");
  if (Status s = check_input<Op>(input, n); !s) return s;

  int device = 0, sms = 0, per_sm = 0;
  if (Status s = current_sm_count(&device, &sms); !s) return s;
  Workspace ws;
  if (Status s = workspace_for(stream, &ws); !s) return s;
  if (used != nullptr) *used = ws;

  if constexpr (exact_sum_v<T, Op>) {
    if constexpr (exact_as_integer_v<T, Op>) {  // halves: an integer, any split (exact_half.cuh)
      constexpr bool kMean = std::is_same_v<Op, op::mean>;
      if (options.deterministic && free_shape_fits<T>(input))
        return launch_exact_halves<T, kMean>(input, n, output, stream, options, ws, device, sms);
    }
    if constexpr (exact_as_wide_v<T, Op>) {  // float and bf16, one tile to 2^20: one wide integer, any split (exact_wide.cuh)
      using Wide = ExactWideSum<T, std::is_same_v<Op, op::mean>>;
      if (options.deterministic && free_shape_fits<T>(input) && exact_wide_taken<T>(n))
        return launch_order_free<T, Wide, kFreeLoads, false>(input, n, output, stream, options, ws, device, sms);
    }
    if (options.deterministic) {  // exact: the digits in the workspace, any grid
      using Out = result_t<T, Op>;
      constexpr auto kernel = reduceExact<T, Out, std::is_same_v<Op, op::mean>>;
      constexpr auto small = reduceExact<T, Out, std::is_same_v<Op, op::mean>, true>;
      const unsigned flags = reinterpret_cast<std::uintptr_t>(input) % 16 == 0 ? kAligned : 0u;
      unsigned grid = 1;
      if constexpr (kHasExactMidShape<T>) {
        if (exact_mid_shape<T>(n)) {  // 16-bit elements, 2^18 to 2^25: smaller tiles (agent_exact.cuh)
          constexpr auto mid =
              reduceExact<T, Out, std::is_same_v<Op, op::mean>, false, kExactMidLoads, kExactMidBlocksPerSM>;
          if (Status s = exact_grid<mid>(n, kExactMidTile<T>, options, device, sms, &grid); !s) return s;
          const cudaError_t e = launch_kernel(mid, grid, stream, input, n, flags, ws.exact, ws.ticket, output);
          if (e != cudaSuccess) return cuda_status(e, "launching reduceExact");
          return {};
        }
      }
      if (Status s = exact_grid<kernel>(n, Shape<T>::kTile, options, device, sms, &grid); !s) return s;
      const std::uint64_t tiles = (n + Shape<T>::kTile - 1) / Shape<T>::kTile;
      // One tile per block in one block or one cluster: the small launch (agent_exact.cuh).
      unsigned limit = 1;
      if (Status s = cluster_limit<small>(device, &limit); !s) return s;
      const unsigned cluster = tiles <= grid ? one_cluster(grid, limit, options.grid != 0) : 1u;
      const bool one_block = tiles <= 1 && options.grid == 0;
      const cudaError_t e =
          cluster > 1 || one_block
              ? launch_kernel_clustered(small, grid, cluster, stream, input, n, flags, ws.exact, ws.ticket, output)
              : launch_kernel(kernel, grid, stream, input, n, flags, ws.exact, ws.ticket, output);
      if (e != cudaSuccess) return cuda_status(e, "launching reduceExact");
      return {};
    }
  }
  if constexpr (Sem::order_free) {
    if (free_shape_fits<T>(input))  // any split gives the same bits: the fastest one
      return launch_order_free_sized<T, Sem>(input, n, output, stream, options, ws, device, sms);
  }
  if (Status s = resident_blocks<reduceChunks<T, Sem>>(device, &per_sm); !s) return s;

  // The persistent grid: as many blocks as the GPU holds at once, unless a test forces another.
  std::uint64_t slots = options.grid != 0 ? options.grid : std::uint64_t(sms) * per_sm;
  slots = std::clamp<std::uint64_t>(slots, 1, kPartialSlots);
  const LaunchShape shape = launch_shape<T, Sem>(n, slots, options.deterministic, input);
  const cudaError_t e = launch_kernel(reduceChunks<T, Sem>, shape.grid, stream, input, shape.plan, shape.flags,
                                      static_cast<Acc*>(ws.partials), ws.ticket, static_cast<Acc*>(ws.accumulator),
                                      output);
  if (e != cudaSuccess) return cuda_status(e, "launching reduceChunks");
  return {};
}

}  // namespace detail

template <class T, class Op>
Status reduce(const T* input, std::uint64_t n, Op, result_t<T, Op>* output, stream_t stream,
              const Options& options) {
  return detail::launch_reduce<T, Op>(input, n, output, stream, options);
}

template <class T, class Op>
Result<result_t<T, Op>> reduce_to_host(const T* input, std::uint64_t n, Op, stream_t stream) {
  using R = result_t<T, Op>;
  Result<R> r;
  detail::Workspace ws;
  if (Status s = detail::workspace_for(stream, &ws); !s) {
    r.status = s;
    return r;
  }
  r.status = detail::launch_reduce<T, Op>(input, n, static_cast<R*>(ws.result), stream, Options{});
  if (!r.status) return r;
  cudaError_t e = cudaMemcpyAsync(&r.value, ws.result, sizeof(R), cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) r.status = detail::cuda_status(e, "reading the result back");
  return r;
}

}  // namespace reducelab

// Explicit instantiation of one (type, op) for the library's own .cu files.
#define REDUCELAB_INSTANTIATE_(T, OP)                                                             \
  template ::reducelab::Status reducelab::reduce<T, reducelab::op::OP>(                           \
      const T*, std::uint64_t, reducelab::op::OP, reducelab::result_t<T, reducelab::op::OP>*,     \
      reducelab::stream_t, const reducelab::Options&);                                           \
  template reducelab::Result<reducelab::result_t<T, reducelab::op::OP>>                           \
  reducelab::reduce_to_host<T, reducelab::op::OP>(const T*, std::uint64_t, reducelab::op::OP,     \
                                                  reducelab::stream_t);
#define REDUCELAB_INSTANTIATE_TYPE(T) REDUCELAB_FOR_EACH_OP(REDUCELAB_INSTANTIATE_, T)
