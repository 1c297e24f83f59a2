#pragma once
// The NCCL communicator behind reducelab::dist::Comm (CUDA builds only).
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <string>
#include <vector>

#include "reducelab/dist.hpp"

namespace reducelab::dist {

namespace detail {
Status cuda_failed(cudaError_t e, const std::string& what);
Status nccl_failed(ncclResult_t r, const std::string& what);
// NCCL_NVLS_ENABLE=0 unless the environment sets it: no NVLink multicast objects.
void keep_nvls_off();
int sm_count(int device);

struct Buffer {  // device memory that only grows
  void* ptr = nullptr;
  std::size_t bytes = 0;
  Status reserve(std::size_t want);
  void release();
};
}  // namespace detail

struct Comm::Impl {
  ncclComm_t comm = nullptr;
  bool owned = false;
  bool aborted = false;
  int rank = 0, size = 0, device = -1;
  void* send = nullptr;       // this rank's Record (payload zero between calls)
  void* recv = nullptr;       // every rank's Record
  void* fail = nullptr;       // the first Failure the device found (zero: none)
  void* host_fail = nullptr;  // pinned
  void* host_recs = nullptr;  // pinned, size Records
  detail::Buffer parts_send, parts_recv, stage;
  // The direct exchange (detail/dist_record.hpp's Mailbox): this rank's mailbox, every rank's as
  // this device reaches it (empty: not set up, the records go through NCCL), the round of the last
  // call, and the IPC mappings to close.
  void* mailbox = nullptr;
  std::vector<void*> peer_mailbox;
  std::vector<void*> ipc_opened;
  std::uint64_t round = 0;
  bool broken = false;  // a peer never arrived: the rounds no longer agree

  ~Impl();
  Status init(ncclComm_t c, bool own, int dev);
  Status wait(stream_t stream, double timeout_s, const char* what);
  Status usable() const;
  Status take_failure(stream_t stream, double timeout_s);
  bool direct() const { return !peer_mailbox.empty(); }
};

namespace detail {
// Sets up the direct exchange between the communicators of one process when every pair of their
// GPUs has peer access and there are at most kMaxDirect of them; otherwise leaves them on NCCL.
Status setup_direct_local(std::vector<Comm::Impl*>& ranks);
// The same for a communicator made by Comm::from_mpi (nccl_mpi.cpp); collective over MPI_COMM_WORLD.
void setup_direct_mpi(Comm::Impl& c, bool one_host);
}  // namespace detail

}  // namespace reducelab::dist
