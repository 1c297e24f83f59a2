#pragma once
// The kernels of reducelab::dist (nvcc only), built from the single-GPU agents:
//   distExactDigits  a rank's exact digits and flags, unrounded, into its record (agent_exact.cuh's
//                    tile fold, spills and flushes; no last block, no rounding)
//   distChunks       the block results of chunks [c0, c1) of the fixed order of a virtual array
//                    (element g at input[g]): fold_chunk + block_fold, as reduceChunks does per chunk
//   distFold         every rank's record into the result (exact sums: a thread per digit)
//   distExchange     the direct exchange of the records between GPUs of one host, and the fold
//   distFoldChunks   the gathered chunk results folded in the fixed order (reduceChunks' step 3)
#include <cstdint>

#include "reducelab/detail/agent_exact.cuh"
#include "reducelab/detail/agent_reduce.cuh"
#include "reducelab/detail/block_reduce.cuh"
#include "reducelab/detail/dist_record.hpp"

namespace reducelab::detail::dist {

// Writes the record's header (the order-free kernel writes its own; the other paths use this).
template <class T, class Op>
__global__ void distHeader(Record* rec, std::uint64_t n, std::uint64_t total, std::uint64_t error) {
  write_header<T, Op>(*rec, n, total, false);
  rec->error = error;
}

// `rec`'s payload is zero on entry (distFold zeroes it after each use).
template <class T>
__global__ void __launch_bounds__(kThreads)
    distExactDigits(const T* input, std::uint64_t n, unsigned flags, Record* rec, std::uint64_t op,
                    std::uint64_t total) {
  constexpr int kD = ExactTraits<T>::kDigits;
  constexpr std::uint64_t kTile = Shape<T>::kTile;
  __shared__ unsigned long long digit_storage[kD];
  __shared__ unsigned seen_storage;
  unsigned long long* digits = digit_storage;
  auto* global = reinterpret_cast<unsigned long long*>(rec->payload);
  if (threadIdx.x < static_cast<unsigned>(kD)) digits[threadIdx.x] = 0ull;
  if (threadIdx.x == 0) seen_storage = 0u;
  __syncthreads();
  const bool aligned = (flags & kAligned) != 0;
  const BlockDigits<T> spill{digits};
  ExactCarry carry;
  const std::uint64_t tiles = (n + kTile - 1) / kTile;
  std::uint64_t since_flush = 0;
  for (std::uint64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    fold_tile_exact<T, 1>(input, t * kTile, n, aligned, carry, spill);
    if (++since_flush == kFlushTiles) {
      since_flush = 0;
      __syncthreads();
      flush_digits<T>(digits, global);
      __syncthreads();
    }
  }
  const unsigned seen = warp_finish<T>(carry, digits);
  if (threadIdx.x % 32 == 0 && seen != 0) atomicOr(&seen_storage, seen);
  __syncthreads();
  flush_digits<T>(digits, global);
  if (threadIdx.x == 0 && seen_storage != 0) atomicOr(&global[kFlagWord], static_cast<unsigned long long>(seen_storage));
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    rec->magic = kMagic;
    rec->dtype = dtype_code<T>();
    rec->op = op;
    rec->n = n;
    rec->total = total;
    rec->error = 0;
  }
}

template <class T, class Sem>
__global__ void __launch_bounds__(kThreads)
    distChunks(const T* input, Plan plan, std::uint64_t c0, std::uint64_t c1, unsigned flags, typename Sem::Acc* out) {
  using Acc = typename Sem::Acc;
  __shared__ Acc slot_storage[kWarps];
  const bool aligned = (flags & kAligned) != 0;
  for (std::uint64_t c = c0 + blockIdx.x; c < c1; c += gridDim.x) {
    Acc v = fold_chunk<T, Sem>(input, plan, c, aligned);
    v = block_fold<Sem>(v, slot_storage);
    if (threadIdx.x == 0) out[c - c0] = v;
    __syncthreads();
  }
}

// The whole block: folds `ranks` records into *out. Exact sums and means: the ranks' digits are
// added by a thread per digit (integers: any order), the span of non-zero digits found with
// ballots, and the digits rounded once by write_result, as the single-GPU kernel's last block
// does (fold_records gives the same bits with one thread: the CPU backend's path; walking 13
// (float) or 69 (double) digits times the ranks in one thread cost the 2-GPU reduce microseconds
// at every size). Other operations: fold_records on thread 0. A failure goes to *fail.
template <class T, class Op>
__device__ __forceinline__ void fold_block(const Record* recs, int ranks, result_t<T, Op>* out, Failure* fail) {
  if constexpr (path_of<T, Op> == Path::exact) {
    constexpr int kD = ExactTraits<T>::kDigits;
    __shared__ unsigned long long digit_storage[kD];
    __shared__ unsigned misc_storage[2];  // [0] flags, [1] records fine
    __shared__ std::uint64_t total_storage;
    if (threadIdx.x == 0) {
      std::uint64_t total = 0;
      const Failure f = check_records(recs, ranks, &total);
      if (f.code != 0 && fail->code == 0) *fail = f;
      misc_storage[1] = f.code == 0 ? 1u : 0u;
      total_storage = total;
      unsigned flags = 0;
      for (int r = 0; r < ranks; ++r) flags |= static_cast<unsigned>(recs[r].payload[kFlagWord]);
      misc_storage[0] = flags;
    }
    if (threadIdx.x < static_cast<unsigned>(kD)) {
      unsigned long long v = 0;
      for (int r = 0; r < ranks; ++r) v += recs[r].payload[threadIdx.x];
      digit_storage[threadIdx.x] = v;
    }
    __syncthreads();
    if (misc_storage[1] != 0)  // uniform across the block
      write_result<T, result_t<T, Op>, std::is_same_v<Op, op::mean>>(digit_storage, misc_storage[0], total_storage,
                                                                     out);
  } else {
    if (threadIdx.x == 0) {
      const Failure f = fold_records<T, Op>(recs, ranks, out);
      if (f.code != 0 && fail->code == 0) *fail = f;
    }
  }
  __syncthreads();  // every thread is done with the records (recs may be this rank's send record)
}

// Zeroes this rank's record for the next call (the kernels accumulate into its payload).
__device__ __forceinline__ void clear_record(Record* send) {
  auto* words = reinterpret_cast<std::uint64_t*>(send);
  for (unsigned i = threadIdx.x; i < sizeof(Record) / 8; i += blockDim.x) words[i] = 0;
}

// One block of kThreads: every rank's record (gathered by NCCL, or this rank's own when it is
// alone) into the result. The first failure is kept in *fail (until the host reads and clears it).
template <class T, class Op>
__global__ void __launch_bounds__(kThreads)
    distFold(const Record* recs, int ranks, result_t<T, Op>* out, Failure* fail, Record* send) {
  fold_block<T, Op>(recs, ranks, out, fail);
  clear_record(send);
}

// Every rank's mailbox as this device addresses it (peer memory: UVA or an opened IPC handle).
struct DirectPeers {
  Mailbox* box[kMaxDirect];
};

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void store_release_sys(std::uint64_t* p, std::uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ std::uint64_t load_acquire_sys(const std::uint64_t* p) {
  std::uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// One block of kThreads: the direct exchange of round `round` (>= 1) and the fold, in place of an
// all-gather and distFold. This rank's record goes into slot [round % 2][me] of every mailbox
// (its own included), then its round number into arrived[me] of each; it waits, at most
// timeout_ns, until every rank's number here reached the round, copies the records into shared
// memory and folds them. A rank that never arrives: Failure{peer_timeout}, no result.
template <class T, class Op>
__global__ void __launch_bounds__(kThreads)
    distExchange(Record* send, DirectPeers peers, Mailbox* mine, int ranks, int me, std::uint64_t round,
                 std::uint64_t timeout_ns, result_t<T, Op>* out, Failure* fail) {
  constexpr unsigned kWords = sizeof(Record) / 8;
  __shared__ Record recs[kMaxDirect];
  __shared__ int late;
  const unsigned parity = static_cast<unsigned>(round & 1);
  if (threadIdx.x == 0) late = -1;
  const auto* src = reinterpret_cast<const std::uint64_t*>(send);
  for (int r = 0; r < ranks; ++r) {
    auto* dst = reinterpret_cast<std::uint64_t*>(&peers.box[r]->box[parity][me]);
    for (unsigned i = threadIdx.x; i < kWords; i += blockDim.x) dst[i] = src[i];
  }
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x < static_cast<unsigned>(ranks)) store_release_sys(&peers.box[threadIdx.x]->arrived[me], round);
  if (threadIdx.x < static_cast<unsigned>(ranks)) {
    const std::uint64_t start = global_ns();
    while (load_acquire_sys(&mine->arrived[threadIdx.x]) < round) {
      if (global_ns() - start > timeout_ns) {
        atomicMax(&late, static_cast<int>(threadIdx.x));
        break;
      }
      __nanosleep(100);
    }
  }
  __syncthreads();
  if (late >= 0) {
    if (threadIdx.x == 0 && fail->code == 0)
      *fail = Failure{std::uint32_t(Code::peer_timeout), late, timeout_ns / 1000000, 0};
  } else {
    // The slots were written by other GPUs: read past this SM's L1 (ld.volatile).
    auto* to = reinterpret_cast<std::uint64_t*>(recs);
    for (unsigned i = threadIdx.x; i < ranks * kWords; i += blockDim.x) {
      const auto* from = reinterpret_cast<const std::uint64_t*>(&mine->box[parity][i / kWords]) + i % kWords;
      to[i] = *reinterpret_cast<const volatile std::uint64_t*>(from);
    }
    __syncthreads();
    fold_block<T, Op>(recs, ranks, out, fail);
  }
  clear_record(send);
}

// kThreads threads, ranks * 16 bytes of dynamic shared memory. `parts` holds `slots` chunk
// results per rank (rank r's chunks c0_r, c0_r + 1, ...).
template <class T, class Op>
__global__ void __launch_bounds__(kThreads)
    distFoldChunks(const Record* recs, int ranks, const typename semantics_t<T, Op>::Acc* parts, std::uint64_t slots,
                   std::uint64_t total, result_t<T, Op>* out) {
  using Sem = semantics_t<T, Op>;
  using Acc = typename Sem::Acc;
  extern __shared__ std::uint64_t owned[];  // c0 and c1 per rank
  __shared__ Acc slot_storage[kWarps];
  const Plan plan = fixed_plan<T>(total);
  if (threadIdx.x == 0) {
    std::uint64_t off = 0;
    for (int r = 0; r < ranks; ++r) {
      const Ownership o = ownership(plan, off, recs[r].n);
      owned[2 * r] = o.c0;
      owned[2 * r + 1] = o.c1;
      off += recs[r].n;
    }
  }
  __syncthreads();
  auto part = [&](std::uint64_t c) {
    for (int r = 0; r < ranks; ++r)
      if (c >= owned[2 * r] && c < owned[2 * r + 1]) return parts[r * slots + (c - owned[2 * r])];
    return Sem::identity();  // not reached: every chunk has an owner
  };
  if (plan.chunks <= 1) {
    if (plan.chunks == 1) {
      if (threadIdx.x == 0) out[0] = Sem::finish(part(0), total);
      return;
    }
    const Acc v = block_fold<Sem>(Sem::identity(), slot_storage);
    if (threadIdx.x == 0) out[0] = Sem::finish(v, total);
    return;
  }
  constexpr unsigned kPerThread = (kMaxPartials + kThreads - 1) / kThreads;
  Acc w = Sem::identity();
#pragma unroll 1
  for (unsigned k = 0; k < kPerThread; ++k) {
    const std::uint64_t i = threadIdx.x + std::uint64_t(k) * kThreads;
    w = Sem::combine(w, i < plan.chunks ? part(i) : Sem::identity());
  }
  w = block_fold<Sem>(w, slot_storage);
  if (threadIdx.x == 0) out[0] = Sem::finish(w, total);
}

}  // namespace reducelab::detail::dist
