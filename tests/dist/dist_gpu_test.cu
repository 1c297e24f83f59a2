// reducelab::dist on GPUs over NCCL: for every type and op, random splits (empty shards, any
// alignment) give the bits of reducelab::reduce on one GPU over the whole array, and of the CPU
// backend where the array is small enough to copy back.
//   dist_gpu_tests [--mpi] [--splits N] [--big] [--gpus N] [--timeout S]
// One process: every GPU it sees (at least two, or it skips with exit status 77). --mpi: one
// process per GPU under mpirun (Comm::from_mpi). --big adds n = 2^32 (int8 and half) and 2^31.
// Every rank builds the whole array on its GPU from a hash of the index, so no rank copies
// another's data; its shard is a slice of it.
#include <chrono>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "reducelab/dist.hpp"
#include "reducelab/reduce.hpp"

namespace {

using namespace reducelab;
using half = reducelab::half;  // cuda_fp16.h declares a global ::half too
using bfloat16 = reducelab::bfloat16;
namespace rdist = reducelab::dist;

__host__ __device__ inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Elements exactly representable in T: integers over their range, floats k / 2^m in [-1, 1);
// products: +-1 or 1 + k / 256.
template <class T>
__global__ void fill(T* x, std::uint64_t n, std::uint64_t seed, bool product) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n; i += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint64_t h = mix(i ^ (seed << 40) ^ seed);
    float f;
    if (product) f = (h & 1) ? 1.0f + float((h >> 1) & 15) / 256.0f : -1.0f;
    else f = float(std::int32_t(h >> 40) - (1 << 23)) / float(1 << 23);  // 24 bits
    if constexpr (std::is_same_v<T, half>) {
      const __half v = __float2half_rn(f);
      x[i].bits = __half_as_ushort(v);
    } else if constexpr (std::is_same_v<T, bfloat16>) {
      const __nv_bfloat16 v = __float2bfloat16_rn(f);
      x[i].bits = *reinterpret_cast<const unsigned short*>(&v);
    } else if constexpr (std::is_floating_point_v<T>) {
      x[i] = static_cast<T>(f) + (std::is_same_v<T, double> ? static_cast<T>(double(h & 0xffff) * 0x1p-40) : T(0));
    } else {
      x[i] = static_cast<T>(product ? (h | 1) : h);
    }
  }
}

std::string name_of(const char* t, const char* o) { return std::string(t) + " " + o; }

template <class T>
const char* tname() {
  if constexpr (std::is_same_v<T, half>) return "half";
  else if constexpr (std::is_same_v<T, bfloat16>) return "bf16";
  else if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else if constexpr (std::is_same_v<T, std::int8_t>) return "int8";
  else if constexpr (std::is_same_v<T, std::int16_t>) return "int16";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "int64";
  else if constexpr (std::is_same_v<T, std::uint8_t>) return "uint8";
  else if constexpr (std::is_same_v<T, std::uint16_t>) return "uint16";
  else if constexpr (std::is_same_v<T, std::uint32_t>) return "uint32";
  else return "uint64";
}

template <class R>
bool same(const R& a, const R& b) {
  if constexpr (std::is_same_v<R, half> || std::is_same_v<R, bfloat16>) return a.bits == b.bits;
  else if constexpr (std::is_arithmetic_v<R>) return std::memcmp(&a, &b, sizeof a) == 0;
  else return same(a.value, b.value) && a.index == b.index;
}
template <class R>
std::string show(const R& a) {
  char buf[96];
  if constexpr (std::is_same_v<R, half> || std::is_same_v<R, bfloat16>) std::snprintf(buf, sizeof buf, "bits 0x%04x", a.bits);
  else if constexpr (std::is_floating_point_v<R>) std::snprintf(buf, sizeof buf, "%a", double(a));
  else if constexpr (std::is_arithmetic_v<R>) std::snprintf(buf, sizeof buf, "%lld", (long long)a);
  else return "{" + show(a.value) + ", index " + std::to_string(a.index) + "}";
  return buf;
}

struct Run {
  std::vector<rdist::Comm>* comms = nullptr;  // one process: every GPU
  rdist::Comm* mine = nullptr;                // MPI: this process's
  int world = 1, world_rank = 0;
  int splits = 20;
  bool big = false;
  double timeout = 120;
  std::mutex m;
  int checks = 0, failures = 0;
  void fail(const std::string& s) {
    std::lock_guard lock(m);
    ++failures;
    std::fprintf(stderr, "FAIL %s\n", s.c_str());
  }
};

#define CK(call)                                                                                 \
  do {                                                                                           \
    const cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

// The splits every rank agrees on (same seed everywhere).
std::vector<std::uint64_t> split(std::uint64_t n, int ranks, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> cut(ranks - 1);
  for (auto& c : cut) {
    const auto k = rng() % 5;
    c = k == 0 ? 0 : k == 1 ? n : n == 0 ? 0 : rng() % (n + 1);
  }
  std::sort(cut.begin(), cut.end());
  std::vector<std::uint64_t> off{0};
  off.insert(off.end(), cut.begin(), cut.end());
  off.push_back(n);
  return off;
}

// One (type, op, n): every split; rank `rank` of `ranks` on device `dev`.
template <class T, class Op>
void check_case(Run& run, rdist::Comm& comm, std::uint64_t n, int rank, int ranks) {
  using R = result_t<T, Op>;
  const bool product = std::is_same_v<Op, op::prod>;
  const std::uint64_t seed = n * 1000003 + sizeof(T) * 7 + (product ? 1 : 0);
  T* x = nullptr;
  R* out = nullptr;
  CK(cudaMalloc(&x, std::max<std::uint64_t>(n, 1) * sizeof(T)));
  CK(cudaMalloc(&out, 2 * sizeof(R)));
  cudaStream_t stream;
  CK(cudaStreamCreate(&stream));
  fill<T><<<1024, 256, 0, stream>>>(x, n, seed, product);
  CK(cudaGetLastError());
  // The one-GPU bits, and the CPU's for small n.
  R ref{};
  bool ref_ok = true;
  {
    auto one = reduce_to_host(x, n, Op{}, stream);
    ref_ok = one.status.ok();
    ref = one.value;
    if (ref_ok && n <= (std::uint64_t(1) << 24)) {
      std::vector<T> h(n);
      CK(cudaMemcpy(h.data(), x, n * sizeof(T), cudaMemcpyDeviceToHost));
      auto c = cpu::reduce(h.data(), n, Op{});
      if (!c.status.ok() || !same(c.value, ref))
        run.fail(name_of(tname<T>(), op_name<Op>()) + " n=" + std::to_string(n) + ": the GPU and the CPU disagree on one device");
    }
  }
  for (int s = 0; s < run.splits; ++s) {
    const auto off = split(n, ranks, seed + s * 7919);
    const T* p = off[rank + 1] > off[rank] ? x + off[rank] : nullptr;
    rdist::Options o;
    o.timeout_s = run.timeout;
    const Status st = rdist::reduce(p, off[rank + 1] - off[rank], Op{}, out, comm, stream, o);
    R got{};
    if (st.ok()) CK(cudaMemcpy(&got, out, sizeof(R), cudaMemcpyDeviceToHost));
    std::string shape;
    for (int r = 0; r < ranks; ++r) shape += std::to_string(off[r + 1] - off[r]) + (r + 1 < ranks ? "+" : "");
    {
      std::lock_guard lock(run.m);
      ++run.checks;
    }
    if (st.ok() != ref_ok) {
      run.fail(name_of(tname<T>(), op_name<Op>()) + " n=" + std::to_string(n) + " split " + shape + " rank " +
               std::to_string(rank) + ": status " + (st.ok() ? "ok" : st.message()) + ", one GPU " + (ref_ok ? "ok" : "an error"));
    } else if (ref_ok && !same(got, ref)) {
      run.fail(name_of(tname<T>(), op_name<Op>()) + " n=" + std::to_string(n) + " split " + shape + " rank " +
               std::to_string(rank) + ": " + show(got) + " vs one GPU " + show(ref));
    }
  }
  CK(cudaStreamSynchronize(stream));
  CK(cudaStreamDestroy(stream));
  CK(cudaFree(x));
  CK(cudaFree(out));
}

template <class T, class Op>
void check_op(Run& run, rdist::Comm& comm, int rank, int ranks) {
  constexpr std::uint64_t tile = 32768 / sizeof(T);
  for (std::uint64_t n : {std::uint64_t(0), std::uint64_t(1), std::uint64_t(1000), tile * 5 + 3, (std::uint64_t(1) << 20) + 7,
                          (std::uint64_t(1) << 24) + 13})
    check_case<T, Op>(run, comm, n, rank, ranks);
  if (run.big) {
    if constexpr (std::is_same_v<T, std::int8_t> || std::is_same_v<T, half>) check_case<T, Op>(run, comm, std::uint64_t(1) << 32, rank, ranks);
    if constexpr (std::is_same_v<T, float>) check_case<T, Op>(run, comm, (std::uint64_t(1) << 31) + 5, rank, ranks);
  }
}

template <class T>
void check_type(Run& run, rdist::Comm& comm, int rank, int ranks) {
  check_op<T, op::sum>(run, comm, rank, ranks);
  check_op<T, op::prod>(run, comm, rank, ranks);
  check_op<T, op::min>(run, comm, rank, ranks);
  check_op<T, op::max>(run, comm, rank, ranks);
  check_op<T, op::mean>(run, comm, rank, ranks);
  check_op<T, op::argmin>(run, comm, rank, ranks);
  check_op<T, op::argmax>(run, comm, rank, ranks);
}

void check_all(Run& run, rdist::Comm& comm) {
  const int rank = comm.rank(), ranks = comm.size();
  check_type<std::int8_t>(run, comm, rank, ranks);
  check_type<std::int16_t>(run, comm, rank, ranks);
  check_type<std::int32_t>(run, comm, rank, ranks);
  check_type<std::int64_t>(run, comm, rank, ranks);
  check_type<std::uint8_t>(run, comm, rank, ranks);
  check_type<std::uint16_t>(run, comm, rank, ranks);
  check_type<std::uint32_t>(run, comm, rank, ranks);
  check_type<std::uint64_t>(run, comm, rank, ranks);
  check_type<half>(run, comm, rank, ranks);
  check_type<bfloat16>(run, comm, rank, ranks);
  check_type<float>(run, comm, rank, ranks);
  check_type<double>(run, comm, rank, ranks);
  // Disagreement: the last rank asks for max where the others ask for sum; every rank fails
  // (with one rank there is nobody to disagree with, and the call succeeds).
  float* x = nullptr;
  float* out = nullptr;
  CK(cudaMalloc(&x, 1024 * sizeof(float)));
  CK(cudaMalloc(&out, sizeof(float)));
  CK(cudaMemset(x, 0, 1024 * sizeof(float)));
  rdist::Options o;
  o.timeout_s = run.timeout;
  const Status s = rank == ranks - 1 ? rdist::reduce(x, 1024, op::max{}, out, comm, nullptr, o)
                                     : rdist::reduce(x, 1024, op::sum{}, out, comm, nullptr, o);
  const std::string want = "rank " + std::to_string(ranks - 1) + " asks for max but rank 0 for sum";
  {
    std::lock_guard lock(run.m);
    ++run.checks;
  }
  if (ranks < 2) {  // one rank cannot disagree with itself: its max simply runs
    if (!s.ok()) run.fail("rank 0 alone: " + s.message());
  } else if (s.ok() || s.message().find(want) == std::string::npos)
    run.fail("rank " + std::to_string(rank) + ": expected \"" + want + "\", got \"" + s.message() + "\"");
  // Still usable after a disagreement: a plain sum.
  float got = -1;
  const Status t = rdist::reduce(x, 1024, op::sum{}, out, comm, nullptr, o);
  if (t.ok()) CK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
  if (!t.ok() || got != 0.0f) run.fail("rank " + std::to_string(rank) + ": the communicator is not usable after a reported disagreement: " + t.message());
  CK(cudaFree(x));
  CK(cudaFree(out));
}

// A rank that never joins: rank 0 calls alone and must get a one-line error within its timeout
// (naming the missing rank on the direct exchange, the collective on NCCL), not hang; after that its
// communicator refuses further calls instead of mixing them up with the missing rank's.
void check_missing_peer(Run& run, int gpus) {
  std::vector<rdist::Comm> comms;
  if (Status s = rdist::Comm::local(gpus, &comms); !s) {
    run.fail("Comm::local for the missing-peer check: " + s.message());
    return;
  }
  CK(cudaSetDevice(comms[0].device()));
  float* x = nullptr;
  float* out = nullptr;
  CK(cudaMalloc(&x, 1024 * sizeof(float)));
  CK(cudaMalloc(&out, sizeof(float)));
  CK(cudaMemset(x, 0, 1024 * sizeof(float)));
  rdist::Options o;
  o.timeout_s = 1.0;
  const auto start = std::chrono::steady_clock::now();
  const Status s = rdist::reduce(x, 1024, op::sum{}, out, comms[0], nullptr, o);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const Status again = rdist::reduce(x, 1024, op::sum{}, out, comms[0], nullptr, o);
  {
    std::lock_guard lock(run.m);
    run.checks += 2;
  }
  const bool named = s.message().find("rank 1 did not arrive") != std::string::npos ||
                     s.message().find("record of rank ") != std::string::npos ||
                     s.message().find("did not complete within 1 s") != std::string::npos;
  if (s.ok() || !named || took > 5)
    run.fail("rank 0 alone: expected a timeout naming the missing rank within 1 s, got \"" + s.message() + "\" after " +
             std::to_string(took) + " s");
  if (again.ok()) run.fail("rank 0 alone: a call after a missing peer succeeded");
  CK(cudaFree(x));
  CK(cudaFree(out));
}

}  // namespace

int main(int argc, char** argv) {
  Run run;
  bool mpi = false;
  int gpus = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mpi") mpi = true;
    else if (a == "--big") run.big = true;
    else if (a == "--splits" && i + 1 < argc) run.splits = std::atoi(argv[++i]);
    else if (a == "--gpus" && i + 1 < argc) gpus = std::atoi(argv[++i]);
    else if (a == "--timeout" && i + 1 < argc) run.timeout = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "dist_gpu_tests: unknown argument %s (use --mpi, --big, --splits N, --gpus N, --timeout S)\n", a.c_str());
      return 2;
    }
  }
  if (Status s = rdist::nccl_available(); !s) {
    std::printf("SKIPPED: %s\n", s.message().c_str());
    return 77;
  }
  int rank0 = 0;
  if (mpi) {
    rdist::Comm comm;
    if (Status s = rdist::Comm::from_mpi(&comm); !s) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
    rank0 = comm.rank();
    check_all(run, comm);
    std::printf("rank %d of %d (GPU %d): %d checks, %d failures\n", comm.rank(), comm.size(), comm.device(), run.checks, run.failures);
  } else {
    int count = 0;
    cudaGetDeviceCount(&count);
    if (gpus == 0) gpus = count;
    if (gpus < 2) {
      std::printf("SKIPPED: one process needs two GPUs for a sharded reduce; asked for %d of this machine's %d\n", gpus, count);
      return 77;
    }
    std::vector<rdist::Comm> comms;
    if (Status s = rdist::Comm::local(gpus, &comms); !s) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
    const Status s = rdist::for_each_rank(comms, [&](rdist::Comm& c) {
      check_all(run, c);
      return Status{};
    });
    if (!s) std::fprintf(stderr, "%s\n", s.message().c_str());
    comms.clear();
    check_missing_peer(run, gpus);
    std::printf("one process, %d GPUs: %d checks, %d failures\n", gpus, run.checks, run.failures);
  }
  (void)rank0;
  return run.failures == 0 ? 0 : 1;
}
