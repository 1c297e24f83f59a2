#pragma once
// dist::reduce over NCCL, the template; reduce_int.cu and reduce_float.cu instantiate it.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "dist/internal.hpp"
#include "dist/nccl_impl.hpp"
#include "reducelab/detail/agent_dist.cuh"
#include "reducelab/detail/device_reduce.cuh"
#include "reducelab/detail/workspace.hpp"
#include "reducelab/dist.hpp"

namespace reducelab::dist {

namespace rd = reducelab::detail::dist;
namespace dd = reducelab::detail;

namespace detail {
template <auto Kernel>
int blocks_per_sm(int device) {
  static int cached[64] = {};
  if (device >= 0 && device < 64 && cached[device] > 0) return cached[device];
  int b = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, Kernel, dd::kThreads, 0) != cudaSuccess || b < 1) b = 1;
  if (device >= 0 && device < 64) cached[device] = b;
  return b;
}
}  // namespace detail

namespace {

using detail::cuda_failed;
using detail::nccl_failed;

template <class T>
unsigned align_flag(const T* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 ? dd::kAligned : 0u;
}
// The element at global index g lives at local[g - offset].
template <class T>
const T* virtual_base(const T* local, std::uint64_t offset) {
  return reinterpret_cast<const T*>(reinterpret_cast<std::uintptr_t>(local) - offset * sizeof(T));
}

template <class T, class Op>
Status chunked(const T* local, std::uint64_t local_n, result_t<T, Op>* output, Comm::Impl& c, stream_t stream,
               const Options& options) {
  using Sem = dd::semantics_t<T, Op>;
  using Acc = typename Sem::Acc;
  const int ranks = c.size, me = c.rank;
  auto* send = static_cast<rd::Record*>(c.send);
  auto* recv = static_cast<rd::Record*>(c.recv);
  auto* host = static_cast<rd::Record*>(c.host_recs);
  cudaError_t e = cudaMemcpyAsync(host, recv, sizeof(rd::Record) * ranks, cudaMemcpyDeviceToHost, stream);
  if (e != cudaSuccess) return cuda_failed(e, "reading the records");
  if (Status s = c.wait(stream, options.timeout_s, "the all-gather of records"); !s) return s;
  std::uint64_t total = 0;
  if (const rd::Failure f = rd::check_records(host, ranks, &total); f.code != 0) return detail::failure_status(f, me, ranks);
  (void)send;

  const dd::Plan plan = dd::fixed_plan<T>(total);
  std::vector<rd::Ownership> own(ranks);
  rd::ownerships(plan, host, ranks, own.data());
  const rd::Ownership& mine = own[me];
  const std::uint64_t slots = std::max<std::uint64_t>(1, rd::most_owned(plan, host, ranks));
  if (Status s = c.parts_send.reserve(slots * sizeof(Acc)); !s) return s;
  if (Status s = c.parts_recv.reserve(slots * sizeof(Acc) * ranks); !s) return s;

  // The halo: the tail of this rank's last chunk from the ranks after it, into `stage` after the
  // chunk's local part; this rank's elements to the owners before it.
  const bool staged = mine.halo_end > mine.halo_begin;
  std::uint64_t staged_begin = 0;
  if (staged) {
    staged_begin = plan.chunk_begin(mine.c1 - 1);
    if (Status s = c.stage.reserve((mine.halo_end - staged_begin) * sizeof(T)); !s) return s;
    e = cudaMemcpyAsync(c.stage.ptr, local + (staged_begin - mine.offset), (mine.offset + mine.n - staged_begin) * sizeof(T),
                        cudaMemcpyDeviceToDevice, stream);
    if (e != cudaSuccess) return cuda_failed(e, "staging the last chunk");
  }
  ncclResult_t r = ncclGroupStart();
  for (int p = 0; p < ranks && r == ncclSuccess; ++p) {
    if (p == me) continue;
    const std::uint64_t lo = std::max(own[p].halo_begin, mine.offset), hi = std::min(own[p].halo_end, mine.offset + mine.n);
    if (lo < hi) r = ncclSend(local + (lo - mine.offset), (hi - lo) * sizeof(T), ncclUint8, p, c.comm, stream);
    if (r == ncclSuccess && staged && p > me) {
      const std::uint64_t a = std::max(mine.halo_begin, own[p].offset), b = std::min(mine.halo_end, own[p].offset + own[p].n);
      if (a < b) r = ncclRecv(static_cast<T*>(c.stage.ptr) + (a - staged_begin), (b - a) * sizeof(T), ncclUint8, p, c.comm, stream);
    }
  }
  const ncclResult_t end = ncclGroupEnd();
  if (r != ncclSuccess || end != ncclSuccess) return nccl_failed(r != ncclSuccess ? r : end, "the halo exchange");

  // The chunk results: whole chunks from the shard, then the staged one.
  auto* parts = static_cast<Acc*>(c.parts_send.ptr);
  const std::uint64_t local_end = staged ? mine.c1 - 1 : mine.c1;
  const unsigned most = static_cast<unsigned>(detail::sm_count(c.device) *
                                              detail::blocks_per_sm<rd::distChunks<T, Sem>>(c.device));
  if (local_end > mine.c0) {
    const unsigned grid = static_cast<unsigned>(std::min<std::uint64_t>(local_end - mine.c0, most));
    const T* base = virtual_base(local, mine.offset);
    rd::distChunks<T, Sem><<<grid, dd::kThreads, 0, stream>>>(base, plan, mine.c0, local_end, align_flag(base), parts);
  }
  if (staged) {
    const T* base = virtual_base(static_cast<const T*>(c.stage.ptr), staged_begin);
    rd::distChunks<T, Sem><<<1, dd::kThreads, 0, stream>>>(base, plan, local_end, mine.c1, align_flag(base),
                                                           parts + (local_end - mine.c0));
  }
  if ((e = cudaGetLastError()) != cudaSuccess) return cuda_failed(e, "launching distChunks");
  r = ncclAllGather(parts, c.parts_recv.ptr, slots * sizeof(Acc), ncclUint8, c.comm, stream);
  if (r != ncclSuccess) return nccl_failed(r, "the all-gather of chunk results");
  rd::distFoldChunks<T, Op><<<1, dd::kThreads, sizeof(std::uint64_t) * 2 * ranks, stream>>>(
      recv, ranks, static_cast<const Acc*>(c.parts_recv.ptr), slots, total, output);
  if ((e = cudaGetLastError()) != cudaSuccess) return cuda_failed(e, "launching distFoldChunks");
  if (options.wait) return c.wait(stream, options.timeout_s, "the reduction");
  return {};
}

}  // namespace

template <class T, class Op>
Status reduce(const T* local, std::uint64_t local_n, Op, result_t<T, Op>* output, Comm& comm, stream_t stream,
              const Options& options) {
  if (!comm.valid()) return Status(Errc::invalid_argument, "dist::reduce: the communicator is empty (make it with Comm::local, from_mpi or from_nccl)");
  Comm::Impl& c = *comm.impl();
  if (Status s = c.usable(); !s) return s;
  const std::uint64_t bad = local == nullptr && local_n > 0 ? 1 : output == nullptr ? 2 : 0;
  auto* send = static_cast<rd::Record*>(c.send);
  auto* recv = static_cast<rd::Record*>(c.recv);
  cudaError_t e = cudaSuccess;
  // 1. This rank's record.
  if (bad != 0 || rd::path_of<T, Op> == rd::Path::chunked) {
    rd::distHeader<T, Op><<<1, 1, 0, stream>>>(send, local_n, options.total, bad);
  } else if constexpr (rd::path_of<T, Op> == rd::Path::exact) {
    constexpr auto kernel = rd::distExactDigits<T>;
    const std::uint64_t tiles = (local_n + dd::Shape<T>::kTile - 1) / dd::Shape<T>::kTile;
    const std::uint64_t most = std::uint64_t(detail::sm_count(c.device)) * detail::blocks_per_sm<kernel>(c.device);
    const auto grid = static_cast<unsigned>(std::clamp<std::uint64_t>(std::min(tiles, most), 1, 1u << 20));
    kernel<<<grid, dd::kThreads, 0, stream>>>(local, local_n, align_flag(local), send, rd::op_code<Op>(), options.total);
  } else if constexpr (rd::path_of<T, Op> == rd::Path::order_free) {
    using Head = rd::HeadSem<T, Op>;
    using Acc = typename Head::Acc;
    static_assert(offsetof(rd::RecordHead<Acc>, acc) == offsetof(rd::Record, payload));
    dd::Workspace ws;
    if (Status s = dd::workspace_for(stream, &ws); !s) return s;
    auto* head = reinterpret_cast<rd::RecordHead<Acc>*>(send);
    if (dd::free_shape_fits<T>(local)) {  // the single-GPU library's fastest kernel, in its shape for this n
      const int sms = detail::sm_count(c.device);
      bool wide = false;
      if (Status w = dd::wide_memory(c.device, &wide); !w) return w;
      const Status s = dd::free_large<T>(local_n, wide)
                           ? dd::launch_order_free<T, Head, dd::kLargeLoads<T>, dd::kLargeContiguous<T>>(
                                 local, local_n, head, stream, reducelab::Options{}, ws, c.device, sms)
                           : dd::launch_order_free<T, Head, dd::kFreeLoads, false>(local, local_n, head, stream,
                                                                                     reducelab::Options{}, ws, c.device, sms);
      if (!s) return s;
    } else {
      const std::uint64_t slots = std::clamp<std::uint64_t>(
          std::uint64_t(detail::sm_count(c.device)) * detail::blocks_per_sm<dd::reduceChunks<T, Head>>(c.device), 1,
          dd::kPartialSlots);
      const dd::LaunchShape shape = dd::launch_shape<T, Head>(local_n, slots, true, local);
      dd::reduceChunks<T, Head><<<shape.grid, dd::kThreads, 0, stream>>>(
          local, shape.plan, shape.flags, static_cast<Acc*>(ws.partials), ws.ticket, static_cast<Acc*>(ws.accumulator),
          head);
    }
    if (options.total != rd::kNoTotal) rd::distHeader<T, Op><<<1, 1, 0, stream>>>(send, local_n, options.total, 0);
  }
  if ((e = cudaGetLastError()) != cudaSuccess) return cuda_failed(e, "launching the local reduction");
  // 2. Every rank's record on every rank. One rank folds its own record: NCCL's all-gather of one
  // rank is still a launch (5-7 us on an H200 against 3 for an 8-byte all-reduce).
  const bool alone = c.size == 1 && rd::path_of<T, Op> != rd::Path::chunked;
  if (!alone && c.direct() && rd::path_of<T, Op> != rd::Path::chunked) {
    // GPUs of one host with peer access: each rank writes its record into every rank's mailbox and
    // folds in the same kernel, no NCCL launch (a 640-byte all-gather is ~8 us on two H200s).
    rd::DirectPeers peers{};
    for (int r = 0; r < c.size; ++r) peers.box[r] = static_cast<rd::Mailbox*>(c.peer_mailbox[r]);
    // The kernel gives up before the host does, so the failure says which rank was missing.
    const double kernel_s = std::min(options.timeout_s * 0.8, 1e6);
    ++c.round;
    rd::distExchange<T, Op><<<1, dd::kThreads, 0, stream>>>(send, peers, static_cast<rd::Mailbox*>(c.mailbox), c.size,
                                                           c.rank, c.round, static_cast<std::uint64_t>(kernel_s * 1e9),
                                                           output, static_cast<rd::Failure*>(c.fail));
    if ((e = cudaGetLastError()) != cudaSuccess) return cuda_failed(e, "launching distExchange");
    if (options.wait) return c.take_failure(stream, options.timeout_s);
    return {};
  }
  if (!alone)
    if (ncclResult_t r = ncclAllGather(send, recv, sizeof(rd::Record), ncclUint8, c.comm, stream); r != ncclSuccess)
      return nccl_failed(r, "ncclAllGather of the records");
  const rd::Record* recs = alone ? send : recv;
  // 3. The result.
  if (bad == 0 && rd::path_of<T, Op> == rd::Path::chunked) {
    if constexpr (rd::path_of<T, Op> == rd::Path::chunked) return chunked<T, Op>(local, local_n, output, c, stream, options);
  }
  if (rd::path_of<T, Op> == rd::Path::chunked) {  // a bad input: every rank learns it from the records
    auto* host = static_cast<rd::Record*>(c.host_recs);
    e = cudaMemcpyAsync(host, recv, sizeof(rd::Record) * c.size, cudaMemcpyDeviceToHost, stream);
    if (e != cudaSuccess) return cuda_failed(e, "reading the records");
    if (Status s = c.wait(stream, options.timeout_s, "the all-gather of records"); !s) return s;
    std::uint64_t total = 0;
    const rd::Failure f = rd::check_records(host, c.size, &total);
    return detail::failure_status(f, c.rank, c.size);
  }
  rd::distFold<T, Op><<<1, dd::kThreads, 0, stream>>>(recs, c.size, output, static_cast<rd::Failure*>(c.fail), send);
  if ((e = cudaGetLastError()) != cudaSuccess) return cuda_failed(e, "launching distFold");
  if (options.wait) return c.take_failure(stream, options.timeout_s);
  return {};
}

}  // namespace reducelab::dist

#define REDUCELAB_DIST_INSTANTIATE_(T, OP)                                                                  \
  template ::reducelab::Status reducelab::dist::reduce<T, reducelab::op::OP>(                               \
      const T*, std::uint64_t, reducelab::op::OP, reducelab::result_t<T, reducelab::op::OP>*,               \
      reducelab::dist::Comm&, reducelab::stream_t, const reducelab::dist::Options&);
#define REDUCELAB_DIST_INSTANTIATE_TYPE_(T) REDUCELAB_FOR_EACH_OP(REDUCELAB_DIST_INSTANTIATE_, T)
