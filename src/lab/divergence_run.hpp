#pragma once
// Divergence from boundary checks, executed: boundaryCheck2D (gallery/demos.cuh) runs on the SIMT
// backend with a lane recorder, so the count comes from the kernel itself and can be held
// against the closed form of analysis/divergence.hpp.
#include <cstdint>
#include <optional>

#include "analysis/divergence.hpp"

namespace rl::lab {

// Largest extent (elements) the emulator is asked to execute.
inline constexpr std::uint64_t kMaxExecutedExtent = std::uint64_t(1) << 24;

// Divergent warps counted by running the kernel on simt, or nullopt when the extent is over
// kMaxExecutedExtent.
std::optional<std::uint64_t> executed_boundary_divergence(analysis::Extent2 extent, analysis::Extent2 block);

}  // namespace rl::lab
