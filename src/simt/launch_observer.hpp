#pragma once
// A host-side hook on rl::launch (portable.cuh, CUDA backend): when set, it sees every kernel a
// launcher starts, after the launch succeeded. The lab uses it to read a kernel's registers,
// shared memory and occupancy (`reducelab explain --backend cuda`) without knowing the kernel.
// Unset (the default) it costs one load and branch on the host per launch, nothing on the GPU.
#include <cstddef>

namespace rl {

struct LaunchRecord {
  const void* kernel = nullptr;  // the host stub: what cudaFuncGetAttributes takes
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  std::size_t shared_bytes = 0;  // dynamic shared memory of the launch
  const char* name = "kernel";
  bool helper = false;  // LaunchConfig::helper: bookkeeping, not the kernel a caller asked for
};

struct LaunchObserver {
  void (*fn)(const LaunchRecord&, void* context) = nullptr;
  void* context = nullptr;
};

inline LaunchObserver& launch_observer() {
  static LaunchObserver observer;
  return observer;
}

}  // namespace rl
