#pragma once
// The lab's view of a backend: memory, copies, timing and what the device is. Two
// implementations: device_cuda.cpp (a GPU through the CUDA runtime) and device_simt.cpp (the
// SIMT emulator on this CPU). Nothing above the lab knows which one it holds.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <utility>

#include "gallery/registry.hpp"

namespace rl::lab {

using gallery::Backend;

enum class BackendChoice { automatic, cuda, simt };

struct DeviceInfo {
  std::string name;
  Backend backend = Backend::simt;
  int sm_count = 0;          // multiprocessors (cuda); worker threads (simt)
  int warp_size = 32;
  std::size_t l2_bytes = 0;
  int memory_clock_khz = 0;
  int bus_width_bits = 0;
  double theoretical_gbs = 0;  // seed 002: memory clock x bus width x 2 (DDR) / 8
  std::size_t global_memory_bytes = 0;
  int max_threads_per_block = 1024;
  int cc_major = 0, cc_minor = 0;
  std::string chosen_because;  // how --backend auto decided, for the header line
};

// A pointer chase's latency per load, measured on the GPU (lab/latency.hpp).
struct MemoryLatency {
  double dram_ns = 0;  // a chase over a buffer far larger than L2
  double l2_ns = 0;    // a chase over a buffer that fits in L2 (loads bypass L1)
  std::size_t dram_buffer_bytes = 0, l2_buffer_bytes = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;

  virtual void* allocate(std::size_t bytes) = 0;  // throws on failure, naming the size
  virtual void release(void* p) noexcept = 0;
  virtual std::size_t free_memory() = 0;
  virtual void upload(void* device_dst, const void* host_src, std::size_t bytes) = 0;
  virtual void download(void* host_dst, const void* device_src, std::size_t bytes) = 0;
  virtual void copy(void* device_dst, const void* device_src, std::size_t bytes) = 0;
  virtual void fill(void* device_dst, unsigned char byte, std::size_t bytes) = 0;
  virtual void synchronize() = 0;
  virtual void* stream() = 0;

  // Evicts the input from L2 (cuda: writes a buffer twice the L2's size). No-op on simt.
  virtual void flush_l2() = 0;
  // Runs `work` (which enqueues on stream()) and returns its duration in ms: CUDA events on
  // the GPU, a steady clock around the synchronous emulation on simt.
  virtual double time_ms(const std::function<void()>& work) = 0;
  // Bandwidth of a read-only kernel with 16-byte loads over a buffer far larger than L2,
  // measured once per process (median of repeats); 0 where it means nothing (simt).
  virtual double read_ceiling_gbs() = 0;
  // Bandwidth of reads that hit in L2 (a buffer of half the L2's size, read again and again), for
  // timings that leave their input in L2; 0 where it means nothing (simt).
  virtual double l2_read_ceiling_gbs() { return 0; }
  // Bandwidth of a device-to-device copy of 1 GiB, bytes read plus bytes written, measured once
  // per process; 0 where it means nothing (simt).
  virtual double copy_ceiling_gbs() { return 0; }
  // The pointer chase's DRAM and L2 latency (lab/latency.hpp), measured once per device; empty
  // where there is no memory latency to measure (simt).
  virtual std::optional<MemoryLatency> memory_latency() { return std::nullopt; }
  // What the backend noticed during the last timed or untimed work that a row should show
  // (simt: race reports). Empty when nothing.
  virtual std::string take_diagnostics() { return {}; }
};

// A device allocation that frees itself.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Device& d, std::size_t bytes) : device_(&d), bytes_(bytes), ptr_(d.allocate(bytes)) {}
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    Buffer(std::move(o)).swap(*this);
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    if (ptr_) device_->release(ptr_);
  }
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void swap(Buffer& o) noexcept {
    std::swap(device_, o.device_);
    std::swap(bytes_, o.bytes_);
    std::swap(ptr_, o.ptr_);
  }
  Device* device_ = nullptr;
  std::size_t bytes_ = 0;
  void* ptr_ = nullptr;
};

// How the SIMT emulator runs kernels: the order it resumes runnable threads in (a missing
// barrier shows up as a wrong answer or a race report under another order), and whether race
// and barrier checks run (bounds are always checked).
struct SimtOptions {
  enum Schedule { in_order, reverse, random } schedule = in_order;
  std::uint64_t seed = 1;
  bool checks = true;
};
void configure_simt(const SimtOptions& options);

// This machine's CPU model as /proc/cpuinfo names it, or `fallback` where it does not.
std::string cpu_model_name(const std::string& fallback);

// Whether a CUDA device can be used, and if not, why (no toolkit built in, no driver, no GPU).
bool cuda_usable(std::string* why);
// Opens the backend asked for; `automatic` picks cuda when usable, simt otherwise, and records
// why in info().chosen_because. Asking for cuda where none is usable throws UsageError.
std::unique_ptr<Device> open_device(BackendChoice choice);
std::unique_ptr<Device> open_simt_device();
std::unique_ptr<Device> open_cuda_device();  // only when built with CUDA

}  // namespace rl::lab
