// One-line errors of reducelab::dist.
#include <cstdio>
#include <string>

#include "dist/internal.hpp"

namespace reducelab::dist::detail {

namespace rd = reducelab::detail::dist;

Status failure_status(const rd::Failure& f, int my_rank, int ranks) {
  const std::string who = "dist::reduce (rank " + std::to_string(my_rank) + " of " + std::to_string(ranks) + "): ";
  const std::string r = "rank " + std::to_string(f.rank);
  switch (static_cast<rd::Code>(f.code)) {
    case rd::Code::ok: return {};
    case rd::Code::bad_record:
      return Status(Errc::invalid_argument, who + r + " sent something that is not a reducelab::dist record; every rank must call dist::reduce at the same point");
    case rd::Code::dtype_mismatch:
      return Status(Errc::invalid_argument, who + r + " reduces " + rd::dtype_name(f.a) + " but rank 0 reduces " + rd::dtype_name(f.b) + "; every rank must pass the same dtype");
    case rd::Code::op_mismatch:
      return Status(Errc::invalid_argument, who + r + " asks for " + rd::op_name_of(f.a) + " but rank 0 for " + rd::op_name_of(f.b) + "; every rank must pass the same op");
    case rd::Code::bad_input:
      if (f.b == 2) return Status(Errc::invalid_argument, who + r + "'s output is null");
      return Status(Errc::invalid_argument, who + r + "'s shard is null but its n = " + std::to_string(f.a));
    case rd::Code::total_mismatch:
      return Status(Errc::invalid_argument, who + r + " expects a total of " + std::to_string(f.a) + " elements but the shards hold " + std::to_string(f.b));
    case rd::Code::peer_timeout: {
      char secs[32];
      std::snprintf(secs, sizeof secs, "%g", static_cast<double>(f.a) / 1000.0);
      return Status(Errc::cuda_error, who + "the record of " + r + " did not arrive within " + secs +
                                          " s; a rank did not join the call (the communicator is no longer usable)");
    }
    case rd::Code::empty_input:
      return Status(Errc::empty_input, who + "every shard is empty (total n = 0): this op has no value");
  }
  return Status(Errc::invalid_argument, who + "unknown failure code " + std::to_string(f.code));
}

Status timeout_status(int rank, int ranks, double seconds, const std::string& what) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", seconds);
  return Status(Errc::cuda_error, "dist::reduce (rank " + std::to_string(rank) + " of " + std::to_string(ranks) + "): " + what +
                                      " did not complete within " + buf + " s; a rank did not join the call");
}

}  // namespace reducelab::dist::detail
