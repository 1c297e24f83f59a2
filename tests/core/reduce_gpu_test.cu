// The library on the GPU: every type x operation x awkward n, misaligned pointers and forced
// grids, against the CPU backend's bits; n >= 2^32; streams, graphs, user operations, errors.
// Skips with the reason where no GPU is usable; the same cases run on SIMT in reduce_test.cpp.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include "exact_cases.hpp"
#include "reduce_support.hpp"
#include "reducelab/reduce.cuh"

namespace rltest {
namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

#define REQUIRE_GPU()                                                               \
  do {                                                                              \
    if (Status s = gpu_available(); !s) GTEST_SKIP() << "no GPU: " << s.message(); \
  } while (0)

// A device copy of x placed `offset` elements past a 256-byte boundary.
template <class T>
struct DeviceArray {
  void* base = nullptr;
  T* data = nullptr;
  DeviceArray(const std::vector<T>& x, unsigned offset) {
    const std::size_t bytes = (x.size() + offset) * sizeof(T) + 16;
    if (cudaMalloc(&base, bytes) != cudaSuccess) throw std::runtime_error("cudaMalloc failed");
    data = static_cast<T*>(base) + offset;
    if (!x.empty() && cudaMemcpy(data, x.data(), x.size() * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess)
      throw std::runtime_error("cudaMemcpy failed");
  }
  ~DeviceArray() { cudaFree(base); }
};

template <class T, class Op>
result_t<T, Op> on_gpu(const T* d, std::uint64_t n, Op op, const Options& options = {}, stream_t s = nullptr) {
  using R = result_t<T, Op>;
  R* out = nullptr;
  EXPECT_EQ(cudaMalloc(&out, sizeof(R)), cudaSuccess);
  const Status st = reduce(d, n, op, out, s, options);
  EXPECT_TRUE(st.ok()) << st.message();
  R r{};
  EXPECT_EQ(cudaMemcpy(&r, out, sizeof(R), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(out);
  return r;
}

template <class T>
class ReduceGpu : public ::testing::Test {};
TYPED_TEST_SUITE(ReduceGpu, AllTypes);

template <class T, class Op>
void expect_gpu_matches_cpu(const std::vector<T>& x, const T* d, Op op, const Options& options,
                            const std::string& what) {
  if (x.empty() && needs_an_element<Op>) {  // no value: both backends say the input is empty
    EXPECT_EQ(cpu::reduce(x.data(), 0, op).status.code(), Errc::empty_input);
    result_t<T, Op>* out = nullptr;
    ASSERT_EQ(cudaMalloc(&out, sizeof *out), cudaSuccess);
    EXPECT_EQ(reduce(d, 0, op, out, nullptr, options).code(), Errc::empty_input) << what;
    cudaFree(out);
    return;
  }
  const auto want = cpu::reduce(x.data(), x.size(), op).value;
  const auto got = on_gpu(d, x.size(), op, options);
  EXPECT_TRUE(same_bits(got, want)) << type_name<T>() << " n=" << x.size() << " " << what << ": gpu "
                                    << show(got) << ", cpu " << show(want);
}

// Every operation on x (products on p, whose values keep a product finite) against the CPU.
template <class T>
void expect_every_op_matches_cpu(const std::vector<T>& x, const T* dx, const std::vector<T>& p, const T* dp,
                                 const Options& o, const std::string& what) {
  expect_gpu_matches_cpu(x, dx, op::sum{}, o, what);
  expect_gpu_matches_cpu(p, dp, op::prod{}, o, what);
  expect_gpu_matches_cpu(x, dx, op::min{}, o, what);
  expect_gpu_matches_cpu(x, dx, op::max{}, o, what);
  expect_gpu_matches_cpu(x, dx, op::mean{}, o, what);
  expect_gpu_matches_cpu(x, dx, op::argmin{}, o, what);
  expect_gpu_matches_cpu(x, dx, op::argmax{}, o, what);
}

TYPED_TEST(ReduceGpu, EveryOperationHasTheCpuBitsAtAnyGridAndAlignment) {
  REQUIRE_GPU();
  using T = TypeParam;
  std::vector<std::uint64_t> sizes = awkward_sizes<T>();
  sizes.push_back((1u << 20) + 3);
  sizes.push_back(9'000'017);
  if (sizeof(T) <= 4) sizes.push_back(20'000'003);  // all 2112 chunks of the fixed order
  for (std::uint64_t n : sizes) {
    const auto x = random_input<T>(n, 300 + n);
    const auto p = product_input<T>(n, 400 + n);
    for (unsigned offset : {0u, 1u, 3u}) {
      DeviceArray<T> dx(x, offset), dp(p, offset);
      for (unsigned grid : {0u, 1u, 5u, 133u, 2048u}) {
        if (n > 100'000 && grid == 1) continue;  // slow and adds nothing at this size
        const std::string what = "grid=" + std::to_string(grid) + " offset=" + std::to_string(offset);
        expect_every_op_matches_cpu(x, dx.data, p, dp.data, Options{grid, true}, what);
      }
    }
  }
}

// A small input is one thread-block cluster (2..16 blocks, cluster.cuh): every operation at
// 2..17 units of the order-free kernel (16 KiB each) and 2..17 tiles of the exact sums, aligned
// and not, against the CPU backend. 17 is past the largest cluster: the ticket path.
TYPED_TEST(ReduceGpu, OneClusterHasTheCpuBits) {
  REQUIRE_GPU();
  using T = TypeParam;
  const std::uint64_t unit = 16384 / sizeof(T), tile = detail::Shape<T>::kTile;
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t k : {2u, 3u, 8u, 9u, 15u, 16u, 17u}) {
    sizes.push_back(k * unit);
    sizes.push_back(k * unit - 5);
    if (is_floating<T>) sizes.push_back(k * tile - 3);
  }
  for (std::uint64_t n : sizes) {
    const auto x = random_input<T>(n, 700 + n);
    const auto p = product_input<T>(n, 800 + n);
    for (unsigned offset : {0u, 1u}) {
      DeviceArray<T> dx(x, offset), dp(p, offset);
      expect_every_op_matches_cpu(x, dx.data, p, dp.data, Options{}, "default grid, offset=" + std::to_string(offset));
    }
  }
}

TEST(ReduceLaunch, OneClusterOnlyForSmallUnforcedGrids) {
  EXPECT_EQ(detail::one_cluster(1, 16, false), 1u);   // one block: no cluster needed
  EXPECT_EQ(detail::one_cluster(2, 16, false), 2u);
  EXPECT_EQ(detail::one_cluster(16, 16, false), 16u);
  EXPECT_EQ(detail::one_cluster(17, 16, false), 1u);  // the ticket
  EXPECT_EQ(detail::one_cluster(9, 8, false), 1u);    // a GPU that takes only portable clusters
  EXPECT_EQ(detail::one_cluster(8, 8, false), 8u);
  EXPECT_EQ(detail::one_cluster(8, 1, false), 1u);    // a GPU without clusters
  EXPECT_EQ(detail::one_cluster(5, 16, true), 1u);    // a grid the caller forced keeps the ticket
}

TEST(ReduceGpu, RepeatedRunsGiveTheSameBits) {
  REQUIRE_GPU();
  const std::uint64_t n = (1u << 26) + 11;
  const auto x = random_input<float>(n, 77);
  DeviceArray<float> d(x, 0);
  const float first = on_gpu(d.data, n, op::sum{});
  for (int i = 0; i < 5; ++i) EXPECT_EQ(std::bit_cast<std::uint32_t>(on_gpu(d.data, n, op::sum{})), std::bit_cast<std::uint32_t>(first));
  EXPECT_EQ(std::bit_cast<std::uint32_t>(first), std::bit_cast<std::uint32_t>(cpu::reduce(x.data(), n, op::sum{}).value));
}

// n >= 2^32: 64-bit counts and indices all the way down.
TEST(ReduceGpu, MoreThanFourBillionElements) {
  REQUIRE_GPU();
  const std::uint64_t n = (std::uint64_t(1) << 32) + 5;
  std::size_t free_bytes = 0, total = 0;
  CUDA_OK(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < n + (1u << 30)) GTEST_SKIP() << "needs " << n << " bytes of free GPU memory";
  std::uint8_t* d = nullptr;
  CUDA_OK(cudaMalloc(&d, n));
  CUDA_OK(cudaMemset(d, 1, n));
  const std::uint8_t two = 2;
  const std::uint64_t at = (std::uint64_t(1) << 32) + 2;
  CUDA_OK(cudaMemcpy(d + at, &two, 1, cudaMemcpyHostToDevice));
  EXPECT_EQ(on_gpu(d, n, op::sum{}), n + 1);
  const auto am = on_gpu(d, n, op::argmax{});
  EXPECT_EQ(am.index, static_cast<std::int64_t>(at));
  EXPECT_EQ(am.value, 2);
  EXPECT_EQ(on_gpu(d + 1, n - 1, op::sum{}), n);  // misaligned by one byte
  CUDA_OK(cudaFree(d));

  // An exact half sum over 2^32 + 5 elements, each 0x3c3c = 271/256: n * 271/256 is exact in
  // double, so the correctly rounded float is one conversion away. Grid 1 too: one block's
  // digits take every flush.
  const std::uint64_t halves = n;
  if (free_bytes < 2 * halves + (1u << 30)) return;
  half* h = nullptr;
  CUDA_OK(cudaMalloc(&h, 2 * halves));
  CUDA_OK(cudaMemset(h, 0x3c, 2 * halves));
  const float want = static_cast<float>(static_cast<double>(halves) * (271.0 / 256.0));
  EXPECT_EQ(on_gpu(h, halves, op::sum{}), want);
  EXPECT_EQ(on_gpu(h, halves, op::sum{}, Options{1, true}), want);
  EXPECT_EQ(on_gpu(h, halves, op::mean{}), 271.0 / 256.0);
  CUDA_OK(cudaFree(h));
}

TEST(ReduceGpu, ConcurrentStreamsDoNotShareAWorkspace) {
  REQUIRE_GPU();
  constexpr int kStreams = 4;
  const std::uint64_t n = 5'000'000;
  std::vector<std::vector<std::int32_t>> xs;
  std::vector<std::unique_ptr<DeviceArray<std::int32_t>>> ds;
  cudaStream_t streams[kStreams];
  std::int64_t* out = nullptr;
  CUDA_OK(cudaMalloc(&out, kStreams * sizeof(std::int64_t)));
  for (int s = 0; s < kStreams; ++s) {
    xs.push_back(random_input<std::int32_t>(n, 900 + s));
    ds.push_back(std::make_unique<DeviceArray<std::int32_t>>(xs.back(), 0));
    CUDA_OK(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
  }
  for (int rep = 0; rep < 20; ++rep)
    for (int s = 0; s < kStreams; ++s) ASSERT_TRUE(sum(ds[s]->data, n, out + s, streams[s]).ok());
  CUDA_OK(cudaDeviceSynchronize());
  std::int64_t got[kStreams];
  CUDA_OK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int s = 0; s < kStreams; ++s) {
    EXPECT_EQ(got[s], exact_sum(xs[s])) << "stream " << s;
    cudaStreamDestroy(streams[s]);
  }
  cudaFree(out);
}

TEST(ReduceGpu, CapturedIntoAGraphAndReplayed) {
  REQUIRE_GPU();
  const auto x = random_input<float>(3'000'001, 5);
  DeviceArray<float> d(x, 0);
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float* out = nullptr;
  CUDA_OK(cudaMalloc(&out, sizeof(float)));
  cudaGraph_t graph;
  CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  const Status st = sum(d.data, x.size(), out, s);
  CUDA_OK(cudaStreamEndCapture(s, &graph));
  ASSERT_TRUE(st.ok()) << st.message();
  cudaGraphExec_t exec;
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  const float want = cpu::reduce(x.data(), x.size(), op::sum{}).value;
  for (int i = 0; i < 3; ++i) {
    CUDA_OK(cudaMemset(out, 0, sizeof(float)));
    CUDA_OK(cudaGraphLaunch(exec, s));
    CUDA_OK(cudaStreamSynchronize(s));
    float got;
    CUDA_OK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
    EXPECT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want)) << "replay " << i;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
  cudaFree(out);
}

struct MaxAbs {
  using value_type = float;
  __host__ __device__ float identity() const { return 0.f; }
  __host__ __device__ float operator()(float a, float b) const { return fmaxf(fabsf(a), fabsf(b)); }
};

TEST(ReduceGpu, UserOperationsRunOnTheGpuWithTheCpuBits) {
  REQUIRE_GPU();
  const auto x = random_input<float>(1'234'567, 15);
  DeviceArray<float> d(x, 1);
  EXPECT_EQ(on_gpu(d.data, x.size(), MaxAbs{}), cpu::reduce(x.data(), x.size(), MaxAbs{}).value);
}

TEST(ReduceGpu, HostConvenienceAndNondeterministicVariant) {
  REQUIRE_GPU();
  const auto x = random_input<double>(2'000'003, 16);
  DeviceArray<double> d(x, 0);
  const auto r = reduce_to_host(d.data, x.size(), op::sum{});
  ASSERT_TRUE(r) << r.status.message();
  EXPECT_EQ(r.value, cpu::reduce(x.data(), x.size(), op::sum{}).value);
  const double nondet = on_gpu(d.data, x.size(), op::sum{}, Options{0, false});
  EXPECT_NEAR(nondet, r.value, 1e-9 * static_cast<double>(abs_sum(x)));
}

// Exact sums and means on the GPU: the correctly rounded exact result (known by construction)
// at every grid and alignment, for n from 1 to past the L2.
template <class T>
class ExactSumGpu : public ::testing::Test {};
using ExactTypes = ::testing::Types<half, bfloat16, float, double>;
TYPED_TEST_SUITE(ExactSumGpu, ExactTypes);

TYPED_TEST(ExactSumGpu, CorrectlyRoundedAtEveryGridAndAlignment) {
  REQUIRE_GPU();
  using T = TypeParam;
  std::size_t count = 0;
  std::vector<ExactCase<T>> cases = edge_cases<T>();
  for (std::uint64_t n : {1ull, 33ull, 1000ull, 100003ull, (1ull << 22) + 3, (1ull << 26) + 1})
    for (auto& c : exact_cases<T>(n, 2000 + n)) cases.push_back(std::move(c));
  for (const auto& c : cases)
    for (unsigned offset : {0u, 1u}) {
      DeviceArray<T> d(c.x, offset);
      for (unsigned grid : {0u, 1u, 7u, 1000u}) {
        const auto got = on_gpu(d.data, c.x.size(), op::sum{}, Options{grid, true});
        EXPECT_TRUE(same_result(got, c.sum)) << type_name<T>() << " " << c.name << " grid " << grid << " offset "
                                             << offset << ": gpu " << got << " expected " << c.sum;
        ++count;
      }
      const double mean = on_gpu(d.data, c.x.size(), op::mean{});
      if (c.mean) EXPECT_TRUE(same_result(mean, *c.mean)) << type_name<T>() << " " << c.name << " mean " << mean;
      EXPECT_TRUE(same_result(mean, cpu::reduce(c.x.data(), c.x.size(), op::mean{}).value)) << c.name << " mean vs cpu";
    }
  std::printf("[ exact    ] %s: %zu GPU sums, each the correctly rounded exact sum\n", type_name<T>().c_str(), count);
}

TEST(ReduceGpu, BadArgumentsAreReturnedNotThrown) {
  REQUIRE_GPU();
  float* out = nullptr;
  CUDA_OK(cudaMalloc(&out, sizeof(float)));
  const Status a = sum(static_cast<const float*>(nullptr), 10, out);
  EXPECT_EQ(a.code(), Errc::invalid_argument);
  EXPECT_NE(a.message().find("n = 10"), std::string::npos) << a.message();
  const float* in = out;
  EXPECT_EQ(sum(in, 1, static_cast<float*>(nullptr)).code(), Errc::invalid_argument);
  EXPECT_TRUE(sum(static_cast<const float*>(nullptr), 0, out).ok());  // empty is fine
  cudaFree(out);
}

// Empty input: sum, prod and mean write their values; min, max, argmin and argmax return
// Errc::empty_input and leave the output untouched.
TEST(ReduceGpu, EmptyInputHasTheDefinedValuesOrSaysItIsEmpty) {
  REQUIRE_GPU();
  const std::vector<float> one = {5.f};
  DeviceArray<float> d(one, 0);
  EXPECT_EQ(on_gpu(d.data, 0, op::sum{}), 0.f);
  EXPECT_EQ(on_gpu(d.data, 0, op::prod{}), 1.f);
  EXPECT_TRUE(std::isnan(on_gpu(d.data, 0, op::mean{})));
  float* out = nullptr;
  CUDA_OK(cudaMalloc(&out, sizeof(ArgResult<float>)));
  CUDA_OK(cudaMemset(out, 0x7f, sizeof(ArgResult<float>)));
  for (const Status& st : {min(d.data, 0, out), max(d.data, 0, out),
                           argmin(d.data, 0, reinterpret_cast<ArgResult<float>*>(out)),
                           argmax(d.data, 0, reinterpret_cast<ArgResult<float>*>(out))}) {
    EXPECT_EQ(st.code(), Errc::empty_input) << st.message();
    EXPECT_NE(st.message().find("of an empty input"), std::string::npos) << st.message();
  }
  unsigned char bytes[sizeof(ArgResult<float>)];
  CUDA_OK(cudaMemcpy(bytes, out, sizeof bytes, cudaMemcpyDeviceToHost));
  for (unsigned char b : bytes) EXPECT_EQ(b, 0x7f);
  const auto r = reduce_to_host(d.data, 0, op::argmax{});
  EXPECT_EQ(r.status.code(), Errc::empty_input);
  cudaFree(out);
}

// argmin/argmax order -0 below +0 as min/max do, inside a tile, across chunks and blocks.
template <class T>
void expect_signed_zeros_agree_on_gpu() {
  const T pz = from_double<T>(0.0), nz = from_double<T>(-0.0);
  DeviceArray<T> up(std::vector<T>{nz, pz}, 0), down(std::vector<T>{pz, nz}, 1);
  EXPECT_FALSE(detail::sign_bit(on_gpu(up.data, 2, op::max{})));
  EXPECT_EQ(on_gpu(up.data, 2, op::argmax{}).index, 1) << type_name<T>();
  EXPECT_TRUE(detail::sign_bit(on_gpu(down.data, 2, op::min{})));
  EXPECT_EQ(on_gpu(down.data, 2, op::argmin{}).index, 1) << type_name<T>();
  const std::uint64_t n = 9'000'017;
  std::vector<T> x(n, pz);
  x[n - 3] = nz;
  x[n - 1] = nz;
  DeviceArray<T> dx(x, 0);
  for (unsigned grid : {0u, 1u, 7u})
    EXPECT_EQ(on_gpu(dx.data, n, op::argmin{}, Options{grid, true}).index, static_cast<std::int64_t>(n - 3))
        << type_name<T>() << " grid " << grid;
}
TEST(ReduceGpu, ArgExtremaNameTheSignedZeroMinAndMaxReturn) {
  REQUIRE_GPU();
  expect_signed_zeros_agree_on_gpu<float>();
  expect_signed_zeros_agree_on_gpu<double>();
  expect_signed_zeros_agree_on_gpu<half>();
  expect_signed_zeros_agree_on_gpu<bfloat16>();
}

// The min and max of 16-bit floats (two keys per 32-bit word in the order-free kernel) with NaNs
// of every kind, infinities and signed zeros: the CPU backend's bits at several grids, aligned
// and not, up to the large-input shape (2^24 elements and more).
template <class T>
void expect_special_extrema_agree_on_gpu() {
  for (std::uint64_t n : {std::uint64_t(37), std::uint64_t(100003), std::uint64_t(1) << 24})
    for (const auto& [name, x] : special_extrema_inputs<T>(n, 500 + n))
      for (unsigned offset : {0u, 1u}) {
        DeviceArray<T> dx(x, offset);
        for (unsigned grid : {0u, 1u, 133u}) {
          const std::string what = name + " grid=" + std::to_string(grid) + " offset=" + std::to_string(offset);
          expect_gpu_matches_cpu(x, dx.data, op::min{}, Options{grid, true}, what);
          expect_gpu_matches_cpu(x, dx.data, op::max{}, Options{grid, true}, what);
        }
      }
}
TEST(ReduceGpu, HalfAndBfloat16ExtremaSeeNaNsInfinitiesAndSignedZeros) {
  REQUIRE_GPU();
  expect_special_extrema_agree_on_gpu<half>();
  expect_special_extrema_agree_on_gpu<bfloat16>();
}

// Integer means: the exact 128-bit sum divided by n, rounded once, equal to the CPU backend's.
TEST(ReduceGpu, IntegerMeanIsTheExactQuotientRoundedOnce) {
  REQUIRE_GPU();
  const std::int64_t p53 = std::int64_t(1) << 53;
  DeviceArray<std::int64_t> odd(std::vector<std::int64_t>{p53 + 1, p53 + 2, 3}, 0);
  EXPECT_EQ(on_gpu(odd.data, 3, op::mean{}), 6004799503160663.0);
  DeviceArray<std::int64_t> big(std::vector<std::int64_t>{std::int64_t(1) << 62, std::int64_t(1) << 62}, 1);
  EXPECT_EQ(on_gpu(big.data, 2, op::mean{}), 4611686018427387904.0);
  DeviceArray<std::uint64_t> ubig(std::vector<std::uint64_t>{std::uint64_t(1) << 63, std::uint64_t(1) << 63}, 0);
  EXPECT_EQ(on_gpu(ubig.data, 2, op::mean{}), 9223372036854775808.0);
  const std::uint64_t n = 9'000'017;
  std::vector<std::int64_t> x(n, INT64_MAX);
  x[5] = INT64_MIN;
  DeviceArray<std::int64_t> dx(x, 0);
  const double want = cpu::reduce(x.data(), n, op::mean{}).value;
  for (unsigned grid : {0u, 1u, 5u}) EXPECT_EQ(on_gpu(dx.data, n, op::mean{}, Options{grid, true}), want);
  std::vector<std::uint64_t> u(n, UINT64_MAX);
  DeviceArray<std::uint64_t> du(u, 3);
  EXPECT_EQ(on_gpu(du.data, n, op::mean{}), 18446744073709551616.0);
}

}  // namespace
}  // namespace rltest
