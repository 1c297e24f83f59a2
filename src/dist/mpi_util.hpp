#pragma once
// MPI helpers shared by the MPI transport and the NCCL communicator made from MPI.
#include <mpi.h>

#include <string>
#include <vector>

#include "reducelab/reduce.hpp"

namespace reducelab::dist::detail {
// MPI_Init_thread unless the caller has initialised MPI (finalised at exit); rank and size of
// MPI_COMM_WORLD.
Status ensure_mpi(int* rank, int* size);
// MPI_Testall until done or the deadline passes (then a timeout naming the rank).
Status wait_all(std::vector<MPI_Request>& reqs, int rank, int size, double timeout_s, const std::string& what);
}  // namespace reducelab::dist::detail
