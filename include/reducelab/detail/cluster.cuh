#pragma once
// Thread-block clusters (Hopper, sm_90): the blocks of one cluster run at the same time on one
// GPC and can write each other's shared memory. A small launch of reducelab::reduce is one
// cluster: each block stores its result in the first block's shared memory and one cluster
// barrier replaces the last-block-done handshake (a partial in global memory, an atomic ticket,
// the last block reading the partials back: three trips to L2). On an H100 that took an int32
// sum of 2^14..2^16 elements from 5.8 to 4.9-5.1 us, cold (docs/performance.md).
//
// Device side only. The SIMT build has no clusters: there every launch is clusters of one
// block (cluster_blocks() == 1) and the kernels take their other paths.
#include "reducelab/detail/portable.cuh"

#if !RL_SIMT
#include <cooperative_groups.h>
#endif

namespace reducelab::detail {

// The most blocks reducelab puts in one cluster (16 needs the non-portable size, which H100 and
// H200 allow; the launcher asks the GPU what fits: launch.cuh).
inline constexpr unsigned kMaxClusterBlocks = 16;

#if !RL_SIMT && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define RL_CLUSTERS 1
#else
#define RL_CLUSTERS 0
#endif

// Blocks in this block's cluster (1 when the launch asked for none) and this block's rank in it.
__device__ __forceinline__ unsigned cluster_blocks() {
#if RL_CLUSTERS
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
#else
  return 1;
#endif
}
__device__ __forceinline__ unsigned cluster_rank() {
#if RL_CLUSTERS
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
#else
  return 0;
#endif
}

// The cluster barrier, split: every thread of every block arrives, then waits. arrive_relaxed
// at a kernel's start and the matching wait before the first access to another block's shared
// memory guarantee that block has started; arrive (release) and wait (acquire) around the
// stores make them visible to the block that reads them. Call them in every thread, uniformly.
__device__ __forceinline__ void cluster_arrive_relaxed() {
#if RL_CLUSTERS
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
#endif
}
__device__ __forceinline__ void cluster_arrive() {
#if RL_CLUSTERS
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
#endif
}
__device__ __forceinline__ void cluster_wait() {
#if RL_CLUSTERS
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}

// The same shared-memory object in the cluster's first block (rank 0). Plain stores and atomics
// through the returned pointer reach that block's shared memory.
template <class P>
__device__ __forceinline__ P in_cluster_leader(P p) {
#if RL_CLUSTERS
  return cooperative_groups::this_cluster().map_shared_rank(p, 0);
#else
  return p;  // clusters of one block: the leader is this block
#endif
}

}  // namespace reducelab::detail
