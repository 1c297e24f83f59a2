// g++'s instantiation of gallery/modern.cuh against the SIMT runtime: the simt launchers.
#include "gallery/bind.hpp"
#include "gallery/modern.cuh"

std::vector<rl::gallery::Binding> rl::gallery::simt_modern_bindings() { return modern_bindings(); }
