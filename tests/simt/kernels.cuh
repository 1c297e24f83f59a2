#pragma once
// Kernels for the SIMT runtime's tests: correct ones that exercise each built-in, and planted
// bugs that the runtime must report. Written in portable.cuh's vocabulary only, so that a GPU
// test can compile the same file with nvcc.
#include "simt/portable.cuh"

namespace simt_test {

// ---- built-ins ---------------------------------------------------------------------------------

// Every thread writes its indices: 10 values per thread, at its global linear id.
__global__ void write_indices(rl::gmem<unsigned> out) {
  const unsigned block_linear = blockIdx.x + blockIdx.y * gridDim.x +
                                blockIdx.z * gridDim.x * gridDim.y;
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  const unsigned thread_linear =
      threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
  rl::gmem<unsigned> rec = out + (block_linear * threads + thread_linear) * 10;
  rec[0] = threadIdx.x;
  rec[1] = threadIdx.y;
  rec[2] = threadIdx.z;
  rec[3] = blockIdx.x;
  rec[4] = blockIdx.y;
  rec[5] = blockIdx.z;
  rec[6] = blockDim.x * 10000 + blockDim.y * 100 + blockDim.z;
  rec[7] = gridDim.x * 10000 + gridDim.y * 100 + gridDim.z;
  rec[8] = thread_linear / warpSize;
  rec[9] = thread_linear % warpSize;
}

// Shared memory belongs to one block: each block fills it with its own id, and after the
// barrier every thread must still see only its block's id.
__global__ void shared_is_per_block(rl::gmem<int> bad) {
  __shared__ int tile_storage[256];
  rl::smem<int> tile = tile_storage;
  tile[threadIdx.x] = int(blockIdx.x);
  __syncthreads();
  for (unsigned i = 0; i < blockDim.x; ++i)
    if (tile[i] != int(blockIdx.x)) atomicAdd(bad, 1);
}

// The classic shared-memory tree reduction (sequential addressing), correct.
template <unsigned Block>
__global__ void block_sum(rl::gmem<const int> in, rl::gmem<int> out, unsigned n) {
  __shared__ int partial_storage[Block];
  rl::smem<int> partial = partial_storage;
  const unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[tid] = i < n ? int(in[i]) : 0;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = partial[0];
}

// The same with dynamic shared memory (extern __shared__).
__global__ void block_sum_dynamic(rl::gmem<const int> in, rl::gmem<int> out, unsigned n) {
  RL_DYNAMIC_SHARED(int, partial);
  const unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[tid] = i < n ? int(in[i]) : 0;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = partial[0];
}

// Warp collectives, one record of 24 ints per thread of one warp-sized (or smaller) block.
template <int Width>
__global__ void collectives(rl::gmem<long long> out) {
  const int lane = int(threadIdx.x % warpSize);
  const unsigned full = __activemask();
  rl::gmem<long long> rec = out + threadIdx.x * 24;
  rec[0] = __shfl_sync(full, lane * 10, 3, Width);
  rec[1] = __shfl_up_sync(full, lane * 10, 2, Width);
  rec[2] = __shfl_down_sync(full, lane * 10, 2, Width);
  rec[3] = __shfl_xor_sync(full, lane * 10, 1, Width);
  rec[4] = __ballot_sync(full, lane % 3 == 0);
  rec[5] = __any_sync(full, lane == 7);
  rec[6] = __all_sync(full, lane < 100);
  rec[7] = __all_sync(full, lane < 5);
  rec[8] = __reduce_add_sync(full, unsigned(lane));
  rec[9] = __reduce_min_sync(full, 10 - lane);
  rec[10] = __reduce_max_sync(full, 10 - lane);
  rec[11] = full;
  rec[12] = (long long)__shfl_sync(full, 1.5 * lane, 0, Width);           // double
  rec[13] = (long long)__shfl_down_sync(full, 2.0f * lane, 1, Width);     // float
  rec[14] = __shfl_xor_sync(full, (long long)lane << 40, 2, Width) >> 40;  // 64-bit
  rec[15] = __shfl_sync(full, (unsigned long long)lane, -1, Width);        // wraps in segment
  // Half-warps synchronize on their own masks.
  const unsigned half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  __syncwarp(half & full);
  rec[16] = __shfl_down_sync(half & full, lane, 8);
  rec[17] = __reduce_max_sync(half & full, unsigned(lane));
  rec[18] = __popc(0xf0f0u) + 100 * __ffs(0x80) + 10000 * __ffs(0);
}

// Each block adds to every kind of atomic counter; the totals check the arithmetic.
__global__ void atomics(rl::gmem<int> i32, rl::gmem<unsigned> u32, rl::gmem<long long> i64,
                        rl::gmem<unsigned long long> u64, rl::gmem<float> f32,
                        rl::gmem<double> f64) {
  const int gid = int(blockIdx.x * blockDim.x + threadIdx.x);
  atomicAdd(i32, 1);
  atomicSub(i32 + 1, 2);
  atomicMax(i32 + 2, gid);
  atomicMin(i32 + 3, -gid);
  atomicAdd(u32, 3u);
  atomicInc(u32 + 1, 9u);  // wraps to 0 after 9
  atomicAdd(i64, (long long)gid << 20);
  atomicAdd(u64, 1ull);
  atomicCAS(u64 + 1, 0ull, (unsigned long long)gid + 1);  // exactly one thread wins
  atomicExch(u64 + 2, 7ull);
  atomicAdd(f32, 0.5f);
  atomicMax(f32 + 1, float(gid) * 0.25f);
  atomicMin(f32 + 2, -float(gid));
  atomicAdd(f64, 0.25);
  atomicMax(f64 + 1, double(gid));
  atomicMin(f64 + 2, double(gid) + 1.0);
  atomicAdd(&i32[4], gid % 2);  // through &p[i]
}

// Warp reduction with cooperative groups, one atomic per warp.
__global__ void tile_sum(rl::gmem<const int> in, rl::gmem<int> out, unsigned n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  const unsigned i = blockIdx.x * blockDim.x + block.thread_rank();
  int v = i < n ? int(in[i]) : 0;
  for (unsigned offset = warp.size() / 2; offset > 0; offset /= 2) v += warp.shfl_down(v, offset);
  const int again = cg::reduce(warp, i < n ? int(in[i]) : 0, cg::plus<int>());
  if (warp.thread_rank() == 0) {
    atomicAdd(out, v);
    atomicAdd(out + 1, again);
    atomicMax(out + 2, int(warp.meta_group_rank()));
    atomicMax(out + 3, int(warp.meta_group_size()));
  }
  cg::thread_block_tile<8> eight = cg::tiled_partition<8>(block);
  const int m = cg::reduce(eight, int(block.thread_rank()), cg::greater<int>());
  if (eight.thread_rank() == 0) atomicAdd(out + 4, m);
  block.sync();
}

// Tail launches: each grid logs its id; grid 1 queues 2 and 3, grid 2 queues 4.
__global__ void tail_logger(rl::gmem<int> log, rl::gmem<int> count, int id) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    log[atomicAdd(count, 1)] = id;
    if (id == 1) {
      RL_TAIL_LAUNCH(tail_logger, 1, 32, log, count, 2);
      RL_TAIL_LAUNCH(tail_logger, 2, 32, log, count, 3);
    }
    if (id == 2) RL_TAIL_LAUNCH(tail_logger, 1, 64, log, count, 4);
  }
}

// The warp-synchronous last steps done right: __syncwarp between read and write.
__global__ void warp_sum_syncwarp(rl::gmem<int> data) {
  __shared__ int s_storage[64];
  rl::smem<int> s = s_storage;
  const unsigned tid = threadIdx.x;
  s[tid] = data[tid];
  __syncthreads();
  if (tid < 32) {
    for (unsigned offset = 32; offset > 0; offset /= 2) {
      int v = s[tid] + s[tid + offset];
      __syncwarp();
      s[tid] = v;
      __syncwarp();
    }
    if (tid == 0) data[0] = s[0];
  }
}

// The counting barriers: how many threads, whether all, whether any had the predicate.
__global__ void counting_barriers(rl::gmem<int> out) {
  const int count = __syncthreads_count(threadIdx.x % 3 == 0);
  const int all = __syncthreads_and(threadIdx.x < 1000);
  const int any = __syncthreads_or(threadIdx.x == 77);
  const int none = __syncthreads_or(0);
  if (threadIdx.x == 5) {
    out[0] = count;
    out[1] = all;
    out[2] = any;
    out[3] = none;
  }
}

// ---- planted bugs ------------------------------------------------------------------------------

// The tree reduction without its barrier: a race, and under the reverse schedule a wrong sum.
template <unsigned Block>
__global__ void missing_barrier(rl::gmem<const int> in, rl::gmem<int> out) {
  __shared__ int partial_storage[Block];
  rl::smem<int> partial = partial_storage;
  const unsigned tid = threadIdx.x;
  partial[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    // missing: __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = partial[0];
}

// Two different __syncthreads, one per half of the block.
__global__ void divergent_barrier(rl::gmem<int> out) {
  if (threadIdx.x < 16) {
    out[threadIdx.x] = 1;
    __syncthreads();
  } else {
    __syncthreads();
    out[threadIdx.x] = 2;
  }
}

// The textbook's `if (idx > n) return;` before a barrier (here the corrected >=, still wrong).
__global__ void early_return(rl::gmem<const int> in, rl::gmem<int> out, unsigned n) {
  __shared__ int s_storage[64];
  rl::smem<int> s = s_storage;
  const unsigned idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= n) return;
  s[threadIdx.x] = in[idx];
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

// Every thread writes the same shared word.
__global__ void shared_race(rl::gmem<int> out) {
  __shared__ int flag_storage[1];
  rl::smem<int> flag = flag_storage;
  flag[0] = int(threadIdx.x);
  __syncthreads();
  if (threadIdx.x == 0) out[0] = flag[0];
}

// The book's unrolled last warp, in place in global memory, relying on lockstep `volatile`.
__global__ void lockstep_warp(rl::gmem<int> data) {
  const unsigned tid = threadIdx.x;
  rl::gmem<int> idata = data + blockIdx.x * blockDim.x;
  if (tid < 32) {
    rl::vmem<int> vmem = idata;
    vmem[tid] += vmem[tid + 32];
    vmem[tid] += vmem[tid + 16];
    vmem[tid] += vmem[tid + 8];
    vmem[tid] += vmem[tid + 4];
    vmem[tid] += vmem[tid + 2];
    vmem[tid] += vmem[tid + 1];
  }
}

// A full-warp shuffle after lane 5 returned (the other lanes sync first, so lane 5 is gone by
// the time any of them reaches the shuffle).
__global__ void shuffle_exited_lane(rl::gmem<int> out) {
  const int lane = int(threadIdx.x % 32);
  if (lane == 5) return;
  __syncwarp(~(1u << 5));
  out[threadIdx.x] = __shfl_down_sync(0xffffffffu, lane, 1);
}

// Lane 5 returns while the others wait for it in a full-warp shuffle.
__global__ void shuffle_waits_for_exited_lane(rl::gmem<int> out) {
  const int lane = int(threadIdx.x % 32);
  if (lane == 5) return;
  out[threadIdx.x] = __shfl_down_sync(0xffffffffu, lane, 1);
}

// A full-warp shuffle in a block of 48 threads: warp 1 has only lanes 0-15.
__global__ void shuffle_absent_lane(rl::gmem<int> out) {
  const int lane = int(threadIdx.x % 32);
  out[threadIdx.x] = __shfl_down_sync(0xffffffffu, lane, 1);
}

// Half the block waits at a barrier, the other half in a warp collective naming the first.
__global__ void deadlock(rl::gmem<int> out) {
  if (threadIdx.x < 16)
    __syncthreads();
  else
    __syncwarp();
  out[threadIdx.x] = 1;
}

// Reads one element past the end (no bounds guard).
__global__ void read_past_end(rl::gmem<const int> in, rl::gmem<int> out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i + 1];
}

// Writes one element past the end.
__global__ void write_past_end(rl::gmem<int> out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i + 1] = 1;
}

}  // namespace simt_test
