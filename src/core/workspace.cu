#include <cuda_runtime.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>

#include "reducelab/detail/launch.cuh"
#include "reducelab/detail/workspace.hpp"

namespace reducelab::detail {
namespace {

constexpr std::size_t kHeaderBytes = 48;  // ticket (4 bytes, padded), accumulator, result (16 each)
constexpr std::size_t kBytes =
    kHeaderBytes + kPartialSlots * kPartialSlotBytes + kExactBytes + kPieceBytes + kPieceTickets * sizeof(unsigned) +
    kPostBytes;

// cudaStreamPerThread is one handle for many streams (one per host thread): key it by thread.
using Key = std::tuple<int, stream_t, std::thread::id>;

std::mutex g_mutex;
std::map<Key, void*>& table() {
  static auto* t = new std::map<Key, void*>;  // never destroyed: outlives static destructors
  return *t;
}

}  // namespace

Status cuda_status(int cuda_error, const char* what) {
  const auto e = static_cast<cudaError_t>(cuda_error);
  return Status(e == cudaErrorMemoryAllocation ? Errc::out_of_memory : Errc::cuda_error,
                std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")",
                cuda_error);
}

Status current_sm_count(int* device, int* sms) {
  static int cached[64] = {};
  cudaError_t e = cudaGetDevice(device);
  if (e != cudaSuccess) return cuda_status(e, "cudaGetDevice");
  if (*device >= 0 && *device < 64 && cached[*device] > 0) {
    *sms = cached[*device];
    return {};
  }
  e = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, *device);
  if (e != cudaSuccess) return cuda_status(e, "cudaDeviceGetAttribute(MultiProcessorCount)");
  if (*device >= 0 && *device < 64) cached[*device] = *sms;
  return {};
}

Status wide_memory(int device, bool* wide) {
  static std::atomic<int> cache[64];  // 1: narrow, 2: wide
  int kind = 0;
  const Status s = once_per_device(cache, device, &kind, [device](int* value) -> Status {
    int khz = 0, bits = 0;
    cudaError_t e = cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device);
    if (e != cudaSuccess) return cuda_status(e, "cudaDeviceGetAttribute(MemoryClockRate)");
    e = cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, device);
    if (e != cudaSuccess) return cuda_status(e, "cudaDeviceGetAttribute(GlobalMemoryBusWidth)");
    const double bytes_per_s = 2.0 * khz * 1e3 * bits / 8;  // two transfers a clock
    *value = bytes_per_s >= 4e12 ? 2 : 1;
    return {};
  });
  *wide = kind == 2;
  return s;
}

Status workspace_for(stream_t stream, Workspace* out) {
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return cuda_status(e, "cudaGetDevice");
  const auto thread =
      stream == reinterpret_cast<stream_t>(cudaStreamPerThread) ? std::this_thread::get_id() : std::thread::id();
  const Key key{device, stream, thread};
  void* base = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = table().find(key);
    if (it != table().end()) {
      base = it->second;
    } else {
      // cudaMalloc is not a stream operation; relaxed mode lets it run while `stream` (or any
      // other) is being captured.
      cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
      e = cudaThreadExchangeStreamCaptureMode(&mode);
      if (e != cudaSuccess) return cuda_status(e, "cudaThreadExchangeStreamCaptureMode");
      const cudaError_t alloc = cudaMalloc(&base, kBytes);
      e = cudaThreadExchangeStreamCaptureMode(&mode);
      if (alloc != cudaSuccess) return cuda_status(alloc, "allocating the reduce workspace");
      if (e != cudaSuccess) return cuda_status(e, "cudaThreadExchangeStreamCaptureMode");
      e = cudaMemsetAsync(base, 0, kBytes, stream);
      if (e != cudaSuccess) {
        cudaFree(base);
        return cuda_status(e, "zeroing the reduce workspace");
      }
      table().emplace(key, base);
    }
  }
  auto* bytes = static_cast<unsigned char*>(base);
  out->ticket = reinterpret_cast<unsigned*>(bytes);
  out->accumulator = bytes + 16;
  out->result = bytes + 32;
  out->partials = bytes + kHeaderBytes;
  out->exact = reinterpret_cast<unsigned long long*>(bytes + kHeaderBytes + kPartialSlots * kPartialSlotBytes);
  out->pieces = bytes + kHeaderBytes + kPartialSlots * kPartialSlotBytes + kExactBytes;
  out->piece_tickets = reinterpret_cast<unsigned*>(static_cast<unsigned char*>(out->pieces) + kPieceBytes);
  out->posts = reinterpret_cast<unsigned long long*>(reinterpret_cast<unsigned char*>(out->piece_tickets) +
                                                     kPieceTickets * sizeof(unsigned));
  return {};
}

}  // namespace reducelab::detail

namespace reducelab {
Status gpu_available() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    return Status(Errc::no_device, std::string("no usable CUDA device: ") + cudaGetErrorString(e), e);
  if (count == 0) return Status(Errc::no_device, "no CUDA device");
  return {};
}
}  // namespace reducelab
