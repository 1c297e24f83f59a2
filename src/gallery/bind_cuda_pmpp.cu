// nvcc's instantiation of gallery/pmpp.cuh: the CUDA launchers of the family.
#include "gallery/bind.hpp"
#include "gallery/pmpp.cuh"

std::vector<rl::gallery::Binding> rl::gallery::cuda_pmpp_bindings() { return pmpp_bindings(); }
