#pragma once
// The subset of CUDA's cooperative groups the gallery uses (<cooperative_groups.h> and
// <cooperative_groups/reduce.h>): the block, static tiles of 32/16/8/4/2 threads, and
// cooperative_groups::reduce over a tile.
#include "simt/builtins.hpp"

namespace cooperative_groups {

class thread_block {
 public:
  void sync(std::source_location loc = std::source_location::current()) const {
    __syncthreads(loc);
  }
  unsigned thread_rank() const { return simt::detail::tl_thread->linear; }
  unsigned size() const { return num_threads(); }
  unsigned num_threads() const {
    const dim3& d = simt::detail::tl_block->block_dim;
    return d.x * d.y * d.z;
  }
  dim3 group_index() const { return simt::detail::tl_block->block_idx; }
  dim3 thread_index() const { return simt::detail::tl_thread->thread_idx; }
  dim3 group_dim() const { return simt::detail::tl_block->block_dim; }
  dim3 dim_threads() const { return group_dim(); }
};

inline thread_block this_thread_block() { return {}; }

// N consecutive threads of a warp. Its collectives name exactly the tile's lanes (those that
// exist when blockDim is not a multiple of N).
template <unsigned N>
class thread_block_tile {
  static_assert(N == 32 || N == 16 || N == 8 || N == 4 || N == 2 || N == 1,
                "tiles are 1, 2, 4, 8, 16 or 32 threads");

 public:
  unsigned thread_rank() const { return simt::detail::tl_thread->lane % N; }
  static constexpr unsigned size() { return N; }
  static constexpr unsigned num_threads() { return N; }
  unsigned meta_group_rank() const { return simt::detail::tl_thread->linear / N; }
  unsigned meta_group_size() const {
    return (thread_block().num_threads() + N - 1) / N;
  }
  // The tile's lanes in its warp, as a warp mask.
  unsigned mask() const {
    const unsigned lanes = N == 32 ? 0xffffffffu : ((1u << N) - 1u);
    return (lanes << (simt::detail::tl_thread->lane / N * N)) & __activemask();
  }

  void sync(std::source_location loc = std::source_location::current()) const {
    __syncwarp(mask(), loc);
  }
  template <class T>
  T shfl(T v, int src, std::source_location loc = std::source_location::current()) const {
    return __shfl_sync(mask(), v, src, N, loc);
  }
  template <class T>
  T shfl_down(T v, unsigned delta,
              std::source_location loc = std::source_location::current()) const {
    return __shfl_down_sync(mask(), v, static_cast<int>(delta), N, loc);
  }
  template <class T>
  T shfl_up(T v, unsigned delta,
            std::source_location loc = std::source_location::current()) const {
    return __shfl_up_sync(mask(), v, static_cast<int>(delta), N, loc);
  }
  template <class T>
  T shfl_xor(T v, unsigned lane_mask,
             std::source_location loc = std::source_location::current()) const {
    return __shfl_xor_sync(mask(), v, static_cast<int>(lane_mask), N, loc);
  }
  unsigned ballot(int pred, std::source_location loc = std::source_location::current()) const {
    // A tile's ballot numbers its own threads from bit 0.
    return (__ballot_sync(mask(), pred, loc) >> (simt::detail::tl_thread->lane / N * N)) &
           (N == 32 ? 0xffffffffu : ((1u << N) - 1u));
  }
  bool any(int pred, std::source_location loc = std::source_location::current()) const {
    return __any_sync(mask(), pred, loc) != 0;
  }
  bool all(int pred, std::source_location loc = std::source_location::current()) const {
    return __all_sync(mask(), pred, loc) != 0;
  }
};

template <unsigned N>
thread_block_tile<N> tiled_partition(const thread_block&) {
  return {};
}

// Operators for reduce, as in <cooperative_groups/reduce.h>: less picks the minimum.
template <class T>
struct plus {
  T operator()(const T& a, const T& b) const { return a + b; }
};
template <class T>
struct less {
  T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
template <class T>
struct greater {
  T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <class T>
struct bit_and {
  T operator()(const T& a, const T& b) const { return a & b; }
};
template <class T>
struct bit_or {
  T operator()(const T& a, const T& b) const { return a | b; }
};
template <class T>
struct bit_xor {
  T operator()(const T& a, const T& b) const { return a ^ b; }
};

// Every thread of the tile gets op over the tile's values (butterfly exchange).
template <unsigned N, class T, class Op>
T reduce(const thread_block_tile<N>& tile, T value, Op op,
         std::source_location loc = std::source_location::current()) {
  for (unsigned offset = N / 2; offset > 0; offset /= 2)
    value = op(value, tile.shfl_xor(value, offset, loc));
  return value;
}
template <unsigned N, class T, class Op>
typename simt::ref<T>::value_type reduce(const thread_block_tile<N>& tile,
                                         const simt::ref<T>& value, Op op,
                                         std::source_location loc =
                                             std::source_location::current()) {
  return reduce(tile, value.read(), op, loc);
}

}  // namespace cooperative_groups
