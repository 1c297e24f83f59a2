// The library's GPU reduce, compiled for these element types (every built-in op).
#include "reducelab/detail/device_reduce.cuh"

REDUCELAB_INSTANTIATE_TYPE(float)
REDUCELAB_INSTANTIATE_TYPE(double)
