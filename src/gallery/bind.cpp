// The two launch tables of registry.hpp, concatenated from the per-family translation units.
#include <vector>

#include "gallery/bind.hpp"
#include "gallery/registry.hpp"

namespace rl::gallery {
namespace {
void append(std::vector<Binding>& all, std::vector<Binding> part) {
  all.insert(all.end(), part.begin(), part.end());
}
}  // namespace

const std::vector<Binding>& simt_bindings() {
  static const std::vector<Binding> all = [] {
    std::vector<Binding> v;
    append(v, simt_divergence_bindings());
    append(v, simt_unrolling_bindings());
    append(v, simt_shared_memory_bindings());
    append(v, simt_pmpp_bindings());
    append(v, simt_nested_bindings());
    append(v, simt_modern_bindings());
    return v;
  }();
  return all;
}

const std::vector<Binding>& cuda_bindings() {
  static const std::vector<Binding> all = [] {
    std::vector<Binding> v;
#if RL_WITH_CUDA
    append(v, cuda_divergence_bindings());
    append(v, cuda_unrolling_bindings());
    append(v, cuda_shared_memory_bindings());
    append(v, cuda_pmpp_bindings());
    append(v, cuda_nested_bindings());
    append(v, cuda_modern_bindings());
    append(v, cuda_cub_bindings());
#endif
    return v;  // empty when built without CUDA
  }();
  return all;
}

}  // namespace rl::gallery
