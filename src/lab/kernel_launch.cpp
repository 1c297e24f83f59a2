#include "lab/kernel_launch.hpp"

#include <algorithm>
#include <vector>

namespace rl::lab {

KernelLaunch::KernelLaunch(const gallery::Entry& e, const gallery::LaunchArgs& shape, Device& device,
                           const HostArray& input, bool keep_pristine)
    : device_(device),
      footprint_(gallery::footprint(e, shape.n, shape.block, shape.dtype, shape.accumulate)),
      args_(shape) {
  std::vector<unsigned char> converted;
  const void* host = input.bytes.data();
  if (footprint_.in_place && footprint_.input_element_bytes != input.element_bytes) {
    converted = to_accumulator(input, shape.accumulate);
    host = converted.data();
  }
  work_ = Buffer(device, footprint_.input_bytes);
  if (footprint_.in_place && keep_pristine) pristine_ = Buffer(device, footprint_.input_bytes);
  scratch_ = Buffer(device, std::max<std::size_t>(footprint_.scratch_bytes, 1));
  result_ = Buffer(device, footprint_.acc_bytes);
  device.upload(work_.get(), host, footprint_.input_bytes);
  if (pristine_.get()) device.copy(pristine_.get(), work_.get(), footprint_.input_bytes);
  args_.input = work_.get();
  args_.scratch = scratch_.get();
  args_.result = result_.get();
  args_.stream = device.stream();
}

void KernelLaunch::restore_input() {
  if (pristine_.get()) device_.copy(work_.get(), pristine_.get(), footprint_.input_bytes);
}

}  // namespace rl::lab
