// The lab's emulated device: the SIMT runtime on this CPU. Times are wall-clock times of the
// emulation, and every report labels them so; they say nothing about a GPU.
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "lab/device.hpp"
#include "simt/runtime.hpp"

namespace rl::lab {
namespace {

class SimtDevice final : public Device {
 public:
  SimtDevice() {
    const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
    info_.name = "SIMT emulator on " + cpu_model_name("CPU") + " (" + std::to_string(workers) + " threads)";
    info_.backend = Backend::simt;
    info_.sm_count = static_cast<int>(workers);
    info_.warp_size = 32;
    info_.max_threads_per_block = 1024;
    info_.global_memory_bytes = std::size_t(8) << 30;  // what the lab lets the emulator hold
    simt::reset_accumulated_report();
  }
  const DeviceInfo& info() const override { return info_; }
  DeviceInfo& mutable_info() { return info_; }

  void* allocate(std::size_t bytes) override { return simt::device_malloc(bytes); }
  void release(void* p) noexcept override { simt::device_free(p); }
  std::size_t free_memory() override { return info_.global_memory_bytes; }
  void upload(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void download(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copy(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void fill(void* dst, unsigned char byte, std::size_t bytes) override { std::memset(dst, byte, bytes); }
  void synchronize() override {}
  void* stream() override { return nullptr; }
  void flush_l2() override {}
  double time_ms(const std::function<void()>& work) override {
    const auto t0 = std::chrono::steady_clock::now();
    work();
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::milli>(t1 - t0).count();
  }
  double read_ceiling_gbs() override { return 0; }
  std::string take_diagnostics() override {
    // Every launch since the last call: a launcher runs its kernel and then the final pass.
    const simt::LaunchReport report = simt::accumulated_report();
    simt::reset_accumulated_report();
    if (!report.has_races()) return {};
    return "race reported (" + std::to_string(report.races_found) + " racing pairs): " +
           (report.races.empty() ? std::string("-") : report.races.front().message);
  }

 private:
  DeviceInfo info_;
};

}  // namespace

void configure_simt(const SimtOptions& o) {
  simt::set_checks(o.checks);
  switch (o.schedule) {
    case SimtOptions::in_order: simt::set_schedule(simt::Schedule::in_order, o.seed); break;
    case SimtOptions::reverse: simt::set_schedule(simt::Schedule::reverse, o.seed); break;
    case SimtOptions::random: simt::set_schedule(simt::Schedule::random, o.seed); break;
  }
}

std::unique_ptr<Device> open_simt_device() { return std::make_unique<SimtDevice>(); }

}  // namespace rl::lab
