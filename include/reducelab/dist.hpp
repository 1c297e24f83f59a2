#pragma once
// reducelab::dist — one reduction of an array sharded over several ranks (GPUs, processes,
// hosts), the result on every rank, with the bits of reducelab::reduce over the whole array on
// one GPU and of reducelab::cpu::reduce, for any split of the array: uneven shards, empty
// shards, any alignment. argmin/argmax return the index in the whole array (shards in rank
// order). docs/dist.md explains why the split cannot change the bits.
//
// On GPUs (NCCL):
//   std::vector<reducelab::dist::Comm> comms;
//   reducelab::dist::Comm::local(2, &comms);              // every GPU of this process (or a count)
//   reducelab::dist::for_each_rank(comms, [&](reducelab::dist::Comm& c) {  // one thread per GPU
//     return reducelab::dist::reduce(d_shard[c.rank()], n[c.rank()], reducelab::op::sum{}, d_out[c.rank()], c, stream[c.rank()]);
//   });
// or one process per GPU under mpirun: Comm::from_mpi(&comm), or a caller's ncclComm_t:
// Comm::from_nccl(nccl_comm, &comm).
//
// On the CPU (no GPU needed): the same combining over a Transport, either ranks simulated by
// threads of one process (simulated_ranks) or MPI processes (mpi_transport):
//   auto r = reducelab::dist::cpu::reduce(shard, n, reducelab::op::max{}, *transport);
//
// Errors come back as a Status with one line naming the rank: ranks that disagree on the dtype,
// the operation or the total, a null shard with n > 0, a peer that never joins (a timeout), NCCL
// or MPI missing from the build, more GPUs asked for than present. A rank with bad input still
// takes part in the exchange, so every rank reports the error and none hangs.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "reducelab/reduce.hpp"

struct ncclComm;

namespace reducelab::dist {

struct Options {
  // The total element count this rank expects (all shards together); checked against the
  // shards' sum on every rank when set.
  std::uint64_t total = ~0ull;
  // Seconds to wait for a collective before giving up (the communicator is then aborted).
  double timeout_s = 120;
  // true: return once the result is written (and checked: disagreements and timeouts come back
  // here). false: return once the work is enqueued; Comm::check() reports what the device found.
  bool wait = true;
};

// ---- GPUs over NCCL -------------------------------------------------------------------------

class Comm {
 public:
  Comm();
  ~Comm();
  Comm(Comm&&) noexcept;
  Comm& operator=(Comm&&) noexcept;
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  // (a) One communicator per GPU of this process: ranks 0..gpus-1 on devices 0..gpus-1
  // (ncclCommInitAll). gpus == 0: every GPU the process sees.
  [[nodiscard]] static Status local(int gpus, std::vector<Comm>* out);
  // (b) One process per GPU: MPI_COMM_WORLD (MPI_Init is called if the caller has not), the NCCL
  // id sent by MPI_Bcast, the GPU picked by the process's rank on its host (or `device` >= 0).
  [[nodiscard]] static Status from_mpi(Comm* out, int device = -1);
  // (c) A communicator the caller made; it stays the caller's (not destroyed here). The current
  // CUDA device must be the communicator's.
  [[nodiscard]] static Status from_nccl(ncclComm* comm, Comm* out);

  int rank() const;
  int size() const;
  int device() const;
  bool valid() const { return impl_ != nullptr; }
  ncclComm* nccl() const;
  // Waits for `stream` and reports the first disagreement the device recorded since the last
  // check (the way to see errors of calls made with Options::wait = false).
  [[nodiscard]] Status check(stream_t stream, double timeout_s = 120);

  struct Impl;
  Impl* impl() const { return impl_.get(); }

 private:
  std::unique_ptr<Impl> impl_;
};

// Runs fn once per communicator, each on its own thread with its communicator's device current
// (NCCL needs the ranks of one process to call concurrently). The first error wins.
[[nodiscard]] Status for_each_rank(std::vector<Comm>& comms, const std::function<Status(Comm&)>& fn);

// Reduces this rank's shard local[0, local_n) (device memory, any alignment; null only when
// local_n == 0) with the other ranks' and writes the result to *output (device memory) on
// `stream`. Every rank of `comm` must call it with the same T and Op, in the same order as its
// other collectives on `comm`.
template <class T, class Op>
[[nodiscard]] Status reduce(const T* local, std::uint64_t local_n, Op op, result_t<T, Op>* output, Comm& comm,
                            stream_t stream = nullptr, const Options& options = {});

// Whether this build has NCCL (and a GPU); the message says why not.
[[nodiscard]] Status nccl_available();
// Whether this build has MPI.
[[nodiscard]] bool mpi_built();

// ---- the CPU backend: host memory, ranks as threads or MPI processes --------------------------

// Collectives on host memory among ranks. Each call is made by every rank, in the same order.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // all[r * bytes, (r + 1) * bytes) receives rank r's `mine`.
  [[nodiscard]] virtual Status allgather(const void* mine, void* all, std::size_t bytes, double timeout_s) = 0;
  struct Piece {
    int peer;
    void* data;
    std::size_t bytes;
  };
  // Sends and receives point to point; between two ranks, messages arrive in the order sent.
  [[nodiscard]] virtual Status exchange(const std::vector<Piece>& sends, const std::vector<Piece>& recvs,
                                        double timeout_s) = 0;
};

// `ranks` transports for threads of this process: rank r's must be used by one thread at a time.
std::vector<std::unique_ptr<Transport>> simulated_ranks(int ranks);

// MPI_COMM_WORLD as a transport (MPI_Init is called if the caller has not). Without MPI in the
// build: nullptr and a Status saying so.
[[nodiscard]] Status mpi_transport(std::unique_ptr<Transport>* out);

namespace cpu {
// The shard's reduction over `transport`, on `threads` cores (0: all); the result on every rank.
template <class T, class Op>
[[nodiscard]] Result<result_t<T, Op>> reduce(const T* local, std::uint64_t local_n, Op op, Transport& transport,
                                             const Options& options = {}, unsigned threads = 0);
}  // namespace cpu

#define REDUCELAB_DIST_DECLARE_(T, OP)                                                                   \
  extern template Status reduce<T, op::OP>(const T*, std::uint64_t, op::OP, result_t<T, op::OP>*, Comm&,  \
                                           stream_t, const Options&);                                    \
  namespace cpu {                                                                                        \
  extern template Result<result_t<T, op::OP>> reduce<T, op::OP>(const T*, std::uint64_t, op::OP, Transport&, \
                                                                const Options&, unsigned);               \
  }
#define REDUCELAB_DIST_DECLARE_TYPE_(T) REDUCELAB_FOR_EACH_OP(REDUCELAB_DIST_DECLARE_, T)
REDUCELAB_FOR_EACH_TYPE(REDUCELAB_DIST_DECLARE_TYPE_)
#undef REDUCELAB_DIST_DECLARE_TYPE_
#undef REDUCELAB_DIST_DECLARE_

}  // namespace reducelab::dist
