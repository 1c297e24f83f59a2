#pragma once
// The per-family launch tables, one translation unit each so that builds run in parallel:
// bind_cuda_<family>.cu (nvcc) and bind_simt_<family>.cpp (g++) each include one family header
// and return its bindings; bind.cpp concatenates them into simt_bindings() / cuda_bindings().
#include <vector>

#include "gallery/registry.hpp"

namespace rl::gallery {

std::vector<Binding> simt_divergence_bindings();
std::vector<Binding> simt_unrolling_bindings();
std::vector<Binding> simt_shared_memory_bindings();
std::vector<Binding> simt_pmpp_bindings();
std::vector<Binding> simt_nested_bindings();
std::vector<Binding> simt_modern_bindings();

std::vector<Binding> cuda_divergence_bindings();
std::vector<Binding> cuda_unrolling_bindings();
std::vector<Binding> cuda_shared_memory_bindings();
std::vector<Binding> cuda_pmpp_bindings();
std::vector<Binding> cuda_nested_bindings();  // -rdc=true target (dynamic parallelism)
std::vector<Binding> cuda_modern_bindings();
std::vector<Binding> cuda_cub_bindings();     // cub_reference.cu

}  // namespace rl::gallery
