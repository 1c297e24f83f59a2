#include "core/simt_reduce.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "reducelab/detail/agent_exact.cuh"
#include "reducelab/detail/exact_half.cuh"
#include "reducelab/detail/exact_wide.cuh"
#include "reducelab/detail/agent_order_free.cuh"
#include "reducelab/detail/agent_reduce.cuh"
#include "reducelab/detail/workspace.hpp"
#include "simt/portable.cuh"

namespace reducelab::detail {
namespace {
struct Freer {
  void operator()(void* p) const { simt::device_free(p); }
};
using DeviceBytes = std::unique_ptr<void, Freer>;
DeviceBytes device_bytes(std::size_t bytes) {
  void* p = simt::device_malloc(bytes);
  std::memset(p, 0, bytes);
  return DeviceBytes(p);
}
// The posted results' slots (posted_results.cuh), one set per host thread kept across calls as
// the GPU workspace's are: every launch, whatever its type, must leave them zeroed for the next.
unsigned long long* thread_posts() {
  thread_local DeviceBytes posts = device_bytes(kPostBytes);
  return static_cast<unsigned long long*>(posts.get());
}
}  // namespace

template <class T, class Op>
result_t<T, Op> simt_reduce(const T* host, std::uint64_t n, Op, unsigned grid, unsigned offset,
                            bool deterministic, bool other_shape) {
  using Sem = semantics_t<T, Op>;
  using Acc = typename Sem::Acc;
  using Out = typename Sem::Out;
  const std::size_t bytes = std::max<std::size_t>(1, (n + offset) * sizeof(T));
  DeviceBytes input = device_bytes(bytes), partials = device_bytes(kPartialSlots * sizeof(Acc)),
              ticket = device_bytes(sizeof(unsigned)), accumulator = device_bytes(sizeof(Acc)),
              output = device_bytes(sizeof(Out));
  T* in = static_cast<T*>(input.get()) + offset;
  if (n > 0) std::memcpy(in, host, n * sizeof(T));

  simt::LaunchConfig cfg{};
  cfg.block = dim3(kThreads);
  // reduceOrderFree with semantics S, in the large shape when asked.
  const std::uint64_t slots = std::min<std::uint64_t>(grid != 0 ? grid : 64, kPartialSlots);
  const auto order_free = [&]<class S>(bool large) {
    cfg.name = "reduceOrderFree";
    using SOut = typename S::Out;
    if (large) {
      const FreeShape shape = free_shape<T>(n, in, slots, kLargeLoads<T>);
      cfg.grid = dim3(shape.grid);
      rl::launch(reduceOrderFree<T, S, kLargeLoads<T>, kLargeContiguous<T>>, cfg, static_cast<const T*>(in), shape,
                 thread_posts(), static_cast<unsigned*>(ticket.get()), static_cast<SOut*>(output.get()));
    } else {
      const FreeShape shape = free_shape<T>(n, in, slots);
      cfg.grid = dim3(shape.grid);
      rl::launch(reduceOrderFree<T, S>, cfg, static_cast<const T*>(in), shape, thread_posts(),
                 static_cast<unsigned*>(ticket.get()), static_cast<SOut*>(output.get()));
    }
    SOut result;
    std::memcpy(static_cast<void*>(&result), output.get(), sizeof(SOut));
    return result;
  };
  if constexpr (exact_as_integer_v<T, Op>) {  // halves: the GPU's order-free integer sums (exact_half.cuh)
    constexpr bool kMean = std::is_same_v<Op, op::mean>;
    if (deterministic) {  // the GPU's shape; the 64-bit accumulator where it takes it, other_shape: the 128-bit one
      const FreeShape shape = free_shape<T>(n, in, slots);
      if (!other_shape && most_per_block<T>(shape, kFreeLoads) <= ExactHalfSum64<kMean>::kMaxElements)
        return order_free.template operator()<ExactHalfSum64<kMean>>(false);
      return order_free.template operator()<ExactHalfSum128<kMean>>(false);
    }
  }
  // float and bfloat16 from one tile to 2^20: the GPU's order-free wide integer (exact_wide.cuh); other_shape: the
  // digits' kernel, which the GPU takes at other sizes and for elements at an address that is not
  // a multiple of their size.
  if constexpr (exact_as_wide_v<T, Op>) {
    if (deterministic && !other_shape && exact_wide_taken<T>(n))
      return order_free.template operator()<ExactWideSum<T, std::is_same_v<Op, op::mean>>>(false);
  }
  if constexpr (exact_sum_v<T, Op>) {
    if (deterministic) {
      constexpr bool kMean = std::is_same_v<Op, op::mean>;
      DeviceBytes exact = device_bytes(kExactWords * sizeof(unsigned long long));
      // other_shape: 16-bit elements take the GPU's mid-size shape (exact_mid_shape), whatever n.
      const bool mid = other_shape && kHasExactMidShape<T>;
      const std::uint64_t tile = mid ? kExactMidTile<T> : Shape<T>::kTile;
      const std::uint64_t tiles = (n + tile - 1) / tile;
      cfg.grid = dim3(static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(tiles, grid != 0 ? grid : 64))));
      cfg.name = "reduceExact";
      const unsigned flags = reinterpret_cast<std::uintptr_t>(in) % 16 == 0 ? kAligned : 0u;
      // One block takes the small launch's end (agent_exact.cuh: SIMT has no clusters).
      const bool small = !mid && cfg.grid.x == 1 && tiles <= kFlushTiles;
      auto kernel = small ? reduceExact<T, Out, kMean, true> : reduceExact<T, Out, kMean, false>;
      if constexpr (kHasExactMidShape<T>)
        if (mid) kernel = reduceExact<T, Out, kMean, false, kExactMidLoads, kExactMidBlocksPerSM>;
      rl::launch(kernel, cfg, static_cast<const T*>(in), n, flags, static_cast<unsigned long long*>(exact.get()),
                 static_cast<unsigned*>(ticket.get()), static_cast<Out*>(output.get()));
      Out result;
      std::memcpy(static_cast<void*>(&result), output.get(), sizeof(Out));
      return result;
    }
  }
  if constexpr (Sem::order_free) return order_free.template operator()<Sem>(other_shape);
  const LaunchShape shape = launch_shape<T, Sem>(n, grid != 0 ? grid : 64, deterministic, in);

  cfg.grid = dim3(shape.grid);
  cfg.name = "reduceChunks";
  rl::launch(reduceChunks<T, Sem>, cfg, static_cast<const T*>(in), shape.plan, shape.flags,
             static_cast<Acc*>(partials.get()), static_cast<unsigned*>(ticket.get()),
             static_cast<Acc*>(accumulator.get()), static_cast<Out*>(output.get()));
  Out result;
  std::memcpy(static_cast<void*>(&result), output.get(), sizeof(Out));
  return result;
}

#define REDUCELAB_SIMT_INSTANTIATE_(T, OP)                                                     \
  template result_t<T, op::OP> simt_reduce<T, op::OP>(const T*, std::uint64_t, op::OP, unsigned, unsigned, bool, bool);
#define REDUCELAB_SIMT_INSTANTIATE_TYPE_(T) REDUCELAB_FOR_EACH_OP(REDUCELAB_SIMT_INSTANTIATE_, T)
REDUCELAB_FOR_EACH_TYPE(REDUCELAB_SIMT_INSTANTIATE_TYPE_)

}  // namespace reducelab::detail
