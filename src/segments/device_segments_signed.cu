// reduce_axis and reduce_segments on the GPU, compiled for these element types (every built-in op).
#include "segments/device_segments.cuh"

REDUCELAB_SEGMENTS_INSTANTIATE_TYPE(std::int8_t)
REDUCELAB_SEGMENTS_INSTANTIATE_TYPE(std::int16_t)
REDUCELAB_SEGMENTS_INSTANTIATE_TYPE(std::int32_t)
REDUCELAB_SEGMENTS_INSTANTIATE_TYPE(std::int64_t)
