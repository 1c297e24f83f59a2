#pragma once
// What every gallery family header shares: the kernel vocabulary (simt/portable.cuh), the
// registry's LaunchArgs, the ops, and the few host-side helpers a launcher needs (grid sizes,
// typed device pointers, the launch configuration). Included by nvcc and by g++.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "analysis/probe.cuh"
#include "gallery/geometry.hpp"
#include "gallery/registry.hpp"
#include "core/ops.hpp"
#include "simt/portable.cuh"

// Everything the gallery's headers define lives in an inline namespace named for the backend
// that compiled it: nvcc and g++ compile the same templates (launchers, helpers) with the same
// signatures, and one program links both. Without it the linker would keep one backend's copy
// of, say, launch_reduceNeighbored<int, long long, Sum<long long>> for both.
// The instrumented CUDA build (RL_PROBES_ON_GPU, bind_cuda_probed.cu) is a third copy.
#if RL_SIMT
#define RL_GALLERY_BACKEND simt_backend
#elif defined(RL_PROBES_ON_GPU) && RL_PROBES_ON_GPU
#define RL_GALLERY_BACKEND cuda_probed_backend
#else
#define RL_GALLERY_BACKEND cuda_backend
#endif

namespace rl::gallery::inline RL_GALLERY_BACKEND {

using core::Max;
using core::Min;
using core::Sum;

// The elements block `block` of a tile of `tile` elements starting at `base` actually owns:
// min(tile, n - base). Every kernel guards its partner reads with it, so a tail block never
// reads or writes past n (seed 000's `if (idx > n) return;` is the bug this replaces).
RL_HD_INLINE std::size_t owned(std::size_t n, std::size_t base, std::size_t tile) {
  return base >= n ? 0 : (n - base < tile ? n - base : tile);
}

// Typed views of LaunchArgs' device pointers. Launchers pass these raw pointers to rl::launch,
// which converts them to the kernel's rl::gmem<T> parameters (on SIMT: checked pointers).
template <class T>
T* dev(void* p) {
  return static_cast<T*>(p);
}
template <class T>
const T* dev_const(void* p) {
  return static_cast<const T*>(p);
}

inline rl::LaunchConfig config(const LaunchArgs& a, std::size_t grid, unsigned block,
                               std::size_t shared_bytes, const char* name) {
  if (grid == 0) grid = 1;
  if (grid > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::invalid_argument(std::string(name) + ": grid of " + std::to_string(grid) +
                                " blocks exceeds the device limit 2^31-1; use a larger block");
  rl::LaunchConfig cfg{};
  cfg.grid = dim3(static_cast<unsigned>(grid));
  cfg.block = dim3(block);
  cfg.shared_bytes = shared_bytes;
  cfg.stream = static_cast<rl::stream_t>(a.stream);
  cfg.name = name;
  return cfg;
}

// A block size the kernel's shape cannot take is a caller's bug the lab screens first; the
// launchers still refuse it rather than compute garbage.
inline void require_pow2_block(const LaunchArgs& a, const char* name, unsigned min_block = 32,
                               unsigned max_block = 1024) {
  if (!is_pow2(a.block) || a.block < min_block || a.block > max_block)
    throw std::invalid_argument(std::string(name) + ": block " + std::to_string(a.block) +
                                " is not a power of two in [" + std::to_string(min_block) + ", " +
                                std::to_string(max_block) + "]");
  if (a.n == 0) throw std::invalid_argument(std::string(name) + ": n must be at least 1");
}

}  // namespace rl::gallery::inline RL_GALLERY_BACKEND
