// reduce_axis and reduce_segments on the GPU: every type x operation x axis/segments x awkward
// shapes, against the CPU backend's bits, for the default grid and forced ones. Skips with the
// reason where no GPU is usable; the same cases run on SIMT in segments_test.cpp.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

#include "exact_pieces_support.hpp"
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

// reduce_axis on the device against the CPU backend, at grids 0, 1 and 7, the input on and one
// element off a 256-byte boundary, the output `out_shift` results past one.
template <class T, class Op>
void expect_gpu_axis_has_cpu_bits(const std::vector<T>& x, Matrix m, int axis, Op op, const std::string& what,
                                  unsigned out_shift = 0) {
  using R = result_t<T, Op>;
  const std::size_t count = axis == 1 ? m.rows : m.cols;
  std::vector<R> want(count);
  ASSERT_TRUE(cpu::reduce_axis(x.data(), m, axis, op, want.data()).ok());
  for (unsigned offset : {0u, 1u}) {
    DeviceBuffer<T> d(x.data(), x.size(), offset);
    for (unsigned grid : {0u, 1u, 7u}) {
      const auto init = poison<R>(count);
      DeviceBuffer<R> out(init.data(), count, out_shift);
      Options o;
      o.grid = grid;
      const Status st = reduce_axis(d.data, m, axis, op, out.data, nullptr, o);
      ASSERT_TRUE(st.ok()) << st.message();
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      expect_same(out.read(count), want, what + " grid " + std::to_string(grid) + " offset " + std::to_string(offset));
    }
  }
}

// reduce_segments on the device data for the default grid and a forced one, against `want`.
template <class T, class Op>
void expect_gpu_segments(const T* x, const std::int64_t* begin, const std::int64_t* end, Op op,
                         const std::vector<result_t<T, Op>>& want, const std::string& what) {
  using R = result_t<T, Op>;
  for (unsigned grid : {0u, 3u}) {
    const auto init = poison<R>(want.size());
    DeviceBuffer<R> out(init.data(), want.size());
    Options o;
    o.grid = grid;
    const Status st = reduce_segments(x, want.size(), begin, end, op, out.data, nullptr, o);
    ASSERT_TRUE(st.ok()) << st.message();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    expect_same(out.read(want.size()), want, what + " grid " + std::to_string(grid));
  }
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
    for (const Matrix m : ms) {
      const std::uint64_t pitch = m.pitch ? m.pitch : m.cols;
      const auto x = input_for<T, Op>(m.rows * pitch, 21 + m.rows);
      for (int axis : {0, 1})
        expect_gpu_axis_has_cpu_bits(x, m, axis, op,
                                     type_name<T>() + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols) +
                                         " axis " + std::to_string(axis));
    }
  });
}

// Rows a block each whose pair cannot hold them (lost_rows), 2000 of them: more than the GPU holds
// blocks of the few-rows kernels, so that reduceBlockRows takes them (float blocks sum their lost
// rows again themselves, the others list them for the redo launch); sums and means.
template <class T>
void expect_lost_rows_on_gpu() {
  const LostRows<T> l = lost_rows<T>(2000, 502);
  expect_gpu_axis_has_cpu_bits(l.x, l.m, 1, op::sum{}, type_name<T>() + " sum of lost rows");
  expect_gpu_axis_has_cpu_bits(l.x, l.m, 1, op::mean{}, type_name<T>() + " mean of lost rows");
}
TEST(SegmentsGpuExact, LostRowsABlockEachHaveTheCpuBits) {
  REQUIRE_GPU();
  expect_lost_rows_on_gpu<float>();
  expect_lost_rows_on_gpu<double>();
  expect_lost_rows_on_gpu<bfloat16>();
  expect_lost_rows_on_gpu<half>();
}

// Segments longer than a tile whose pairs cannot hold them (lost_rows, 300 rows as segments),
// after 2000 short lost ones ({big, 1, tiny, -big}): for float and double sums and means the
// long-piece kernel, the call's last, sums both again itself (its blocks note their own lost
// pieces, more than they hold at once on a forced grid of 3), the others list them for the redo
// launch; against the CPU backend, then an ordinary call finds both lists clear.
template <class T>
void expect_lost_long_segments_on_gpu() {
  const LostSegments<T> l = lost_segments<T>(300, 503, 2000);
  const auto& x = l.x;
  const auto& begin = l.begin;
  const auto& end = l.end;
  DeviceBuffer<T> d(x.data(), x.size());
  DeviceBuffer<std::int64_t> b(begin.data(), begin.size()), e(end.data(), end.size());
  const std::string what = type_name<T>() + " lost long segments";
  expect_gpu_segments(d.data, b.data, e.data, op::sum{}, expected_segments(x, begin, end, op::sum{}), what + " sum");
  expect_gpu_segments(d.data, b.data, e.data, op::mean{}, expected_segments(x, begin, end, op::mean{}), what + " mean");
  // An ordinary call after them: nothing left in either list.
  const std::vector<std::int64_t> ob{0, 100, 5000}, oe{100, 5000, 20000};
  const auto y = random_input<T>(20000, 3);
  DeviceBuffer<T> dy(y.data(), y.size());
  DeviceBuffer<std::int64_t> obd(ob.data(), ob.size()), oed(oe.data(), oe.size());
  expect_gpu_segments(dy.data, obd.data, oed.data, op::sum{}, expected_segments(y, ob, oe, op::sum{}), what + ", after");
}
TEST(SegmentsGpuExact, LostLongSegmentsHaveTheCpuBits) {
  REQUIRE_GPU();
  expect_lost_long_segments_on_gpu<float>();
  expect_lost_long_segments_on_gpu<double>();
  expect_lost_long_segments_on_gpu<bfloat16>();
  expect_lost_long_segments_on_gpu<half>();
}

// The columns of x (axis 0) under each of `ops` on the GPU, against the CPU backend.
template <class T, class... Ops>
void expect_gpu_columns_have_cpu_bits(const std::vector<T>& x, Matrix m, Ops... ops) {
  const std::string shape = std::to_string(m.rows) + "x" + std::to_string(m.cols);
  (expect_gpu_axis_has_cpu_bits(x, m, 0, ops, type_name<T>() + " " + op_name<Ops>() + " " + shape), ...);
}

// Half and bfloat16 column minima, maxima, sums and means, two columns a word where they pair up
// (the banded and the warp-per-group shapes, a pitch, an odd count and a misaligned input that do
// not pair): special values in one column of a word and not the other, a bfloat16 column whose
// pair is lost and redone, every grid, against the CPU backend.
template <class T>
void expect_special_columns_on_gpu() {
  const std::vector<Matrix> ms{{300, 16, 0}, {4100, 64, 0}, {4100, 64, 72}, {200, 33, 0}, {20, 1040, 1042}, {9, 1 << 20, 0}};
  for (const Matrix m : ms)
    expect_gpu_columns_have_cpu_bits(special_columns<T>(m, 11 + m.cols), m, op::max{}, op::min{}, op::sum{}, op::mean{});
}
TEST(SegmentsGpu, HalfColumnsTwoToALaneSeeNaNsInfinitiesSignedZerosAndLostPairs) {
  REQUIRE_GPU();
  expect_special_columns_on_gpu<half>();
  expect_special_columns_on_gpu<bfloat16>();
}

// Exact half sums and means of columns of whole 16-byte vectors, a vector a lane
// (reduceHalfColumnBands): a warp a group over every row (9 x 2^20, the results also written one by
// one past a 16-byte boundary), or bands of at most 8192 rows whose integer counts the last band adds
// (8704 x 2048; 20001 x 256 and 16385 x 1024 with pitches); special values in the columns
// (special_columns), and columns 0 and 1 of 2^-24 and 8703 x 65504, whose exact sum a double of all
// 8704 would round to the tie below it. Every grid, an input off a 16-byte boundary (the pair
// kernel), against the CPU backend. The SIMT twin is WideHalfColumns.HaveTheCpuBitsInOneBandOrMany.
TEST(SegmentsGpu, WideHalfColumnsAddTheirBandsAsIntegers) {
  REQUIRE_GPU();
  for (const Matrix m : {Matrix{9, 1 << 20, 0}, Matrix{8704, 2048, 0}, Matrix{20001, 256, 264}, Matrix{16385, 1024, 1032}}) {
    auto x = special_columns<half>(m, 3 + m.cols);
    const std::uint64_t pitch = m.pitch ? m.pitch : m.cols;
    for (std::uint64_t r = 0; r < m.rows; ++r) {
      x[r * pitch] = from_double<half>(r == 0 ? 0x1p-24 : 65504.0);
      x[r * pitch + 1] = from_double<half>(r == m.rows - 1 ? 0x1p-24 : 65504.0);
    }
    expect_gpu_columns_have_cpu_bits(x, m, op::sum{}, op::mean{});
    if (m.rows == 9) {  // a warp a group: its eight results in one store, or one by one off a 16-byte boundary
      expect_gpu_axis_has_cpu_bits(x, m, 0, op::sum{}, "half sum 9 x 2^20, output 1 past", 1);
      expect_gpu_axis_has_cpu_bits(x, m, 0, op::mean{}, "half mean 9 x 2^20, output 1 past", 1);
    }
  }
}

// Minima and maxima of dense half and bfloat16 columns read as one array (reduceHalfColumnExtrema),
// 2 to 256 columns, and 3 and 96 that take the other kernels: NaNs of both signs, columns of
// signed zeros, of -inf only and of +inf with one -0 (extreme_half_columns), every grid, an input
// off a 16-byte boundary, against the CPU backend. The SIMT twin is
// SegmentsSimt.DenseHalfColumnExtremaSeeNaNsInfinitiesAndSignedZeros.
template <class T>
void expect_dense_half_column_extrema_on_gpu() {
  for (const std::uint64_t cols : {2, 3, 4, 8, 16, 32, 64, 96, 128, 256}) {
    const Matrix m{(std::uint64_t(1) << 22) / cols + 3, cols, 0};
    expect_gpu_columns_have_cpu_bits(extreme_half_columns<T>(m.rows, cols, 9 + cols), m, op::max{}, op::min{});
  }
}
TEST(SegmentsGpu, DenseHalfColumnExtremaSeeNaNsInfinitiesAndSignedZeros) {
  REQUIRE_GPU();
  expect_dense_half_column_extrema_on_gpu<half>();
  expect_dense_half_column_extrema_on_gpu<bfloat16>();
}

// Rows of 2 and 4 halves write a vector's results in one store of 4, 8 or 16 bytes when the
// output allows it, a store a row when it lies 1 to 3 results past that boundary (an unaligned
// wide store would fault here): the CPU backend's bits either way, rows with an infinity and a
// NaN among them. The SIMT twin is PackedRows.TheResultsOfAVectorsRowsGoOutTogetherOrOneByOne.
TEST(SegmentsGpu, AVectorsRowResultsGoOutTogetherOrOneByOne) {
  REQUIRE_GPU();
  for (const std::uint64_t cols : {2, 4}) {
    const Matrix m{100003, cols, 0};
    auto x = random_input<half>(m.rows * cols, 41 + cols);
    x[7 * cols].bits = 0x7c00;
    x[1000 * cols + 1].bits = 0x7e00;
    for (const unsigned shift : {0u, 1u, 2u, 3u}) {
      const std::string what = std::to_string(cols) + " columns, output " + std::to_string(shift) + " past";
      expect_gpu_axis_has_cpu_bits(x, m, 1, op::sum{}, "sum " + what, shift);
      expect_gpu_axis_has_cpu_bits(x, m, 1, op::mean{}, "mean " + what, shift);
      expect_gpu_axis_has_cpu_bits(x, m, 1, op::max{}, "max " + what, shift);
    }
  }
}

// Half and bfloat16 row minima and maxima: rows of 8 to 64 whole vectors are read as words of two
// keys (reduceFreeRows), rows of 2, 4 and 16 a vector or a row a thread (reducePackedRows), rows of
// one element a word of two at a time (reduceSingles), a row of 37 or off a 16-byte boundary
// element by element; NaNs of both
// signs, infinities, signed zeros and subnormals, every grid, against the CPU backend. The SIMT
// twin is SixteenBitExtrema.TwoPerWordHaveTheCpuBits.
template <class T>
void expect_16bit_row_extrema_on_gpu() {
  for (const std::uint64_t cols : {1, 2, 4, 16, 37, 64, 256, 512})
    for (const std::uint64_t rows : {97, 4099}) {
      const Matrix m{rows, cols, 0};
      const auto x = special_16bit_rows<T>(rows, cols);
      const std::string what = type_name<T>() + " " + std::to_string(rows) + "x" + std::to_string(cols);
      expect_gpu_axis_has_cpu_bits(x, m, 1, op::max{}, "max " + what);
      expect_gpu_axis_has_cpu_bits(x, m, 1, op::min{}, "min " + what);
    }
}
TEST(SegmentsGpu, HalfRowsAsWordsSeeNaNsInfinitiesAndSignedZeros) {
  REQUIRE_GPU();
  expect_16bit_row_extrema_on_gpu<half>();
  expect_16bit_row_extrema_on_gpu<bfloat16>();
}

// Exact half row sums and means: rows of 4 to 64 whole vectors a double a lane (reduceFreeRows),
// rows of 16 a row a thread (reducePackedRows), 37 and 1000 in windows or pairs (reduceRowGroups);
// sums that need the halves' whole grid, NaNs of both signs, +inf with -inf, -0 only, every grid,
// against the CPU backend. The SIMT twin is FreeRows.ExactHalfSumsOfShortRowsAreOneDoubleALane.
TEST(SegmentsGpu, ExactHalfRowSumsSeeTheWholeGridNaNsInfinitiesAndSignedZeros) {
  REQUIRE_GPU();
  for (const std::uint64_t cols : {16, 32, 37, 64, 256, 512, 1000})
    for (const std::uint64_t rows : {97, 4099}) {
      const Matrix m{rows, cols, 0};
      const auto x = exact_half_rows(rows, cols);
      const std::string what = "half " + std::to_string(rows) + "x" + std::to_string(cols);
      expect_gpu_axis_has_cpu_bits(x, m, 1, op::sum{}, "sum " + what);
      expect_gpu_axis_has_cpu_bits(x, m, 1, op::mean{}, "mean " + what);
    }
}

// Float and double column minima and maxima (a 16-byte vector of columns a lane) and exact float
// sums and means (two columns a lane) where the columns split into aligned vectors (banded, a warp
// per group of vectors: 9 and 40 rows, exact sums there with 16 loads in flight; a pitch), a
// column a lane where they do not (a pitch off the vector, a count off it), and argmin and argmax:
// special values in one column of a vector and not the others, ties, a float column whose pair is
// lost and redone, every grid, against the CPU backend.
// The SIMT twin is SegmentsSimt.FloatColumnsInVectorsSeeNaNsInfinitiesSignedZerosAndTies.
template <class T>
void expect_special_vector_columns_on_gpu() {
  const std::vector<Matrix> ms{{300, 16, 0}, {4100, 64, 0}, {33, 12, 0}, {20, 1040, 1044}, {9, 1 << 20, 0},
                               {40, 1 << 18, 0}, {31, 20, 22}};
  for (const Matrix m : ms)
    expect_gpu_columns_have_cpu_bits(special_float_columns<T>(m, 11 + m.cols), m, op::max{}, op::min{}, op::argmax{},
                                     op::argmin{}, op::sum{}, op::mean{});
}
TEST(SegmentsGpu, FloatColumnsInVectorsSeeNaNsInfinitiesSignedZerosAndTies) {
  REQUIRE_GPU();
  expect_special_vector_columns_on_gpu<float>();
  expect_special_vector_columns_on_gpu<double>();
}

// Dense short rows that reducePackedRows takes for every order-free operation (rows of 2, 4 or 8
// elements inside a vector; two, four or eight whole vectors a row), and for exact sums: the
// CPU backend's bits at every grid, on and off a 16-byte boundary (row groups then). The SIMT
// twin is SegmentsSimt.PackedShortRowsHaveTheCpuBits.
TYPED_TEST(SegmentsGpu, PackedShortRowsHaveTheCpuBits) {
  REQUIRE_GPU();
  using T = TypeParam;
  for_each_op([&](auto op) {
    using Op = decltype(op);
    for (const std::uint64_t cols : {2, 4, 8, 16, 32, 64, 128}) {
      const Matrix m{301, cols, 0};
      expect_gpu_axis_has_cpu_bits(input_for<T, Op>(m.rows * cols, 93 + cols), m, 1, op,
                                   type_name<T>() + " 301x" + std::to_string(cols));
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
      expect_gpu_segments(d.data, db.data, de.data, op, want, type_name<T>() + " n " + std::to_string(n));
    }
  });
}

// Ragged segments that follow each other in memory (reduceSegmentGroups: a warp per group, one
// range per group): lengths of 0 to 64, of a few thousand and past a tile mixed, as the bench's
// distributions draw them, for the default grid and a forced one, on and off a 16-byte boundary.
TYPED_TEST(SegmentsGpu, RaggedSegmentsInOneRangeHaveTheCpuBits) {
  REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937_64 rng(77);
  std::vector<std::int64_t> b, e;
  std::int64_t at = 0;
  for (int i = 0; i < 20000; ++i) {
    std::uint64_t len = rng() % 65;
    if (i % 8 == 7) len = 0;
    if (i % 997 == 5) len = rng() % 5000;
    if (i == 12345) len = detail::Shape<T>::kTile + 77;
    b.push_back(at), at += static_cast<std::int64_t>(len), e.push_back(at);
  }
  const std::uint64_t n = static_cast<std::uint64_t>(at);
  for_each_op([&](auto op) {
    using Op = decltype(op);
    using R = result_t<T, Op>;
    const auto x = input_for<T, Op>(n, 31);
    std::vector<R> want(b.size());
    ASSERT_TRUE(cpu::reduce_segments(x.data(), b.size(), b.data(), e.data(), op, want.data()).ok());
    DeviceBuffer<std::int64_t> db(b.data(), b.size()), de(e.data(), e.size());
    for (unsigned offset : {0u, 1u}) {
      DeviceBuffer<T> d(x.data(), n, offset);
      expect_gpu_segments(d.data, db.data, de.data, op, want, type_name<T>() + " offset " + std::to_string(offset));
    }
  });
}

// Floating-point sums and means of pieces are exact: pieces whose exact sums are known by
// construction (cancellation across the exponent range, halfway cases, overflow, infinities,
// NaN, signed zeros, pieces a pair of doubles cannot hold), as segments, rows and columns.
template <class T>
class SegmentsGpuExact : public ::testing::Test {};
using FloatingTypes = ::testing::Types<half, bfloat16, float, double>;
TYPED_TEST_SUITE(SegmentsGpuExact, FloatingTypes);

template <class T, class R>
void expect_cases(const std::vector<R>& got, const PieceCases<T>& p, bool means, const std::string& where) {
  ASSERT_EQ(got.size(), p.cases.size()) << where;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (means && !p.cases[i].mean) continue;
    const R want = means ? static_cast<R>(*p.cases[i].mean) : static_cast<R>(p.cases[i].sum);
    EXPECT_TRUE(same_result(got[i], want)) << type_name<T>() << " " << where << ", " << p.cases[i].name << ": "
                                           << show(got[i]) << ", exact " << show(want);
  }
}

// Rows longer than the row-group kernel takes, exact sums and means: a block a row (70 rows at the
// default grid) and a warp a row (reduceWarpRows: 70 rows at grids 1 and 7, and 4096 rows, more
// than the GPU holds warps, at the default grid; rows of 64 KiB start at their own round of
// loads), against the CPU backend. Rows of 20011 take a block each, double rows four or five
// rounds of copies a thread through two slots each (every slot copied into again while the
// other's copies are in flight).
TYPED_TEST(SegmentsGpuExact, LongRowsAWarpOrABlockEachHaveTheCpuBits) {
  REQUIRE_GPU();
  using T = TypeParam;
  const std::uint64_t cols64k = 65536 / sizeof(T);
  for (const Matrix m : {Matrix{70, 9001, 9003}, Matrix{4096, 8200, 0}, Matrix{70, cols64k, cols64k + 3},
                         Matrix{70, 20011, 20013}}) {
    const std::uint64_t pitch = m.pitch ? m.pitch : m.cols;
    const std::string what = type_name<T>() + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols);
    expect_gpu_axis_has_cpu_bits(input_for<T, op::sum>(m.rows * pitch, 5 + m.rows), m, 1, op::sum{}, "sum " + what);
    expect_gpu_axis_has_cpu_bits(input_for<T, op::mean>(m.rows * pitch, 6 + m.rows), m, 1, op::mean{}, "mean " + what);
  }
}

// Fewer long rows than the blocks the GPU holds (200 rows of 65539: eight loads in flight a
// thread at the default grid, four at grids 1 and 7), and the columns of a dense matrix of 2, 4,
// 2 to 256 half columns or 2, 4, 8 or 16 float columns read as one array (a NaN, infinities of
// both signs, a column of signed zeros and one a pair cannot hold planted; 3 columns, 32 float
// columns, bfloat16, double and a misaligned start take the column kernels), against the CPU
// backend at every grid.
TYPED_TEST(SegmentsGpuExact, FewLongRowsAndNarrowColumnsHaveTheCpuBits) {
  REQUIRE_GPU();
  using T = TypeParam;
  const Matrix rows{200, 65539, 0};
  expect_gpu_axis_has_cpu_bits(input_for<T, op::sum>(rows.rows * rows.cols, 8), rows, 1, op::sum{},
                               type_name<T>() + " sum 200x65539");
  for (const Matrix m : {Matrix{1000003, 2, 0}, Matrix{1000003, 4, 0}, Matrix{300001, 8, 0}, Matrix{3001, 3, 0},
                         Matrix{200003, 16, 0}, Matrix{100003, 32, 0}, Matrix{30001, 64, 0}, Matrix{20001, 128, 0},
                         Matrix{10001, 256, 0}}) {
    auto x = input_for<T, op::sum>(m.rows * m.cols, 9 + m.cols);
    const auto at = [&](std::uint64_t r, std::uint64_t c) -> T& { return x[r * m.cols + c]; };
    const double big = std::is_same_v<T, half> ? 0x1p15 : 0x1p100, tiny = std::is_same_v<T, half> ? 0x1p-20 : 0x1p-100;
    at(m.rows / 2, m.cols - 1) = from_double<T>(std::nan(""));
    at(m.rows - 1, 0) = from_double<T>(INFINITY), at(5, 0) = from_double<T>(-INFINITY);
    for (std::uint64_t r = 0; r < m.rows; ++r) at(r, 1) = from_double<T>(r % 2 ? 0.0 : -0.0);
    if (m.cols > 2) {
      for (std::uint64_t r = 0; r < m.rows; ++r) at(r, 2) = from_double<T>(0.0);
      at(0, 2) = from_double<T>(big), at(1, 2) = from_double<T>(1.0), at(2, 2) = from_double<T>(tiny);
      at(m.rows - 1, 2) = from_double<T>(-big);
    }
    const std::string what = type_name<T>() + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols);
    expect_gpu_axis_has_cpu_bits(x, m, 0, op::sum{}, "sum " + what);
    expect_gpu_axis_has_cpu_bits(x, m, 0, op::mean{}, "mean " + what);
  }
}

// Half columns whose count of 2^-24 passes 2^63 (2^24 + 3 rows of 65504 each, 2^40 units apiece):
// the blocks' counts meet in 128 bits, as two 64-bit counters a column (reduceHalfColumns). Column
// 1 holds -65504 once, column 0 a NaN-free run of 65504s.
TEST(SegmentsGpu, HalfColumnCountsPassTwoToThe63) {
  REQUIRE_GPU();
  const Matrix m{(std::uint64_t(1) << 24) + 3, 2, 0};
  std::vector<half> x(m.rows * m.cols, from_double<half>(65504.0));
  x[1001 * 2 + 1] = from_double<half>(-65504.0);
  std::vector<float> want(2);
  ASSERT_TRUE(cpu::reduce_axis(x.data(), m, 0, op::sum{}, want.data()).ok());
  EXPECT_EQ(want[0], static_cast<float>(65504.0 * static_cast<double>(m.rows)));
  EXPECT_EQ(want[1], static_cast<float>(65504.0 * static_cast<double>(m.rows - 2)));
  expect_gpu_axis_has_cpu_bits(x, m, 0, op::sum{}, "sum (2^24 + 3) x 2 of 65504");
  expect_gpu_axis_has_cpu_bits(x, m, 0, op::mean{}, "mean (2^24 + 3) x 2 of 65504");
}

TYPED_TEST(SegmentsGpuExact, PiecesAreTheExactSumsForEveryGrid) {
  REQUIRE_GPU();
  using T = TypeParam;
  using R = result_t<T, op::sum>;
  for (std::uint64_t n : {std::uint64_t(200), detail::Shape<T>::kTile + 100, std::uint64_t(100000)}) {
    const auto p = piece_cases<T>(n, 70 + n);
    const std::size_t count = p.cases.size();
    DeviceBuffer<T> flat(p.flat.data(), p.flat.size());
    DeviceBuffer<std::int64_t> db(p.begin.data(), count), de(p.end.data(), count);
    for (unsigned grid : {0u, 1u, 7u}) {
      Options o;
      o.grid = grid;
      const std::string where = "n " + std::to_string(n) + " grid " + std::to_string(grid);
      const auto init = poison<R>(count);
      DeviceBuffer<R> sums(init.data(), count);
      ASSERT_TRUE(reduce_segments(flat.data, count, db.data, de.data, op::sum{}, sums.data, nullptr, o).ok());
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      expect_cases(sums.read(count), p, false, "segments " + where);
      const auto init_means = poison<double>(count);
      DeviceBuffer<double> means(init_means.data(), count);
      ASSERT_TRUE(reduce_segments(flat.data, count, db.data, de.data, op::mean{}, means.data, nullptr, o).ok());
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      expect_cases(means.read(count), p, true, "segment means " + where);
      for (int axis : {0, 1}) {
        const auto x = as_matrix(p, axis);
        DeviceBuffer<T> d(x.data(), x.size());
        DeviceBuffer<R> out(init.data(), count);
        ASSERT_TRUE(reduce_axis(d.data, matrix_of(p, axis), axis, op::sum{}, out.data, nullptr, o).ok());
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        expect_cases(out.read(count), p, false, "axis " + std::to_string(axis) + " " + where);
      }
    }
  }
}

// Which kernels the binary runs: floating-point sums of pieces are exact, not the fixed order's
// double sums. Columns of 31 random doubles, rows of 33, and rows of 20483 (the path through
// reducelab::reduce), 27 of whose exact sums differ from the fixed order's; a binary linked with an
// older library (before exact piece sums) gets the fixed order's values, and says so here
// instead of as a few ulps in every double test.
TEST(SegmentsGpuExact, TheKernelsSumPiecesExactlyNotInTheFixedOrder) {
  REQUIRE_GPU();
  std::size_t told_apart = 0;  // pieces whose exact and fixed-order sums differ (27 of them)
  for (const Matrix m : {Matrix{31, 33, 0}, Matrix{3, 20483, 0}}) {
    const auto x = random_input<double>(m.rows * m.cols, 21 + m.rows);
    for (int axis : {0, 1}) {
      const std::size_t count = axis == 1 ? m.rows : m.cols;
      std::vector<double> exact(count), fixed(count);
      ASSERT_TRUE(cpu::reduce_axis(x.data(), m, axis, op::sum{}, exact.data()).ok());
      std::size_t differ = 0;
      for (std::size_t p = 0; p < count; ++p) {
        const auto piece = matrix_piece(x, m, axis, p);
        fixed[p] = detail::cpu_reduce<double, detail::semantics_t<double, op::sum>>(piece.data(), piece.size(), 1);
        differ += same_bits(fixed[p], exact[p]) ? 0 : 1;
      }
      told_apart += differ;
      DeviceBuffer<double> d(x.data(), x.size());
      const auto init = poison<double>(count);
      DeviceBuffer<double> out(init.data(), count);
      ASSERT_TRUE(reduce_axis(d.data, m, axis, op::sum{}, out.data).ok());
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const auto got = out.read(count);
      std::size_t as_fixed = 0;
      for (std::size_t p = 0; p < count; ++p)
        if (!same_bits(fixed[p], exact[p]) && same_bits(got[p], fixed[p])) ++as_fixed;
      EXPECT_EQ(as_fixed, 0u) << m.rows << "x" << m.cols << " axis " << axis
                              << ": pieces have the fixed order's double sums, not the exact ones: this binary "
                                 "runs kernels from before exact piece sums (a stale library or binary?)";
      expect_same(got, exact, std::to_string(m.rows) + "x" + std::to_string(m.cols) + " axis " + std::to_string(axis));
    }
  }
  EXPECT_GT(told_apart, 0u) << "no piece tells the exact sums from the fixed order's";
}

// More lost pairs than the redo list holds (65536): every piece is summed again with digits;
// the list is clear for the next call.
TEST(SegmentsGpuExact, MorePiecesToRedoThanTheListHolds) {
  REQUIRE_GPU();
  constexpr std::uint64_t kRows = 70000;
  std::vector<float> x;
  for (std::uint64_t r = 0; r < kRows; ++r)
    for (float v : {0x1p100f, 1.0f, 0x1p-100f, -0x1p100f}) x.push_back(r % 3 == 0 ? v * 0.5f : v);
  DeviceBuffer<float> d(x.data(), x.size());
  for (int round = 0; round < 2; ++round) {
    const auto init = poison<float>(kRows);
    DeviceBuffer<float> out(init.data(), kRows);
    ASSERT_TRUE(reduce_axis(d.data, Matrix{kRows, 4, 0}, 1, op::sum{}, out.data).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto got = out.read(kRows);
    for (std::uint64_t r = 0; r < kRows; ++r)
      ASSERT_EQ(got[r], r % 3 == 0 ? 0.5f : 1.0f) << "row " << r << " round " << round;
  }
  // An ordinary call after it: nothing left over in the list.
  const auto y = random_input<float>(64 * 33, 2);
  std::vector<float> want(64);
  ASSERT_TRUE(cpu::reduce_axis(y.data(), Matrix{64, 33, 0}, 1, op::sum{}, want.data()).ok());
  DeviceBuffer<float> dy(y.data(), y.size());
  const auto init = poison<float>(64);
  DeviceBuffer<float> out(init.data(), 64);
  ASSERT_TRUE(reduce_axis(dy.data, Matrix{64, 33, 0}, 1, op::sum{}, out.data).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expect_same(out.read(64), want, "after the overflow");
}

// Fewer long rows of minima and maxima than twice the SMs take a thread-block cluster a row
// (reduceSplitRows), more a block a row: as many rows as SMs, 1.5 and 3 times as many, rows of an
// odd length, one with a pitch; grids 0, 1 (a block a row) and 7 (three clusters a launch, launched
// again until every row is done), on and one element off a 256-byte boundary, against the CPU
// backend.
TYPED_TEST(SegmentsGpu, FewLongRowsOfExtremaHaveTheCpuBits) {
  REQUIRE_GPU();
  using T = TypeParam;
  int device = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), cudaSuccess);
  const std::uint64_t rows = static_cast<std::uint64_t>(sms);
  const std::vector<Matrix> ms{{rows, 20011, 0}, {rows * 3 / 2, 4 * detail::Shape<T>::kTile + 3, 0},
                               {rows * 3 / 2, 9001, 9010}, {rows * 3, 5003, 0}};
  for (const Matrix m : ms) {
    const std::uint64_t pitch = m.pitch ? m.pitch : m.cols;
    const std::string shape = type_name<T>() + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols);
    expect_gpu_axis_has_cpu_bits(input_for<T, op::max>(m.rows * pitch, 3 + m.cols), m, 1, op::max{}, shape + " max");
    expect_gpu_axis_has_cpu_bits(input_for<T, op::min>(m.rows * pitch, 5 + m.cols), m, 1, op::min{}, shape + " min");
  }
}

// The shapes the benchmark reads (smaller): short rows, many columns, along both axes, for the
// order-free kernels of every dtype the bench measures.
TYPED_TEST(SegmentsGpu, BenchShapesHaveTheCpuBits) {
  REQUIRE_GPU();
  using T = TypeParam;
  // {24, 1 << 19}: more groups of 32 columns than resident warps, a warp per group.
  const std::vector<Matrix> ms{{1 << 16, 16, 0}, {1 << 16, 4, 0},      {1 << 12, 256, 0},
                               {64, 1 << 14, 0}, {1 << 12, 1 << 10, 0}, {24, 1 << 19, 0}};
  for_each_op([&](auto op) {
    using Op = decltype(op);
    using R = result_t<T, Op>;
    for (const Matrix m : ms) {
      const auto x = input_for<T, Op>(m.rows * m.cols, 9 + m.cols);
      DeviceBuffer<T> d(x.data(), x.size());
      for (int axis : {0, 1}) {
        const std::size_t count = axis == 1 ? m.rows : m.cols;
        std::vector<R> want(count);
        ASSERT_TRUE(cpu::reduce_axis(x.data(), m, axis, op, want.data()).ok());
        const auto init = poison<R>(count);
        DeviceBuffer<R> out(init.data(), count);
        ASSERT_TRUE(reduce_axis(d.data, m, axis, op, out.data).ok());
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        expect_same(out.read(count), want, type_name<T>() + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols) +
                                               " axis " + std::to_string(axis));
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
