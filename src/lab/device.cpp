#include "lab/device.hpp"

#include <fstream>

#include "lab/errors.hpp"

namespace rl::lab {

std::string cpu_model_name(const std::string& fallback) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      const auto start = colon == std::string::npos ? colon : line.find_first_not_of(" \t", colon + 1);
      if (start != std::string::npos) return line.substr(start);
    }
  return fallback;
}

#if !RL_WITH_CUDA
bool cuda_usable(std::string* why) {
  if (why) *why = "this reducelab was built without the CUDA backend (no CUDA toolkit at build time)";
  return false;
}
std::unique_ptr<Device> open_cuda_device() {
  throw UsageError("--backend cuda: this reducelab was built without the CUDA backend");
}
#endif

std::unique_ptr<Device> open_device(BackendChoice choice) {
  std::string why;
  const bool usable = choice != BackendChoice::simt && cuda_usable(&why);
  if (choice == BackendChoice::cuda && !usable)
    throw UsageError("--backend cuda: " + why + "; use --backend simt to run on the CPU emulator");
  if (usable) {
    auto d = open_cuda_device();
    const_cast<DeviceInfo&>(d->info()).chosen_because =
        choice == BackendChoice::automatic ? "auto: a CUDA device is present" : "asked for";
    return d;
  }
  auto d = open_simt_device();
  const_cast<DeviceInfo&>(d->info()).chosen_because =
      choice == BackendChoice::automatic ? "auto: " + why + ", so the SIMT emulator runs the kernels"
                                         : "asked for";
  return d;
}

}  // namespace rl::lab
