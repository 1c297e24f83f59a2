#pragma once
// `reducelab demos`: seed 002's divergence and block-shape experiments. Counts come from the SIMT
// backend's recorder at a small size (exact, and per warp the same at any size that is a multiple
// of the block); on a GPU each demo is also timed at the seed's size (CUDA events, median).
//   mathKernel1 (branch on tid % 2), mathKernel2 (branch on (tid / warpSize) % 2), a branch-free
//   select; sumMatrixOnGPU2D with blocks (32,32), (32,16), (16,32), (16,16).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gallery/demos.hpp"
#include "lab/device.hpp"

namespace rl::lab {

struct DemoOptions {
  std::size_t math_n_simt = std::size_t(1) << 16;  // elements the counts run on
  std::size_t math_n_gpu = std::size_t(1) << 24;   // elements timed on the GPU
  unsigned math_block = 64;                        // the book's block for mathKernel
  unsigned matrix_simt = 256;                      // nx = ny for the counts
  unsigned matrix_gpu = 1u << 14;                  // nx = ny timed (the seed's 16384 x 16384)
  int repeats = 20;
};

struct DemoRow {
  std::string id;       // lane-parity, warp-parity, select, matrix-32x32, ...
  std::string kernel;   // the book's name
  std::string launch;   // "block 64" or "block (32,16)"
  // What to launch: a math demo, or (unset) sumMatrixOnGPU2D with blocks of block_x x block_y.
  std::optional<gallery::MathDemo> math;
  unsigned block_x = 0, block_y = 0;
  // counts, on simt
  std::size_t count_size = 0;       // elements (math) or nx = ny (matrix) the counts ran on
  std::uint64_t warps = 0;          // warps launched
  std::uint64_t body_warp_executions = 0;  // warp executions of the branch bodies (or the body)
  std::uint64_t divergent_warps = 0;       // warps with lanes on both sides of the branch
  double lane_utilization = 0;      // active lanes / lane slots over those executions
  std::uint64_t load_accesses = 0, load_requests = 0, load_sectors = 0;  // warp-level global loads
  double requests_per_access = 0, sectors_per_request = 0;
  double load_efficiency = 0;       // requested bytes / bytes of the 32-byte sectors moved
  double line_efficiency = 0;       // requested bytes / bytes of the 128-byte lines touched
  bool counts_ok = false;           // the simt run wrote the right values
  // time, on the GPU
  std::size_t gpu_size = 0;
  double ms_median = 0, ms_min = 0, ms_max = 0;
  bool gpu_ok = false;
};

struct DemoReport {
  DeviceInfo device;   // the GPU when timed, else the emulator
  bool timed = false;
  DemoOptions options;
  std::vector<DemoRow> rows;
};

// Counts on simt; with `gpu` (a CUDA device) also times. Throws UsageError for bad options.
DemoReport run_demos(const DemoOptions& options, Device* gpu);

// The GPU half (demos_cuda.cu): times `row` on the device and sets its time fields.
void time_demo_on_gpu(DemoRow& row, const DemoOptions& options, Device& gpu);

}  // namespace rl::lab
