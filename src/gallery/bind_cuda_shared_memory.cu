// nvcc's instantiation of gallery/shared_memory.cuh: the CUDA launchers of the family.
#include "gallery/bind.hpp"
#include "gallery/shared_memory.cuh"

std::vector<rl::gallery::Binding> rl::gallery::cuda_shared_memory_bindings() { return shared_memory_bindings(); }
