// nvcc's instantiation of gallery/modern.cuh: the CUDA launchers of the family.
#include "gallery/bind.hpp"
#include "gallery/modern.cuh"

std::vector<rl::gallery::Binding> rl::gallery::cuda_modern_bindings() { return modern_bindings(); }
