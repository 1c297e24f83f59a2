// nvcc's instantiation of gallery/unrolling.cuh: the CUDA launchers of the family.
#include "gallery/bind.hpp"
#include "gallery/unrolling.cuh"

std::vector<rl::gallery::Binding> rl::gallery::cuda_unrolling_bindings() { return unrolling_bindings(); }
