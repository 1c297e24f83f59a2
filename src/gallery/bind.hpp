#pragma once
// The per-family launch tables, one translation unit per family and backend, generated from
// RL_GALLERY_FAMILIES (gallery/CMakeLists.txt): bind_simt_<family>.cpp (g++) and
// bind_cuda_<family>.cu (nvcc) each include one family header and return its bindings;
// bind.cpp concatenates them into simt_bindings() / cuda_bindings().
#include <vector>

#include "gallery/families.inc"  // generated: RL_GALLERY_FOR_EACH_FAMILY
#include "gallery/registry.hpp"

namespace rl::gallery {

#define RL_GALLERY_DECLARE_TABLES_(family)               \
  std::vector<Binding> simt_##family##_bindings();       \
  std::vector<Binding> cuda_##family##_bindings();
RL_GALLERY_FOR_EACH_FAMILY(RL_GALLERY_DECLARE_TABLES_)
#undef RL_GALLERY_DECLARE_TABLES_

std::vector<Binding> cuda_cub_bindings();  // cub_reference.cu

}  // namespace rl::gallery
