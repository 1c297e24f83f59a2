#pragma once
// The NCCL communicator behind reducelab::dist::Comm (CUDA builds only).
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <string>

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

  ~Impl();
  Status init(ncclComm_t c, bool own, int dev);
  Status wait(stream_t stream, double timeout_s, const char* what);
  Status usable() const;
  Status take_failure(stream_t stream, double timeout_s);
};

}  // namespace reducelab::dist
