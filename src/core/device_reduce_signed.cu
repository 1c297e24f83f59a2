// The library's GPU reduce, compiled for these element types (every built-in op).
#include "reducelab/detail/device_reduce.cuh"

REDUCELAB_INSTANTIATE_TYPE(std::int8_t)
REDUCELAB_INSTANTIATE_TYPE(std::int16_t)
REDUCELAB_INSTANTIATE_TYPE(std::int32_t)
REDUCELAB_INSTANTIATE_TYPE(std::int64_t)
