// reduce_axis and reduce_segments on the GPU, compiled for these element types (every built-in op).
#include "segments/device_segments.cuh"

REDUCELAB_SEGMENTS_INSTANTIATE_TYPE(::reducelab::half)
REDUCELAB_SEGMENTS_INSTANTIATE_TYPE(::reducelab::bfloat16)
