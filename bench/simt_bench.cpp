// simt_bench: what the SIMT runtime costs on this machine. A plain timed main (median of
// repeats, steady clock), so it needs no benchmark library on the machine it is carried to.
//
//   simt_bench [--json]
//
// Reports: a raw Boost.Context round trip (the floor), a fiber's start and exit, __syncthreads
// and shuffles per thread, a checked memory access with checks off and on, and memory per block.
#include <boost/context/detail/fcontext.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "simt/portable.cuh"

namespace {

namespace fctx = boost::context::detail;

// ---- kernels -----------------------------------------------------------------------------------

__global__ void empty_kernel() {}

__global__ void barriers(int rounds) {
  for (int i = 0; i < rounds; ++i) __syncthreads();
}

__global__ void shuffles(rl::gmem<int> out, int rounds) {
  int v = int(threadIdx.x);
  for (int i = 0; i < rounds; ++i) v += __shfl_xor_sync(0xffffffffu, v, 1 + i % 16);
  if (v == 42) out[0] = v;  // keep the loop
}

__global__ void reads(rl::gmem<const int> in, rl::gmem<int> out, unsigned per_thread) {
  const unsigned base = (blockIdx.x * blockDim.x + threadIdx.x) * per_thread;
  int sum = 0;
  for (unsigned i = 0; i < per_thread; ++i) sum += in[base + i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

// A typical reduction block (shared tree + warp shuffles) for the stack high-water mark.
__global__ void typical_block(rl::gmem<const int> in, rl::gmem<int> out) {
  __shared__ int partial_storage[1024];
  rl::smem<int> partial = partial_storage;
  const unsigned tid = threadIdx.x;
  partial[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s >= 32; s /= 2) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    int v = partial[tid];
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
    if (tid == 0) atomicAdd(out, v);
  }
}

// ---- timing ------------------------------------------------------------------------------------

double seconds_of(const std::function<void()>& f, int repeats = 7) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The floor: a scheduler ping-ponging with 1024 bare fibers, one jump in and one out each.
void bare_fiber(fctx::transfer_t t) {
  for (;;) t = fctx::jump_fcontext(t.fctx, nullptr);
}
double raw_round_trip_ns() {
  constexpr int kFibers = 1024, kRounds = 200;
  constexpr std::size_t kStack = 16 * 1024;
  std::vector<char> stacks(kFibers * kStack);
  std::vector<fctx::fcontext_t> ctx(kFibers);
  for (int i = 0; i < kFibers; ++i)  // tops staggered by cache lines, as the runtime does
    ctx[i] = fctx::make_fcontext(stacks.data() + (i + 1) * kStack - (i % 64) * 64,
                                 kStack - (i % 64) * 64, &bare_fiber);
  double s = seconds_of([&] {
    for (int r = 0; r < kRounds; ++r)
      for (int i = 0; i < kFibers; ++i) ctx[i] = fctx::jump_fcontext(ctx[i], nullptr).fctx;
  });
  return s / (double(kFibers) * kRounds) * 1e9;
}

struct Row {
  std::string name;
  double value;
  std::string unit;
};

}  // namespace

int main(int argc, char** argv) {
  const bool json = argc > 1 && std::strcmp(argv[1], "--json") == 0;
  std::vector<Row> rows;
  simt::set_worker_threads(1);  // per-thread costs: one OS thread, no pool effects
  simt::set_checks(false);

  rows.push_back({"raw Boost.Context round trip (1024 fibers)", raw_round_trip_ns(), "ns"});

  const unsigned T = 1024;
  const double empty = seconds_of([&] { simt::launch(empty_kernel, {64, T, 0, nullptr, "empty"}); });
  rows.push_back({"fiber start + exit, per thread", empty / (64.0 * T) * 1e9, "ns"});

  const int rounds = 200;
  const double bar = seconds_of([&] {
    simt::launch(barriers, {8, T, 0, nullptr, "barriers"}, rounds);
  });
  const double bar_per = (bar - empty / 8) / (8.0 * T * rounds) * 1e9;
  rows.push_back({"__syncthreads, per thread (1024-thread block)", bar_per, "ns"});

  int* out = static_cast<int*>(simt::device_malloc(sizeof(int)));
  const double shf = seconds_of([&] {
    simt::launch(shuffles, {8, T, 0, nullptr, "shuffles"}, out, rounds);
  });
  rows.push_back({"__shfl_xor_sync, per lane", (shf - empty / 8) / (8.0 * T * rounds) * 1e9, "ns"});

  const unsigned per_thread = 256, grid = 16;
  const std::size_t n = std::size_t(grid) * T * per_thread;
  int* in = static_cast<int*>(simt::device_malloc(n * sizeof(int)));
  int* partial = static_cast<int*>(simt::device_malloc(grid * T * sizeof(int)));
  for (std::size_t i = 0; i < n; ++i) in[i] = int(i & 0xff);
  auto read_ns = [&] {
    const double s = seconds_of([&] {
      simt::launch(reads, {grid, T, 0, nullptr, "reads"}, in, partial, per_thread);
    });
    return (s - empty / 4) / double(n) * 1e9;
  };
  rows.push_back({"global read through gmem, checks off", read_ns(), "ns"});
  simt::set_checks(true);
  rows.push_back({"global read through gmem, checks on", read_ns(), "ns"});
  const double bar_checked = seconds_of([&] {
    simt::launch(barriers, {8, T, 0, nullptr, "barriers"}, rounds);
  });
  rows.push_back({"__syncthreads per thread, checks on",
                  (bar_checked - empty / 8) / (8.0 * T * rounds) * 1e9, "ns"});
  const double shf_checked = seconds_of([&] {
    simt::launch(shuffles, {8, T, 0, nullptr, "shuffles"}, out, rounds);
  });
  rows.push_back({"__shfl_xor_sync per lane, checks on",
                  (shf_checked - empty / 8) / (8.0 * T * rounds) * 1e9, "ns"});
  simt::set_checks(false);

  // Memory per block: the stacks of a 1024-thread block after a typical reduction block.
  simt::launch(typical_block, {4, T, 0, nullptr, "typical_block"}, in, out);
  simt::StackStats st = simt::stack_stats();
  rows.push_back({"fiber stack size (reserved per thread)", double(st.stack_bytes) / 1024, "KiB"});
  rows.push_back({"stack high-water mark, typical reduction block", double(st.high_water), "B"});
  rows.push_back({"resident stack memory, 1024-thread block", double(st.resident) / 1024, "KiB"});
  rows.push_back({"address space reserved, 1024-thread block",
                  double(st.stacks) * double(st.stack_bytes + 4096) / (1024 * 1024), "MiB"});

  simt::device_free(in);
  simt::device_free(partial);
  simt::device_free(out);

  if (json) {
    std::printf("{\"backend\": \"simt\", \"rows\": [\n");
    for (std::size_t i = 0; i < rows.size(); ++i)
      std::printf("  {\"name\": \"%s\", \"value\": %.3f, \"unit\": \"%s\"}%s\n",
                  rows[i].name.c_str(), rows[i].value, rows[i].unit.c_str(),
                  i + 1 < rows.size() ? "," : "");
    std::printf("]}\n");
  } else {
    std::printf("SIMT runtime costs (1 worker thread, median of 7)\n");
    for (const Row& r : rows)
      std::printf("  %-52s %10.1f %s\n", r.name.c_str(), r.value, r.unit.c_str());
  }
  return 0;
}
