#pragma once
// The reference row's entry: CUB's cub::DeviceReduce, launched by cub_reference.cu (CUDA only).
// Host code, so that the registry lists it in builds without CUDA too (as GPU only).
#include "gallery/geometry.hpp"
#include "gallery/registry.hpp"

namespace rl::gallery {

inline constexpr Entry kCubEntry{
    .id = "cub",
    .name = "cub::DeviceReduce",
    .family = "reference",
    .seed = "reference (CUB DeviceReduce)",
    .technique = "the library baseline: cub::DeviceReduce::Sum/Min/Max (Reduce for int32 accumulated as "
                 "int64), tuned per architecture; --block is ignored",
    .still_slow = "nothing the gallery knows of: the row every other row is measured against",
    .final_pass = "CUB's own (its temp storage is carved from scratch)",
    .constraints = {.pow2_block = false,  // CUB picks its own block size; --block is ignored
                    .gpu_only = true,
                    .gpu_only_reason = "CUB is NVIDIA's CUDA library, not a kernel written in the gallery's "
                                       "portable vocabulary",
                    .is_reference = true},
    .bytes_read = read_once,
    .scratch_bytes = cub_scratch,
};

}  // namespace rl::gallery
