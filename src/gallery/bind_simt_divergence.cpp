// g++'s instantiation of gallery/divergence.cuh against the SIMT runtime: the simt launchers.
#include "gallery/bind.hpp"
#include "gallery/divergence.cuh"

std::vector<rl::gallery::Binding> rl::gallery::simt_divergence_bindings() { return divergence_bindings(); }
