// g++'s instantiation of gallery/shared_memory.cuh against the SIMT runtime: the simt launchers.
#include "gallery/bind.hpp"
#include "gallery/shared_memory.cuh"

std::vector<rl::gallery::Binding> rl::gallery::simt_shared_memory_bindings() { return shared_memory_bindings(); }
