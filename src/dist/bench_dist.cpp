// `reducelab bench --gpus N` (bench_dist.hpp).
#include <cuda_runtime.h>
#include <nccl.h>
#if REDUCELAB_DIST_MPI
#include <mpi.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/flags.hpp"
#include "core/sizes.hpp"
#include "core/usage_error.hpp"
#include "dist/bench_dist.hpp"
#include "dist/bench_dist_cuda.hpp"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "reducelab/dist.hpp"
#include "reducelab/reduce.hpp"

namespace reducelab::dist::bench {

namespace {

using Usage = rl::core::UsageError;
struct Failed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Failed(fmt::format("bench --gpus: {}: {}", what, cudaGetErrorString(e)));
}
void ck(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw Failed(fmt::format("bench --gpus: {}: {}", what, ncclGetErrorString(r)));
}
void ck(const Status& s) {
  if (!s) throw Failed(s.message());
}

// A list of sizes as every command takes them (core/sizes.hpp: 2^24, 1<<24, 16M, 16777216).
std::vector<std::uint64_t> sizes_of(const std::string& flag, const std::string& s, std::vector<std::uint64_t> fallback) {
  if (s.empty()) return fallback;
  std::vector<std::uint64_t> out;
  for (const auto& x : rl::core::split_list(s)) {
    const std::size_t n = rl::core::parse_size("bench --gpus: " + flag, x, s);
    if (n == 0) throw Usage(fmt::format("bench --gpus: {} {}: a size must be at least 1", flag, s));
    out.push_back(n);
  }
  if (out.empty()) throw Usage(fmt::format("bench --gpus: {} {}: no size given", flag, s));
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The ranks of one GPU count: this process's communicators (one per thread), or the one of an
// MPI process.
struct Ranks {
  std::vector<Comm>* comms = nullptr;
  Comm* mpi = nullptr;
  int size() const { return comms ? int(comms->size()) : mpi->size(); }
};

// Per rank: a stream, a buffer of the largest size, scratch for CUB.
struct RankState {
  cudaStream_t stream = nullptr;
  void* data = nullptr;
  void* out = nullptr;
  void* cub_tmp = nullptr;
  std::size_t cub_bytes = 0;
  void* small = nullptr;  // the floor's collectives
  cudaEvent_t ev[2] = {nullptr, nullptr};
};

// Times fn `repeats` times after 3 warm-ups: per repeat, the ms on this rank's stream.
template <class F>
std::vector<double> timed(RankState& st, int repeats, F&& fn) {
  for (int i = 0; i < 3; ++i) fn();
  ck(cudaStreamSynchronize(st.stream), "warm-up");
  std::vector<double> ms(repeats);
  std::vector<cudaEvent_t> ev(repeats + 1);
  for (auto& e : ev) ck(cudaEventCreate(&e), "cudaEventCreate");
  ck(cudaEventRecord(ev[0], st.stream), "cudaEventRecord");
  for (int i = 0; i < repeats; ++i) {
    fn();
    ck(cudaEventRecord(ev[i + 1], st.stream), "cudaEventRecord");
  }
  ck(cudaStreamSynchronize(st.stream), "timed loop");
  for (int i = 0; i < repeats; ++i) {
    float t = 0;
    ck(cudaEventElapsedTime(&t, ev[i], ev[i + 1]), "cudaEventElapsedTime");
    ms[i] = t;
  }
  for (auto& e : ev) cudaEventDestroy(e);
  return ms;
}

template <class T> ncclDataType_t nccl_type();
template <> ncclDataType_t nccl_type<float>() { return ncclFloat; }
template <> ncclDataType_t nccl_type<double>() { return ncclDouble; }
template <> ncclDataType_t nccl_type<std::int32_t>() { return ncclInt32; }

struct Row {
  std::string table;  // strong, weak, floor
  int gpus = 0;
  std::uint64_t n = 0;  // total (strong) or per GPU (weak)
  double dist_us = NAN, one_us = NAN, cub_us = NAN, floor_us = NAN;
};

class Bench {
 public:
  Bench(const Args& a, std::ostream& out) : a_(a), out_(out) {}
  int run();

 private:
  template <class T, class Op>
  void sweep(const std::string& dtype, const std::string& op);
  template <class T, class Op>
  std::vector<double> per_rank(Ranks& ranks, std::vector<RankState>& st, std::uint64_t per_gpu, std::uint64_t total_for_last, int what);
  std::vector<double> slowest(const std::vector<std::vector<double>>& per_rank_ms);

  const Args& a_;
  std::ostream& out_;
  int repeats_ = 20;
  bool mpi_ = false;
  int world_rank_ = 0, world_ = 1;
  std::vector<std::uint64_t> strong_, weak_;
  nlohmann::json json_;
};

std::vector<double> Bench::slowest(const std::vector<std::vector<double>>& v) {
  std::vector<double> out(v.empty() ? 0 : v[0].size(), 0.0);
  for (const auto& r : v)
    for (std::size_t i = 0; i < out.size() && i < r.size(); ++i) out[i] = std::max(out[i], r[i]);
#if REDUCELAB_DIST_MPI
  if (mpi_) {
    std::vector<double> all(out.size());
    MPI_Allreduce(out.data(), all.data(), static_cast<int>(out.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    out = all;
  }
#endif
  return out;
}

// what: 0 dist::reduce, 1 local CUB + ncclAllReduce, 2 the floor (an all-gather of one 640-byte
// record per rank, what dist::reduce exchanges), 3 an 8-byte ncclAllReduce.
// Shards: per_gpu elements each (the last rank total_for_last).
template <class T, class Op>
std::vector<double> Bench::per_rank(Ranks& ranks, std::vector<RankState>& st, std::uint64_t per_gpu,
                                    std::uint64_t last_n, int what) {
  using R = result_t<T, Op>;
  const int size = ranks.size();
  std::vector<std::vector<double>> ms(ranks.comms ? ranks.comms->size() : 1);
  auto body = [&](Comm& c, int slot) -> Status {
    RankState& s = st[slot];
    const std::uint64_t n = c.rank() == size - 1 ? last_n : per_gpu;
    const T* x = static_cast<const T*>(s.data);
    if (what == 0) {
      Options o;
      o.wait = false;
      ms[slot] = timed(s, repeats_, [&] { ck(::reducelab::dist::reduce(x, n, Op{}, static_cast<R*>(s.out), c, s.stream, o)); });
      ck(c.check(s.stream));
    } else if (what == 1) {
      T* out = static_cast<T*>(s.out);
      const int dt = kernels::dtype_code<T>(), oc = std::is_same_v<Op, op::sum> ? 0 : std::is_same_v<Op, op::max> ? 1 : 2;
      std::size_t need = 0;
      ck(kernels::cub_reduce(dt, oc, x, out, n, nullptr, &need, s.stream), "cub sizing");
      if (need > s.cub_bytes) {
        if (s.cub_tmp) cudaFree(s.cub_tmp);
        ck(cudaMalloc(&s.cub_tmp, need), "cudaMalloc (CUB)");
        s.cub_bytes = need;
      }
      const ncclRedOp_t nop = oc == 0 ? ncclSum : oc == 1 ? ncclMax : ncclMin;
      ms[slot] = timed(s, repeats_, [&] {
        std::size_t b = s.cub_bytes;
        ck(kernels::cub_reduce(dt, oc, x, out, n, s.cub_tmp, &b, s.stream), "cub");
        ck(ncclAllReduce(out, out, 1, nccl_type<T>(), nop, c.nccl(), s.stream), "ncclAllReduce");
      });
    } else if (what == 2) {
      auto* small = static_cast<unsigned char*>(s.small);
      ms[slot] = timed(s, repeats_, [&] { ck(ncclAllGather(small, small + 640, 640, ncclUint8, c.nccl(), s.stream), "ncclAllGather"); });
    } else {
      auto* small = static_cast<double*>(s.small);
      ms[slot] = timed(s, repeats_, [&] { ck(ncclAllReduce(small, small, 1, ncclDouble, ncclSum, c.nccl(), s.stream), "ncclAllReduce"); });
    }
    return {};
  };
  if (ranks.comms) {
    int slot = 0;
    std::vector<int> slot_of(ranks.comms->size());
    for (auto& c : *ranks.comms) slot_of[c.rank()] = slot++;
    std::mutex m;
    std::string error;
    ck(for_each_rank(*ranks.comms, [&](Comm& c) -> Status {
      try {
        return body(c, slot_of[c.rank()]);
      } catch (const std::exception& e) {
        std::lock_guard lock(m);
        error = e.what();
        return Status(Errc::invalid_argument, e.what());
      }
    }));
  } else {
    ck(body(*ranks.mpi, 0));
  }
  return slowest(ms);
}

}  // namespace
}  // namespace reducelab::dist::bench

namespace reducelab::dist::bench {
namespace {

std::string us(double v) { return std::isnan(v) ? "-" : fmt::format("{:.1f}", v); }
std::string log2n(std::uint64_t n) {
  if (n != 0 && (n & (n - 1)) == 0) return fmt::format("2^{}", 63 - __builtin_clzll(n));
  return std::to_string(n);
}

template <class T, class Op>
void Bench::sweep(const std::string& dtype, const std::string& opname) {
  std::uint64_t most = 0;
  for (auto n : strong_) most = std::max(most, n);
  for (auto n : weak_) most = std::max(most, n);
  std::vector<int> counts;
  int devices = 0;
  ck(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (mpi_) {
    counts = {world_};
  } else {
    for (int g = 1; g < a_.gpus; g *= 2) counts.push_back(g);
    counts.push_back(a_.gpus);
  }
  // Per device: a stream and a buffer of `most` elements (the one-GPU runs need the whole total).
  const int local_devices = mpi_ ? 1 : a_.gpus;
  std::vector<RankState> st(local_devices);
  std::vector<int> dev_of(local_devices);
  Comm mpi_comm;
  if (mpi_) ck(Comm::from_mpi(&mpi_comm));
  for (int d = 0; d < local_devices; ++d) {
    dev_of[d] = mpi_ ? mpi_comm.device() : d;
    ck(cudaSetDevice(dev_of[d]), "cudaSetDevice");
    ck(cudaStreamCreateWithFlags(&st[d].stream, cudaStreamNonBlocking), "cudaStreamCreate");
    ck(cudaMalloc(&st[d].data, most * sizeof(T)), fmt::format("cudaMalloc of {} elements", most).c_str());
    ck(cudaMalloc(&st[d].out, 64), "cudaMalloc");
    ck(cudaMalloc(&st[d].small, 640 * 2 * 64), "cudaMalloc");
    ck(cudaMemset(st[d].small, 0, 640 * 2 * 64), "cudaMemset");
    ck(kernels::fill(kernels::dtype_code<T>(), st[d].data, most, st[d].stream), "fill");
    ck(cudaStreamSynchronize(st[d].stream), "fill");
  }
  // One GPU over n: reducelab::reduce on device 0 (every rank's own under MPI, the slowest kept).
  std::map<std::uint64_t, double> one_cache;
  auto one_gpu = [&](std::uint64_t n) {
    if (auto it = one_cache.find(n); it != one_cache.end()) return it->second;
    RankState& s = st[0];
    ck(cudaSetDevice(dev_of[0]), "cudaSetDevice");
    using R = result_t<T, Op>;
    auto ms = timed(s, repeats_, [&] { ck(::reducelab::reduce(static_cast<const T*>(s.data), n, Op{}, static_cast<R*>(s.out), s.stream)); });
#if REDUCELAB_DIST_MPI
    if (mpi_) {
      std::vector<double> all(ms.size());
      MPI_Allreduce(ms.data(), all.data(), int(ms.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      ms = all;
    }
#endif
    return one_cache[n] = median(ms) * 1000.0;
  };

  std::vector<Row> rows;
  for (int g : counts) {
    std::vector<Comm> comms;
    Ranks ranks;
    if (mpi_) {
      ranks.mpi = &mpi_comm;
    } else {
      ck(Comm::local(g, &comms));
      ranks.comms = &comms;
    }
    Row floor{"floor", g};
    floor.floor_us = median(per_rank<T, Op>(ranks, st, 0, 0, 2)) * 1000.0;
    floor.cub_us = median(per_rank<T, Op>(ranks, st, 0, 0, 3)) * 1000.0;  // the 8-byte all-reduce
    rows.push_back(floor);
    for (std::uint64_t n : strong_) {
      Row r{"strong", g, n};
      const std::uint64_t per = n / g, last = n - per * (g - 1);
      r.dist_us = median(per_rank<T, Op>(ranks, st, per, last, 0)) * 1000.0;
      r.cub_us = median(per_rank<T, Op>(ranks, st, per, last, 1)) * 1000.0;
      r.one_us = one_gpu(n);
      r.floor_us = floor.floor_us;
      rows.push_back(r);
    }
    for (std::uint64_t n : weak_) {
      Row r{"weak", g, n};
      r.dist_us = median(per_rank<T, Op>(ranks, st, n, n, 0)) * 1000.0;
      r.cub_us = median(per_rank<T, Op>(ranks, st, n, n, 1)) * 1000.0;
      r.one_us = one_gpu(n);
      r.floor_us = floor.floor_us;
      rows.push_back(r);
    }
  }
  for (int d = 0; d < local_devices; ++d) {
    cudaSetDevice(dev_of[d]);
    cudaFree(st[d].data);
    cudaFree(st[d].out);
    cudaFree(st[d].small);
    if (st[d].cub_tmp) cudaFree(st[d].cub_tmp);
    cudaStreamDestroy(st[d].stream);
  }

  if (world_rank_ != 0) return;
  out_ << fmt::format("\n{} {}: the floor (one 640-byte all-gather per rank; an 8-byte all-reduce), us\n", dtype, opname);
  out_ << fmt::format("{:>5} {:>12} {:>14}\n", "gpus", "all-gather", "all-reduce 8B");
  for (const Row& r : rows)
    if (r.table == "floor") out_ << fmt::format("{:>5} {:>12} {:>14}\n", r.gpus, us(r.floor_us), us(r.cub_us));
  out_ << fmt::format("\n{} {}: strong scaling, the same total n over the GPUs, us (median of {})\n", dtype, opname, repeats_);
  out_ << fmt::format("{:>5} {:>8} {:>12} {:>10} {:>14} {:>12}\n", "gpus", "n", "dist::reduce", "one GPU", "CUB+allreduce", "dist/CUB");
  for (const Row& r : rows)
    if (r.table == "strong")
      out_ << fmt::format("{:>5} {:>8} {:>12} {:>10} {:>14} {:>12.2f}\n", r.gpus, log2n(r.n), us(r.dist_us), us(r.one_us), us(r.cub_us),
                          r.dist_us / r.cub_us);
  out_ << fmt::format("\n{} {}: weak scaling, n per GPU, us\n", dtype, opname);
  out_ << fmt::format("{:>5} {:>8} {:>12} {:>10} {:>10} {:>14} {:>16}\n", "gpus", "n/GPU", "dist::reduce", "one GPU", "ratio",
                      "CUB+allreduce", "one GPU+1.2 floor");
  for (const Row& r : rows)
    if (r.table == "weak")
      out_ << fmt::format("{:>5} {:>8} {:>12} {:>10} {:>10.3f} {:>14} {:>16}\n", r.gpus, log2n(r.n), us(r.dist_us), us(r.one_us),
                          r.dist_us / r.one_us, us(r.cub_us), us(r.one_us + 1.2 * r.floor_us));
  nlohmann::json part;
  part["dtype"] = dtype;
  part["op"] = opname;
  for (const Row& r : rows) {
    nlohmann::json j;
    j["gpus"] = r.gpus;
    if (r.table != "floor") j["n"] = r.n;
    auto put = [&](const char* k, double v) { j[k] = std::isnan(v) ? nlohmann::json() : nlohmann::json(v); };
    if (r.table == "floor") {
      put("allgather_640B_us", r.floor_us);
      put("allreduce_8B_us", r.cub_us);
    } else {
      put("dist_us", r.dist_us);
      put("one_gpu_us", r.one_us);
      put("cub_nccl_us", r.cub_us);
      put("floor_us", r.floor_us);
    }
    part[r.table].push_back(j);
  }
  json_["results"].push_back(part);
}

int Bench::run() {
  const char* ompi = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* pmi = std::getenv("PMI_SIZE");
  mpi_ = (ompi && std::atoi(ompi) > 1) || (pmi && std::atoi(pmi) > 1);
  // The flags first, through the parsers every command shares (core/flags.hpp, core/sizes.hpp).
  strong_ = sizes_of("--sizes", a_.sizes, {1ull << 20, 1ull << 24, 1ull << 28, 1ull << 30});
  weak_ = sizes_of("--weak", a_.weak, {1ull << 20, 1ull << 22, 1ull << 24, 1ull << 26, 1ull << 28, 1ull << 30, 1ull << 31});
  using rl::core::Dtype;
  const auto dtypes = a_.dtypes.empty() ? std::vector<Dtype>{Dtype::float32}
                                        : rl::core::dtype_list_flag("bench --gpus: --dtypes", a_.dtypes, rl::core::Rows::all);
  for (Dtype d : dtypes)
    if (d != Dtype::float32 && d != Dtype::float64 && d != Dtype::int32)
      throw Usage(fmt::format("bench --gpus: --dtypes {}: choose float, double or int32", rl::core::name(d)));
  const auto ops = a_.ops.empty() ? std::vector<rl::core::OpKind>{rl::core::OpKind::sum}
                                  : rl::core::op_list_flag("bench --gpus: --ops", a_.ops, rl::core::Rows::lab);
  for (rl::core::OpKind o : ops)  // the CUB row's op code (kernels::cub_reduce) knows these three
    if (o != rl::core::OpKind::sum && o != rl::core::OpKind::min && o != rl::core::OpKind::max)
      throw Usage(fmt::format("bench --gpus: --ops {}: choose sum, min or max", rl::core::name(o)));
  if (a_.gpus < 1) throw Usage(fmt::format("bench --gpus {}: give a GPU count of at least 1", a_.gpus));
  if (mpi_) {
#if REDUCELAB_DIST_MPI
    std::unique_ptr<Transport> t;
    ck(mpi_transport(&t));
    world_ = t->size();
    world_rank_ = t->rank();
    if (world_ != a_.gpus)
      throw Usage(fmt::format("bench --gpus {}: under mpirun give one process per GPU; this run has {} processes", a_.gpus, world_));
#else
    throw Usage("bench --gpus under mpirun: this build has no MPI");
#endif
  } else {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
    if (devices == 0) throw Failed("bench --gpus: no usable GPU (this command needs the CUDA backend and a GPU)");
    if (a_.gpus > devices) throw Usage(fmt::format("bench --gpus {}: this machine has {} GPU(s)", a_.gpus, devices));
  }
  repeats_ = a_.repeats.empty() ? 20 : std::max(1, std::atoi(a_.repeats.c_str()));
  cudaDeviceProp prop{};
  int dev = 0;
  cudaGetDevice(&dev);
  cudaGetDeviceProperties(&prop, dev);
  int nccl_version = 0;
  ncclGetVersion(&nccl_version);
  json_["kind"] = "dist";
  json_["device"] = prop.name;
  json_["gpus"] = a_.gpus;
  json_["mode"] = mpi_ ? "mpi" : "one process";
  json_["nccl_version"] = nccl_version;
  json_["repeats"] = repeats_;
  json_["timing"] = "CUDA events on each rank's stream, 3 warm-ups, median over repeats of the slowest rank's time";
  if (world_rank_ == 0)
    out_ << fmt::format("reducelab bench --gpus {}: {} ({}), NCCL {}, {} repeats\n", a_.gpus, prop.name,
                        mpi_ ? "one process per GPU under mpirun" : "one process", nccl_version, repeats_);
  for (const Dtype d : dtypes)
    for (const rl::core::OpKind o : ops)
      rl::core::with_dtype(d, [&]<class T>() {
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::int32_t>)
          rl::core::with_lab_op(o, [&]<class Op>() { sweep<T, Op>(std::string(rl::core::name(d)), std::string(rl::core::name(o))); });
      });
  if (world_rank_ == 0 && !a_.json.empty()) {
    std::ofstream f(a_.json);
    if (!f) throw Failed(fmt::format("bench --gpus: --json {}: cannot write it", a_.json));
    f << json_.dump(2) << "\n";
  }
  if (world_rank_ == 0 && !a_.plot.empty()) {
    if (a_.json.empty()) throw Usage("bench --gpus: --plot needs --json FILE (the plot is drawn from it)");
    std::string script;
    for (const char* c : {"scripts/plot-dist", "../scripts/plot-dist", RL_DIST_SCRIPTS "/plot-dist"})
      if (std::ifstream(c)) {
        script = c;
        break;
      }
    if (script.empty()) throw Failed("bench --gpus: --plot: scripts/plot-dist not found (run from the repository or draw it yourself)");
    const std::string cmd = fmt::format("python3 '{}' '{}' -o '{}'", script, a_.json, a_.plot);
    if (std::system(cmd.c_str()) != 0) throw Failed(fmt::format("bench --gpus: {} failed", cmd));
  }
  return 0;
}

}  // namespace

int command(const Args& args, std::ostream& out) {
  try {
    Bench b(args, out);
    return b.run();
  } catch (const Usage& e) {
    std::fprintf(stderr, "reducelab: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reducelab: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace reducelab::dist::bench
