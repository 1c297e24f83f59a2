// reducelab::dist over NCCL: the communicator and dist::reduce for every built-in type and op.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "dist/internal.hpp"
#include "dist/nccl_impl.hpp"
#include "reducelab/detail/dist_record.hpp"
#include "reducelab/dist.hpp"

namespace reducelab::dist {

namespace rd = reducelab::detail::dist;
namespace dd = reducelab::detail;

namespace detail {

Status cuda_failed(cudaError_t e, const std::string& what) {
  return Status(e == cudaErrorMemoryAllocation ? Errc::out_of_memory : Errc::cuda_error,
                "dist: " + what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")", e);
}
Status nccl_failed(ncclResult_t r, const std::string& what) {
  return Status(Errc::cuda_error, "dist: " + what + ": " + ncclGetErrorString(r) + " (NCCL " + std::to_string(int(r)) + ")");
}

void keep_nvls_off() { setenv("NCCL_NVLS_ENABLE", "0", 0); }

Status Buffer::reserve(std::size_t want) {
  if (want <= bytes) return {};
  if (ptr != nullptr) cudaFree(ptr);
  ptr = nullptr;
  bytes = 0;
  const std::size_t grow = std::max(want, std::size_t(4096));
  if (cudaError_t e = cudaMalloc(&ptr, grow); e != cudaSuccess) return cuda_failed(e, "cudaMalloc of " + std::to_string(grow) + " bytes");
  bytes = grow;
  return {};
}
void Buffer::release() {
  if (ptr != nullptr) cudaFree(ptr);
  ptr = nullptr;
  bytes = 0;
}

}  // namespace detail

using detail::cuda_failed;
using detail::nccl_failed;
using detail::timeout_status;
using detail::failure_status;

Status Comm::Impl::init(ncclComm_t c, bool own, int dev) {
  comm = c;
  owned = own;
  device = dev;
  ncclResult_t r = ncclCommCount(c, &size);
  if (r == ncclSuccess) r = ncclCommUserRank(c, &rank);
  if (r != ncclSuccess) return nccl_failed(r, "ncclCommCount/ncclCommUserRank");
  if (cudaError_t e = cudaSetDevice(dev); e != cudaSuccess) return cuda_failed(e, "cudaSetDevice(" + std::to_string(dev) + ")");
  cudaError_t e = cudaMalloc(&send, sizeof(rd::Record));
  if (e == cudaSuccess) e = cudaMalloc(&recv, sizeof(rd::Record) * size);
  if (e == cudaSuccess) e = cudaMalloc(&fail, sizeof(rd::Failure));
  if (e == cudaSuccess) e = cudaMallocHost(&host_fail, sizeof(rd::Failure));
  if (e == cudaSuccess) e = cudaMallocHost(&host_recs, sizeof(rd::Record) * size);
  if (e == cudaSuccess) e = cudaMemset(send, 0, sizeof(rd::Record));
  if (e == cudaSuccess) e = cudaMemset(fail, 0, sizeof(rd::Failure));
  if (e == cudaSuccess) e = cudaMalloc(&mailbox, sizeof(rd::Mailbox));
  if (e == cudaSuccess) e = cudaMemset(mailbox, 0, sizeof(rd::Mailbox));
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return cuda_failed(e, "allocating the communicator's buffers");
  return {};
}

Comm::Impl::~Impl() {
  if (device >= 0) cudaSetDevice(device);
  if (send) cudaFree(send);
  if (recv) cudaFree(recv);
  if (fail) cudaFree(fail);
  if (host_fail) cudaFreeHost(host_fail);
  if (host_recs) cudaFreeHost(host_recs);
  for (void* p : ipc_opened) cudaIpcCloseMemHandle(p);
  if (mailbox) cudaFree(mailbox);
  parts_send.release();
  parts_recv.release();
  stage.release();
  if (comm != nullptr && owned) {
    if (aborted) ncclCommAbort(comm);
    else ncclCommDestroy(comm);
  }
}

// Waits for `stream` while watching NCCL; on a timeout or an NCCL error aborts the communicator.
Status Comm::Impl::wait(stream_t stream, double timeout_s, const char* what) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess) return {};
    if (e != cudaErrorNotReady) return cuda_failed(e, std::string("waiting for ") + what);
    ncclResult_t async = ncclSuccess;
    if (ncclResult_t r = ncclCommGetAsyncError(comm, &async); r != ncclSuccess || async != ncclSuccess) {
      aborted = true;
      ncclCommAbort(comm);
      comm = nullptr;
      return nccl_failed(async != ncclSuccess ? async : r, "rank " + std::to_string(rank) + " during " + what);
    }
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > timeout_s) {
      aborted = true;
      ncclCommAbort(comm);
      comm = nullptr;
      return timeout_status(rank, size, timeout_s, what);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(waited < 0.01 ? 2 : 200));
  }
}

Status Comm::Impl::usable() const {
  if (broken)
    return Status(Errc::invalid_argument, "dist: rank " + std::to_string(rank) + "'s communicator lost a peer in an earlier call");
  if (comm == nullptr) return Status(Errc::invalid_argument, "dist: rank " + std::to_string(rank) + "'s communicator was aborted after an earlier failure");
  return {};
}

Status Comm::Impl::take_failure(stream_t stream, double timeout_s) {
  cudaError_t e = cudaMemcpyAsync(host_fail, fail, sizeof(rd::Failure), cudaMemcpyDeviceToHost, stream);
  if (e != cudaSuccess) return cuda_failed(e, "reading the failure word");
  if (Status s = wait(stream, timeout_s, "the reduction"); !s) return s;
  const rd::Failure f = *static_cast<rd::Failure*>(host_fail);
  if (f.code == 0) return {};
  if (f.code == std::uint32_t(rd::Code::peer_timeout)) broken = true;
  e = cudaMemsetAsync(fail, 0, sizeof(rd::Failure), stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) return cuda_failed(e, "clearing the failure word");
  return failure_status(f, rank, size);
}

namespace detail {

Status setup_direct_local(std::vector<Comm::Impl*>& ranks) {
  const int n = static_cast<int>(ranks.size());
  if (n < 2 || n > rd::kMaxDirect) return {};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      int can = 0;
      if (cudaError_t e = cudaDeviceCanAccessPeer(&can, ranks[i]->device, ranks[j]->device); e != cudaSuccess)
        return cuda_failed(e, "cudaDeviceCanAccessPeer");
      if (!can) return {};  // stays on NCCL
    }
  for (int i = 0; i < n; ++i) {
    if (cudaError_t e = cudaSetDevice(ranks[i]->device); e != cudaSuccess) return cuda_failed(e, "cudaSetDevice");
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      const cudaError_t e = cudaDeviceEnablePeerAccess(ranks[j]->device, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();  // clears it
      } else if (e != cudaSuccess) {
        return cuda_failed(e, "cudaDeviceEnablePeerAccess(" + std::to_string(ranks[j]->device) + ") on GPU " +
                                  std::to_string(ranks[i]->device));
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    ranks[i]->peer_mailbox.assign(n, nullptr);
    for (int j = 0; j < n; ++j) ranks[i]->peer_mailbox[ranks[j]->rank] = ranks[j]->mailbox;  // one address space
  }
  return {};
}

int sm_count(int device) {
  static int cached[64] = {};
  if (device >= 0 && device < 64 && cached[device] > 0) return cached[device];
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms < 1) sms = 1;
  if (device >= 0 && device < 64) cached[device] = sms;
  return sms;
}


}  // namespace detail

}  // namespace reducelab::dist

namespace reducelab::dist {

Comm::Comm() = default;
Comm::~Comm() = default;
Comm::Comm(Comm&&) noexcept = default;
Comm& Comm::operator=(Comm&&) noexcept = default;
int Comm::rank() const { return impl_ ? impl_->rank : -1; }
int Comm::size() const { return impl_ ? impl_->size : 0; }
int Comm::device() const { return impl_ ? impl_->device : -1; }
ncclComm* Comm::nccl() const { return impl_ ? impl_->comm : nullptr; }

Status Comm::check(stream_t stream, double timeout_s) {
  if (!impl_) return Status(Errc::invalid_argument, "dist: check on an empty communicator");
  if (Status s = impl_->usable(); !s) return s;
  return impl_->take_failure(stream, timeout_s);
}

Status nccl_available() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    return Status(Errc::no_device, std::string("dist: no usable GPU (") + (e != cudaSuccess ? cudaGetErrorString(e) : "no device") + ")");
  int version = 0;
  if (ncclResult_t r = ncclGetVersion(&version); r != ncclSuccess) return detail::nccl_failed(r, "ncclGetVersion");
  return {};
}

Status Comm::local(int gpus, std::vector<Comm>* out) {
  detail::keep_nvls_off();
  out->clear();
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    return Status(Errc::no_device, std::string("dist: --gpus needs GPUs but none is usable (") +
                                       (e != cudaSuccess ? cudaGetErrorString(e) : "no device") + ")");
  if (gpus < 0) return Status(Errc::invalid_argument, "dist: a GPU count of " + std::to_string(gpus) + " is not one");
  if (gpus > count)
    return Status(Errc::no_device, "dist: " + std::to_string(gpus) + " GPUs asked for but this machine has " + std::to_string(count));
  if (gpus == 0) gpus = count;
  std::vector<ncclComm_t> comms(gpus);
  std::vector<int> devs(gpus);
  for (int i = 0; i < gpus; ++i) devs[i] = i;
  if (ncclResult_t r = ncclCommInitAll(comms.data(), gpus, devs.data()); r != ncclSuccess)
    return detail::nccl_failed(r, "ncclCommInitAll over " + std::to_string(gpus) + " GPUs");
  for (int i = 0; i < gpus; ++i) {
    Comm c;
    c.impl_ = std::make_unique<Impl>();
    if (Status s = c.impl_->init(comms[i], true, devs[i]); !s) {
      for (int j = i + 1; j < gpus; ++j) ncclCommDestroy(comms[j]);
      out->clear();
      return s;
    }
    out->push_back(std::move(c));
  }
  std::vector<Impl*> all;
  for (auto& c : *out) all.push_back(c.impl_.get());
  if (Status s = detail::setup_direct_local(all); !s) {
    out->clear();
    return s;
  }
  return {};
}

Status Comm::from_nccl(ncclComm* comm, Comm* out) {
  if (comm == nullptr) return Status(Errc::invalid_argument, "dist: Comm::from_nccl of a null ncclComm_t");
  int dev = -1;
  if (ncclResult_t r = ncclCommCuDevice(comm, &dev); r != ncclSuccess) return detail::nccl_failed(r, "ncclCommCuDevice");
  Comm c;
  c.impl_ = std::make_unique<Impl>();
  if (Status s = c.impl_->init(comm, false, dev); !s) return s;
  *out = std::move(c);
  return {};
}

Status for_each_rank(std::vector<Comm>& comms, const std::function<Status(Comm&)>& fn) {
  std::vector<Status> got(comms.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < comms.size(); ++i)
    threads.emplace_back([&, i] {
      if (const cudaError_t e = cudaSetDevice(comms[i].device()); e != cudaSuccess) {
        got[i] = detail::cuda_failed(e, "cudaSetDevice(" + std::to_string(comms[i].device()) + ")");
        return;
      }
      got[i] = fn(comms[i]);
    });
  for (auto& t : threads) t.join();
  for (const Status& s : got)
    if (!s) return s;
  return {};
}

}  // namespace reducelab::dist
