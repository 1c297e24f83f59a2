// reduce_axis and reduce_segments on the GPU, compiled for these element types (every built-in op).
#include "segments/device_segments.cuh"

REDUCELAB_SEGMENTS_INSTANTIATE_TYPE(std::uint8_t)
REDUCELAB_SEGMENTS_INSTANTIATE_TYPE(std::uint16_t)
REDUCELAB_SEGMENTS_INSTANTIATE_TYPE(std::uint32_t)
REDUCELAB_SEGMENTS_INSTANTIATE_TYPE(std::uint64_t)
