#pragma once
// Kernels that demonstrate divergence and access patterns rather than reduce (seed 003, PMPP
// 4.5; seed 002 §2.2 and §2.6). Not registry entries: `reducelab divergence` and
// `reducelab demos` run them.
#include "analysis/probe.cuh"
#include "gallery/common.cuh"
#include "gallery/demos.hpp"

namespace rl::gallery::inline RL_GALLERY_BACKEND {

// boundaryCheck2D — PMPP 4.5: every thread tests its coordinates against the data's extent
// before working, as any kernel over a picture whose size is not a multiple of the block must.
// The probe inside the branch counts, per warp, the lanes that pass.
template <class T>
__global__ void boundaryCheck2D(rl::gmem<T> out, unsigned width, unsigned height) {
  const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) {
    rl::probe::active(0);
    out[static_cast<std::size_t>(y) * width + x] = T(1);
  }
}

// --- seed 002: warp divergence (§2.2) and block shapes (§2.6) ---
//
// Probe steps name branch bodies here, not strides: kDemoIf and kDemoElse are the two sides of a
// branch, kDemoSelect the branch-free body, kDemoLoad / kDemoStore the matrix kernel's loads and
// its store (separate, so that load efficiency counts loads only).
inline constexpr unsigned kDemoIf = 1, kDemoElse = 2, kDemoSelect = 4, kDemoLoad = 8, kDemoStore = 16;

// mathKernel1 — the book's first example of divergence: even and odd threads take different
// sides, so every warp runs both, each with half its lanes.
template <class T>
__global__ void mathKernel1(rl::gmem<T> c, std::size_t n) {
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  T a = T(0), b = T(0);
  if (tid % 2 == 0) {
    rl::probe::active(kDemoIf);
    a = T(100);
  } else {
    rl::probe::active(kDemoElse);
    b = T(200);
  }
  if (tid < n) c[tid] = a + b;
}

// mathKernel2 — seed 002 §2.2: the branch on (tid / warpSize) % 2 is uniform in each warp: whole
// warps take one side, nothing diverges (the seed's `global_`, undeclared `c` corrected).
template <class T>
__global__ void mathKernel2(rl::gmem<T> c, std::size_t n) {
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  T a = T(0), b = T(0);
  if ((tid / warpSize) % 2 == 0) {
    rl::probe::active(kDemoIf);
    a = T(100);
  } else {
    rl::probe::active(kDemoElse);
    b = T(200);
  }
  if (tid < n) c[tid] = a + b;
}

// mathKernelSelect — mathKernel1's values without a branch: both are selected by the parity, so
// every lane runs the same instructions (what the compiler may do itself by predication).
template <class T>
__global__ void mathKernelSelect(rl::gmem<T> c, std::size_t n) {
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  rl::probe::active(kDemoSelect);
  const bool even = tid % 2 == 0;
  const T a = even ? T(100) : T(0);
  const T b = even ? T(0) : T(200);
  if (tid < n) c[tid] = a + b;
}

// sumMatrixOnGPU2D — seed 002 §2.6: C = A + B over an nx x ny matrix, one thread per element
// of a 2-D grid (the seed's NX/Ny spelling corrected). A block whose x extent is half a warp
// makes each warp span two rows: two separate 64-byte pieces per access.
template <class T>
__global__ void sumMatrixOnGPU2D(rl::gmem<const T> A, rl::gmem<const T> B, rl::gmem<T> C, unsigned nx, unsigned ny) {
  const unsigned ix = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned iy = blockIdx.y * blockDim.y + threadIdx.y;
  if (ix < nx && iy < ny) {
    const std::size_t idx = static_cast<std::size_t>(iy) * nx + ix;
    T sum;
    {
      const rl::probe::Step probe(kDemoLoad);
      T a = A[idx];
      T b = B[idx];
      sum = a + b;
    }
    const rl::probe::Step probe(kDemoStore);
    C[idx] = sum;
  }
}

inline void launch_math_demo(MathDemo which, float* c, std::size_t n, unsigned block, rl::stream_t stream) {
  const std::size_t grid = (n + block - 1) / block;
  const rl::LaunchConfig cfg{dim3(static_cast<unsigned>(grid)), dim3(block), 0, stream, "mathKernel"};
  switch (which) {
    case MathDemo::lane_parity: return rl::launch(mathKernel1<float>, cfg, c, n);
    case MathDemo::warp_parity: return rl::launch(mathKernel2<float>, cfg, c, n);
    case MathDemo::select: return rl::launch(mathKernelSelect<float>, cfg, c, n);
  }
}

inline void launch_sum_matrix(const float* A, const float* B, float* C, unsigned nx, unsigned ny, unsigned bx,
                              unsigned by, rl::stream_t stream) {
  const rl::LaunchConfig cfg{dim3((nx + bx - 1) / bx, (ny + by - 1) / by), dim3(bx, by), 0, stream,
                             "sumMatrixOnGPU2D"};
  rl::launch(sumMatrixOnGPU2D<float>, cfg, A, B, C, nx, ny);
}

}  // namespace rl::gallery::inline RL_GALLERY_BACKEND
