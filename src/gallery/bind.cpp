// The two launch tables of registry.hpp, concatenated from the per-family translation units in
// the order of RL_GALLERY_FAMILIES.
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
#define RL_GALLERY_APPEND_(family) append(v, simt_##family##_bindings());
    RL_GALLERY_FOR_EACH_FAMILY(RL_GALLERY_APPEND_)
#undef RL_GALLERY_APPEND_
    return v;
  }();
  return all;
}

const std::vector<Binding>& cuda_bindings() {
  static const std::vector<Binding> all = [] {
    std::vector<Binding> v;
#if RL_WITH_CUDA
#define RL_GALLERY_APPEND_(family) append(v, cuda_##family##_bindings());
    RL_GALLERY_FOR_EACH_FAMILY(RL_GALLERY_APPEND_)
#undef RL_GALLERY_APPEND_
    append(v, cuda_cub_bindings());
#endif
    return v;  // empty when built without CUDA
  }();
  return all;
}

}  // namespace rl::gallery
