// A build without CUDA (so without NCCL): every GPU entry point says so; the CPU backend works.
#include "reducelab/dist.hpp"

namespace reducelab::dist {

struct Comm::Impl {};

namespace {
Status no_nccl() {
  return Status(Errc::no_device, "dist: this build has no CUDA backend, so no NCCL; use dist::cpu::reduce or rebuild with CUDA");
}
}  // namespace

Comm::Comm() = default;
Comm::~Comm() = default;
Comm::Comm(Comm&&) noexcept = default;
Comm& Comm::operator=(Comm&&) noexcept = default;
int Comm::rank() const { return -1; }
int Comm::size() const { return 0; }
int Comm::device() const { return -1; }
ncclComm* Comm::nccl() const { return nullptr; }
Status Comm::check(stream_t, double) { return no_nccl(); }
Status Comm::local(int, std::vector<Comm>* out) {
  out->clear();
  return no_nccl();
}
Status Comm::from_mpi(Comm*, int) { return no_nccl(); }
Status Comm::from_nccl(ncclComm*, Comm*) { return no_nccl(); }
Status for_each_rank(std::vector<Comm>&, const std::function<Status(Comm&)>&) { return no_nccl(); }
Status nccl_available() { return no_nccl(); }

template <class T, class Op>
Status reduce(const T*, std::uint64_t, Op, result_t<T, Op>*, Comm&, stream_t, const Options&) {
  return no_nccl();
}

#define REDUCELAB_DIST_NONE_(T, OP) \
  template Status reduce<T, op::OP>(const T*, std::uint64_t, op::OP, result_t<T, op::OP>*, Comm&, stream_t, const Options&);
#define REDUCELAB_DIST_NONE_TYPE_(T) REDUCELAB_FOR_EACH_OP(REDUCELAB_DIST_NONE_, T)
REDUCELAB_FOR_EACH_TYPE(REDUCELAB_DIST_NONE_TYPE_)

}  // namespace reducelab::dist
