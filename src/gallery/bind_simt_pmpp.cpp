// g++'s instantiation of gallery/pmpp.cuh against the SIMT runtime: the simt launchers.
#include "gallery/bind.hpp"
#include "gallery/pmpp.cuh"

std::vector<rl::gallery::Binding> rl::gallery::simt_pmpp_bindings() { return pmpp_bindings(); }
