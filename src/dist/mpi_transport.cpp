// MPI_COMM_WORLD as a reducelab::dist::Transport: non-blocking collectives polled against a
// deadline, so a rank that never joins gives an error instead of a hang.
#include <mpi.h>

#include <chrono>
#include <climits>
#include <string>
#include <thread>
#include <vector>

#include "dist/internal.hpp"
#include "dist/mpi_util.hpp"
#include "reducelab/dist.hpp"

namespace reducelab::dist {

namespace detail {

Status ensure_mpi(int* rank, int* size) {
  int initialised = 0, finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  if (finalised) return Status(Errc::invalid_argument, "dist: MPI was already finalised");
  if (!initialised) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
      return Status(Errc::invalid_argument, "dist: MPI_Init_thread failed");
    std::atexit([] {
      int f = 0;
      MPI_Finalized(&f);
      if (!f) MPI_Finalize();
    });
  }
  if (MPI_Comm_rank(MPI_COMM_WORLD, rank) != MPI_SUCCESS || MPI_Comm_size(MPI_COMM_WORLD, size) != MPI_SUCCESS)
    return Status(Errc::invalid_argument, "dist: MPI_Comm_rank/MPI_Comm_size failed");
  return {};
}

Status wait_all(std::vector<MPI_Request>& reqs, int rank, int size, double timeout_s, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    int done = 0;
    if (MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
      return Status(Errc::invalid_argument, "dist (rank " + std::to_string(rank) + "): MPI_Testall failed during " + what);
    if (done) return {};
    if (std::chrono::steady_clock::now() > deadline) return timeout_status(rank, size, timeout_s, what);
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

}  // namespace detail

namespace {

class MpiTransport final : public Transport {
 public:
  MpiTransport(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status allgather(const void* mine, void* all, std::size_t bytes, double timeout_s) override {
    if (bytes > INT_MAX) return Status(Errc::invalid_argument, "dist: an all-gather of " + std::to_string(bytes) + " bytes is past MPI's int count");
    std::vector<MPI_Request> req(1);
    if (MPI_Iallgather(mine, static_cast<int>(bytes), MPI_BYTE, all, static_cast<int>(bytes), MPI_BYTE, MPI_COMM_WORLD, &req[0]) != MPI_SUCCESS)
      return Status(Errc::invalid_argument, "dist: MPI_Iallgather failed");
    return detail::wait_all(req, rank_, size_, timeout_s, "an MPI all-gather");
  }
  Status exchange(const std::vector<Piece>& sends, const std::vector<Piece>& recvs, double timeout_s) override {
    std::vector<MPI_Request> reqs;
    for (const Piece& p : recvs) {
      if (p.bytes > INT_MAX) return Status(Errc::invalid_argument, "dist: a halo of " + std::to_string(p.bytes) + " bytes is past MPI's int count");
      reqs.emplace_back();
      if (MPI_Irecv(p.data, static_cast<int>(p.bytes), MPI_BYTE, p.peer, 7, MPI_COMM_WORLD, &reqs.back()) != MPI_SUCCESS)
        return Status(Errc::invalid_argument, "dist: MPI_Irecv failed");
    }
    for (const Piece& p : sends) {
      if (p.bytes > INT_MAX) return Status(Errc::invalid_argument, "dist: a halo of " + std::to_string(p.bytes) + " bytes is past MPI's int count");
      reqs.emplace_back();
      if (MPI_Isend(p.data, static_cast<int>(p.bytes), MPI_BYTE, p.peer, 7, MPI_COMM_WORLD, &reqs.back()) != MPI_SUCCESS)
        return Status(Errc::invalid_argument, "dist: MPI_Isend failed");
    }
    return detail::wait_all(reqs, rank_, size_, timeout_s, "an MPI halo exchange");
  }

 private:
  int rank_, size_;
};

}  // namespace

Status mpi_transport(std::unique_ptr<Transport>* out) {
  int rank = 0, size = 0;
  if (Status s = detail::ensure_mpi(&rank, &size); !s) return s;
  *out = std::make_unique<MpiTransport>(rank, size);
  return {};
}

bool mpi_built() { return true; }

}  // namespace reducelab::dist
