// The lab's GPU: one CUDA device, one stream, events for timing.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "lab/device.hpp"
#include "lab/errors.hpp"
#include "lab/latency.hpp"
#include "lab/read_ceiling.hpp"
#include "simt/cuda_check.hpp"

namespace rl::lab {
namespace {

// A start/stop event pair; move-only.
class EventPair {
 public:
  EventPair() {
    RL_CUDA_CHECK(cudaEventCreate(&start_));
    RL_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  ~EventPair() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  cudaEvent_t start() const { return start_; }
  cudaEvent_t stop() const { return stop_; }

 private:
  cudaEvent_t start_{}, stop_{};
};

class CudaDevice final : public Device {
 public:
  CudaDevice() {
    RL_CUDA_CHECK(cudaSetDevice(0));
    cudaDeviceProp p{};
    RL_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
    info_.name = p.name;
    info_.backend = Backend::cuda;
    info_.sm_count = p.multiProcessorCount;
    info_.warp_size = p.warpSize;
    info_.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
    info_.global_memory_bytes = p.totalGlobalMem;
    info_.max_threads_per_block = p.maxThreadsPerBlock;
    info_.cc_major = p.major;
    info_.cc_minor = p.minor;
    RL_CUDA_CHECK(cudaDeviceGetAttribute(&info_.memory_clock_khz, cudaDevAttrMemoryClockRate, 0));
    RL_CUDA_CHECK(cudaDeviceGetAttribute(&info_.bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, 0));
    // Seed 002's formula: clock (Hz) x bus width (bytes) x 2 transfers per clock.
    info_.theoretical_gbs = 2.0 * info_.memory_clock_khz * 1e3 * (info_.bus_width_bits / 8.0) / 1e9;
    RL_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  ~CudaDevice() override {
    if (flush_) cudaFree(flush_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  const DeviceInfo& info() const override { return info_; }
  DeviceInfo& mutable_info() { return info_; }

  void* allocate(std::size_t bytes) override {
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, std::max<std::size_t>(bytes, 1));
    if (e != cudaSuccess) {
      cudaGetLastError();
      throw std::runtime_error("cudaMalloc of " + std::to_string(bytes) +
                               " bytes failed: " + cudaGetErrorName(e));
    }
    return p;
  }
  void release(void* p) noexcept override { cudaFree(p); }
  std::size_t free_memory() override {
    std::size_t free = 0, total = 0;
    RL_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return free;
  }
  void upload(void* dst, const void* src, std::size_t bytes) override {
    RL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
    synchronize();
  }
  void download(void* dst, const void* src, std::size_t bytes) override {
    RL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    synchronize();
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    RL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
  }
  void fill(void* dst, unsigned char byte, std::size_t bytes) override {
    RL_CUDA_CHECK(cudaMemsetAsync(dst, byte, bytes, stream_));
  }
  void synchronize() override { RL_CUDA_CHECK(cudaStreamSynchronize(stream_)); }
  void* stream() override { return stream_; }

  void flush_l2() override {
    const std::size_t bytes = 2 * std::max<std::size_t>(info_.l2_bytes, 1 << 20);
    if (!flush_) {
      flush_ = allocate(bytes);
      RL_CUDA_CHECK(cudaMemsetAsync(flush_, 1, bytes, stream_));
    }
    if (std::getenv("REDUCELAB_FLUSH_BY_MEMSET"))  // the dirty-L2 flush, kept to measure the difference
      RL_CUDA_CHECK(cudaMemsetAsync(flush_, ++flush_value_, bytes, stream_));
    else
      read_through(*this, flush_, bytes);
  }

  double time_ms(const std::function<void()>& work) override {
    EventPair ev;
    RL_CUDA_CHECK(cudaEventRecord(ev.start(), stream_));
    work();
    RL_CUDA_CHECK(cudaEventRecord(ev.stop(), stream_));
    RL_CUDA_CHECK(cudaEventSynchronize(ev.stop()));
    float ms = 0;
    RL_CUDA_CHECK(cudaEventElapsedTime(&ms, ev.start(), ev.stop()));
    return ms;
  }

  double read_ceiling_gbs() override {
    if (ceiling_ == 0) ceiling_ = measure_read_ceiling_gbs(*this);
    return ceiling_;
  }

  double l2_read_ceiling_gbs() override {
    if (l2_ceiling_ == 0) l2_ceiling_ = measure_l2_read_ceiling_gbs(*this);
    return l2_ceiling_;
  }

  double copy_ceiling_gbs() override {
    if (copy_ceiling_ == 0) copy_ceiling_ = measure_copy_ceiling_gbs(*this);
    return copy_ceiling_;
  }

  std::optional<MemoryLatency> memory_latency() override {
    if (!latency_) latency_ = measure_memory_latency(*this);
    return latency_;
  }

 private:
  DeviceInfo info_;
  cudaStream_t stream_ = nullptr;
  void* flush_ = nullptr;
  unsigned char flush_value_ = 0;
  std::optional<MemoryLatency> latency_;
  double ceiling_ = 0, l2_ceiling_ = 0, copy_ceiling_ = 0;
};

}  // namespace

bool cuda_usable(std::string* why) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorName(e) + ")";
    return false;
  }
  if (count == 0) {
    if (why) *why = "no CUDA device (cudaGetDeviceCount found 0)";
    return false;
  }
  if (why) *why = "CUDA device found";
  return true;
}

std::unique_ptr<Device> open_cuda_device() { return std::make_unique<CudaDevice>(); }

}  // namespace rl::lab
