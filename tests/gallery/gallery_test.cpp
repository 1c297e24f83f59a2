// The gallery against a CPU reference: one list of cases (kernel x block x n x dtype x op), run
// on the SIMT backend always and on the CUDA backend when this binary has it and a device is
// present (the CUDA cases skip with the reason otherwise). Then tests that pin each seed-bug fix.
//
// Every case surrounds the input with a poisoned guard (values that change the answer if read)
// and checks the guard afterwards (nothing past n written), poisons the result, and on CUDA runs
// deterministic entries twice and compares the bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gallery/registry.hpp"
#include "simt/runtime.hpp"

// The kernels themselves, compiled by g++ for the SIMT backend: the race tests launch a kernel
// directly, so that the runtime's report is the kernel's own (a launcher's last launch is the
// final pass).
#include "gallery/atomic.cuh"
#include "gallery/modern.cuh"
#include "gallery/unrolling.cuh"

#include "memory.hpp"

namespace {

using rl::gallery::Accumulate;
using rl::gallery::Backend;
using rl::gallery::Entry;
using rl::gallery::LaunchArgs;
using rl::core::Dtype;
using rl::core::OpKind;

constexpr std::size_t kGuard = 64;  // poisoned elements after the input

// ---- device memory on either backend --------------------------------------------------------

using gallery_test::Memory;

struct SimtMemory final : Memory {
  void* alloc(std::size_t bytes) override { return simt::device_malloc(bytes); }
  void free(void* p) override { simt::device_free(p); }
  void upload(void* d, const void* s, std::size_t b) override { std::memcpy(d, s, b); }
  void download(void* d, const void* s, std::size_t b) override { std::memcpy(d, s, b); }
  void synchronize() override {}
  std::size_t free_bytes() override { return std::size_t(8) << 30; }
};

using gallery_test::cuda_unavailable;

std::unique_ptr<Memory> memory_for(Backend b) {
  if (b == Backend::cuda) return gallery_test::make_cuda_memory();
  return std::make_unique<SimtMemory>();
}

// A device buffer freed on scope exit.
struct Buffer {
  Memory& mem;
  void* p;
  Buffer(Memory& m, std::size_t bytes) : mem(m), p(m.alloc(std::max<std::size_t>(bytes, 1))) {}
  ~Buffer() { mem.free(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

// ---- inputs and the exact reference ---------------------------------------------------------

std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Host input: ints in [-1000, 1000], floats/doubles in [-1, 1). Cached per (dtype, n).
struct HostInput {
  std::vector<int> i32;
  std::vector<float> f32;
  std::vector<double> f64;
};

const HostInput& host_input(Dtype d, std::size_t n) {
  static std::map<std::pair<int, std::size_t>, HostInput> cache;
  auto key = std::make_pair(static_cast<int>(d), n);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  HostInput h;
  std::uint64_t s = 0x5EED0000ull + n * 31 + static_cast<unsigned>(d);
  switch (d) {
    case Dtype::int32:
      h.i32.resize(n);
      for (auto& v : h.i32) v = static_cast<int>(splitmix(s) % 2001) - 1000;
      break;
    case Dtype::float32:
      h.f32.resize(n);
      for (auto& v : h.f32) v = static_cast<float>(static_cast<double>(splitmix(s) >> 11) * 0x1p-53 * 2 - 1);
      break;
    case Dtype::float64:
      h.f64.resize(n);
      for (auto& v : h.f64) v = static_cast<double>(splitmix(s) >> 11) * 0x1p-53 * 2 - 1;
      break;
    default: ADD_FAILURE() << "the gallery takes int32, float and double";
  }
  if (cache.size() > 16) cache.clear();  // 2^24-element inputs are large; keep a few
  return cache.emplace(key, std::move(h)).first->second;
}

// What a reduction must give: exact for integers and min/max; for float sums the exact value
// and the tolerance n * eps * sum|x|.
struct Expected {
  bool integer = true;
  __int128 exact_int = 0;  // int sum exact; min/max value
  long double exact_real = 0;
  long double tolerance = 0;
};

template <class T>
Expected reference(const std::vector<T>& x, OpKind op) {
  Expected e;
  e.integer = std::is_integral_v<T>;
  if (op == OpKind::sum) {
    if constexpr (std::is_integral_v<T>) {
      for (T v : x) e.exact_int += v;
    } else {
      long double sum = 0, c = 0, abs_sum = 0;  // Neumaier
      for (T v : x) {
        const long double y = v;
        const long double t = sum + y;
        c += std::fabs(sum) >= std::fabs(y) ? (sum - t) + y : (y - t) + sum;
        sum = t;
        abs_sum += std::fabs(y);
      }
      e.exact_real = sum + c;
      e.tolerance = static_cast<long double>(x.size()) * std::numeric_limits<T>::epsilon() * abs_sum;
    }
  } else {
    T m = x[0];
    for (T v : x) m = op == OpKind::min ? std::min(m, v) : std::max(m, v);
    if constexpr (std::is_integral_v<T>) e.exact_int = m;
    else e.exact_real = m;
  }
  return e;
}

Expected reference(Dtype d, std::size_t n, OpKind op) {
  const HostInput& h = host_input(d, n);
  switch (d) {
    case Dtype::int32: return reference(h.i32, op);
    case Dtype::float32: return reference(h.f32, op);
    case Dtype::float64: return reference(h.f64, op);
    default: break;
  }
  return {};
}

// ---- one case ----------------------------------------------------------------------------------

struct Case {
  std::string id;
  unsigned block = 256;
  std::size_t n = 1000;
  Dtype dtype = Dtype::int32;
  OpKind op = OpKind::sum;
  Accumulate accumulate = Accumulate::wide;
  unsigned param = 0;
  bool gpu_only_size = false;  // 2^24: too slow for the emulator in CI
};

std::string case_name(const Case& c) {
  std::string s = c.id + "_b" + std::to_string(c.block) + "_n" + std::to_string(c.n) + "_" +
                  std::string(rl::core::name(c.dtype)) + "_" + std::string(rl::core::name(c.op));
  if (c.dtype == Dtype::int32) s += "_" + std::string(rl::gallery::name(c.accumulate));
  if (c.param) s += "_p" + std::to_string(c.param);
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

// gtest prints a parameter with this instead of its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << case_name(c); }

// The input buffer's bytes: n elements of the entry's input type, then kGuard poisoned ones.
// Poison changes any result it enters: huge for sum and max, hugely negative for min.
template <class T>
std::vector<unsigned char> input_bytes_as(const HostInput& h, Dtype d, std::size_t n, OpKind op) {
  std::vector<T> v(n + kGuard);
  for (std::size_t i = 0; i < n; ++i) {
    switch (d) {
      case Dtype::int32: v[i] = static_cast<T>(h.i32[i]); break;
      case Dtype::float32: v[i] = static_cast<T>(h.f32[i]); break;
      case Dtype::float64: v[i] = static_cast<T>(h.f64[i]); break;
      default: break;
    }
  }
  T poison;
  if constexpr (std::is_integral_v<T>) poison = std::numeric_limits<T>::max() / 4;
  else poison = static_cast<T>(1e30);
  if (op == OpKind::min) poison = -poison;
  for (std::size_t i = n; i < n + kGuard; ++i) v[i] = poison;
  std::vector<unsigned char> bytes(v.size() * sizeof(T));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

std::vector<unsigned char> make_input(const Entry& e, const Case& c) {
  const HostInput& h = host_input(c.dtype, c.n);
  const std::size_t in = rl::gallery::input_bytes(e, c.dtype, c.accumulate);
  if (c.dtype == Dtype::int32) {
    if (in == 8) return input_bytes_as<long long>(h, c.dtype, c.n, c.op);
    return input_bytes_as<int>(h, c.dtype, c.n, c.op);
  }
  if (c.dtype == Dtype::float32) return input_bytes_as<float>(h, c.dtype, c.n, c.op);
  return input_bytes_as<double>(h, c.dtype, c.n, c.op);
}

// Compares the accumulator-typed result bytes with the reference; "" when they agree.
std::string verdict(const Case& c, const Expected& want, const std::vector<unsigned char>& got) {
  auto show = [](long double v) { return std::to_string(static_cast<double>(v)); };
  if (c.dtype == Dtype::int32) {
    long long value = 0;
    __int128 expect = want.exact_int;
    if (c.accumulate == Accumulate::wide) {
      std::memcpy(&value, got.data(), 8);
    } else {
      int v32;
      std::memcpy(&v32, got.data(), 4);
      value = v32;
      expect = static_cast<int>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(expect)));  // wraps mod 2^32
    }
    if (static_cast<__int128>(value) == expect) return {};
    return "got " + std::to_string(value) + ", expected " + std::to_string(static_cast<long long>(expect));
  }
  long double value;
  if (c.dtype == Dtype::float32) {
    float f;
    std::memcpy(&f, got.data(), 4);
    value = f;
  } else {
    double f;
    std::memcpy(&f, got.data(), 8);
    value = f;
  }
  const long double err = std::fabs(value - want.exact_real);
  if (c.op == OpKind::sum ? err <= want.tolerance : err == 0) return {};
  return "got " + show(value) + ", expected " + show(want.exact_real) + " (error " + show(err) +
         ", tolerance " + show(want.tolerance) + ")";
}

struct Outcome {
  std::string mismatch;                 // "" when the result is right
  std::string guard;                    // "" when nothing past n was written
  std::vector<unsigned char> result;    // the accumulator's bytes
};

Outcome run_case(Backend b, const Case& c, Memory& mem) {
  const Entry* e = rl::gallery::find(c.id);
  if (!e) throw std::runtime_error("unknown entry " + c.id);
  const rl::gallery::LaunchFn launch = rl::gallery::launcher(*e, b);
  if (!launch) throw std::runtime_error(c.id + " has no launcher on " + std::string(rl::gallery::name(b)));
  const std::size_t acc = rl::gallery::accumulator_bytes(c.dtype, c.accumulate);
  const std::vector<unsigned char> host = make_input(*e, c);
  const std::size_t scratch_bytes = e->scratch_bytes ? e->scratch_bytes(c.n, c.block, acc) : 0;

  Buffer input(mem, host.size());
  Buffer scratch(mem, scratch_bytes);
  Buffer result(mem, acc);
  mem.upload(input.p, host.data(), host.size());
  std::vector<unsigned char> poison(std::max<std::size_t>(scratch_bytes, acc), 0xFF);
  mem.upload(result.p, poison.data(), acc);
  if (scratch_bytes) mem.upload(scratch.p, poison.data(), scratch_bytes);

  LaunchArgs a;
  a.input = input.p;
  a.scratch = scratch.p;
  a.result = result.p;
  a.n = c.n;
  a.block = c.block;
  a.dtype = c.dtype;
  a.op = c.op;
  a.accumulate = c.accumulate;
  a.param = c.param;
  launch(a);
  mem.synchronize();

  Outcome out;
  out.result.resize(acc);
  mem.download(out.result.data(), result.p, acc);
  out.mismatch = verdict(c, reference(c.dtype, c.n, c.op), out.result);
  std::vector<unsigned char> after(host.size());
  mem.download(after.data(), input.p, host.size());
  const std::size_t elem = rl::gallery::input_bytes(*e, c.dtype, c.accumulate);
  if (std::memcmp(after.data() + c.n * elem, host.data() + c.n * elem, kGuard * elem) != 0)
    out.guard = "an element past n was written";
  if (!e->constraints.in_place && std::memcmp(after.data(), host.data(), c.n * elem) != 0)
    out.guard += (out.guard.empty() ? "" : "; ") + std::string("a read-only input was modified");
  return out;
}

// ---- the case list -----------------------------------------------------------------------------

std::vector<unsigned> blocks_of(const Entry& e) {
  if (!e.constraints.pow2_block) return {256};  // CUB: the block is ignored
  std::vector<unsigned> v;
  for (unsigned b = std::max(32u, e.constraints.min_block); b <= e.constraints.max_block; b *= 2)
    v.push_back(b);
  return v;
}

std::vector<Case> all_cases() {
  std::vector<Case> v;
  const std::size_t big = 1000003, gpu = std::size_t(1) << 24;
  for (const Entry& e : rl::gallery::registry()) {
    const std::string id(e.id);
    for (unsigned block : blocks_of(e)) {
      for (std::size_t n : {std::size_t(1), std::size_t(31), std::size_t(33), std::size_t(1000)})
        for (Dtype d : {Dtype::int32, Dtype::float32}) v.push_back({id, block, n, d});
      for (Dtype d : {Dtype::int32, Dtype::float32}) v.push_back({id, block, gpu, d, OpKind::sum, Accumulate::wide, 0, true});
    }
    // n = 1000003 at three block sizes only (the emulator's CI time).
    for (unsigned block : {32u, 256u, 1024u})
      if (block >= e.constraints.min_block || !e.constraints.pow2_block)
        for (Dtype d : {Dtype::int32, Dtype::float32}) v.push_back({id, block, big, d});
    // min and max, exact
    for (OpKind op : {OpKind::min, OpKind::max})
      for (Dtype d : {Dtype::int32, Dtype::float32})
        for (std::size_t n : {std::size_t(33), std::size_t(1000)}) v.push_back({id, 128, n, d, op});
    // the textbook's int arithmetic, and double
    v.push_back({id, 256, 1000, Dtype::int32, OpKind::sum, Accumulate::wrap});
    v.push_back({id, 256, 1000, Dtype::int32, OpKind::max, Accumulate::wrap});
    v.push_back({id, 256, 1000, Dtype::float64, OpKind::sum});
    v.push_back({id, 64, 1000, Dtype::float64, OpKind::min});
    if (!e.param.empty())  // the coarse factors other than the default
      for (unsigned p : {1u, 4u, 8u}) {
        v.push_back({id, 128, 1000, Dtype::int32, OpKind::sum, Accumulate::wide, p});
        v.push_back({id, 64, big, Dtype::float32, OpKind::sum, Accumulate::wide, p});
      }
  }
  return v;
}

std::vector<Case> cases_for(Backend b) {
  std::vector<Case> v;
  for (const Case& c : all_cases()) {
    const Entry* e = rl::gallery::find(c.id);
    if (b == Backend::simt && (c.gpu_only_size || e->constraints.gpu_only)) continue;
    v.push_back(c);
  }
  return v;
}

class Gallery : public ::testing::TestWithParam<Case> {};
class GalleryCuda : public ::testing::TestWithParam<Case> {};

void check_case(Backend b, const Case& c) {
  const Entry* e = rl::gallery::find(c.id);
  ASSERT_NE(e, nullptr);
  auto mem = memory_for(b);
  const Outcome first = run_case(b, c, *mem);
  EXPECT_EQ(first.guard, "") << c.id;
  if (e->constraints.unsafe) {
    // The lockstep warp is a race: on the GPU it may or may not give a wrong answer, and the
    // emulator runs lanes one after another, so a wrong answer is expected there. Not asserted;
    // RaceChecks below pin that the race is reported.
    if (!first.mismatch.empty()) std::printf("[ unsafe   ] %s: %s\n", c.id.c_str(), first.mismatch.c_str());
    return;
  }
  EXPECT_EQ(first.mismatch, "") << c.id << " block " << c.block << " n " << c.n;
  if (b == Backend::cuda && rl::gallery::deterministic(*e, c.dtype, c.op)) {
    const Outcome second = run_case(b, c, *mem);
    EXPECT_EQ(first.result, second.result) << c.id << " is registered deterministic but its bits differ";
  }
}

TEST_P(Gallery, MatchesReference) { check_case(Backend::simt, GetParam()); }

TEST_P(GalleryCuda, MatchesReference) {
  if (const std::string why = cuda_unavailable(); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  check_case(Backend::cuda, GetParam());
}

auto param_name = [](const ::testing::TestParamInfo<Case>& info) { return case_name(info.param); };

INSTANTIATE_TEST_SUITE_P(simt, Gallery, ::testing::ValuesIn(cases_for(Backend::simt)), param_name);
INSTANTIATE_TEST_SUITE_P(cuda, GalleryCuda, ::testing::ValuesIn(cases_for(Backend::cuda)), param_name);

// ---- the registry and the bindings agree ----------------------------------------------------------

TEST(Registry, EveryEntryIsBoundAndEveryBindingIsAnEntry) {
  std::set<std::string> ids;
  for (const Entry& e : rl::gallery::registry()) {
    EXPECT_TRUE(ids.insert(std::string(e.id)).second) << "duplicate id " << e.id;
    EXPECT_EQ(rl::gallery::find(e.id), &e);
    EXPECT_NE(e.bytes_read, nullptr) << e.id;
    EXPECT_NE(e.scratch_bytes, nullptr) << e.id;
    EXPECT_FALSE(e.technique.empty() || e.still_slow.empty() || e.final_pass.empty() || e.seed.empty()) << e.id;
    if (e.constraints.gpu_only) {
      EXPECT_FALSE(e.constraints.gpu_only_reason.empty()) << e.id;
      EXPECT_EQ(rl::gallery::launcher(e, Backend::simt), nullptr) << e.id;
    } else {
      EXPECT_NE(rl::gallery::launcher(e, Backend::simt), nullptr) << e.id;
    }
#if RL_WITH_CUDA
    EXPECT_NE(rl::gallery::launcher(e, Backend::cuda), nullptr) << e.id;
#else
    EXPECT_EQ(rl::gallery::launcher(e, Backend::cuda), nullptr) << e.id;
#endif
  }
  for (const auto& b : rl::gallery::simt_bindings()) EXPECT_NE(rl::gallery::find(b.entry.id), nullptr) << b.entry.id;
  for (const auto& b : rl::gallery::cuda_bindings()) EXPECT_NE(rl::gallery::find(b.entry.id), nullptr) << b.entry.id;
  EXPECT_EQ(rl::gallery::registry().front().id, "warmup");
  EXPECT_EQ(rl::gallery::registry().back().id, "cub");
  EXPECT_TRUE(rl::gallery::find("cub")->constraints.is_reference);
  EXPECT_TRUE(rl::gallery::find("unroll-warps8-volatile")->constraints.unsafe);
}

TEST(Registry, DeterminismFollowsTheAtomics) {
  const Entry& seg = *rl::gallery::find("pmpp-segmented");
  EXPECT_FALSE(rl::gallery::deterministic(seg, Dtype::float32, OpKind::sum));
  EXPECT_TRUE(rl::gallery::deterministic(seg, Dtype::int32, OpKind::sum));
  EXPECT_TRUE(rl::gallery::deterministic(seg, Dtype::float32, OpKind::max));
  EXPECT_TRUE(rl::gallery::deterministic(*rl::gallery::find("single-pass"), Dtype::float32, OpKind::sum));
  EXPECT_FALSE(rl::gallery::deterministic(*rl::gallery::find("unroll-warps8-volatile"), Dtype::int32, OpKind::sum));
}

TEST(Registry, InPlaceEntriesTakeTheAccumulatorType) {
  const Entry& nb = *rl::gallery::find("neighbored");
  EXPECT_EQ(rl::gallery::input_bytes(nb, Dtype::int32, Accumulate::wide), 8u);
  EXPECT_EQ(rl::gallery::input_bytes(nb, Dtype::int32, Accumulate::wrap), 4u);
  EXPECT_EQ(rl::gallery::input_bytes(*rl::gallery::find("bc-add"), Dtype::int32, Accumulate::wide), 4u);
  EXPECT_EQ(rl::gallery::accumulator_bytes(Dtype::float32, Accumulate::wide), 4u);
  EXPECT_EQ(rl::gallery::accumulator_bytes(Dtype::float64, Accumulate::wide), 8u);
}

TEST(Registry, FootprintComesFromTheEntry) {
  // neighbored reduces in place: int32 summed wide sits in an int64 buffer, kept twice (pristine).
  const auto f = rl::gallery::footprint(*rl::gallery::find("neighbored"), 1000, 256, Dtype::int32, Accumulate::wide);
  EXPECT_TRUE(f.in_place);
  EXPECT_EQ(f.input_element_bytes, 8u);
  EXPECT_EQ(f.input_bytes, 8000u);
  EXPECT_EQ(f.acc_bytes, 8u);
  EXPECT_EQ(f.bytes_read, 8000u);
  EXPECT_EQ(f.scratch_bytes, 256u);  // 4 partials of 8 bytes, one 256-byte aligned region
  EXPECT_EQ(f.device_bytes(), 2 * 8000u + 256u + 8u);
  // pmpp-segmented reads float input as is and combines with atomics: no scratch.
  const auto g = rl::gallery::footprint(*rl::gallery::find("pmpp-segmented"), 1000, 256, Dtype::float32,
                                        Accumulate::wide);
  EXPECT_FALSE(g.in_place);
  EXPECT_EQ(g.input_bytes, 4000u);
  EXPECT_EQ(g.scratch_bytes, 0u);
  EXPECT_EQ(g.device_bytes(), 4000u + 4u);
}

TEST(Registry, OneEntryIsTheSpeedupBaseline) {
  std::vector<std::string> baselines;
  for (const Entry& e : rl::gallery::registry())
    if (e.speedup_baseline) baselines.emplace_back(e.id);
  EXPECT_EQ(baselines, std::vector<std::string>{"neighbored"});
}

// ---- seed bugs, each pinned on the emulator ---------------------------------------------------------

// Runs `id` on simt with a given host input (int32, wide) and returns the int64 result.
long long run_ints(const std::string& id, const std::vector<int>& x, unsigned block, unsigned param = 0,
                   Accumulate acc = Accumulate::wide) {
  const Entry* e = rl::gallery::find(id);
  SimtMemory mem;
  const std::size_t in = rl::gallery::input_bytes(*e, Dtype::int32, acc);
  std::vector<unsigned char> bytes((x.size() + kGuard) * in, 0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (in == 8) {
      const long long v = x[i];
      std::memcpy(bytes.data() + i * 8, &v, 8);
    } else {
      std::memcpy(bytes.data() + i * 4, &x[i], 4);
    }
  }
  const std::size_t accb = rl::gallery::accumulator_bytes(Dtype::int32, acc);
  Buffer input(mem, bytes.size()), scratch(mem, e->scratch_bytes(x.size(), block, accb)), result(mem, 8);
  mem.upload(input.p, bytes.data(), bytes.size());
  LaunchArgs a;
  a.input = input.p;
  a.scratch = scratch.p;
  a.result = result.p;
  a.n = x.size();
  a.block = block;
  a.param = param;
  a.accumulate = acc;
  rl::gallery::launcher(*e, Backend::simt)(a);
  if (accb == 4) {
    int r;
    mem.download(&r, result.p, 4);
    return r;
  }
  long long r;
  mem.download(&r, result.p, 8);
  return r;
}

std::vector<int> iota_plus_one(std::size_t n) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int>(i % 1000) + 1;
  return v;
}
long long sum_of(const std::vector<int>& v) {
  long long s = 0;
  for (int x : v) s += x;
  return s;
}

// Seed 000: `if (idx > n) return;` reads element n and returns before a __syncthreads. Every
// kernel at n = k*block*items - 1, exactly k*block*items, and + 1 (the emulator reports an
// out-of-bounds read or a barrier that returned threads never reach).
TEST(SeedBugs, BlockBoundariesAndIdxEqualsN) {
  for (const Entry& e : rl::gallery::registry()) {
    if (e.constraints.gpu_only || e.constraints.unsafe) continue;
    const unsigned block = 64;
    const std::size_t tile = static_cast<std::size_t>(block) * e.constraints.items_per_thread;
    for (std::size_t n : {tile - 1, tile, tile + 1, 3 * tile - 1, 3 * tile, 3 * tile + 1}) {
      const auto x = iota_plus_one(n);
      EXPECT_EQ(run_ints(std::string(e.id), x, block), sum_of(x)) << e.id << " n=" << n;
    }
  }
}

// Seed 000/002: the int sum of 2^24 values overflows int for other data; wide accumulation is
// exact, and the textbook's int arithmetic wraps modulo 2^32 (and says so).
TEST(SeedBugs, WideAccumulationDoesNotOverflow) {
  const std::vector<int> x(1000, 1 << 30);  // sum 1000 * 2^30 > INT_MAX
  const long long exact = 1000LL << 30;
  for (const char* id : {"neighbored", "unroll8", "complete-unroll", "nbc-add", "pmpp-segmented",
                         "pmpp-coarsened", "warp-reduce-sync", "vectorized", "single-pass", "nested"}) {
    EXPECT_EQ(run_ints(id, x, 128), exact) << id;
    EXPECT_EQ(run_ints(id, x, 128, 0, Accumulate::wrap),
              static_cast<int>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(exact))))
        << id << " (wrap)";
  }
}

// Seed 004: SimpleReductionKernel's loop condition was an assignment and it tested
// threadIdx.x % 2 instead of % stride; every element of the 2*block segment must count.
TEST(SeedBugs, SimpleReductionUsesTheStride) {
  for (unsigned block : {32u, 64u, 128u, 256u, 512u, 1024u}) {
    std::vector<int> x(2 * block, 0);
    for (std::size_t pos = 0; pos < x.size(); pos += 7) {  // one element at a time matters
      std::fill(x.begin(), x.end(), 0);
      x[pos] = 5;
      ASSERT_EQ(run_ints("pmpp-simple", x, block), 5) << "block " << block << " element " << pos;
    }
  }
}

// Seed 004: SegmentedSumReductionKernel loaded input[t + blockDim.x], dropping the segment
// offset i and the first half of each segment.
TEST(SeedBugs, SegmentedReadsBothHalvesOfEverySegment) {
  const unsigned block = 64;
  const std::size_t seg = 2 * block;
  std::vector<int> x(5 * seg, 0);
  for (std::size_t s = 0; s < 5; ++s) x[s * seg + 3] = 1;  // first halves only
  EXPECT_EQ(run_ints("pmpp-segmented", x, block), 5);
  std::fill(x.begin(), x.end(), 0);
  for (std::size_t s = 0; s < 5; ++s) x[s * seg + block + 1] = 10;  // second halves only
  EXPECT_EQ(run_ints("pmpp-segmented", x, block), 50);
  std::fill(x.begin(), x.end(), 0);
  x[3 * seg + 5] = 7;  // one segment past the first
  EXPECT_EQ(run_ints("pmpp-segmented", x, block), 7);
}

// Seed 004: CoarsenedSumReductionKernel owns 2*COARSE_FACTOR tiles but summed COARSE_FACTOR.
TEST(SeedBugs, CoarsenedSumsAllItsTiles) {
  const unsigned block = 32;
  for (unsigned factor : {1u, 2u, 4u, 8u}) {
    const std::size_t tiles = 2 * factor;
    std::vector<int> x(3 * tiles * block, 0);
    for (std::size_t b = 0; b < 3; ++b)
      for (std::size_t t = 0; t < tiles; ++t) x[(b * tiles + t) * block + t] = 1 << t;  // tile t of block b
    const long long want = 3 * ((1LL << tiles) - 1);
    EXPECT_EQ(run_ints("pmpp-coarsened", x, block, factor), want) << "COARSE_FACTOR " << factor;
  }
  // 0 means the book's default, 2.
  EXPECT_EQ(run_ints("pmpp-coarsened", iota_plus_one(1000), 32, 0), sum_of(iota_plus_one(1000)));
}

TEST(SeedBugs, CoarsenedRejectsAFactorNotInstantiated) {
  EXPECT_THROW(run_ints("pmpp-coarsened", iota_plus_one(100), 32, 3), std::invalid_argument);
}

// The single pass's ticket counter is reset by the kernel: launches in a row stay right.
TEST(SeedBugs, SinglePassCounterResetsItself) {
  for (int i = 0; i < 3; ++i)
    for (std::size_t n : {std::size_t(1), std::size_t(5000), std::size_t(100003)}) {
      const auto x = iota_plus_one(n);
      EXPECT_EQ(run_ints("single-pass", x, 64), sum_of(x)) << "launch " << i << " n " << n;
    }
}

// ---- races: the textbook's lockstep warp is reported, the corrected kernels are clean -----------

template <class Kernel>
simt::LaunchReport launch_alone(Kernel kernel, unsigned block, std::size_t n, std::size_t tiles_per_block) {
  SimtMemory mem;
  std::vector<long long> x(n, 3);
  const std::size_t blocks = rl::gallery::ceil_div(n, block * tiles_per_block);
  Buffer input(mem, n * 8), partials(mem, blocks * 8);
  mem.upload(input.p, x.data(), n * 8);
  simt::LaunchConfig cfg{};
  cfg.grid = dim3(static_cast<unsigned>(blocks));
  cfg.block = dim3(block);
  cfg.name = "alone";
  simt::launch(kernel, cfg, static_cast<long long*>(input.p), static_cast<long long*>(partials.p), n);
  return simt::last_launch_report();
}

using SumLL = rl::core::Sum<long long>;

TEST(RaceChecks, VolatileLockstepWarpIsReported) {
  simt::set_checks(true);
  const auto report = launch_alone(rl::gallery::reduceUnrollWarps8Volatile<long long, SumLL>, 128, 4096, 8);
  EXPECT_TRUE(report.has_races()) << "the textbook's volatile last warp must be reported as a race";
}

TEST(RaceChecks, CorrectedWarpsAreClean) {
  simt::set_checks(true);
  for (unsigned block : {32u, 64u, 256u}) {
    for (std::size_t n : {std::size_t(100), std::size_t(4096), std::size_t(5000)}) {
      EXPECT_FALSE(launch_alone(rl::gallery::reduceUnrollWarps8<long long, SumLL>, block, n, 8).has_races())
          << "reduceUnrollWarps8 block " << block << " n " << n;
      EXPECT_FALSE(launch_alone(rl::gallery::reduceCompleteUnrollWarps8<long long, SumLL>, block, n, 8).has_races())
          << "reduceCompleteUnrollWarps8 block " << block << " n " << n;
      EXPECT_FALSE(launch_alone(rl::gallery::reduceCompleteUnroll<256, long long, SumLL>, 256, n, 8).has_races())
          << "reduceCompleteUnroll<256> n " << n;
    }
  }
}

TEST(RaceChecks, SchedulesDoNotChangeTheAnswer) {
  const auto x = iota_plus_one(5000);
  for (auto s : {simt::Schedule::in_order, simt::Schedule::reverse, simt::Schedule::random}) {
    simt::set_schedule(s, 42);
    for (const Entry& e : rl::gallery::registry()) {
      if (e.constraints.gpu_only || e.constraints.unsafe) continue;
      EXPECT_EQ(run_ints(std::string(e.id), x, 128), sum_of(x)) << e.id << " schedule " << simt::name(s);
    }
  }
  simt::set_schedule(simt::Schedule::in_order);
}

// ---- an op is one row: every lab op through every kernel path ---------------------------------
// Each row of core/ops.hpp with lab = true runs through every entry the SIMT backend runs (but
// the one that races on purpose), for every accumulator the dispatch picks, against a serial
// fold of the row's own combine. Inputs are small integers, so float and double sums are exact
// in any order and every comparison is of bits. A kernel path that knew an op by anything but
// its row (an atomic, a warp redux, a vendor entry point) would give a wrong value here for the
// row it does not know.

// The SIMT backend's n = 1000 input of In: integers in [-4, 4].
template <class In>
std::vector<In> small_ints(std::size_t n) {
  std::uint64_t s = 0x0BAD5EEDull;
  std::vector<In> x(n);
  for (auto& v : x) v = static_cast<In>(static_cast<int>(splitmix(s) % 9) - 4);
  return x;
}

template <class Tag, class In, class Acc>
void expect_every_kernel_folds(OpKind op, Dtype d, Accumulate acc) {
  using Op = rl::core::Combine<Tag, Acc>;
  SimtMemory mem;
  constexpr std::size_t n = 1000;
  const std::vector<In> x = small_ints<In>(n);
  Acc want = Op::identity();
  for (In v : x) want = Op{}(want, static_cast<Acc>(v));
  for (const Entry& e : rl::gallery::registry()) {
    const rl::gallery::LaunchFn launch = rl::gallery::launcher(e, Backend::simt);
    if (e.constraints.gpu_only || e.constraints.unsafe || !launch) continue;  // unsafe: wrong by design
    // Entries that read the accumulator type read the input widened.
    std::vector<unsigned char> host(n * rl::gallery::input_bytes(e, d, acc));
    if (rl::gallery::input_bytes(e, d, acc) == sizeof(Acc)) {
      for (std::size_t i = 0; i < n; ++i) {
        const Acc v = static_cast<Acc>(x[i]);
        std::memcpy(host.data() + i * sizeof(Acc), &v, sizeof v);
      }
    } else {
      std::memcpy(host.data(), x.data(), n * sizeof(In));
    }
    const std::size_t scratch_bytes = e.scratch_bytes ? e.scratch_bytes(n, 128, sizeof(Acc)) : 0;
    Buffer input(mem, host.size()), scratch(mem, scratch_bytes), result(mem, sizeof(Acc));
    mem.upload(input.p, host.data(), host.size());
    LaunchArgs a;
    a.input = input.p;
    a.scratch = scratch.p;
    a.result = result.p;
    a.n = n;
    a.block = 128;
    a.dtype = d;
    a.op = op;
    a.accumulate = acc;
    launch(a);
    Acc got;
    mem.download(&got, result.p, sizeof got);
    EXPECT_EQ(std::memcmp(&got, &want, sizeof got), 0)
        << e.id << " " << rl::core::name(op) << " " << rl::core::name(d) << " " << rl::gallery::name(acc) << ": got "
        << static_cast<long double>(got) << ", the row's combine folds to " << static_cast<long double>(want);
  }
}

TEST(OpRows, EveryLabOpRunsThroughEveryKernelAndAccumulator) {
  ASSERT_FALSE(rl::core::kLabOps.empty());
  for (OpKind op : rl::core::kLabOps)
    rl::core::with_lab_op(op, [&]<class Tag>() {
      expect_every_kernel_folds<Tag, int, long long>(op, Dtype::int32, Accumulate::wide);
      expect_every_kernel_folds<Tag, int, int>(op, Dtype::int32, Accumulate::wrap);
      expect_every_kernel_folds<Tag, float, float>(op, Dtype::float32, Accumulate::wide);
      expect_every_kernel_folds<Tag, double, double>(op, Dtype::float64, Accumulate::wide);
    });
}

// What a new op gets before it has any faster path: an op of the kernels' shape whose row has no
// hardware instruction (its kind is a row the gallery does not key anything off). The atomic is
// the compare-and-swap loop around its combine, the warp reduction the shuffle tree of it.
template <class T>
struct ProductOp {
  using value_type = T;
  static constexpr OpKind kind = OpKind::prod;
  static constexpr T identity() { return T(1); }
  T operator()(T a, T b) const { return a * b; }
};

template <class Op, class T>
__global__ void atomicEach(rl::gmem<const T> in, rl::gmem<T> out, std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    T v = in[i];
    rl::atomic_combine(Op{}, out, v);
  }
}

template <class Op, class T>
__global__ void warpEach(rl::gmem<const T> in, rl::gmem<T> out) {
  T v = in[static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x];
  v = rl::gallery::detail::warp_reduce_sync(v, Op{});
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

template <class T>
void expect_generic_paths() {
  using Op = ProductOp<T>;
  SimtMemory mem;
  constexpr std::size_t n = 256;  // 8 warps
  std::vector<T> x(n, T(1));
  for (std::size_t i = 0; i < n; i += 41) x[i] = T(3);  // at most 3^7: exact, no overflow in any type here
  for (std::size_t i = 0; i < n; i += 11) x[i] = i % 2 ? T(1) : T(-1);
  T want = Op::identity();
  for (T v : x) want = Op{}(want, v);
  Buffer input(mem, n * sizeof(T)), out(mem, (n / 32) * sizeof(T));
  mem.upload(input.p, x.data(), n * sizeof(T));

  const T one = Op::identity();
  mem.upload(out.p, &one, sizeof one);
  simt::LaunchConfig cfg{};
  cfg.grid = dim3(4);
  cfg.block = dim3(64);
  cfg.name = "atomicEach";
  simt::launch(atomicEach<Op, T>, cfg, static_cast<const T*>(input.p), static_cast<T*>(out.p), n);
  T got;
  mem.download(&got, out.p, sizeof got);
  EXPECT_EQ(got, want) << "the compare-and-swap loop of " << sizeof(T) << "-byte values";

  cfg.grid = dim3(n / 32);
  cfg.block = dim3(32);
  cfg.name = "warpEach";
  simt::launch(warpEach<Op, T>, cfg, static_cast<const T*>(input.p), static_cast<T*>(out.p));
  std::vector<T> warps(n / 32);
  mem.download(warps.data(), out.p, warps.size() * sizeof(T));
  for (std::size_t w = 0; w < warps.size(); ++w) {
    T expect = Op::identity();
    for (std::size_t i = w * 32; i < (w + 1) * 32; ++i) expect = Op{}(expect, x[i]);
    EXPECT_EQ(warps[w], expect) << "the shuffle tree of warp " << w << ", " << sizeof(T) << "-byte values";
  }
}

TEST(OpRows, AnOpWithoutAFasterPathTakesTheCombine) {
  expect_generic_paths<int>();
  expect_generic_paths<long long>();
  expect_generic_paths<float>();
  expect_generic_paths<double>();
}

// ---- 64-bit n on the GPU -----------------------------------------------------------------------

#if RL_WITH_CUDA
TEST(CudaLargeN, SixtyFourBitIndexing) {
  if (const std::string why = cuda_unavailable(); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  const std::size_t n = (std::size_t(1) << 31) + 5;  // past every 32-bit index
  auto mem = gallery_test::make_cuda_memory();
  const std::size_t free_bytes = mem->free_bytes();
  const std::size_t need = (n + kGuard) * sizeof(int) + (std::size_t(64) << 20);
  if (free_bytes < need) GTEST_SKIP() << "needs " << need << " bytes of device memory, " << free_bytes << " free";
  std::vector<int> x(n + kGuard);
  std::uint64_t exact = 0;
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<int>((i * 2654435761u) >> 24 & 0xFF);  // the seed's rand() & 0xFF, reproducible
    exact += static_cast<std::uint64_t>(x[i]);
  }
  for (std::size_t i = n; i < n + kGuard; ++i) x[i] = 1 << 28;
  const int want = static_cast<int>(static_cast<std::uint32_t>(exact));  // int arithmetic wraps
  // int32 wrap keeps every buffer at 4-byte elements (8.6 GB); the indices are what is tested.
  for (const char* id : {"neighbored", "interleaved", "unroll8", "complete-unroll", "bc-add", "pmpp-shared",
                         "pmpp-segmented", "pmpp-coarsened", "nested", "warp-shuffle", "vectorized",
                         "single-pass", "cub"}) {
    const Entry* e = rl::gallery::find(id);
    ASSERT_NE(e, nullptr);
    const unsigned block = 256;
    Buffer input(*mem, x.size() * 4), scratch(*mem, e->scratch_bytes(n, block, 4)), result(*mem, 4);
    mem->upload(input.p, x.data(), x.size() * 4);
    LaunchArgs a;
    a.input = input.p;
    a.scratch = scratch.p;
    a.result = result.p;
    a.n = n;
    a.block = block;
    a.accumulate = Accumulate::wrap;
    rl::gallery::launcher(*e, Backend::cuda)(a);
    mem->synchronize();
    int got = 0;
    mem->download(&got, result.p, 4);
    EXPECT_EQ(got, want) << id << " at n = 2^31 + 5";
    int tail[kGuard];
    mem->download(tail, static_cast<int*>(input.p) + n, sizeof(tail));
    for (std::size_t i = 0; i < kGuard; ++i) ASSERT_EQ(tail[i], 1 << 28) << id << " wrote past n";
  }
}
#endif

}  // namespace
