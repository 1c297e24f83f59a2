// Comm::from_mpi: one process per GPU, the NCCL id sent from rank 0 by MPI_Bcast.
#include <mpi.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <string>
#include <vector>

#include "dist/mpi_util.hpp"
#include "dist/nccl_impl.hpp"
#include "reducelab/detail/dist_record.hpp"

namespace reducelab::dist {

namespace rd = reducelab::detail::dist;

Status Comm::from_mpi(Comm* out, int device) {
  detail::keep_nvls_off();
  int rank = 0, size = 0;
  if (Status s = detail::ensure_mpi(&rank, &size); !s) return s;
  MPI_Comm host;
  int local_rank = 0, local_size = 1;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host) == MPI_SUCCESS) {
    MPI_Comm_rank(host, &local_rank);
    MPI_Comm_size(host, &local_size);
    MPI_Comm_free(&host);
  }
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) count = 0;
  const int dev = device >= 0 ? device : local_rank;
  // Every rank learns whether every rank has its GPU, so all fail together rather than some
  // waiting in ncclCommInitRank for ranks that gave up.
  int mine_ok = dev < count ? 1 : 0, all_ok = 0, first_bad = size;
  MPI_Allreduce(&mine_ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  int my_bad = mine_ok ? size : rank;
  MPI_Allreduce(&my_bad, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_ok) {
    if (!mine_ok)
      return Status(Errc::no_device, "dist (rank " + std::to_string(rank) + " of " + std::to_string(size) + "): needs GPU " +
                                         std::to_string(dev) + " but this host has " + std::to_string(count) + " (" +
                                         std::to_string(local_size) + " ranks on it)");
    return Status(Errc::no_device, "dist (rank " + std::to_string(rank) + " of " + std::to_string(size) + "): rank " +
                                       std::to_string(first_bad) + " has no GPU for itself; more ranks than GPUs on its host");
  }
  if (cudaError_t se = cudaSetDevice(dev); se != cudaSuccess) return detail::cuda_failed(se, "cudaSetDevice(" + std::to_string(dev) + ")");
  ncclUniqueId id{};
  if (rank == 0)
    if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess) return detail::nccl_failed(r, "ncclGetUniqueId");
  if (MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
    return Status(Errc::invalid_argument, "dist: MPI_Bcast of the NCCL id failed");
  ncclComm_t comm = nullptr;
  if (ncclResult_t r = ncclCommInitRank(&comm, size, id, rank); r != ncclSuccess)
    return detail::nccl_failed(r, "ncclCommInitRank (rank " + std::to_string(rank) + " of " + std::to_string(size) + ")");
  Comm c;
  c.impl_ = std::make_unique<Impl>();
  if (Status s = c.impl_->init(comm, true, dev); !s) return s;
  detail::setup_direct_mpi(*c.impl_, local_size == size);
  *out = std::move(c);
  return {};
}

namespace detail {

// The direct exchange under MPI: every rank on this host, at most kMaxDirect of them, every pair of
// GPUs with peer access; the mailboxes travel as CUDA IPC handles. Every rank takes the same
// decision (MPI_Allreduce of each step's outcome), so none writes to a mailbox that another did not
// map; anything short of that leaves all of them on NCCL.
void setup_direct_mpi(Comm::Impl& c, bool one_host) {
  const int size = c.size, me = c.rank;
  auto all_agree = [](bool mine) {
    int in = mine ? 1 : 0, all = 0;
    return MPI_Allreduce(&in, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) == MPI_SUCCESS && all == 1;
  };
  std::vector<int> devs(size);
  if (MPI_Allgather(&c.device, 1, MPI_INT, devs.data(), 1, MPI_INT, MPI_COMM_WORLD) != MPI_SUCCESS) return;
  bool ok = one_host && size >= 2 && size <= rd::kMaxDirect;
  for (int j = 0; ok && j < size; ++j) {
    int can = 0;
    if (j != me && devs[j] != c.device && (cudaDeviceCanAccessPeer(&can, c.device, devs[j]) != cudaSuccess || !can)) ok = false;
    if (j != me && devs[j] == c.device) ok = false;  // two ranks on one GPU: IPC cannot map its own memory
  }
  if (!all_agree(ok)) return;
  cudaIpcMemHandle_t mine{};
  ok = cudaIpcGetMemHandle(&mine, c.mailbox) == cudaSuccess;
  std::vector<cudaIpcMemHandle_t> handles(size);
  if (MPI_Allgather(&mine, sizeof mine, MPI_BYTE, handles.data(), sizeof mine, MPI_BYTE, MPI_COMM_WORLD) != MPI_SUCCESS) ok = false;
  std::vector<void*> boxes(size, nullptr);
  boxes[me] = c.mailbox;
  for (int j = 0; ok && j < size; ++j) {
    if (j == me) continue;
    if (cudaIpcOpenMemHandle(&boxes[j], handles[j], cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
      (void)cudaGetLastError();
      ok = false;
      break;
    }
    c.ipc_opened.push_back(boxes[j]);
  }
  if (!all_agree(ok)) return;  // the opened handles close with the communicator
  c.peer_mailbox = boxes;
}

}  // namespace detail

}  // namespace reducelab::dist
