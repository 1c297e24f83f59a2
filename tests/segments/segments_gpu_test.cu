// reduce_axis and reduce_segments on the GPU: every type x operation x axis/segments x awkward
// shapes, against the CPU backend's bits, for the default grid and forced ones. Skips with the
// reason where no GPU is usable; the same cases run on SIMT in segments_test.cpp.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "reducelab/segments.hpp"
#include "segments_support.hpp"

namespace rltest {
namespace {

#define REQUIRE_GPU()                                                               \
  do {                                                                              \
    if (Status s = gpu_available(); !s) GTEST_SKIP() << "no GPU: " << s.message(); \
  } while (0)

// A device buffer filled from the host, `offset` elements past a 256-byte boundary.
template <class T>
struct DeviceBuffer {
  void* base = nullptr;
  T* data = nullptr;
  DeviceBuffer(const T* host, std::size_t n, unsigned offset = 0) {
    if (cudaMalloc(&base, (n + offset) * sizeof(T) + 16) != cudaSuccess) throw std::runtime_error("cudaMalloc failed");
    data = static_cast<T*>(base) + offset;
    if (n && cudaMemcpy(data, host, n * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess)
      throw std::runtime_error("cudaMemcpy to the device failed");
  }
  ~DeviceBuffer() { cudaFree(base); }
  std::vector<T> read(std::size_t n) const {
    std::vector<T> out(n);
    if (n && cudaMemcpy(out.data(), data, n * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess)
      throw std::runtime_error("cudaMemcpy to the host failed");
    return out;
  }
};

template <class R>
std::vector<R> poison(std::size_t n) {
  std::vector<R> p(n);
  std::memset(static_cast<void*>(p.data()), 0x5a, n * sizeof(R));
  return p;
}

template <class T>
class SegmentsGpu : public ::testing::Test {};
TYPED_TEST_SUITE(SegmentsGpu, AllTypes);

TYPED_TEST(SegmentsGpu, AxesHaveTheCpuBitsForEveryGridAndAlignment) {
  REQUIRE_GPU();
  using T = TypeParam;
  const std::vector<Matrix> ms{{0, 5, 0},   {1, 1, 0},      {31, 33, 0},   {33, 31, 40},
                               {1, 1000003, 0}, {1000003, 1, 0}, {3, 5 * detail::Shape<T>::kTile + 3, 0}};
  for_each_op([&](auto op) {
    using Op = decltype(op);
    using R = result_t<T, Op>;
    for (const Matrix m : ms) {
      const std::uint64_t pitch = m.pitch ? m.pitch : m.cols;
      const auto x = input_for<T, Op>(m.rows * pitch, 21 + m.rows);
      for (int axis : {0, 1}) {
        const std::size_t count = axis == 1 ? m.rows : m.cols;
        std::vector<R> want(count);
        ASSERT_TRUE(cpu::reduce_axis(x.data(), m, axis, op, want.data()).ok());
        for (unsigned offset : {0u, 1u}) {
          DeviceBuffer<T> d(x.data(), x.size(), offset);
          for (unsigned grid : {0u, 1u, 7u}) {
            const auto init = poison<R>(count);
            DeviceBuffer<R> out(init.data(), count);
            Options o;
            o.grid = grid;
            const Status st = reduce_axis(d.data, m, axis, op, out.data, nullptr, o);
            ASSERT_TRUE(st.ok()) << st.message();
            ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
            expect_same(out.read(count), want,
                        type_name<T>() + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols) + " axis " +
                            std::to_string(axis) + " grid " + std::to_string(grid) + " offset " + std::to_string(offset));
          }
        }
      }
    }
  });
}

TYPED_TEST(SegmentsGpu, SegmentsHaveTheCpuBits) {
  REQUIRE_GPU();
  using T = TypeParam;
  for_each_op([&](auto op) {
    using Op = decltype(op);
    using R = result_t<T, Op>;
    for (std::uint64_t n : {std::uint64_t(0), std::uint64_t(33), std::uint64_t(100000)}) {
      const auto x = input_for<T, Op>(n, 5 + n);
      const auto [b, e] = random_segments(n, 1000, n);
      std::vector<R> want(b.size());
      ASSERT_TRUE(cpu::reduce_segments(x.data(), b.size(), b.data(), e.data(), op, want.data()).ok());
      DeviceBuffer<T> d(x.data(), n);
      DeviceBuffer<std::int64_t> db(b.data(), b.size()), de(e.data(), e.size());
      for (unsigned grid : {0u, 3u}) {
        const auto init = poison<R>(b.size());
        DeviceBuffer<R> out(init.data(), b.size());
        Options o;
        o.grid = grid;
        const Status st = reduce_segments(d.data, b.size(), db.data, de.data, op, out.data, nullptr, o);
        ASSERT_TRUE(st.ok()) << st.message();
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        expect_same(out.read(b.size()), want, type_name<T>() + " n " + std::to_string(n) + " grid " + std::to_string(grid));
      }
    }
  });
}

TEST(SegmentsGpuErrors, BadArgumentsAreRejectedBeforeAnyLaunch) {
  REQUIRE_GPU();
  float* out = nullptr;
  ASSERT_EQ(cudaMalloc(&out, 64), cudaSuccess);
  const Status st = reduce_axis(out, Matrix{2, 2, 0}, 3, op::sum{}, out);
  EXPECT_EQ(st.code(), Errc::invalid_argument);
  EXPECT_NE(st.message().find("axis 3"), std::string::npos);
  cudaFree(out);
}

}  // namespace
}  // namespace rltest
