// Built without MPI: the MPI transport says so.
#include "reducelab/dist.hpp"

namespace reducelab::dist {
Status mpi_transport(std::unique_ptr<Transport>* out) {
  out->reset();
  return Status(Errc::invalid_argument, "dist: this build has no MPI (install libopenmpi-dev and reconfigure)");
}
bool mpi_built() { return false; }
}  // namespace reducelab::dist
