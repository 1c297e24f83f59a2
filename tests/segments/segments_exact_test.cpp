// Exact floating-point sums and means of pieces: rows, columns and segments whose exact sums are
// known by construction (cancellation across the whole exponent range, halfway cases, overflow,
// infinities, NaN, signed zeros, pieces a pair of doubles cannot hold), on the CPU backend and
// on the GPU's kernels run on SIMT; and the shapes every type and operation must survive, the
// SIMT kernels against the CPU backend bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <tuple>

#include "analysis/recorder.hpp"
#include "exact_pieces_support.hpp"
#include "segments/simt_segments.hpp"
#include "simt/core.hpp"
#include "segments_support.hpp"

namespace rltest {
namespace {

using FloatingTypes = ::testing::Types<half, bfloat16, float, double>;

template <class T>
class ExactPieces : public ::testing::Test {};
TYPED_TEST_SUITE(ExactPieces, FloatingTypes);

template <class T>
void expect_case_sums(const std::vector<result_t<T, op::sum>>& got, const PieceCases<T>& p, const std::string& where) {
  ASSERT_EQ(got.size(), p.cases.size()) << where;
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(same_result(got[i], p.cases[i].sum))
        << type_name<T>() << " " << where << ", " << p.cases[i].name << ": sum " << show(got[i]) << ", exact "
        << show(p.cases[i].sum);
}
template <class T>
void expect_case_means(const std::vector<double>& got, const PieceCases<T>& p, const std::string& where) {
  ASSERT_EQ(got.size(), p.cases.size()) << where;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (p.cases[i].mean) {
      EXPECT_TRUE(same_result(got[i], *p.cases[i].mean))
          << type_name<T>() << " " << where << ", " << p.cases[i].name << ": mean " << show(got[i]) << ", exact "
          << show(*p.cases[i].mean);
    }
}

// Short pieces (a warp or a few lanes each) and pieces longer than a tile (a block each).
template <class T>
std::vector<std::uint64_t> case_lengths() {
  return {200, detail::Shape<T>::kTile + 100};
}

TYPED_TEST(ExactPieces, CpuSegmentsRowsAndColumnsAreTheExactSums) {
  using T = TypeParam;
  for (std::uint64_t n : case_lengths<T>()) {
    const auto p = piece_cases<T>(n, 40 + n);
    const std::string where = "n " + std::to_string(n);
    std::vector<result_t<T, op::sum>> sums(p.cases.size());
    std::vector<double> means(p.cases.size());
    ASSERT_TRUE(cpu::reduce_segments(p.flat.data(), p.cases.size(), p.begin.data(), p.end.data(), op::sum{}, sums.data()).ok());
    expect_case_sums(sums, p, "segments " + where);
    ASSERT_TRUE(cpu::reduce_segments(p.flat.data(), p.cases.size(), p.begin.data(), p.end.data(), op::mean{}, means.data()).ok());
    expect_case_means(means, p, "segment means " + where);
    for (int axis : {0, 1}) {
      const auto x = as_matrix(p, axis);
      ASSERT_TRUE(cpu::reduce_axis(x.data(), matrix_of(p, axis), axis, op::sum{}, sums.data()).ok());
      expect_case_sums(sums, p, "axis " + std::to_string(axis) + " " + where);
    }
  }
}

TYPED_TEST(ExactPieces, SimtSegmentsRowsAndColumnsAreTheExactSums) {
  using T = TypeParam;
  for (std::uint64_t n : case_lengths<T>()) {
    const auto p = piece_cases<T>(n, 40 + n);
    const std::string where = "SIMT n " + std::to_string(n);
    for (unsigned grid : {0u, 3u}) {
      expect_case_sums(detail::simt_reduce_segments(p.flat.data(), p.flat.size(), p.begin, p.end, op::sum{}, grid), p,
                       "segments " + where);
      if constexpr (!std::is_same_v<T, half>) {  // half's pieces always fit the pair
        EXPECT_GT(detail::simt_last_redone(), 0u) << "no piece went to the digits: the redo path is untested";
      }
      expect_case_means(detail::simt_reduce_segments(p.flat.data(), p.flat.size(), p.begin, p.end, op::mean{}, grid), p,
                        "segment means " + where);
      for (int axis : {0, 1}) {
        const auto x = as_matrix(p, axis);
        expect_case_sums(detail::simt_reduce_axis(x.data(), matrix_of(p, axis), axis, op::sum{}, grid), p,
                         "axis " + std::to_string(axis) + " " + where);
      }
    }
  }
}

// Ordinary data never leaves the pair: no piece is summed twice.
TYPED_TEST(ExactPieces, OrdinaryDataStaysInThePair) {
  using T = TypeParam;
  const auto x = random_input<T>(64 * 40, 8);
  for (int axis : {0, 1}) {
    const Matrix m{64, 40, 0};
    const auto got = detail::simt_reduce_axis(x.data(), m, axis, op::sum{});
    EXPECT_EQ(detail::simt_last_redone(), 0u) << "axis " << axis;
    expect_same(got, expected_axis(x, m, axis, op::sum{}), "axis " + std::to_string(axis));
  }
}

// Pieces of 8 floats, most of which a pair of doubles cannot hold: row r is
// {2^100, 1, 2^-100, -2^100, 0, 0, 0, 0} scaled by 1/2 when r % 3 == 0 (sum 1, or 1/2), except
// every fifth, which is ordinary (sum 36) and never listed, and every seventh, whose exact sum is
// zero ({2^100, 1, 2^-100, -2^100, -1, -2^-100, 0, 0}): a lost piece that the redo must still write (the
// runner fills outputs with a pattern, so an unwritten piece cannot pass as a zero).
struct RedoRows {
  std::vector<float> x;      // rows x 8, row-major
  std::vector<float> want;   // the exact sum of each row
  std::uint64_t lost = 0;    // rows the pair cannot hold
};
RedoRows redo_rows(std::uint64_t rows) {
  RedoRows r;
  for (std::uint64_t i = 0; i < rows; ++i) {
    std::vector<float> v{0x1p100f, 1.0f, 0x1p-100f, -0x1p100f, 0, 0, 0, 0};
    float sum = 1.0f;
    if (i % 7 == 3) v = {0x1p100f, 1.0f, 0x1p-100f, -0x1p100f, -1.0f, -0x1p-100f, 0, 0}, sum = 0.0f;
    else if (i % 5 == 1) v = {1, 2, 3, 4, 5, 6, 7, 8}, sum = 36.0f;
    else if (i % 3 == 0) {
      for (float& e : v) e *= 0.5f;
      sum = 0.5f;
    }
    if (!(i % 5 == 1 && i % 7 != 3)) ++r.lost;
    r.x.insert(r.x.end(), v.begin(), v.end());
    r.want.push_back(sum);
  }
  return r;
}

std::vector<float> transposed(const std::vector<float>& x, std::uint64_t rows, std::uint64_t cols) {
  std::vector<float> t(x.size());
  for (std::uint64_t r = 0; r < rows; ++r)
    for (std::uint64_t c = 0; c < cols; ++c) t[c * rows + r] = x[r * cols + c];
  return t;
}

// The redo list holds a fixed number of pieces (65536 on the GPU; a few here); past it every
// piece is summed again with digits. Rows, columns and segments, with the list just big enough,
// one short, and far too small: every piece still gets its exact sum, written once.
TEST(ExactPiecesRedo, EveryPieceIsExactWhenTheListOverflows) {
  constexpr std::uint64_t kRows = 300;
  const RedoRows r = redo_rows(kRows);
  ASSERT_GT(r.lost, 200u);
  const auto flat_t = transposed(r.x, kRows, 8);
  std::vector<std::int64_t> begin(kRows), end(kRows);
  for (std::uint64_t i = 0; i < kRows; ++i) begin[i] = static_cast<std::int64_t>(8 * i), end[i] = begin[i] + 8;
  for (const std::uint64_t slots : {r.lost, r.lost - 1, std::uint64_t(5)}) {
    const std::uint64_t before = detail::simt_limit_redo_slots(slots);
    const std::string where = std::to_string(slots) + " slots for " + std::to_string(r.lost) + " lost pieces";
    for (unsigned grid : {0u, 3u}) {
      expect_same(detail::simt_reduce_axis(r.x.data(), Matrix{kRows, 8, 0}, 1, op::sum{}, grid), r.want, "rows, " + where);
      EXPECT_EQ(detail::simt_last_redone(), r.lost) << "rows, " << where;
      expect_same(detail::simt_reduce_axis(flat_t.data(), Matrix{8, kRows, 0}, 0, op::sum{}, grid), r.want,
                  "columns, " + where);
      EXPECT_EQ(detail::simt_last_redone(), r.lost) << "columns, " << where;
      expect_same(detail::simt_reduce_segments(r.x.data(), r.x.size(), begin, end, op::sum{}, grid), r.want,
                  "segments, " + where);
      EXPECT_EQ(detail::simt_last_redone(), r.lost) << "segments, " << where;
    }
    detail::simt_limit_redo_slots(before);
  }
}

// Pieces of one element (a single row's columns, a single column's rows) write the element
// itself, converted once, when it is finite, and take the pairs' rules otherwise: signed zeros,
// subnormals, the largest finite values, infinities and NaN, on SIMT as on the CPU backend, sums
// and means, misaligned too.
TYPED_TEST(ExactPieces, OneElementPiecesAreTheElement) {
  using T = TypeParam;
  double tiny = 0, big = 0;  // the smallest subnormal and the largest finite value
  if constexpr (std::is_same_v<T, half>) tiny = 0x1p-24, big = 65504.0;
  else if constexpr (std::is_same_v<T, bfloat16>) tiny = 0x1p-133, big = 0x1.fep127;
  else tiny = std::numeric_limits<T>::denorm_min(), big = std::numeric_limits<T>::max();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> special{-0.0, 0.0, 1.5, -3.25, tiny, -tiny, big, -big, inf, -inf, std::nan("")};
  std::vector<T> x;
  for (unsigned i = 0; i < 30; ++i) x.push_back(from_double<T>(special[(i * 7) % special.size()]));
  const std::uint64_t n = x.size();
  for (unsigned offset : {0u, 1u}) {
    for (const auto& [m, axis] : {std::pair{Matrix{1, n, 0}, 0}, std::pair{Matrix{n, 1, 0}, 1}}) {
      const std::string what = type_name<T>() + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols) +
                               " axis " + std::to_string(axis) + " offset " + std::to_string(offset);
      std::vector<result_t<T, op::sum>> sums(n);
      std::vector<double> means(n);
      ASSERT_TRUE(cpu::reduce_axis(x.data(), m, axis, op::sum{}, sums.data()).ok());
      ASSERT_TRUE(cpu::reduce_axis(x.data(), m, axis, op::mean{}, means.data()).ok());
      expect_same(detail::simt_reduce_axis(x.data(), m, axis, op::sum{}, 0, offset), sums, "sum " + what);
      expect_same(detail::simt_reduce_axis(x.data(), m, axis, op::mean{}, 0, offset), means, "mean " + what);
      for (std::uint64_t i = 0; i < n; ++i) {  // finite: the element itself
        const double v = static_cast<double>(detail::widen(x[i]));
        if (std::isfinite(v)) {
          EXPECT_TRUE(same_result(sums[i], static_cast<result_t<T, op::sum>>(v))) << what << ", element " << i;
          EXPECT_TRUE(same_result(means[i], v)) << what << ", element " << i;
        }
      }
    }
  }
}

// Every type and operation along both axes of the awkward shapes (0, 1, 31, 33 and 1000003 rows
// or columns, packed and pitched) and over segments: the kernels on SIMT have the CPU backend's bits.
template <class T>
class AwkwardShapes : public ::testing::Test {};
TYPED_TEST_SUITE(AwkwardShapes, AllTypes);

TYPED_TEST(AwkwardShapes, SimtHasTheCpuBitsForEveryOperation) {
  using T = TypeParam;
  constexpr std::uint64_t kBig = 1000003;
  const std::vector<Matrix> ms{{0, 31, 0}, {31, 0, 0}, {1, 1, 0},  {31, 33, 0},
                               {33, 31, 35}, {1, kBig, 0}, {kBig, 1, 0}};
  for_each_op([&](auto op) {
    using Op = decltype(op);
    using R = result_t<T, Op>;
    // The emulator runs every fiber: the million-element shapes for one operation of each
    // kernel family (sums: exact pairs or integers; products: the fixed order; argmax: pairs of
    // value and index), every operation for the others.
    constexpr bool kBigToo = std::is_same_v<Op, op::sum> || std::is_same_v<Op, op::prod> || std::is_same_v<Op, op::argmax>;
    for (const Matrix m : ms) {
      if (!kBigToo && (m.rows == kBig || m.cols == kBig)) continue;
      const std::uint64_t pitch = m.pitch ? m.pitch : m.cols;
      const auto x = input_for<T, Op>(m.rows * pitch, 61 + m.rows);
      for (int axis : {0, 1}) {
        std::vector<R> want(axis == 1 ? m.rows : m.cols);
        ASSERT_TRUE(cpu::reduce_axis(x.data(), m, axis, op, want.data()).ok());
        expect_same(detail::simt_reduce_axis(x.data(), m, axis, op), want,
                    type_name<T>() + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols) + " axis " +
                        std::to_string(axis));
      }
    }
    for (std::uint64_t n : {std::uint64_t(0), std::uint64_t(1), std::uint64_t(31), std::uint64_t(33)}) {
      const auto x = input_for<T, Op>(n, 3 + n);
      const auto [b, e] = random_segments(n, 33, n);
      std::vector<R> want(b.size());
      ASSERT_TRUE(cpu::reduce_segments(x.data(), b.size(), b.data(), e.data(), op, want.data()).ok());
      expect_same(detail::simt_reduce_segments(x.data(), n, b, e, op), want, type_name<T>() + " segments n " + std::to_string(n));
    }
  });
}

// Rows of floats are first summed in plain double (the window); a row whose exponents lie too far
// apart for that is summed again with pairs, in the same warp, and only that row is rewritten.
// Every third row is {2^60, 1, -2^60, 3} (a plain double sum gives 3; the pair holds it
// exactly), the others ordinary; neighbours of both kinds share warps. No row reaches the digits.
TEST(RowGroups, RowsTheWindowCannotVouchForTakeThePair) {
  // 3000 columns: past the rows the window takes whole, every row goes through the pairs.
  for (const std::uint64_t cols : {std::uint64_t(4), std::uint64_t(16), std::uint64_t(100), std::uint64_t(256), std::uint64_t(3000)}) {
    const std::uint64_t rows = cols == 3000 ? 67 : 301;
    std::vector<float> x(rows * cols, 0.0f), want(rows);
    for (std::uint64_t r = 0; r < rows; ++r) {
      float* row = x.data() + r * cols;
      if (r % 3 == 0) {
        row[0] = 0x1p60f, row[1] = 1.0f, row[2] = -0x1p60f, row[3] = 3.0f;
        want[r] = 4.0f;
      } else {
        float sum = 0;
        for (std::uint64_t c = 0; c < cols; ++c) sum += row[c] = static_cast<float>((r + c) % 9) - 4.0f;
        want[r] = sum;
      }
    }
    for (unsigned grid : {0u, 1u, 3u}) {
      const std::string what = std::to_string(cols) + " columns, grid " + std::to_string(grid);
      const auto got = detail::simt_reduce_axis(x.data(), Matrix{rows, cols, 0}, 1, op::sum{}, grid);
      EXPECT_EQ(detail::simt_last_redone(), 0u) << what;
      ASSERT_EQ(got.size(), rows);
      for (std::uint64_t r = 0; r < rows; ++r) ASSERT_EQ(got[r], want[r]) << what << ", row " << r;
    }
  }
}

// Double rows of up to 256 elements are summed on a grid split for each row (double_split,
// reduceCutRows): two plain double sums, exact when the row's exponents lie close enough
// together, and pairs for the rows where they do not. Rows of every kind side by side, at lengths whose lanes hold one
// to four vectors (a lane a row up to 8 elements, 2 to 32 lanes above), odd lengths (read element
// by element), one past the cut, with a pitch and misaligned: ordinary values, values spread over 2^-20..2^20,
// small integers, cancellation across 2^60 (below the grid: pairs), ties to even, a sum past
// DBL_MAX, subnormals only, zeros of both signs and of one, infinities and NaN. Sums and means
// have the CPU backend's bits, and the rows with known sums have those.
TEST(CutRows, DoubleRowsCutOnTheirGridAreExact) {
  constexpr double kMax = std::numeric_limits<double>::max();
  for (const std::uint64_t cols : {std::uint64_t(2), std::uint64_t(3), std::uint64_t(4), std::uint64_t(5),
                                   std::uint64_t(16), std::uint64_t(17), std::uint64_t(64), std::uint64_t(100),
                                   std::uint64_t(256), std::uint64_t(257)}) {
    const std::uint64_t rows = 131, pitch = cols + (cols % 2);
    std::vector<double> x(rows * pitch, 0.0);
    std::vector<std::optional<double>> known(rows);
    std::uint64_t state = 99 + cols;
    auto next = [&]() {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return state >> 11;  // 53 random bits
    };
    for (std::uint64_t r = 0; r < rows; ++r) {
      double* row = x.data() + r * pitch;
      const std::uint64_t kind = r % 11;
      for (std::uint64_t c = 0; c < cols; ++c) {
        const double unit = static_cast<double>(next()) * 0x1p-53;  // full significands in [0, 1)
        const double sign = (next() & 1) ? -1.0 : 1.0;
        switch (kind) {
          case 0: row[c] = sign * unit; break;
          case 1: row[c] = sign * std::ldexp(unit, static_cast<int>(next() % 41) - 20); break;
          case 2: row[c] = static_cast<double>(next() % 512) - 256.0; break;
          case 3: row[c] = c < 4 ? std::array<double, 4>{0x1p60, 1.0 + 0x1p-52, -0x1p60, 3.0}[c] : 0.0; break;
          case 4: row[c] = c == 0 ? 1.0 : (c == 1 ? 0x1p-53 : 0.0); break;                    // a tie: 1
          case 5: row[c] = c == 0 ? 1.0 + 0x1p-52 : (c == 1 ? 0x1p-53 : 0.0); break;         // a tie: up
          case 6: row[c] = c < 2 ? kMax : 0.0; break;                                        // +inf
          case 7: row[c] = std::ldexp(static_cast<double>(next() % 1000), -1074) * sign; break;
          case 8: row[c] = -0.0; break;
          case 9: row[c] = (c % 2) ? -0.0 : 0.0; break;
          default: row[c] = c == cols / 2 ? (r % 2 ? std::numeric_limits<double>::infinity() : std::nan("")) : unit; break;
        }
      }
      if (kind == 3 && cols >= 4) known[r] = 4.0;  // 4 + 2^-52 rounds to 4; a plain double sum gives 3
      if (kind == 4) known[r] = 1.0;
      if (kind == 5) known[r] = 1.0 + 0x1p-51;
      if (kind == 6) known[r] = std::numeric_limits<double>::infinity();
      if (kind == 8) known[r] = -0.0;
      if (kind == 9) known[r] = cols >= 2 ? 0.0 : -0.0;
    }
    const Matrix m{rows, cols, pitch};
    const auto want = expected_axis(x, m, 1, op::sum{});
    const auto want_mean = expected_axis(x, m, 1, op::mean{});
    for (std::uint64_t r = 0; r < rows; ++r)
      if (known[r]) {
        ASSERT_TRUE(same_result(want[r], *known[r])) << cols << " columns, row " << r << ": CPU " << show(want[r]);
      }
    for (unsigned offset : {0u, 1u})
      for (unsigned grid : {0u, 3u}) {
        const std::string what = std::to_string(cols) + " columns, offset " + std::to_string(offset) + ", grid " + std::to_string(grid);
        expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::sum{}, grid, offset), want, "sum, " + what);
        expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::mean{}, grid, offset), want_mean, "mean, " + what);
      }
  }
}

// The min and max of half and bfloat16 pieces take two elements per 32-bit word (one 16x2 max and
// min per word): rows and columns mixing NaNs of both signs, infinities, signed zeros,
// subnormals and ordinary values have the CPU backend's bits along both axes, at every grid.
template <class T>
void expect_16bit_extrema() {
  // 1 column: reduceSingles (the element, or the canonical NaN, a word of two at a time); 2 and 4
  // columns: a vector's rows a thread in 16x2 steps, 16 a row's vectors a thread (reducePackedRows);
  // 64 and 256: reduceFreeRows; all hold the loaded vectors as words.
  for (const std::uint64_t cols : {1, 2, 4, 8, 16, 37, 64, 256, 300}) {
    const std::uint64_t rows = 97;
    const std::vector<T> x = special_16bit_rows<T>(rows, cols);
    for (int axis : {0, 1})
      for (unsigned grid : {0u, 2u}) {
        const Matrix m{rows, cols, 0};
        const std::string what = std::string(type_name<T>()) + " " + std::to_string(cols) + " columns, axis " +
                                 std::to_string(axis) + ", grid " + std::to_string(grid);
        expect_same(detail::simt_reduce_axis(x.data(), m, axis, op::max{}, grid), expected_axis(x, m, axis, op::max{}), "max " + what);
        expect_same(detail::simt_reduce_axis(x.data(), m, axis, op::min{}, grid), expected_axis(x, m, axis, op::min{}), "min " + what);
      }
  }
}
TEST(SixteenBitExtrema, TwoPerWordHaveTheCpuBits) {
  expect_16bit_extrema<half>();
  expect_16bit_extrema<bfloat16>();
}

// Exact sums of dense rows of 2, 4 or 8 elements that divide a 16-byte vector are read a vector
// per thread (reducePackedRows; rows of two or four whole vectors, a row per thread): each row
// summed alone in a window, the rows it cannot vouch for summed again with pairs (and listed for
// the digits when a pair loses part of the sum), the rows after the last whole vector a thread
// each. Random bit patterns over the whole exponent range (so windows of bfloat16 and float rows
// often fail), infinities, NaN, signed zeros, subnormals and rows a pair cannot hold, side by
// side: sums and means have the CPU backend's bits at grids 0, 1 and 3. Rows of 4 halves then
// move one warp access per 512 input bytes (the rows of one-word loads took one per 256).
template <class T>
void expect_packed_rows() {
  using Bits = std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint32_t>;
  constexpr unsigned kVec = detail::Shape<T>::kVec;
  for (const std::uint64_t cols : {std::uint64_t(2), std::uint64_t(4), std::uint64_t(8), std::uint64_t(16), std::uint64_t(32)}) {
    if (cols > 4 * kVec || (cols > kVec && cols != 2 * kVec && cols != 4 * kVec)) continue;
    const std::uint64_t rows = 301;  // 301 * cols is no multiple of a vector's elements for cols < kVec: a tail
    std::vector<T> x(rows * cols);
    std::uint64_t state = 777 + cols;
    for (std::uint64_t i = 0; i < x.size(); ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const auto r = static_cast<std::uint32_t>(state >> 32);
      const std::uint64_t row = i / cols;
      Bits bits;
      if constexpr (std::is_same_v<T, half>) bits = static_cast<Bits>((r & 0x7bff) | (r >> 16 & 0x8000));
      else if constexpr (std::is_same_v<T, bfloat16>) bits = static_cast<Bits>((r & 0x7f7f) | (r >> 16 & 0x8000));
      else bits = static_cast<Bits>(r & 0xff7fffffu);  // finite, any exponent, either sign
      if (row % 5 == 1) bits = static_cast<Bits>(bits & (sizeof(T) == 2 ? 0x83ff : 0x80ffffffu));  // narrow: windows hold
      if (row % 13 == 3 && i % cols == 0) bits = sizeof(T) == 2 ? (std::is_same_v<T, half> ? 0x7c00 : 0x7f80) : 0x7f800000u;
      if (row % 17 == 4 && i % cols == 1) bits = sizeof(T) == 2 ? (std::is_same_v<T, half> ? 0xfe01 : 0xffc1) : 0xffc00001u;
      if (row % 19 == 6) bits = (r & 1) ? static_cast<Bits>(sizeof(T) == 2 ? 0x8000 : 0x80000000u) : Bits(0);
      if (row % 23 == 7) bits = static_cast<Bits>(r & 3);  // subnormals and zeros
      std::memcpy(static_cast<void*>(&x[i]), &bits, sizeof bits);
    }
    if constexpr (!std::is_same_v<T, half>) {  // rows a pair of doubles cannot hold: listed, summed with digits
      for (std::uint64_t row = 10; row + 1 < rows; row += 37) {
        if (cols < 4) break;
        T* e = x.data() + row * cols;
        e[0] = from_double<T>(0x1p100), e[1] = from_double<T>(1.0), e[2] = from_double<T>(0x1p-100), e[3] = from_double<T>(-0x1p100);
      }
    }
    for (unsigned grid : {0u, 1u, 3u}) {
      const Matrix m{rows, cols, 0};
      const std::string what = std::string(type_name<T>()) + " " + std::to_string(cols) + " columns, grid " + std::to_string(grid);
      expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::sum{}, grid), expected_axis(x, m, 1, op::sum{}), "sum " + what);
      expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::mean{}, grid), expected_axis(x, m, 1, op::mean{}), "mean " + what);
    }
  }
}
// Rows longer than reduceRowGroups takes (9001 elements: a head, vectors and a tail, the pitch
// off a vector) go a warp each (reduceWarpRows) when there are at least as many rows as the launch
// holds warps (on SIMT: 16 at grid 0, 24 at grid 3), and a block each (reduceLongPieces) when
// fewer: 12 rows take blocks at both grids, 40 rows warps at both; fewer rows than the blocks
// held (one row at grids 0 and 3, 12 at grid 16) keep eight loads in flight a thread (the deep
// reduceLongPieces). Rows of ordinary values, of a narrow range, of values over the whole
// exponent range (the window gives way to pairs), with an infinity, with a NaN, of signed zeros
// and of subnormals, and rows a pair cannot hold (summed with digits): sums and means have the
// CPU backend's bits.
template <class T>
void expect_long_rows(std::uint64_t kCols, std::uint64_t kPitch) {
  using Bits = std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint32_t>;
  for (const std::uint64_t rows : {std::uint64_t(1), std::uint64_t(12), std::uint64_t(40)}) {
    std::vector<T> x(rows * kPitch);
    std::uint64_t state = 4242 + rows;
    for (std::uint64_t i = 0; i < x.size(); ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const auto r = static_cast<std::uint32_t>(state >> 32);
      const std::uint64_t row = i / kPitch, col = i % kPitch;
      Bits bits;
      if constexpr (std::is_same_v<T, half>) bits = static_cast<Bits>((r & 0x3bff) | (r >> 16 & 0x8000));
      else if constexpr (std::is_same_v<T, bfloat16>) bits = static_cast<Bits>((r & 0x3f7f) | (r >> 16 & 0x8000));
      else bits = static_cast<Bits>((r & 0x3fffffffu) | 0x3c000000u | (r << 31));  // ordinary: 2^-7 to 2
      if (row % 6 == 1) bits = static_cast<Bits>(bits & (sizeof(T) == 2 ? 0x83ff : 0x807fffffu));  // narrow
      if (row % 6 == 2) {  // finite, any exponent: windows give way to pairs
        if constexpr (std::is_same_v<T, half>) bits = static_cast<Bits>((r & 0x7bff) | (r >> 16 & 0x8000));
        else if constexpr (std::is_same_v<T, bfloat16>) bits = static_cast<Bits>((r & 0x7f7f) | (r >> 16 & 0x8000));
        else bits = static_cast<Bits>(r & 0xff7fffffu);
      }
      if (row % 7 == 3 && col == kCols * 5 / 9) bits = sizeof(T) == 2 ? (std::is_same_v<T, half> ? 0xfc00 : 0xff80) : 0xff800000u;
      if (row % 11 == 4 && col == 17) bits = sizeof(T) == 2 ? (std::is_same_v<T, half> ? 0x7e01 : 0x7fc1) : 0x7fc00001u;
      if (row % 13 == 5) bits = (r & 1) ? static_cast<Bits>(sizeof(T) == 2 ? 0x8000 : 0x80000000u) : Bits(0);
      if (row % 17 == 6) bits = static_cast<Bits>(r & 3);  // subnormals and zeros
      std::memcpy(static_cast<void*>(&x[i]), &bits, sizeof bits);
    }
    if constexpr (!std::is_same_v<T, half>) {  // rows a pair of doubles cannot hold
      for (std::uint64_t row = 9; row < rows; row += 19) {
        T* e = x.data() + row * kPitch;
        e[0] = from_double<T>(0x1p100), e[kCols / 2] = from_double<T>(1.0), e[kCols / 2 + 1] = from_double<T>(0x1p-100),
        e[kCols - 1] = from_double<T>(-0x1p100);
      }
    }
    const Matrix m{rows, kCols, kPitch};
    const auto want = expected_axis(x, m, 1, op::sum{});
    const auto want_mean = expected_axis(x, m, 1, op::mean{});
    for (unsigned grid : {0u, 3u, 16u}) {
      const std::string what = std::string(type_name<T>()) + " " + std::to_string(rows) + " rows, grid " + std::to_string(grid);
      expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::sum{}, grid), want, "sum " + what);
      expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::mean{}, grid), want_mean, "mean " + what);
    }
  }
}
TEST(WarpRows, LongRowsHaveTheCpuBitsAWarpOrABlockEach) {
  expect_long_rows<half>(9001, 9003);
  expect_long_rows<bfloat16>(9001, 9003);
  expect_long_rows<float>(9001, 9003);
}
// Rows of 2001 elements, which the row groups take when there are fewer rows than the launch
// holds warps (1 and 12 rows at grid 0; every count at grid 16) and a warp each takes when there
// are more (40 rows at grids 0 and 3): the same values and the same bits.
TEST(WarpRows, RowsTheRowGroupsWouldTakeHaveTheCpuBitsAWarpEach) {
  expect_long_rows<half>(2001, 2003);
  expect_long_rows<bfloat16>(2001, 2003);
  expect_long_rows<float>(2001, 2003);
  // Which kernel took them: a warp a row for 40 rows, the row groups for 12 and for rows of 1024.
  const auto kernels = [](std::uint64_t rows, std::uint64_t cols) {
    const std::vector<float> x(rows * cols, 1.0f);
    simt::reset_accumulated_report();
    detail::simt_reduce_axis(x.data(), Matrix{rows, cols, 0}, 1, op::sum{});
    return simt::accumulated_report().grids;
  };
  const auto has = [](const std::vector<std::string>& grids, const std::string& name) {
    return std::find(grids.begin(), grids.end(), name) != grids.end();
  };
  EXPECT_TRUE(has(kernels(40, 2001), "reduceWarpRows"));
  EXPECT_TRUE(has(kernels(12, 2001), "reduceRowGroups"));
  EXPECT_TRUE(has(kernels(40, 1024), "reduceRowGroups"));
}
// A warp takes one row and leaves (reduceWarpRows): a grid smaller than the rows' (a test's) takes
// them in as many launches as it needs, 40 rows at a block of 8 warps in 5, at 3 blocks in 2,
// every row with the CPU backend's bits.
TEST(WarpRows, AGridTooSmallForTheRowsTakesThemInSeveralLaunches) {
  const Matrix m{40, 2001, 0};
  const auto x = random_input<float>(m.rows * m.cols, 5);
  const auto want = expected_axis(x, m, 1, op::sum{});
  for (const auto& [grid, launches] : {std::pair{1u, 5}, std::pair{3u, 2}}) {
    simt::reset_accumulated_report();
    expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::sum{}, grid), want, "grid " + std::to_string(grid));
    const auto& grids = simt::accumulated_report().grids;
    EXPECT_EQ(std::count(grids.begin(), grids.end(), "reduceWarpRows"), launches) << "grid " << grid;
  }
}
// Long double rows of 8001 elements (62.5 KiB: a warp each when there are at least as many rows as
// the launch holds warps), of 9001 (72 KB: a block each) and of 16411 on a pitch of 16413 (a
// block each, every other row starting off a 16-byte boundary; a thread's whole rounds go through
// its two slots of shared memory twice), 40 rows at grids 0 and 1; a block each (5 rows at grid
// 0, 40 at grid 7) and a block each with eight loads in flight a thread (fewer rows than blocks: 1
// row at grids 0 and 7, 5 at grid 7): values over a wide range, a row a pair cannot hold (redone
// with digits), an infinity, a NaN. Which kernel took the 40 rows at grid 0 is checked too.
TEST(WarpRows, LongDoubleRowsHaveTheCpuBitsAWarpOrABlockEach) {
  for (const auto& [cols, pitch, kernel] : {std::tuple{std::uint64_t(8001), std::uint64_t(8004), "reduceWarpRows"},
                                            std::tuple{std::uint64_t(9001), std::uint64_t(9004), "reduceBlockRows"},
                                            std::tuple{std::uint64_t(16411), std::uint64_t(16413), "reduceBlockRows"}}) {
    for (const std::uint64_t rows : {std::uint64_t(1), std::uint64_t(5), std::uint64_t(40)}) {
      auto x = random_input<double>(rows * pitch, 77 + rows);
      for (std::uint64_t i = 0; i < x.size(); i += 97) x[i] = std::ldexp(x[i], static_cast<int>(i % 400) - 200);
      x[10] = 0x1p900, x[4000] = 1.0, x[4001] = 0x1p-900, x[cols - 1] = -0x1p900;
      if (rows > 1) x[pitch + 3] = INFINITY, x[2 * pitch + 7] = std::nan("");
      const Matrix m{rows, cols, pitch};
      const auto want = expected_axis(x, m, 1, op::sum{});
      const auto want_mean = expected_axis(x, m, 1, op::mean{});
      for (unsigned grid : {0u, 1u, 7u}) {
        const std::string what =
            "double " + std::to_string(rows) + " rows of " + std::to_string(cols) + ", grid " + std::to_string(grid);
        simt::reset_accumulated_report();
        expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::sum{}, grid), want, "sum " + what);
        if (rows == 40 && grid == 0) {
          const auto& grids = simt::accumulated_report().grids;
          EXPECT_NE(std::find(grids.begin(), grids.end(), kernel), grids.end()) << kernel << ", " << what;
        }
        expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::mean{}, grid), want_mean, "mean " + what);
      }
    }
  }
}

// Double rows a block each (reduceBlockRows) whose lanes stay on their grid (values in [-1, 1):
// no lane falls back to reading its elements again, so every sum comes from the rounds staged in
// shared memory): 40 rows of 16411 on a pitch of 16413 (every other row starts off a 16-byte
// boundary; four rounds a lane through two slots, and a tail) at grids 0 and 1, and 5 rows of
// 4099 (one round for some lanes, none for others: their vectors one at a time), against the CPU
// backend. Reading the slot after the one a round went into made it fail.
TEST(BlockRows, DoubleRowsStagedInSharedMemoryHaveTheCpuBits) {
  for (const auto& [m, grids] : {std::pair{Matrix{40, 16411, 16413}, std::vector<unsigned>{0, 1}},
                                 std::pair{Matrix{5, 4099, 4101}, std::vector<unsigned>{0}}}) {
    const auto x = random_input<double>(m.rows * m.pitch, 91 + m.cols);
    const auto want = expected_axis(x, m, 1, op::sum{});
    const auto want_mean = expected_axis(x, m, 1, op::mean{});
    for (unsigned grid : grids) {
      const std::string what = std::to_string(m.rows) + " rows of " + std::to_string(m.cols) + ", grid " + std::to_string(grid);
      simt::reset_accumulated_report();
      expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::sum{}, grid), want, "sum " + what);
      const auto& launched = simt::accumulated_report().grids;
      EXPECT_NE(std::find(launched.begin(), launched.end(), "reduceBlockRows"), launched.end()) << what;
      expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::mean{}, grid), want_mean, "mean " + what);
    }
  }
}

// Rows a block each (reduceBlockRows) whose pair cannot hold them (lost_rows: 30 of them). Float
// blocks sum their lost rows again themselves (no reduceRedoPieces launch follows; the runner
// counts what the blocks summed again), double, half and bfloat16 blocks list them (the runner
// counts the list): every planted row of floats and doubles, some of bfloat16's (its windows, in
// plain double, settle some), none of half's (they fit the pair). Sums and means have the CPU
// backend's bits at grids 0, 1 and 7.
template <class T>
void expect_block_rows_redone() {
  constexpr bool inside = std::is_same_v<T, float>;
  const LostRows<T> l = lost_rows<T>(30, 501);
  const auto want = expected_axis(l.x, l.m, 1, op::sum{});
  const auto want_mean = expected_axis(l.x, l.m, 1, op::mean{});
  for (unsigned grid : {0u, 1u, 7u}) {
    const std::string what = type_name<T>() + " grid " + std::to_string(grid);
    simt::reset_accumulated_report();
    expect_same(detail::simt_reduce_axis(l.x.data(), l.m, 1, op::sum{}, grid), want, "sum " + what);
    const std::uint64_t redone = detail::simt_last_redone();
    expect_same(detail::simt_reduce_axis(l.x.data(), l.m, 1, op::mean{}, grid), want_mean, "mean " + what);
    const auto& grids = simt::accumulated_report().grids;
    EXPECT_NE(std::find(grids.begin(), grids.end(), "reduceBlockRows"), grids.end()) << what;
    EXPECT_EQ(std::count(grids.begin(), grids.end(), "reduceRedoPieces"), inside ? 0 : 2) << what;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      EXPECT_EQ(redone, l.planted) << what;
    } else if constexpr (std::is_same_v<T, bfloat16>) {
      EXPECT_GT(redone, 0u) << what;
      EXPECT_LE(redone, l.planted) << what;
    } else {
      EXPECT_EQ(redone, 0u) << what;
    }
  }
}
TEST(BlockRows, LostRowsAreSummedAgainByTheirBlockOrListed) {
  expect_block_rows_redone<float>();
  expect_block_rows_redone<double>();
  expect_block_rows_redone<bfloat16>();
  expect_block_rows_redone<half>();
}

// Segments longer than a tile (reduceLongPieces, the call's last kernel) whose pairs cannot hold
// them (lost_rows: every third of 30, plus a NaN and an infinity), after 20 short segments that
// the warps list as lost: the long-piece kernel sums both again itself, so no reduceRedoPieces
// launch follows for float and double (half and bfloat16 keep it; their pairs hold some or all of
// these, as for a block a row above). At grid 1 one block notes more lost pieces than it holds at
// once (kLongRedoNotes) and sums them again between runs.
// Sums and means have the CPU backend's bits at grids 0, 1 and 7, and every lost piece is counted.
template <class T>
void expect_long_segments_redone() {
  constexpr bool inside = sizeof(T) >= 4;
  const LostSegments<T> l = lost_segments<T>(30, 77, 20);
  const auto& x = l.x;
  const auto& begin = l.begin;
  const auto& end = l.end;
  const auto want = expected_segments(x, begin, end, op::sum{});
  const auto want_mean = expected_segments(x, begin, end, op::mean{});
  ASSERT_EQ(l.planted, 10u);
  for (unsigned grid : {0u, 1u, 7u}) {
    const std::string what = type_name<T>() + " grid " + std::to_string(grid);
    simt::reset_accumulated_report();
    expect_same(detail::simt_reduce_segments(x.data(), x.size(), begin, end, op::sum{}, grid), want, "sum " + what);
    const std::uint64_t redone = detail::simt_last_redone();
    expect_same(detail::simt_reduce_segments(x.data(), x.size(), begin, end, op::mean{}, grid), want_mean, "mean " + what);
    const auto& grids = simt::accumulated_report().grids;
    EXPECT_EQ(std::count(grids.begin(), grids.end(), "reduceLongPieces"), 2) << what;
    EXPECT_EQ(std::count(grids.begin(), grids.end(), "reduceRedoPieces"), inside ? 0 : 2) << what;
    if constexpr (std::is_same_v<T, half>) {
      EXPECT_EQ(redone, 0u) << what;  // halves of 2^15 to 2^-20 fit the pair
    } else if constexpr (std::is_same_v<T, bfloat16>) {
      EXPECT_GE(redone, 20u) << what;
      EXPECT_LE(redone, 30u) << what;
    } else {
      EXPECT_EQ(redone, l.planted + 20) << what;
    }
  }
}
TEST(LongPieces, LostSegmentsAreSummedAgainByTheCallsLastKernel) {
  expect_long_segments_redone<float>();
  expect_long_segments_redone<double>();
  expect_long_segments_redone<bfloat16>();
  expect_long_segments_redone<half>();
}

// Double rows are split on one grid (a row's in reduceCutRows, a lane's for several rounds in the
// long rows' CutFold), the part below the grid checked by the exponents' range. Rows of values
// 1 + k 2^-u (one grid for all) with one odd multiple of 2^-u and a zero, so that the exact sum lies
// halfway between two doubles and rounds to the even one; in every other row the zero becomes a
// subnormal below 2^-1042 (its high word zero), which breaks the tie upwards, and in every third a
// value of 2 to 4 near the row's end makes the lanes that read it widen their grid. Rows of 256
// (u = 45, a row's grid), 8001 (u = 40, a warp each) and 9001 (a block each) have the CPU
// backend's bits, and a row with the subnormal differs from the same row without it.
TEST(CutRows, DoubleRowsSplitOnAGridKeepASubnormalThatBreaksATie) {
  for (const std::uint64_t cols : {std::uint64_t(256), std::uint64_t(8001), std::uint64_t(9001)}) {
    const int u = cols == 256 ? 45 : 40;  // the sum's unit is 2^(1 - u): 256 to 512, or 8192 to 16384
    const Matrix m{40, cols, cols + 3};
    std::vector<double> x(m.rows * m.pitch, 0.0);
    std::uint64_t state = 99 + cols;
    const auto zero_at = [&](std::uint64_t row) { return (11 + 5 * row) % (cols - 10); };
    for (std::uint64_t row = 0; row < m.rows; ++row) {
      double* r = x.data() + row * m.pitch;
      std::uint64_t units = 0;  // the row's sum in units of 2^-u
      for (std::uint64_t c = 0; c < cols; ++c) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const std::uint64_t k = (state >> 20) & ((std::uint64_t(1) << (u - 2)) - 1);
        const std::uint64_t v = (std::uint64_t(1) << u) + 2 * k + (c == (7 * row + 2) % cols ? 1 : 0);
        r[c] = c == zero_at(row) ? 0.0 : std::ldexp(static_cast<double>(v), -u);
        units += c == zero_at(row) ? 0 : v;
      }
      if (row % 3 == 2) r[cols - 5] += 2.0, units += std::uint64_t(2) << u;  // a larger exponent near the end
      if ((units - 1) / 2 % 2 == 1) r[cols - 3] += std::ldexp(1.0, 1 - u), units += 2;  // the even neighbour below
    }
    const auto plain = expected_axis(x, m, 1, op::sum{});
    for (std::uint64_t row = 0; row < m.rows; row += 2) x[row * m.pitch + zero_at(row)] = std::numeric_limits<double>::denorm_min();
    const auto want = expected_axis(x, m, 1, op::sum{});
    for (std::uint64_t row = 0; row < m.rows; ++row)
      ASSERT_EQ(row % 2 == 0, want[row] != plain[row]) << cols << " columns: the subnormal breaks the tie, row " << row;
    for (unsigned grid : {0u, 3u}) {
      const std::string what = "double rows of " + std::to_string(cols) + ", grid " + std::to_string(grid);
      expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::sum{}, grid), want, "sum " + what);
      expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::mean{}, grid), expected_axis(x, m, 1, op::mean{}), "mean " + what);
    }
    const Matrix dense{m.rows, cols, cols};  // without the pitch: the rows' vectors whole where cols is even
    std::vector<double> packed(dense.rows * cols);
    for (std::uint64_t row = 0; row < m.rows; ++row)
      std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(row * m.pitch), cols, packed.begin() + static_cast<std::ptrdiff_t>(row * cols));
    expect_same(detail::simt_reduce_axis(packed.data(), dense, 1, op::sum{}), want, "sum, dense rows of " + std::to_string(cols));
  }
}

// Rows of 64 KiB (16384 floats, 8192 doubles) a warp each start their rounds of loads at round
// r of 32 (of 16 for doubles) and wrap around: with a head and a tail off the vectors (pitch off a
// vector), rows of every kind above, and 40 rows at grid 0 taken by reduceWarpRows, every sum
// and mean has the CPU backend's bits.
TEST(WarpRows, RowsOf64KiBStartAtTheirOwnRoundAndHaveTheCpuBits) {
  expect_long_rows<float>(16384, 16387);
  const Matrix m{40, 8192, 8195};
  auto x = random_input<double>(m.rows * m.pitch, 19);
  for (std::uint64_t i = 0; i < x.size(); i += 89) x[i] = std::ldexp(x[i], static_cast<int>(i % 300) - 150);
  x[3 * m.pitch + 5] = 0x1p900, x[3 * m.pitch + 4100] = 1.0, x[3 * m.pitch + 8000] = -0x1p900;  // redone with digits
  x[6 * m.pitch + 100] = INFINITY;
  simt::reset_accumulated_report();
  expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::sum{}), expected_axis(x, m, 1, op::sum{}), "double sums");
  const auto& grids = simt::accumulated_report().grids;
  EXPECT_NE(std::find(grids.begin(), grids.end(), "reduceWarpRows"), grids.end());
  expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::mean{}, 5), expected_axis(x, m, 1, op::mean{}), "double means");
}

// A warp's lanes sum their elements in plain double windows of a round of loads each and settle
// each window into a pair of doubles (WindowFold): three windows that each fit, 2^60, 1 and 2^-60
// in three rounds of one lane, hold more than a pair can, and only the TwoSum's remainder shows
// it. Rows of 9000 elements (a warp each, reduceWarpRows) and segments of four rounds and one
// element (a warp each, reduceSegmentsWarpEach at grid 0 and reduceSegmentWarps at grid 3) with
// -2^60 and -1 in later rounds of that lane (exact sum 2^-60) are summed again, beside ordinary
// ones: every result has the CPU backend's bits, and those are 2^-60.
template <class T>
void expect_settled_windows() {
  constexpr std::uint64_t kRows = 40, kCols = 9000;
  constexpr std::uint64_t kRound = 32 * 4 * detail::Shape<T>::kVec;  // lane 0's rounds start here
  std::vector<T> x = random_input<T>(kRows * kCols, 91);
  std::vector<std::int64_t> b, e;
  for (std::uint64_t row = 0; row < kRows; ++row) {
    b.push_back(static_cast<std::int64_t>(row * kCols));
    e.push_back(b.back() + static_cast<std::int64_t>(4 * kRound + 1));
    if (row % 9 != 2) continue;
    T* r = x.data() + row * kCols;
    std::fill(r, r + kCols, from_double<T>(0.0));
    r[0] = from_double<T>(0x1p60), r[kRound] = from_double<T>(1.0), r[2 * kRound] = from_double<T>(0x1p-60);
    r[3 * kRound] = from_double<T>(-0x1p60), r[4 * kRound] = from_double<T>(-1.0);
  }
  const Matrix m{kRows, kCols, 0};
  for (unsigned grid : {0u, 3u}) {
    const std::string what = std::string(type_name<T>()) + " grid " + std::to_string(grid);
    const auto rows = detail::simt_reduce_axis(x.data(), m, 1, op::sum{}, grid);
    expect_same(rows, expected_axis(x, m, 1, op::sum{}), "rows, " + what);
    const auto segments = detail::simt_reduce_segments(x.data(), x.size(), b, e, op::sum{}, grid);
    expect_same(segments, expected_segments(x, b, e, op::sum{}), "segments, " + what);
    for (std::uint64_t row = 2; row < kRows; row += 9) {
      EXPECT_EQ(rows[row], 0x1p-60f) << "row " << row << ", " << what;
      EXPECT_EQ(segments[row], 0x1p-60f) << "segment " << row << ", " << what;
    }
  }
}
TEST(WarpRows, WindowsAPairCannotHoldAreSummedAgain) {
  expect_settled_windows<bfloat16>();
  expect_settled_windows<float>();
}

// reduce_axis on the SIMT backend under the recorder: the results in *got, and what the kernels'
// global accesses counted.
template <class T, class Op>
rl::analysis::Counts recorded_axis(const std::vector<T>& x, Matrix m, int axis, Op op,
                                   std::vector<result_t<T, Op>>* got) {
  rl::analysis::Recorder recorder(detail::kThreads);
  *got = detail::simt_reduce_axis(x.data(), m, axis, op);
  return recorder.counts();
}

// A dense matrix of 2, 4 or 8 to 256 (a power of two) half columns is read as one array and added
// as integers (reduceHalfColumns), one of 2, 4, 8 or 16 float columns as one array with a window
// and a pair a column (reduceNarrowColumns): each thread keeps the sums of every column or of a
// vector's. 3 and 96 columns (and 32 float ones), bfloat16, a pitch, and a start off a 16-byte
// boundary take the column kernels. Variants plant a NaN, infinities of both signs, columns of
// signed zeros only, and (float, bfloat16) a column whose pair cannot hold it (2^100, 1, 2^-100,
// -2^100: listed and redone), in rows that leave a tail after the last whole vector; grids 0, 1
// and 3. Each call names the kernel that took it.
template <class T>
T narrow_value(double v) {
  return from_double<T>(v);
}
template <class T>
void expect_narrow_columns() {
  std::vector<std::uint64_t> counts{2, 3, 4, 8, 16, 32};
  if (std::is_same_v<T, half>) counts.insert(counts.end(), {64, 96, 128, 256});
  for (const std::uint64_t cols : counts) {
    for (const std::uint64_t rows : {std::uint64_t(1), std::uint64_t(2), std::uint64_t(301), std::uint64_t(cols <= 32 ? 20001 : 2001)}) {
      for (unsigned variant = 0; variant < 5; ++variant) {
        for (const std::uint64_t pitch : {std::uint64_t(0), cols + 2}) {
          if (pitch != 0 && variant != 1) continue;
          const Matrix m{rows, cols, pitch};
          const std::uint64_t stride = pitch ? pitch : cols, last = rows - 1;
          auto x = random_input<T>(rows * stride, 300 + cols * 7 + rows + variant);
          const auto at = [&](std::uint64_t r, std::uint64_t c) -> T& { return x[r * stride + c]; };
          switch (variant) {
            case 1: at(rows / 2, cols - 1) = narrow_value<T>(std::nan("")); break;
            case 2: at(last, 0) = narrow_value<T>(INFINITY), at(0, 1) = narrow_value<T>(-INFINITY); break;
            case 3:
              for (std::uint64_t r = 0; r < rows; ++r) at(r, 0) = narrow_value<T>(-0.0), at(r, 1) = narrow_value<T>(r % 2 ? 0.0 : -0.0);
              break;
            case 4:
              if (rows >= 4) {
                for (std::uint64_t r = 0; r < rows; ++r) at(r, 1) = narrow_value<T>(0.0);
                const double big = std::is_same_v<T, half> ? 0x1p15 : 0x1p100, tiny = std::is_same_v<T, half> ? 0x1p-20 : 0x1p-100;
                at(0, 1) = narrow_value<T>(big), at(1, 1) = narrow_value<T>(1.0), at(2, 1) = narrow_value<T>(tiny);
                at(last, 1) = narrow_value<T>(-big);
              }
              break;
            default: break;
          }
          const auto want = expected_axis(x, m, 0, op::sum{});
          const auto want_mean = expected_axis(x, m, 0, op::mean{});
          for (unsigned off : {0u, 1u})
            for (unsigned grid : {0u, 1u, 3u}) {
              if (off == 1 && grid != 0) continue;
              const std::string what = type_name<T>() + " " + std::to_string(rows) + "x" + std::to_string(cols) + " pitch " +
                                       std::to_string(pitch) + " variant " + std::to_string(variant) + " offset " +
                                       std::to_string(off) + " grid " + std::to_string(grid);
              const bool dense = pitch == 0 && off == 0 && rows > detail::Shape<T>::kVec;  // columns of a vector or less: a thread each
              const bool halves = dense && std::is_same_v<T, half> && cols != 3 && cols != 96;
              const bool floats = dense && std::is_same_v<T, float> && cols <= 16 && cols != 3;
              simt::reset_accumulated_report();
              expect_same(detail::simt_reduce_axis(x.data(), m, 0, op::sum{}, grid, off), want, "sum " + what);
              expect_same(detail::simt_reduce_axis(x.data(), m, 0, op::mean{}, grid, off), want_mean, "mean " + what);
              const auto& grids = simt::accumulated_report().grids;
              EXPECT_EQ(std::count(grids.begin(), grids.end(), "reduceHalfColumns"), halves ? 2 : 0) << what;
              EXPECT_EQ(std::count(grids.begin(), grids.end(), "reduceNarrowColumns"), floats ? 2 : 0) << what;
            }
        }
      }
    }
  }
}
TEST(NarrowColumns, FewDenseColumnsHaveTheCpuBits) {
  expect_narrow_columns<half>();
  expect_narrow_columns<bfloat16>();
  expect_narrow_columns<float>();
}

// The narrow columns are read in 16-byte vectors: a warp access per 512 bytes, besides the
// blocks' posts or counts and the last block's fold of them, which grow with the columns
// (reduceColumns, a lane per column or two, took one per 64 or 128 bytes).
TEST(NarrowColumns, AreReadAWarpAccessPer512Bytes) {
  const std::uint64_t rows = 16384;
  for (const std::uint64_t cols : {2, 4, 8, 16}) {
    const Matrix m{rows, cols, 0};
    const auto x = random_input<float>(rows * cols, 23 + cols);
    std::vector<float> got;
    const auto counts = recorded_axis(x, m, 0, op::sum{}, &got);
    expect_same(got, expected_axis(x, m, 0, op::sum{}), "float sum, " + std::to_string(cols) + " columns");
    const std::uint64_t accesses = counts.outside.global_accesses + counts.totals.global_accesses;
    EXPECT_LE(accesses, rows * cols * sizeof(float) / 512 + 256 + 16 * cols) << cols << " columns";
  }
  for (const std::uint64_t cols : {2, 4, 8, 16, 32, 64, 256}) {
    const Matrix m{rows, cols, 0};
    const auto x = random_input<half>(rows * cols, 17 + cols);
    std::vector<float> got;
    const auto counts = recorded_axis(x, m, 0, op::sum{}, &got);
    expect_same(got, expected_axis(x, m, 0, op::sum{}), "half sum, " + std::to_string(cols) + " columns");
    const std::uint64_t accesses = counts.outside.global_accesses + counts.totals.global_accesses;
    EXPECT_LE(accesses, rows * cols * sizeof(half) / 512 + 256 + 16 * cols) << cols << " columns";
  }
}

// reduceColumns' bands start on whole block steps, so that a warp's loads start on a line: 32
// rows of 4 floats (one vector a lane, VecColumns) are four whole 128-byte lines, 8 rows of 4
// int16 (a column a lane) half a line (`bytes`: the least a request covers). Bands of
// ceil(rows / bands) rows (2084 here, 48 bands) started every band but the first in the middle of
// a line and each of their loads took two: float maxima along 2^26 x 4, a column a lane, took
// 300.5 us against 249.1 on an H200.
template <class T>
void expect_bands_on_whole_lines(std::uint64_t bytes) {
  const std::uint64_t rows = 100000, cols = 4;
  const Matrix m{rows, cols, 0};
  const auto x = random_input<T>(rows * cols, 41);
  std::vector<T> got;
  const auto counts = recorded_axis(x, m, 0, op::max{}, &got);
  expect_same(got, expected_axis(x, m, 0, op::max{}), type_name<T>() + " max, 4 columns");
  const std::uint64_t loads = rows * cols * sizeof(T) / bytes;
  EXPECT_LE(counts.outside.global_requests + counts.totals.global_requests, loads + loads / 20 + 256) << type_name<T>();
}
TEST(Columns, BandsStartOnWholeLines) {
  expect_bands_on_whole_lines<float>(128);
  expect_bands_on_whole_lines<std::int16_t>(64);
}

// Half columns sum in a plain double per thread and column, handed to the thread's integer count
// every 8192 elements (below 2^29: every partial sum a multiple of 2^-24 stays a double). At grid 1 a
// thread takes 12288 elements of each of 2 columns, vector t + 256 i (rows 4 (t + 256 i) + 0..3).
// Column 0: even threads add 65504 and odd ones -65504 for i < 2560, then thread 0 adds 2^-24:
// the exact sum is 2^-24, which a double past 2^29 (10240 x 65504) would round away (a tie, to
// even). Column 1: 65504s and a few 2^-14s.
TEST(NarrowColumns, LongHalfColumnsHandTheirDoublesOver) {
  const std::uint64_t rows = 3u << 20, cols = 2;
  const Matrix m{rows, cols, 0};
  std::vector<half> x(rows * cols, from_double<half>(0.0));
  for (std::uint64_t r = 0; r < rows; ++r) {
    const std::uint64_t k = r / 4, t = k % 256, i = k / 256;
    if (i < 2560) x[r * cols] = from_double<half>(t % 2 ? -65504.0 : 65504.0);
    x[r * cols + 1] = from_double<half>(r % 3 == 1 ? -0x1p-14 : 65504.0);
  }
  x[4 * (256 * 2560) * cols] = from_double<half>(0x1p-24);
  const auto want = expected_axis(x, m, 0, op::sum{});
  ASSERT_EQ(want[0], 0x1p-24f);
  expect_same(detail::simt_reduce_axis(x.data(), m, 0, op::sum{}, 1), want, "half 3x2^20 x 2, grid 1");
}

// Long half columns sum in plain doubles, each handed over before it holds more than 8192
// elements. Column 0 holds 2^-24 and then 8703 x 65504, column 1 the same with the 2^-24 last: the
// sum S of the 65504s lies halfway between two floats (S / 64 = 8703 x 2047 / 2) and past 2^29, so
// a double holding all 8704 elements would round the 2^-24 away and the tie to even; the exact
// sum rounds up. Dense, the 2048 columns are read a vector a lane in bands (reduceHalfColumnBands:
// three bands of at most 2944 rows on the emulator's 24 blocks, whose integer counts the last band
// adds); with a pitch of 2050 two to a lane (PairSum: 1024 words a row, 32 groups of 32 as many as
// the emulator's warps, so a lane folds one word column over every row, its double handed to the
// pair every 8192 elements).
TEST(PairColumns, LongHalfColumnsHandTheirDoublesOver) {
  const std::uint64_t rows = 8704, cols = 2048;
  for (const std::uint64_t pitch : {std::uint64_t(0), cols + 2}) {
    const Matrix m{rows, cols, pitch};
    const std::uint64_t stride = pitch ? pitch : cols;
    std::vector<half> x(rows * stride, from_double<half>(0.0));
    for (std::uint64_t r = 0; r < rows; ++r) {
      x[r * stride] = from_double<half>(r == 0 ? 0x1p-24 : 65504.0);
      x[r * stride + 1] = from_double<half>(r == rows - 1 ? 0x1p-24 : 65504.0);
    }
    const auto want = expected_axis(x, m, 0, op::sum{});
    const float tie = 8703.0f * 65504.0f;  // S rounded to float: the tie to even, below S
    ASSERT_GT(want[0], tie);
    ASSERT_EQ(want[0], want[1]);
    const std::string what = "half 8704 x 2048, pitch " + std::to_string(pitch);
    simt::reset_accumulated_report();
    expect_same(detail::simt_reduce_axis(x.data(), m, 0, op::sum{}), want, what);
    const auto& grids = simt::accumulated_report().grids;
    EXPECT_EQ(std::count(grids.begin(), grids.end(), "reduceHalfColumnBands"), pitch == 0 ? 1 : 0) << what;
  }
}

// Exact half sums and means of columns of whole 16-byte vectors, at least 256 of them with at
// least 3/4 of the last group's lanes busy, are read a vector of eight columns a lane in bands of
// at most 8192 rows (reduceHalfColumnBands): a single band writes its columns, several post
// integer counts that the group's last band adds and rounds. Special values in the columns
// (special_columns: NaNs of both signs, infinities, +inf with -inf, signed zeros, a sum that
// needs the halves' whole grid) at 9 to 20001 rows (one band, several, a last band shorter than the rest,
// and a warp a group of 256 columns over all 64 rows of 45056 columns), with pitches, at grids 0, 1
// and 3. 264 columns (33 vectors: the second group's warp nearly
// idle), a pitch of 1042 and an input off a 16-byte boundary keep the pair kernel, 256 dense
// columns reduceHalfColumns, and columns of 7 rows a thread each. Each call names the kernel that
// took it.
TEST(WideHalfColumns, HaveTheCpuBitsInOneBandOrMany) {
  struct Case {
    Matrix m;
    bool banded;
  };
  const std::vector<Case> cases{{{9, 4096, 0}, true},       {{301, 1000, 0}, true},      {{8193, 512, 0}, true},
                                {{20001, 256, 264}, true},  {{40, 2048, 0}, true},       {{300, 264, 0}, false},
                                {{64, 45056, 0}, true},     {{300, 1040, 1042}, false}, {{2001, 256, 0}, false},
                                {{7, 512, 520}, false}};
  for (const auto& [m, banded] : cases) {
    const auto x = special_columns<half>(m, 5 + m.cols + m.rows);
    const auto want = expected_axis(x, m, 0, op::sum{});
    const auto want_mean = expected_axis(x, m, 0, op::mean{});
    for (unsigned off : {0u, 1u})
      for (unsigned grid : {0u, 1u, 3u}) {
        if (off == 1 && grid != 0) continue;
        const std::string what = std::to_string(m.rows) + "x" + std::to_string(m.cols) + " pitch " +
                                 std::to_string(m.pitch) + " offset " + std::to_string(off) + " grid " + std::to_string(grid);
        simt::reset_accumulated_report();
        expect_same(detail::simt_reduce_axis(x.data(), m, 0, op::sum{}, grid, off), want, "sum " + what);
        expect_same(detail::simt_reduce_axis(x.data(), m, 0, op::mean{}, grid, off), want_mean, "mean " + what);
        const auto& grids = simt::accumulated_report().grids;
        EXPECT_EQ(std::count(grids.begin(), grids.end(), "reduceHalfColumnBands"), banded && off == 0 ? 2 : 0) << what;
      }
  }
}

TEST(PackedRows, ExactSumsOfRowsInOneVectorHaveTheCpuBits) {
  expect_packed_rows<half>();
  expect_packed_rows<bfloat16>();
  expect_packed_rows<float>();
}
// Maxima and minima of dense rows of 4 to 64 whole vectors of 2- and 4-byte elements (4 to 32,
// and 128, of 8-byte ones) take reduceFreeRows (two vectors a lane, four for 128; every load of a
// step issued first; 16-bit floats as words): the CPU backend's bits, each sector of the input
// asked for once, and one store per row; a start off a 16-byte boundary keeps reduceRowGroups,
// and so do rows of 128 doubles and of 2 or 128 vectors of halves.
template <class T>
void expect_free_rows(std::uint64_t cols, bool taken = true) {
  const std::uint64_t rows = 2048;
  const Matrix m{rows, cols, 0};
  const auto x = random_input<T>(rows * cols, 17 + cols);
  const std::string what = std::string(type_name<T>()) + " max, " + std::to_string(cols) + " columns";
  simt::reset_accumulated_report();
  std::vector<T> got;
  const auto counts = recorded_axis(x, m, 1, op::max{}, &got);
  expect_same(got, expected_axis(x, m, 1, op::max{}), what);
  const auto& grids = simt::accumulated_report().grids;
  EXPECT_EQ(std::find(grids.begin(), grids.end(), "reduceFreeRows") != grids.end(), taken) << what;
  if (!taken) return;
  const std::uint64_t sectors = counts.outside.global_sectors + counts.totals.global_sectors;
  EXPECT_LE(sectors, rows * cols * sizeof(T) / 32 + rows + 64) << what;
  simt::reset_accumulated_report();
  expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::min{}, 0, 1), expected_axis(x, m, 1, op::min{}),
              what + ", off a 16-byte boundary");
  const auto& off = simt::accumulated_report().grids;
  EXPECT_EQ(std::find(off.begin(), off.end(), "reduceFreeRows"), off.end()) << what;
}
TEST(FreeRows, ShortRowsOfMaximaReadEachSectorOnce) {
  expect_free_rows<float>(16);
  expect_free_rows<float>(256);
  expect_free_rows<double>(16);
  expect_free_rows<double>(64);
  expect_free_rows<std::int64_t>(8);
  expect_free_rows<double>(128, false);
  expect_free_rows<double>(256);
  expect_free_rows<std::uint64_t>(256);
  expect_free_rows<half>(256);
  expect_free_rows<half>(512);
  expect_free_rows<bfloat16>(32);
  expect_free_rows<half>(16, false);
  expect_free_rows<bfloat16>(1024, false);
}

// Exact half sums and means of the same rows (4 to 64 whole vectors) take reduceFreeRows too: a
// lane's halves in one double, the row's lanes added with shuffles (up to 8192 halves sum exactly
// in double in any order). NaNs of both signs, infinities (+inf with -inf: NaN), signed zeros,
// subnormals, a row of -0 only, and rows whose exact sum needs the halves' whole 40-bit grid have
// the CPU backend's bits at grids 0 and 3, every sector read once; off a 16-byte boundary the
// rows keep the other kernels, with the same bits.
TEST(FreeRows, ExactHalfSumsOfShortRowsAreOneDoubleALane) {
  for (const std::uint64_t cols : {32, 64, 256, 512}) {
    const std::uint64_t rows = 1000;
    const Matrix m{rows, cols, 0};
    const std::vector<half> x = exact_half_rows(rows, cols);
    const auto want = expected_axis(x, m, 1, op::sum{});
    const std::string what = "half, " + std::to_string(cols) + " columns";
    ASSERT_EQ(want[0], 0x1p-24f) << what;
    ASSERT_TRUE(want[2] == 0 && std::signbit(want[2])) << what;
    ASSERT_EQ(want[3], static_cast<float>(65504.0 * double(cols - 1) - 0x1p-24)) << what;
    ASSERT_TRUE(std::isnan(want[4])) << what;
    for (unsigned grid : {0u, 3u}) {
      simt::reset_accumulated_report();
      expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::sum{}, grid), want, "sum, " + what);
      expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::mean{}, grid), expected_axis(x, m, 1, op::mean{}),
                  "mean, " + what);
      const auto& grids = simt::accumulated_report().grids;
      EXPECT_EQ(std::count(grids.begin(), grids.end(), "reduceFreeRows"), 2) << what;
    }
    std::vector<float> got;
    const auto counts = recorded_axis(x, m, 1, op::sum{}, &got);
    expect_same(got, want, "sum, recorded, " + what);
    EXPECT_LE(counts.outside.global_sectors + counts.totals.global_sectors, rows * cols * sizeof(half) / 32 + rows + 64)
        << what;
    simt::reset_accumulated_report();
    expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::sum{}, 0, 1), want,
                "sum off a 16-byte boundary, " + what);
    const auto& off = simt::accumulated_report().grids;
    EXPECT_EQ(std::find(off.begin(), off.end(), "reduceFreeRows"), off.end()) << what;
  }
}

TEST(PackedRows, RowsOfFourHalvesTakeOneWarpAccessPer512Bytes) {
  const std::uint64_t rows = 16384, cols = 4;
  const Matrix m{rows, cols, 0};
  const auto x = random_input<half>(rows * cols, 9);
  // The exact sum and, like every order-free operation, the max (not reduceRowGroups' 8-byte load
  // per row and lane, one warp access per 256 bytes).
  auto check = [&](auto op, const char* name) {
    std::vector<result_t<half, decltype(op)>> got;
    const auto counts = recorded_axis(x, m, 1, op, &got);
    expect_same(got, expected_axis(x, m, 1, op), std::string("half ") + name + ", 4 columns");
    const std::uint64_t accesses = counts.outside.global_accesses + counts.totals.global_accesses;
    // Loads: a warp's 32 vectors (512 bytes, 64 rows) at once; stores: one per warp and vector,
    // the two rows' results in one word (a store a row: rows / 32).
    EXPECT_LE(accesses, rows * cols * sizeof(half) / 512 + rows / 64 + 64) << name;
  };
  check(op::sum{}, "sum");
  check(op::max{}, "max");
}

// A vector's rows of 2 or 4 halves write their results in one store of 4, 8 or 16 bytes; an
// output off that boundary takes a store a row, and so does a vector with a row the window cannot
// vouch for (an infinity, a NaN). All have the CPU backend's bits.
TEST(PackedRows, TheResultsOfAVectorsRowsGoOutTogetherOrOneByOne) {
  for (const std::uint64_t cols : {2, 4})
    for (const unsigned shift : {0u, 1u, 2u, 3u}) {
      const std::uint64_t rows = 1000;
      const Matrix m{rows, cols, 0};
      auto x = random_input<half>(rows * cols, 5 + cols);
      x[7 * cols].bits = 0x7c00;      // +inf
      x[100 * cols + 1].bits = 0x7e00;  // NaN
      const unsigned before = detail::simt_shift_output(shift);
      const std::string what = "half, " + std::to_string(cols) + " columns, output " + std::to_string(shift) + " past a word";
      expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::sum{}), expected_axis(x, m, 1, op::sum{}), "sum " + what);
      expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::max{}), expected_axis(x, m, 1, op::max{}), "max " + what);
      expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::min{}, 3), expected_axis(x, m, 1, op::min{}), "min " + what);
      expect_same(detail::simt_reduce_axis(x.data(), m, 1, op::mean{}), expected_axis(x, m, 1, op::mean{}), "mean " + what);
      detail::simt_shift_output(before);
    }
  // The maxima of rows of 4 halves: an output one half past a 4-byte boundary takes a store per
  // row, twice the stores of the aligned one (which the SIMT backend cannot fault on its own).
  const std::uint64_t rows = 16384;
  const Matrix m{rows, 4, 0};
  const auto x = random_input<half>(rows * 4, 3);
  std::uint64_t accesses[2] = {};
  for (const unsigned shift : {0u, 1u}) {
    const unsigned before = detail::simt_shift_output(shift);
    std::vector<half> got;
    const auto counts = recorded_axis(x, m, 1, op::max{}, &got);
    detail::simt_shift_output(before);
    expect_same(got, expected_axis(x, m, 1, op::max{}), "half max, output " + std::to_string(shift) + " past a word");
    accesses[shift] = counts.outside.global_accesses + counts.totals.global_accesses;
  }
  EXPECT_GE(accesses[1], accesses[0] + rows / 64 - 16);  // a warp's 64 rows: one store more
}

// Short rows read coalesced: rows of 4 and 256 floats, packed, a few lanes each: every warp load
// covers 512 contiguous bytes (32 rows of 4, half a row of 256), so the sectors moved are the
// input's bytes / 32 and the warp accesses one per 512 bytes, plus the results' stores (one per
// warp's group of rows, coalesced). Rows of 16 floats (four whole vectors) take a thread each
// (reducePackedRows): a warp's load reads vector k of 32 neighbouring rows, so each 32-byte
// sector is asked for twice, by two loads of the same thread, with as many warp accesses.
TEST(RowGroups, ShortRowsAreReadCoalesced) {
  for (const std::uint64_t cols : {std::uint64_t(4), std::uint64_t(16), std::uint64_t(256)}) {
    const std::uint64_t rows = cols == 256 ? 512 : 4096;
    const Matrix m{rows, cols, 0};
    const auto x = random_input<float>(rows * cols, 4 + cols);
    std::vector<float> got;
    const auto counts = recorded_axis(x, m, 1, op::sum{}, &got);
    const std::string what = "float sum, " + std::to_string(cols) + " columns";
    expect_same(got, expected_axis(x, m, 1, op::sum{}), what);
    const std::uint64_t input_bytes = rows * cols * sizeof(float);
    std::uint64_t lanes = 1;  // per row: the smallest power of two whose 4-float vectors cover it, at most 32
    while (lanes < 32 && lanes * 4 < cols) lanes *= 2;
    const std::uint64_t rows_per_warp = 32 / lanes;
    const std::uint64_t sectors = counts.outside.global_sectors + counts.totals.global_sectors;
    const std::uint64_t accesses = counts.outside.global_accesses + counts.totals.global_accesses;
    // The redo kernel reads its (empty) list: a handful more.
    const std::uint64_t asked = cols == 16 ? 2 : 1;  // requests per sector
    EXPECT_LE(sectors, asked * input_bytes / 32 + std::max(rows * sizeof(float) / 32, rows / rows_per_warp) + 64) << what << ", accesses " << accesses;
    EXPECT_LE(accesses, input_bytes / 512 + rows / rows_per_warp + 64) << what << ", sectors " << sectors;
  }
}

}  // namespace
}  // namespace rltest
