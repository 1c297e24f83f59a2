// g++'s instantiation of gallery/nested.cuh against the SIMT runtime: the simt launchers.
#include "gallery/bind.hpp"
#include "gallery/nested.cuh"

std::vector<rl::gallery::Binding> rl::gallery::simt_nested_bindings() { return nested_bindings(); }
