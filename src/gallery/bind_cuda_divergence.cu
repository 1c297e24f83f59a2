// nvcc's instantiation of gallery/divergence.cuh: the CUDA launchers of the family.
#include "gallery/bind.hpp"
#include "gallery/divergence.cuh"

std::vector<rl::gallery::Binding> rl::gallery::cuda_divergence_bindings() { return divergence_bindings(); }
