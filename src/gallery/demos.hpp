#pragma once
// Host side of seed 002's demos (demos.cuh): which demo a row is, and the values its kernels
// must produce, shared by the counts on SIMT (lab/demos.cpp) and the GPU timing
// (lab/demos_cuda.cu).
#include <cstddef>

namespace rl::gallery {

// mathKernel1 (branch on tid % 2), mathKernel2 (branch on (tid / warpSize) % 2) and the
// branch-free select.
enum class MathDemo { lane_parity, warp_parity, select };

// The value every math demo writes at tid.
constexpr float math_value(std::size_t tid, MathDemo which) {
  const bool first = which == MathDemo::warp_parity ? (tid / 32) % 2 == 0 : tid % 2 == 0;
  return first ? 100.0f : 200.0f;
}

// sumMatrixOnGPU2D's inputs: element i of A and of B (C = A + B).
constexpr float matrix_a(std::size_t i) { return static_cast<float>(i % 251); }
constexpr float matrix_b(std::size_t i) { return static_cast<float>(i % 13); }

}  // namespace rl::gallery
