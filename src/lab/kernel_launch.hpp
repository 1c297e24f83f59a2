#pragma once
// One gallery kernel made ready to launch on a device: its footprint for the launch's shape, its
// buffers (input uploaded, as the accumulator type for in-place kernels; scratch; result) and
// the LaunchArgs that point at them. `run` and `explain --backend cuda` both launch through it.
#include "gallery/registry.hpp"
#include "lab/device.hpp"
#include "lab/input.hpp"

namespace rl::lab {

class KernelLaunch {
 public:
  // `shape`: n, block, dtype, op, accumulate and param of the launch (its pointers are ignored).
  // `keep_pristine`: in-place kernels also keep an untouched copy of the input for restore_input.
  KernelLaunch(const gallery::Entry& e, const gallery::LaunchArgs& shape, Device& device,
               const HostArray& input, bool keep_pristine);
  KernelLaunch(const KernelLaunch&) = delete;
  KernelLaunch& operator=(const KernelLaunch&) = delete;

  const gallery::Footprint& footprint() const { return footprint_; }
  const gallery::LaunchArgs& args() const { return args_; }
  void* result() const { return result_.get(); }
  // Copies the pristine input back over the buffer an in-place kernel reduced in (no-op
  // otherwise, or without keep_pristine).
  void restore_input();

 private:
  Device& device_;
  gallery::Footprint footprint_;
  Buffer work_, pristine_, scratch_, result_;
  gallery::LaunchArgs args_;
};

}  // namespace rl::lab
