// A CUDA build without MPI: Comm::from_mpi says so.
#include "dist/nccl_impl.hpp"

namespace reducelab::dist {
Status Comm::from_mpi(Comm*, int) {
  return Status(Errc::invalid_argument, "dist: this build has no MPI (install libopenmpi-dev and reconfigure)");
}
}  // namespace reducelab::dist
