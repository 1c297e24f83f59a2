#pragma once
namespace rl::lab {
class Device;
// Median GB/s of a read-only kernel (16-byte loads, grid-stride, several loads in flight) over
// a buffer far larger than L2: the most a reduction can read per second on this GPU.
double measure_read_ceiling_gbs(Device& device);
}  // namespace rl::lab
