// dist::reduce for the floating-point types.
#include "dist/reduce_impl.cuh"

REDUCELAB_DIST_INSTANTIATE_TYPE_(::reducelab::half)
REDUCELAB_DIST_INSTANTIATE_TYPE_(::reducelab::bfloat16)
REDUCELAB_DIST_INSTANTIATE_TYPE_(float)
REDUCELAB_DIST_INSTANTIATE_TYPE_(double)
