#pragma once
#include <cstddef>
namespace rl::lab {
class Device;
// Median GB/s of read-only kernels (16-byte loads, several in flight) over a buffer far larger
// than L2, the better of two ways of reading (grid-stride, and contiguous 16 KiB units): the most
// a reduction can read per second on this GPU.
double measure_read_ceiling_gbs(Device& device);
// Median GB/s moved (bytes read plus bytes written) by a copy of 1 GiB into another 1 GiB, timed
// cold, the better of the driver's copy and a kernel of 16-byte loads and stores: what a byte
// written costs on this GPU, for results that are a large part of the traffic.
double measure_copy_ceiling_gbs(Device& device);
// Median GB/s of the same loads over a buffer of half the L2's size that the kernel reads again
// and again, one launch for all the passes, bypassing L1 (ld.global.cg): the most a reduction
// whose input is already in L2 (batch and sync timings of inputs that fit) can read per second.
double measure_l2_read_ceiling_gbs(Device& device);
// Reads `bytes` of device memory at `data` on the device's stream. Reading a buffer twice the
// L2's size evicts everything else and leaves only clean lines behind, so the next kernel pays
// for its own misses and for no write-back (a memset would leave the L2 full of dirty lines that
// drain to DRAM while the timed kernel runs).
void read_through(Device& device, const void* data, std::size_t bytes);
}  // namespace rl::lab
