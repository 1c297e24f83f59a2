#pragma once
// What the CPU and the NCCL paths of reducelab::dist share on the host.
#include <string>

#include "reducelab/detail/dist_record.hpp"
#include "reducelab/dist.hpp"

namespace reducelab::dist::detail {

// The one line a failure found in the records becomes, the same on every rank.
Status failure_status(const reducelab::detail::dist::Failure& f, int my_rank, int ranks);

// A rank's timeout, naming it.
Status timeout_status(int rank, int ranks, double seconds, const std::string& what);

}  // namespace reducelab::dist::detail
