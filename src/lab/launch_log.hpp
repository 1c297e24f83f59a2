#pragma once
// LaunchLog: the kernels rl::launch starts while it lives (the CUDA backend reports them to the
// launch observer; simt does not).
#include <vector>

#include "simt/launch_observer.hpp"

namespace rl::lab {

class LaunchLog {
 public:
  LaunchLog() : previous_(launch_observer()) { launch_observer() = {&record, this}; }
  ~LaunchLog() { launch_observer() = previous_; }
  LaunchLog(const LaunchLog&) = delete;
  LaunchLog& operator=(const LaunchLog&) = delete;
  const std::vector<LaunchRecord>& records() const { return records_; }

 private:
  static void record(const LaunchRecord& r, void* self) { static_cast<LaunchLog*>(self)->records_.push_back(r); }
  LaunchObserver previous_;
  std::vector<LaunchRecord> records_;
};

}  // namespace rl::lab
