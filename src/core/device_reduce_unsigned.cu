// The library's GPU reduce, compiled for these element types (every built-in op).
#include "reducelab/detail/device_reduce.cuh"

REDUCELAB_INSTANTIATE_TYPE(std::uint8_t)
REDUCELAB_INSTANTIATE_TYPE(std::uint16_t)
REDUCELAB_INSTANTIATE_TYPE(std::uint32_t)
REDUCELAB_INSTANTIATE_TYPE(std::uint64_t)
