// g++'s instantiation of gallery/unrolling.cuh against the SIMT runtime: the simt launchers.
#include "gallery/bind.hpp"
#include "gallery/unrolling.cuh"

std::vector<rl::gallery::Binding> rl::gallery::simt_unrolling_bindings() { return unrolling_bindings(); }
