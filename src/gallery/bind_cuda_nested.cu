// nvcc's instantiation of gallery/nested.cuh: the CUDA launchers of the family.
#include "gallery/bind.hpp"
#include "gallery/nested.cuh"

std::vector<rl::gallery::Binding> rl::gallery::cuda_nested_bindings() { return nested_bindings(); }
