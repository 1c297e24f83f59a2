// reduce_axis and reduce_segments: the CPU backend against the definition (each piece has the bits
// of cpu::reduce over its elements alone), the documented empty results and errors, and the GPU
// kernel run on SIMT against the CPU backend, bit for bit, across grids and alignments.
#include <algorithm>
#include <cmath>

#include "segments/simt_segments.hpp"
#include "simt/core.hpp"
#include "segments_support.hpp"

namespace rltest {
namespace {

template <class T>
class SegmentsCpu : public ::testing::Test {};
TYPED_TEST_SUITE(SegmentsCpu, AllTypes);

// Rows x cols of 0, 1, 31, 33 and one row long enough for several chunks, packed and pitched.
template <class T>
std::vector<Matrix> awkward_matrices() {
  std::vector<Matrix> ms;
  for (std::uint64_t r : {0, 1, 31, 33})
    for (std::uint64_t c : {0, 1, 31, 33}) ms.push_back({r, c, 0}), ms.push_back({r, c, c + 3});
  ms.push_back({2, 3 * detail::Shape<T>::kTile + 17, 0});
  return ms;
}

TYPED_TEST(SegmentsCpu, EveryRowAndColumnHasTheBitsOfReducingItAlone) {
  using T = TypeParam;
  for_each_op([&](auto op) {
    using Op = decltype(op);
    for (const Matrix m : awkward_matrices<T>()) {
      const std::uint64_t pitch = m.pitch ? m.pitch : m.cols;
      const auto x = input_for<T, Op>(m.rows * pitch, 7 + m.rows * 100 + m.cols);
      for (int axis : {0, 1}) {
        std::vector<result_t<T, Op>> got(axis == 1 ? m.rows : m.cols);
        ASSERT_TRUE(cpu::reduce_axis(x.data(), m, axis, op, got.data()).ok());
        expect_same(got, expected_axis(x, m, axis, op),
                    type_name<T>() + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols) + " pitch " +
                        std::to_string(pitch) + " axis " + std::to_string(axis));
      }
    }
  });
}

TYPED_TEST(SegmentsCpu, EverySegmentHasTheBitsOfReducingItAlone) {
  using T = TypeParam;
  for_each_op([&](auto op) {
    using Op = decltype(op);
    for (std::uint64_t n : {std::uint64_t(0), std::uint64_t(1), std::uint64_t(33), std::uint64_t(1000), 3 * detail::Shape<T>::kTile + 17}) {
      const auto x = input_for<T, Op>(n, 11 + n);
      const auto [b, e] = random_segments(n, 40, n);
      std::vector<result_t<T, Op>> got(b.size());
      ASSERT_TRUE(cpu::reduce_segments(x.data(), b.size(), b.data(), e.data(), op, got.data()).ok());
      expect_same(got, expected_segments(x, b, e, op), type_name<T>() + " n " + std::to_string(n));
    }
  });
}

// 1000003 rows of one element and one row of 1000003, both axes (every op would take minutes
// through the reference; sum, max and argmin cover the three kinds of accumulator).
TYPED_TEST(SegmentsCpu, AMillionAndThreeAlongEitherAxis) {
  using T = TypeParam;
  constexpr std::uint64_t kN = 1000003;
  const auto x = random_input<T>(kN, 5);
  auto check = [&](auto op) {
    using Op = decltype(op);
    const auto whole = piece_reference<T, Op>(x.data(), kN);
    for (const Matrix m : {Matrix{1, kN, 0}, Matrix{kN, 1, 0}}) {
      for (int axis : {0, 1}) {
        const bool long_pieces = (axis == 1) == (m.cols == kN);
        std::vector<result_t<T, Op>> got(axis == 1 ? m.rows : m.cols);
        ASSERT_TRUE(cpu::reduce_axis(x.data(), m, axis, op, got.data()).ok());
        if (long_pieces) {
          ASSERT_EQ(got.size(), 1u);
          ASSERT_TRUE(same_bits(got[0], whole)) << type_name<T>() << " axis " << axis << ": " << show(got[0]);
        } else {
          ASSERT_EQ(got.size(), kN);
          for (std::uint64_t i = 0; i < kN; i += 9973)
            ASSERT_TRUE(same_bits(got[i], serial(std::vector<T>{x[i]}, op))) << type_name<T>() << " piece " << i;
        }
      }
    }
  };
  check(op::sum{}), check(op::max{}), check(op::argmin{});
}

TYPED_TEST(SegmentsCpu, EmptyPiecesGiveTheDocumentedValues) {
  using T = TypeParam;
  const std::vector<T> x(4);
  const Matrix no_cols{3, 0, 0};
  std::vector<result_t<T, op::sum>> sums(3);
  ASSERT_TRUE(cpu::reduce_axis(x.data(), no_cols, 1, op::sum{}, sums.data()).ok());
  for (auto s : sums) EXPECT_TRUE(same_bits(s, result_t<T, op::sum>(0)));
  std::vector<result_t<T, op::prod>> prods(3);
  ASSERT_TRUE(cpu::reduce_axis(x.data(), no_cols, 1, op::prod{}, prods.data()).ok());
  for (auto p : prods) EXPECT_TRUE(same_bits(p, result_t<T, op::prod>(1)));
  std::vector<double> means(3);
  ASSERT_TRUE(cpu::reduce_axis(x.data(), no_cols, 1, op::mean{}, means.data()).ok());
  for (double m : means) EXPECT_TRUE(std::isnan(m));

  const std::vector<std::int64_t> b{2, 3}, e{2, 1};  // empty, and end < begin
  std::vector<T> mins(2), maxs(2);
  ASSERT_TRUE(cpu::reduce_segments(x.data(), 2, b.data(), e.data(), op::min{}, mins.data()).ok());
  ASSERT_TRUE(cpu::reduce_segments(x.data(), 2, b.data(), e.data(), op::max{}, maxs.data()).ok());
  std::vector<ArgResult<T>> argmins(2);
  ASSERT_TRUE(cpu::reduce_segments(x.data(), 2, b.data(), e.data(), op::argmin{}, argmins.data()).ok());
  for (int i = 0; i < 2; ++i) {
    if constexpr (is_floating<T>) {
      EXPECT_TRUE(same_bits(mins[i], detail::positive_infinity<T>()));
      EXPECT_TRUE(same_bits(maxs[i], detail::negative_infinity<T>()));
    } else {
      EXPECT_EQ(mins[i], std::numeric_limits<T>::max());
      EXPECT_EQ(maxs[i], std::numeric_limits<T>::lowest());
    }
    EXPECT_EQ(argmins[i].index, -1);
  }
}

TEST(SegmentsCpuErrors, BadArgumentsAreRejectedWithTheValue) {
  std::vector<float> x(12), out(12);
  auto st = cpu::reduce_axis(x.data(), Matrix{3, 4, 0}, 2, op::sum{}, out.data());
  EXPECT_EQ(st.code(), Errc::invalid_argument);
  EXPECT_NE(st.message().find("axis 2"), std::string::npos) << st.message();
  st = cpu::reduce_axis(x.data(), Matrix{3, 4, 3}, 1, op::sum{}, out.data());
  EXPECT_EQ(st.code(), Errc::invalid_argument);
  EXPECT_NE(st.message().find("pitch 3"), std::string::npos) << st.message();
  st = cpu::reduce_axis(static_cast<const float*>(nullptr), Matrix{3, 4, 0}, 1, op::sum{}, out.data());
  EXPECT_EQ(st.code(), Errc::invalid_argument);
  st = cpu::reduce_axis(x.data(), Matrix{1ull << 40, 1ull << 40, 0}, 0, op::sum{}, out.data());
  EXPECT_EQ(st.code(), Errc::invalid_argument);
  const std::int64_t b[] = {-2}, e[] = {3};
  st = cpu::reduce_segments(x.data(), 1, b, e, op::sum{}, out.data());
  EXPECT_EQ(st.code(), Errc::invalid_argument);
  EXPECT_NE(st.message().find("-2"), std::string::npos) << st.message();
  st = cpu::reduce_segments(x.data(), 1, static_cast<const std::int64_t*>(nullptr), e, op::sum{}, out.data());
  EXPECT_EQ(st.code(), Errc::invalid_argument);
  // Nothing to do is not an error, whatever the pointers.
  EXPECT_TRUE(cpu::reduce_segments(static_cast<const float*>(nullptr), 0, nullptr, nullptr, op::sum{},
                                   static_cast<float*>(nullptr)).ok());
}

// Columns are read row by row, a tile of columns and a band of rows per task (few columns: many
// bands): every column still has the bits of reducing it alone, for any thread count.
TYPED_TEST(SegmentsCpu, ColumnsReadRowByRowHaveTheBitsOfEachColumnAlone) {
  using T = TypeParam;
  const std::vector<Matrix> ms{{50000, 3, 5}, {9000, 300, 0}, {5000, 261, 263}};
  for_each_op([&](auto op) {
    using Op = decltype(op);
    for (const Matrix m : ms) {
      const std::uint64_t pitch = m.pitch ? m.pitch : m.cols;
      const auto x = input_for<T, Op>(m.rows * pitch, 11 + m.cols);
      const auto want = expected_axis(x, m, 0, op);
      for (unsigned threads : {1u, 5u, 16u}) {
        std::vector<result_t<T, Op>> got(m.cols);
        ASSERT_TRUE(cpu::reduce_axis(x.data(), m, 0, op, got.data(), threads).ok());
        expect_same(got, want, type_name<T>() + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols) + " pitch " +
                                   std::to_string(pitch) + " threads " + std::to_string(threads));
      }
    }
  });
}

// A column whose bands each fit a pair but whose total does not (2^100 and 1 in the first band,
// 2^-100 and -2^100 in later ones): summed again with digits, still the exact sum.
TEST(SegmentsCpu, ColumnsWhoseBandsLoseBitsTogetherAreExact) {
  const Matrix m{60000, 2, 0};
  std::vector<float> x(m.rows * m.cols, 0.0f);
  x[0] = 0x1p100f, x[2] = 1.0f, x[2 * 30001] = 0x1p-100f, x[2 * 59999] = -0x1p100f;  // column 0: 1 + 2^-100
  x[1] = 3.0f, x[2 * 40000 + 1] = 0x1p-30f;                                           // column 1: ordinary
  for (unsigned threads : {1u, 16u}) {
    std::vector<float> got(2);
    ASSERT_TRUE(cpu::reduce_axis(x.data(), m, 0, op::sum{}, got.data(), threads).ok());
    EXPECT_EQ(got[0], 1.0f) << "threads " << threads;
    EXPECT_EQ(got[1], 3.0f + 0x1p-30f) << "threads " << threads;
    std::vector<double> means(2);
    ASSERT_TRUE(cpu::reduce_axis(x.data(), m, 0, op::mean{}, means.data(), threads).ok());
    const auto column = matrix_piece(x, m, 0, 0);
    const double want = piece_reference<float, op::mean>(column.data(), column.size());
    EXPECT_TRUE(same_bits(means[0], want)) << "threads " << threads << ": " << show(means[0]) << ", want " << show(want);
  }
}

TEST(SegmentsCpu, ThreadCountDoesNotChangeTheBits) {
  const auto x = random_input<float>(3 * 40000, 3);
  std::vector<float> one(3), many(3);
  ASSERT_TRUE(cpu::reduce_axis(x.data(), Matrix{3, 40000, 0}, 1, op::sum{}, one.data(), 1).ok());
  ASSERT_TRUE(cpu::reduce_axis(x.data(), Matrix{3, 40000, 0}, 1, op::sum{}, many.data(), 7).ok());
  expect_same(one, many, "threads 1 vs 7");
}

// The GPU kernel on the SIMT backend.
template <class T>
class SegmentsSimt : public ::testing::Test {};
TYPED_TEST_SUITE(SegmentsSimt, AllTypes);

TYPED_TEST(SegmentsSimt, KernelHasTheCpuBitsAlongBothAxesForEveryGridAndAlignment) {
  using T = TypeParam;
  // Every block of 256 fibers costs real time on the emulator: few pieces, short ones.
  const std::vector<Matrix> ms{{0, 5, 0}, {1, 1, 0}, {3, 31, 0}, {33, 3, 5}, {2, 97, 0}};
  for_each_op([&](auto op) {
    using Op = decltype(op);
    for (const Matrix m : ms) {
      const std::uint64_t pitch = m.pitch ? m.pitch : m.cols;
      const auto x = input_for<T, Op>(m.rows * pitch, 3 + m.cols);
      for (int axis : {0, 1}) {
        const auto want = expected_axis(x, m, axis, op);
        for (unsigned grid : {0u, 3u})
          for (unsigned offset : {0u, 1u}) {
            if (grid == 3 && offset == 1) continue;
            expect_same(detail::simt_reduce_axis(x.data(), m, axis, op, grid, offset), want,
                        type_name<T>() + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols) + " axis " +
                            std::to_string(axis) + " grid " + std::to_string(grid) + " offset " + std::to_string(offset));
          }
      }
    }
  });
}

// Every operation over the matrices `ms` along `axis` on SIMT (the default grid), aligned and
// `offset` elements past alignment, against the CPU backend; inputs seeded with seed + cols.
template <class T>
void expect_simt_axis_has_cpu_bits(const std::vector<Matrix>& ms, int axis, unsigned offset, std::uint64_t seed) {
  for_each_op([&](auto op) {
    using Op = decltype(op);
    for (const Matrix m : ms) {
      const std::uint64_t pitch = m.pitch ? m.pitch : m.cols;
      const auto x = input_for<T, Op>(m.rows * pitch, seed + m.cols);
      const auto want = expected_axis(x, m, axis, op);
      for (unsigned off : {0u, offset})
        expect_same(detail::simt_reduce_axis(x.data(), m, axis, op, 0, off), want,
                    type_name<T>() + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols) + " pitch " +
                        std::to_string(pitch) + " axis " + std::to_string(axis) + " offset " + std::to_string(off));
    }
  });
}

// Columns (reduceColumns) cut into bands whose partials meet through a ticket: narrow matrices
// (several rows per warp step), a full warp of columns with more bands than the last block has
// slices per column (its fold of the bands runs four loads at a time), 64 columns in two groups,
// an odd column count whose second group is partial, and a pitch past the columns; then as many
// groups of 32 columns as the launch has warps (here 32), where a warp folds a whole group, the
// last one partial, and with a pitch. Each also misaligned by one element.
TYPED_TEST(SegmentsSimt, ColumnsInBandsHaveTheCpuBits) {
  using T = TypeParam;
  const std::vector<Matrix> ms{{2100, 4, 0}, {600, 16, 0},  {2100, 32, 0}, {2100, 64, 0},
                               {200, 33, 0}, {300, 16, 24}, {20, 1040, 0}, {9, 1024, 1100}};
  expect_simt_axis_has_cpu_bits<T>(ms, 0, 1, 7);
}

// Pieces of one element, piece p at element p (the rows of a single column, the columns of a single
// row) go to reduceSingles where the results of whole units land on 16-byte boundaries of the
// output: a unit a thread (16 bytes of results' worth of elements), the elements before the first
// unit boundary and after the last whole unit one a thread, results stored 16 bytes at a time. Counts under one vector,
// around one warp's and one block's vectors, inputs off the boundary by 0 to 3 elements (which
// also moves the output's alignment: reduceTinyPieces where it falls off), grids of one and three
// blocks (a thread then takes several rounds of vectors), floating-point specials; the rows of a
// column with a pitch take reduceTinyPieces. Every result against the CPU backend.
TYPED_TEST(SegmentsSimt, SinglesHaveTheCpuBits) {
  using T = TypeParam;
  for_each_op([&](auto op) {
    using Op = decltype(op);
    for (const std::uint64_t n : {std::uint64_t(1), std::uint64_t(7), std::uint64_t(33), std::uint64_t(1000),
                                  std::uint64_t(4 * 256 * 16 + 5)}) {
      auto x = input_for<T, Op>(3 * n + 8, 7 + n);
      if constexpr (!std::is_integral_v<T>) {
        if (n >= 7) {
          x[3] = from_double<T>(INFINITY), x[4] = from_double<T>(-INFINITY), x[5] = from_double<T>(NAN);
          x[6] = from_double<T>(-0.0);
        }
      }
      for (const auto& [m, axis, contiguous] : {std::tuple{Matrix{n, 1, 0}, 1, true}, std::tuple{Matrix{1, n, 0}, 0, true},
                                                std::tuple{Matrix{n, 1, 3}, 1, false}}) {
        const auto want = expected_axis(x, m, axis, op);
        for (unsigned offset : {0u, 1u, 2u, 3u}) {
          // The emulator's buffers start on 16-byte boundaries: the input is `offset` elements off
          // one, and reduceSingles loads units of 16 bytes of results' worth of elements.
          using Out = result_t<T, Op>;
          const std::uint64_t unit = 16 / std::max(sizeof(T), sizeof(Out)) * sizeof(T);
          const std::uint64_t head = std::min<std::uint64_t>(n, (unit - offset * sizeof(T) % unit) % unit / sizeof(T));
          const bool singles = contiguous && head * sizeof(Out) % 16 == 0;
          const std::string kernel = singles ? "reduceSingles" : "reduceTinyPieces";
          for (unsigned grid : {0u, 1u, 3u}) {
            const std::string what = type_name<T>() + " " + op_name<Op>() + " " + std::to_string(m.rows) + "x" +
                                     std::to_string(m.cols) + " axis " + std::to_string(axis) + " offset " +
                                     std::to_string(offset) + " grid " + std::to_string(grid);
            simt::reset_accumulated_report();
            expect_same(detail::simt_reduce_axis(x.data(), m, axis, op, grid, offset), want, what);
            const auto& grids = simt::accumulated_report().grids;
            EXPECT_TRUE(std::find(grids.begin(), grids.end(), kernel) != grids.end()) << what << ": not " << kernel;
          }
        }
      }
    }
  });
}

// The min, max, sum and mean of half and bfloat16 columns read two columns a word (PairExtremum,
// PairSum; the min and max four words a lane where the words split into aligned 16-byte vectors)
// where the columns pair up: special values in one column of a word and not the other, a
// bfloat16 pair that loses part of its sum (redone for its column alone), in bands, in a warp per
// group of words (the last shape), with a pitch; an odd column count, a misaligned input and (for
// sums and means) fewer than 16 columns take the one-column kernel, and half sums and means of 16
// and 64 dense aligned columns (300 x 16, 2100 x 64) are read as one array and added as integers
// (reduceHalfColumns), those of 2048 a vector of columns a lane (reduceHalfColumnBands). Every
// result against the CPU backend, and the kernel that took half sums.
template <class T>
void expect_special_columns_match_cpu() {
  const std::vector<Matrix> ms{{300, 16, 0}, {2100, 64, 0}, {2100, 64, 72}, {200, 33, 0}, {20, 1040, 1042}, {9, 2048, 0}};
  for (const Matrix m : ms) {
    const auto x = special_columns<T>(m, 11 + m.cols);
    for (unsigned offset : {0u, 1u}) {
      const std::string what = type_name<T>() + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols) +
                               " offset " + std::to_string(offset);
      simt::reset_accumulated_report();
      expect_same(detail::simt_reduce_axis(x.data(), m, 0, op::max{}, 0, offset), expected_axis(x, m, 0, op::max{}),
                  what + " max");
      // Maxima (and minima) read four words a lane where the words split into aligned vectors,
      // but not where a word a lane gives each warp a whole group (32 groups of 32 words on the
      // emulator's 32 warps: 9 x 2048), nor where the matrix is read as one array (dense, 16 and
      // 64 columns: reduceHalfColumnExtrema; the same 64 columns with a pitch take the vectors).
      const std::uint64_t pitch = m.pitch ? m.pitch : m.cols;
      const bool words_warp_a_group = (m.cols / 2 + 31) / 32 >= 32;
      const bool flat = offset == 0 && m.pitch == 0 && (m.cols == 16 || m.cols == 64);
      const auto& grids = simt::accumulated_report().grids;
      EXPECT_EQ(std::count(grids.begin(), grids.end(), "reduceColumns (vectors)"),
                offset == 0 && m.cols % 8 == 0 && pitch % 8 == 0 && !words_warp_a_group && !flat ? 1 : 0)
          << what;
      EXPECT_EQ(std::count(grids.begin(), grids.end(), "reduceHalfColumnExtrema"), flat ? 1 : 0) << what;
      expect_same(detail::simt_reduce_axis(x.data(), m, 0, op::min{}, 0, offset), expected_axis(x, m, 0, op::min{}),
                  what + " min");
      expect_same(detail::simt_reduce_axis(x.data(), m, 0, op::sum{}, 0, offset), expected_axis(x, m, 0, op::sum{}),
                  what + " sum");
      const bool halves = std::is_same_v<T, half> && flat;
      const auto& summed = simt::accumulated_report().grids;
      EXPECT_EQ(std::count(summed.begin(), summed.end(), "reduceHalfColumns"), halves ? 1 : 0) << what;
      const bool bands = std::is_same_v<T, half> && offset == 0 && m.cols == 2048;
      EXPECT_EQ(std::count(summed.begin(), summed.end(), "reduceHalfColumnBands"), bands ? 1 : 0) << what;
      if (std::is_same_v<T, bfloat16>) {
        EXPECT_GT(detail::simt_last_redone(), 0u) << what << ": column 13 was not redone";
      }
      expect_same(detail::simt_reduce_axis(x.data(), m, 0, op::mean{}, 0, offset), expected_axis(x, m, 0, op::mean{}),
                  what + " mean");
    }
  }
}
TEST(SegmentsSimt, HalfColumnsTwoToALaneSeeNaNsInfinitiesSignedZerosAndLostPairs) {
  expect_special_columns_match_cpu<half>();
  expect_special_columns_match_cpu<bfloat16>();
}

// Minima and maxima of dense half and bfloat16 matrices of 2, 4 or 8 to 256 (a power of two)
// columns are read as one array (reduceHalfColumnExtrema; 3 and 96 columns, 8 rows or fewer and a
// start off a 16-byte boundary take the other kernels): NaNs of both signs, columns of signed zeros,
// of -inf only and of +inf with one -0 (extreme_half_columns), rows that leave elements past the
// last whole vector, grids 0, 1 and 3; every result against the CPU backend, and the kernel that
// took it. The GPU twin is SegmentsGpu.DenseHalfColumnExtremaSeeNaNsInfinitiesAndSignedZeros.
template <class T>
void expect_dense_half_column_extrema() {
  for (const std::uint64_t cols : {2, 3, 4, 8, 16, 64, 96, 256}) {
    for (const std::uint64_t rows : {std::uint64_t(7), std::uint64_t(301), std::uint64_t(cols <= 16 ? 4001 : 1001)}) {
      const Matrix m{rows, cols, 0};
      const auto x = extreme_half_columns<T>(rows, cols, 5 + cols + rows);
      const bool dense = cols != 3 && cols != 96 && rows > 8;
      for (unsigned offset : {0u, 1u})
        for (unsigned grid : {0u, 1u, 3u}) {
          if (offset == 1 && grid != 0) continue;
          const std::string what = type_name<T>() + " " + std::to_string(rows) + "x" + std::to_string(cols) + " offset " +
                                   std::to_string(offset) + " grid " + std::to_string(grid);
          simt::reset_accumulated_report();
          expect_same(detail::simt_reduce_axis(x.data(), m, 0, op::max{}, grid, offset), expected_axis(x, m, 0, op::max{}),
                      what + " max");
          expect_same(detail::simt_reduce_axis(x.data(), m, 0, op::min{}, grid, offset), expected_axis(x, m, 0, op::min{}),
                      what + " min");
          const auto& grids = simt::accumulated_report().grids;
          EXPECT_EQ(std::count(grids.begin(), grids.end(), "reduceHalfColumnExtrema"), dense && offset == 0 ? 2 : 0) << what;
        }
    }
  }
}
TEST(SegmentsSimt, DenseHalfColumnExtremaSeeNaNsInfinitiesAndSignedZeros) {
  expect_dense_half_column_extrema<half>();
  expect_dense_half_column_extrema<bfloat16>();
}

// Columns of 4- and 8-byte elements that split into aligned vectors take reduceColumns over vectors
// (VecColumns: one accumulator a column; four floats or two doubles a lane, two floats for exact
// sums and means): special values in one column of a vector and not the others, a float column
// whose pair is lost and redone, in bands, in a warp per group (9 and 40 rows of 4096; exact sums
// there with 16 loads in flight, which 40 rows reach), with a pitch; a pitch or a count off the
// vector, a misaligned input, argmin and argmax take the one-column kernel; exact float sums of 16
// dense columns, aligned, are read as one array (reduceNarrowColumns).
// Every result against the CPU backend, and the kernel that took it.
template <class T>
void expect_special_vector_columns_match_cpu() {
  const std::vector<Matrix> ms{{300, 16, 0}, {2100, 64, 0}, {33, 12, 0}, {20, 1040, 1044}, {9, 4096, 0}, {40, 4096, 0},
                               {31, 20, 22}};
  for (const Matrix m : ms) {
    const auto x = special_float_columns<T>(m, 11 + m.cols);
    const std::uint64_t pitch = m.pitch ? m.pitch : m.cols;
    for (unsigned offset : {0u, 1u}) {
      const std::string what = type_name<T>() + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols) +
                               " pitch " + std::to_string(pitch) + " offset " + std::to_string(offset);
      for_each_op([&](auto op) {
        using Op = decltype(op);
        constexpr bool sums = std::is_same_v<Op, op::sum> || std::is_same_v<Op, op::mean>;
        constexpr bool args = std::is_same_v<Op, op::argmin> || std::is_same_v<Op, op::argmax>;
        if constexpr (std::is_same_v<Op, op::prod>) return;  // fixed-order products keep their kernel
        // Exact double sums, argmin and argmax keep a column a lane; exact float sums take two
        // columns a lane, min and max 16 bytes, but not where a warp would take a whole group of
        // vectors (9 x 4096 on the emulator's 32 warps: vec_columns_pay).
        const std::uint64_t k = args ? 0 : sums ? (std::is_same_v<T, float> ? 2 : 0) : 16 / sizeof(T);
        const bool warp_a_group = !sums && m.cols == 4096;
        const bool narrow = sums && std::is_same_v<T, float> && offset == 0 && pitch == m.cols && m.cols == 16;
        const bool vectors = k != 0 && offset == 0 && m.cols % k == 0 && pitch % k == 0 && !warp_a_group && !narrow;
        simt::reset_accumulated_report();
        expect_same(detail::simt_reduce_axis(x.data(), m, 0, op, 0, offset), expected_axis(x, m, 0, op),
                    what + " " + op_name<Op>());
        const auto& grids = simt::accumulated_report().grids;
        EXPECT_EQ(std::count(grids.begin(), grids.end(), "reduceColumns (vectors)"), vectors ? 1 : 0)
            << what << " " << op_name<Op>();
        EXPECT_EQ(std::count(grids.begin(), grids.end(), "reduceNarrowColumns"), narrow ? 1 : 0)
            << what << " " << op_name<Op>();
        if (sums) {
          EXPECT_GT(detail::simt_last_redone(), 0u) << what << ": column 10 was not redone";
          // The few-columns kernel sums its lost column again itself: no redo launch after it.
          EXPECT_EQ(std::count(grids.begin(), grids.end(), "reduceRedoPieces"), narrow ? 0 : 1)
              << what << " " << op_name<Op>();
        }
      });
    }
  }
}
TEST(SegmentsSimt, FloatColumnsInVectorsSeeNaNsInfinitiesSignedZerosAndTies) {
  expect_special_vector_columns_match_cpu<float>();
  expect_special_vector_columns_match_cpu<double>();
}
// Integer sums and means take the vectors too (int32 and uint32 four a lane, int64 and uint64 two).
TEST(SegmentsSimt, IntegerColumnSumsTakeVectors) {
  const Matrix m{2100, 64, 0};
  const auto check = [&](auto t, auto op) {
    using T = decltype(t);
    const auto x = input_for<T, decltype(op)>(m.rows * m.cols, 5);
    simt::reset_accumulated_report();
    expect_same(detail::simt_reduce_axis(x.data(), m, 0, op), expected_axis(x, m, 0, op), type_name<T>());
    const auto& grids = simt::accumulated_report().grids;
    EXPECT_EQ(std::count(grids.begin(), grids.end(), "reduceColumns (vectors)"), 1) << type_name<T>();
  };
  check(std::int32_t{}, op::sum{});
  check(std::uint32_t{}, op::mean{});
  check(std::int64_t{}, op::sum{});
  check(std::uint64_t{}, op::sum{});
}

// Rows up to one tile go to a warp each (reduceShortPieces): whole tiles, rows that do not start
// on a 16-byte boundary, rows that end inside a vector, rows just past one warp's vectors.
TYPED_TEST(SegmentsSimt, WarpPerRowHasTheBlockOrderUpToOneTile) {
  using T = TypeParam;
  constexpr std::uint64_t kTile = detail::Shape<T>::kTile, kVec = detail::Shape<T>::kVec;
  const std::vector<Matrix> ms{{2, kTile, 0}, {3, kTile - 5, kTile - 3}, {4, 32 * kVec + 1, 0}, {5, 3 * kVec + 2, 0}};
  expect_simt_axis_has_cpu_bits<T>(ms, 1, 3, 31);
}

// Few long rows of minima and maxima: on the GPU a thread-block cluster a row (reduceSplitRows)
// where the GPU holds four blocks a row or more, on SIMT (clusters of one block) where the grid
// does; otherwise a block a row (reduceLongPieces). Rows of an odd length past three tiles with a
// pitch, on and one element off a 16-byte boundary, floating-point specials and signed zeros in
// the first row, against the CPU backend, and which kernel ran.
TYPED_TEST(SegmentsSimt, FewLongRowsOfExtremaHaveTheCpuBits) {
  using T = TypeParam;
  constexpr std::uint64_t kTile = detail::Shape<T>::kTile;
  const Matrix m{3, 3 * kTile + 5, 3 * kTile + 9};
  const auto check = [&](auto op) {
    using Op = decltype(op);
    auto x = input_for<T, Op>(m.rows * m.pitch + 8, 17);
    if constexpr (!std::is_integral_v<T>) {
      x[1] = from_double<T>(-0.0), x[2] = from_double<T>(0.0), x[m.cols / 2] = from_double<T>(INFINITY);
      x[m.cols - 1] = from_double<T>(-INFINITY), x[m.pitch + 7] = from_double<T>(NAN);
    }
    const auto want = expected_axis(x, m, 1, op);
    for (unsigned offset : {0u, 1u})
      for (const auto& [grid, kernel] : {std::pair{12u, "reduceSplitRows"}, std::pair{16u, "reduceSplitRows"},
                                         std::pair{7u, "reduceLongPieces"}, std::pair{0u, "reduceLongPieces"}}) {
        const std::string what = type_name<T>() + " " + op_name<Op>() + " offset " + std::to_string(offset) + " grid " +
                                 std::to_string(grid);
        simt::reset_accumulated_report();
        expect_same(detail::simt_reduce_axis(x.data(), m, 1, op, grid, offset), want, what);
        const auto& grids = simt::accumulated_report().grids;
        EXPECT_TRUE(std::find(grids.begin(), grids.end(), std::string(kernel)) != grids.end()) << what << ": not " << kernel;
      }
  };
  check(op::max{});
  check(op::min{});
}

// Rows of exactly 4 or 8 bytes (2 or 4 halves, 2 floats, 4 bytes of 8-bit integers) are read a
// whole row per load when the input and the pitch allow it: packed, with a pitch, and misaligned
// by one and by two elements (a word load for some types, element loads for others).
TYPED_TEST(SegmentsSimt, RowsOfOneWordHaveTheCpuBits) {
  using T = TypeParam;
  const std::vector<Matrix> ms{{301, 4, 0}, {301, 2, 0}, {97, 2, 6}, {97, 4, 8}, {33, 8, 0}};
  expect_simt_axis_has_cpu_bits<T>(ms, 1, 1, 43);
  expect_simt_axis_has_cpu_bits<T>(ms, 1, 2, 43);
}

// Dense rows of 2, 4 or 8 elements that divide a 16-byte vector, or of two, four or eight whole
// vectors, are read a vector (or a row) per thread for every order-free operation too (reducePackedRows):
// 301 rows leave a tail after the last whole vector; NaNs of both signs, infinities, signed zeros
// and ties planted in some rows; grids 0, 1 and 3, and misaligned by one element (row groups).
TYPED_TEST(SegmentsSimt, PackedShortRowsHaveTheCpuBits) {
  using T = TypeParam;
  for_each_op([&](auto op) {
    using Op = decltype(op);
    for (const std::uint64_t cols : {2, 4, 8, 16, 32, 64}) {
      const Matrix m{301, cols, 0};
      auto x = input_for<T, Op>(m.rows * cols, 91 + cols);
      if constexpr (!std::is_integral_v<T> && !std::is_same_v<Op, op::prod>) {
        for (std::uint64_t r = 0; r < m.rows; r += 7) {
          T* e = x.data() + r * cols;
          switch (r % 5) {
            case 0: e[cols - 1] = from_double<T>(std::nan("")); break;
            case 1: e[0] = from_double<T>(-std::nan("")); break;
            case 2: e[0] = from_double<T>(INFINITY), e[1] = from_double<T>(-INFINITY); break;
            case 3: for (std::uint64_t j = 0; j < cols; ++j) e[j] = from_double<T>(j % 2 ? 0.0 : -0.0); break;
            default: for (std::uint64_t j = 0; j < cols; ++j) e[j] = e[0]; break;  // ties
          }
        }
      }
      const auto want = expected_axis(x, m, 1, op);
      for (unsigned off : {0u, 1u})
        for (unsigned grid : {0u, 1u, 3u})
          expect_same(detail::simt_reduce_axis(x.data(), m, 1, op, grid, off), want,
                      type_name<T>() + " 301x" + std::to_string(cols) + " offset " + std::to_string(off) + " grid " +
                          std::to_string(grid));
    }
  });
}

// Rows of 16 to 128 vectors of the order-free operations that are not exact sums take fewer lanes
// than the exact sums (free_row_lanes: at least two vectors a lane from 16, at most 16 lanes for
// 8-byte elements): whole and partial last vectors, the default grid, on and off a 16-byte boundary.
TYPED_TEST(SegmentsSimt, RowGroupsOfFreeOperationsHaveTheCpuBits) {
  using T = TypeParam;
  constexpr std::uint64_t kVec = detail::Shape<T>::kVec;
  const std::vector<Matrix> ms{{67, 16 * kVec, 0}, {67, 24 * kVec + 3, 0}, {33, 64 * kVec, 0}, {21, 128 * kVec - 1, 0}};
  expect_simt_axis_has_cpu_bits<T>(ms, 1, 1, 53);
}

TYPED_TEST(SegmentsSimt, KernelHasTheCpuBitsForSegments) {
  using T = TypeParam;
  for_each_op([&](auto op) {
    using Op = decltype(op);
    const std::uint64_t n = detail::Shape<T>::kTile + 300;  // short segments for the warps, long ones for blocks
    const auto x = input_for<T, Op>(n, 17);
    const auto [b, e] = random_segments(n, 8, 4);
    const auto want = expected_segments(x, b, e, op);
    for (unsigned grid : {0u, 5u}) expect_same(detail::simt_reduce_segments(x.data(), n, b, e, op, grid), want, type_name<T>());
  });
}

// Segments that follow each other in memory (offsets from a prefix sum) are read by a warp per
// group as one range (reduceSegmentGroups): lengths that end inside a vector, a lane's run, a round
// (32 lanes x one, two or four vectors: kGroupVectors, by type and operation), empty segments
// between them, segments of exactly one round (of each size) and of
// several, two longer than a tile (left to a block, through the list of long segments, and with
// a list too short for them: every segment read again), for groups of 1, 4 and 32 segments and
// inputs on and off a 16-byte boundary (and groups of one with the grid a GPU would take: a warp
// per group in reduceSegmentsWarpEach). Then one segment out of place: that group takes the
// segments one at a time.
template <class T>
std::vector<std::uint64_t> grouped_lengths() {
  constexpr std::uint64_t kVec = detail::Shape<T>::kVec, kRound = 32 * 4 * kVec;
  std::vector<std::uint64_t> lengths{1, 0, 3, kVec, kVec + 1, 2 * kVec - 1, 0, 0, 4 * kVec, 4 * kVec + 1, 5,
                                     kRound - 1, kRound, kRound + 1, 2, 0, 3 * kRound + 7, 1, 1, 1};
  for (const std::uint64_t round : {32 * kVec, 64 * kVec})  // rounds of one and two vectors a lane
    lengths.insert(lengths.end(), {round - 1, round, 0, round + 1, 3 * round + 5});
  for (std::uint64_t i = 0; i < 40; ++i) lengths.push_back((i * 37) % (3 * kVec));
  lengths.push_back(detail::Shape<T>::kTile + 5);  // a block's
  for (std::uint64_t i = 0; i < 30; ++i) lengths.push_back((i * 11) % 70);
  lengths.push_back(2 * detail::Shape<T>::kTile + 1);  // another block's
  lengths.push_back(6);
  return lengths;
}

// Segments of 0 to 6 elements, a few longer ones among them: several segments end in each lane's
// elements, which a lane then folds in one pass.
std::vector<std::uint64_t> tiny_lengths() {
  std::vector<std::uint64_t> lengths;
  for (std::uint64_t i = 0; i < 700; ++i) lengths.push_back(i % 97 == 50 ? 40 + i % 13 : (i * 5 + i / 7) % 7);
  return lengths;
}

TYPED_TEST(SegmentsSimt, GroupsOfSegmentsInOneRangeHaveTheCpuBits) {
  using T = TypeParam;
  for (const auto& lengths : {grouped_lengths<T>(), tiny_lengths()}) {
    std::vector<std::int64_t> b, e;
    std::int64_t at = 0;
    for (const auto len : lengths) b.push_back(at), at += static_cast<std::int64_t>(len), e.push_back(at);
    const std::uint64_t n = static_cast<std::uint64_t>(at);
    for_each_op([&](auto op) {
      using Op = decltype(op);
      const auto x = input_for<T, Op>(n, 23);
      const auto want = expected_segments(x, b, e, op);
      for (unsigned group : {1u, 4u, 32u}) {
        const unsigned before = detail::simt_force_segment_group(group);
        for (unsigned offset : {0u, 1u, 3u}) {
          if (group != 32 && offset == 3) continue;
          expect_same(detail::simt_reduce_segments(x.data(), n, b, e, op, 2, offset), want,
                      type_name<T>() + " group " + std::to_string(group) + " offset " + std::to_string(offset));
        }
        // Groups of one segment and no forced grid: reduceSegmentsWarpEach takes a warp per segment.
        if (group == 1) expect_same(detail::simt_reduce_segments(x.data(), n, b, e, op, 0), want, type_name<T>() + " grid 0");
        detail::simt_force_segment_group(before);
      }
      const unsigned slots = detail::simt_limit_long_slots(1);
      expect_same(detail::simt_reduce_segments(x.data(), n, b, e, op, 3), want, type_name<T>() + " long list overflows");
      detail::simt_limit_long_slots(slots);
      // Segment 9 moved one element on: its group no longer covers one range.
      auto b2 = b, e2 = e;
      b2[9] += 1, e2[9] += 1;
      const auto want2 = expected_segments(x, b2, e2, op);
      const unsigned before = detail::simt_force_segment_group(32);
      expect_same(detail::simt_reduce_segments(x.data(), n, b2, e2, op, 2), want2, type_name<T>() + " out of place");
      detail::simt_force_segment_group(before);
    });
  }
}

// reduceSegmentsWarpEach gives a warp one segment and leaves; past 2^31 segments (2^30 blocks of
// two warps) it takes more than one launch. With launches of 5 blocks, 107 segments take 11 of
// them, and every segment (empty, short, longer than a tile) has the CPU backend's bits.
TEST(SegmentsSimt, SegmentsAWarpEachInSeveralLaunches) {
  std::vector<std::int64_t> b, e;
  std::int64_t at = 0;
  for (std::uint64_t i = 0; i < 107; ++i) {
    const std::int64_t len = i == 50 ? std::int64_t(detail::Shape<float>::kTile) + 9 : static_cast<std::int64_t>((i * 29) % 300);
    b.push_back(at), at += len, e.push_back(at);
  }
  const auto x = random_input<float>(static_cast<std::uint64_t>(at), 13);
  const unsigned blocks = detail::simt_limit_warp_each_blocks(5), group = detail::simt_force_segment_group(1);
  const auto check = [&](auto op, const char* name) {
    simt::reset_accumulated_report();
    expect_same(detail::simt_reduce_segments(x.data(), x.size(), b, e, op, 0), expected_segments(x, b, e, op), name);
    const auto& grids = simt::accumulated_report().grids;
    EXPECT_EQ(std::count(grids.begin(), grids.end(), "reduceSegmentsWarpEach"), 11) << name;
  };
  check(op::sum{}, "sum");
  check(op::max{}, "max");
  check(op::argmin{}, "argmin");
  detail::simt_force_segment_group(group);
  detail::simt_limit_warp_each_blocks(blocks);
}

TEST(SegmentsSimt, SeveralChunksInOnePieceMatchTheCpu) {
  const std::uint64_t len = 5 * detail::Shape<float>::kTile + 3;  // 6 chunks: step 3 runs
  const auto x = random_input<float>(2 * len, 9);
  const Matrix m{2, len, 0};
  expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::sum{}, 1), expected_axis(x, m, 1, op::sum{}), "float sum");
  expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::argmax{}, 2), expected_axis(x, m, 1, op::argmax{}), "argmax");
}

}  // namespace
}  // namespace rltest
