#pragma once
#include <cstddef>
namespace rl::lab {
class Device;
// Median GB/s of a read-only kernel (16-byte loads, grid-stride, several loads in flight) over
// a buffer far larger than L2: the most a reduction can read per second on this GPU.
double measure_read_ceiling_gbs(Device& device);
// Reads `bytes` of device memory at `data` on the device's stream. Reading a buffer twice the
// L2's size evicts everything else and leaves only clean lines behind, so the next kernel pays
// for its own misses and for no write-back (a memset would leave the L2 full of dirty lines that
// drain to DRAM while the timed kernel runs).
void read_through(Device& device, const void* data, std::size_t bytes);
}  // namespace rl::lab
