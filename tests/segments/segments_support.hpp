#pragma once
// Shared by the CPU/SIMT and GPU tests of reduce_axis and reduce_segments: the definition every
// result is held to (a piece has the bits reducelab::cpu::reduce gives for its elements alone),
// inputs and the shapes walked.
#include <random>
#include <utility>
#include <vector>

#include "../core/reduce_support.hpp"
#include "reducelab/detail/cpu_reduce.hpp"
#include "reducelab/segments.hpp"

namespace rltest {

// The elements of piece p of a matrix along `axis`, gathered.
template <class T>
std::vector<T> matrix_piece(const std::vector<T>& x, Matrix m, int axis, std::uint64_t p) {
  const std::uint64_t pitch = m.pitch ? m.pitch : m.cols;
  std::vector<T> piece;
  if (axis == 1) piece.assign(x.begin() + p * pitch, x.begin() + p * pitch + m.cols);
  else for (std::uint64_t r = 0; r < m.rows; ++r) piece.push_back(x[r * pitch + p]);
  return piece;
}

// One piece's reference: what reducelab::cpu::reduce gives for its elements alone: floating-point
// sums and means exact (cpu_exact: every element into digits, rounded once), everything else in
// the order fixed by its length (reduce_order.hpp).
template <class T, class Op>
result_t<T, Op> piece_reference(const T* x, std::uint64_t n) {
  if constexpr (detail::exact_sum_v<T, Op>)
    return detail::cpu_exact<T, result_t<T, Op>, std::is_same_v<Op, op::mean>>(x, n, 1);
  else
    return detail::cpu_reduce<T, detail::semantics_t<T, Op>>(x, n, 1);
}

// What reduce_axis must give: each piece reduced on its own in its fixed order.
template <class T, class Op>
std::vector<result_t<T, Op>> expected_axis(const std::vector<T>& x, Matrix m, int axis, Op) {
  std::vector<result_t<T, Op>> out(axis == 1 ? m.rows : m.cols);
  for (std::uint64_t p = 0; p < out.size(); ++p) {
    const auto piece = matrix_piece(x, m, axis, p);
    out[p] = piece_reference<T, Op>(piece.data(), piece.size());
  }
  return out;
}

template <class T, class Op>
std::vector<result_t<T, Op>> expected_segments(const std::vector<T>& x, const std::vector<std::int64_t>& begin,
                                               const std::vector<std::int64_t>& end, Op) {
  std::vector<result_t<T, Op>> out(begin.size());
  for (std::size_t i = 0; i < begin.size(); ++i) {
    const std::uint64_t len = end[i] > begin[i] ? std::uint64_t(end[i] - begin[i]) : 0;
    out[i] = piece_reference<T, Op>(len ? x.data() + begin[i] : x.data(), len);
  }
  return out;
}

template <class T, class Op>
std::vector<T> input_for(std::uint64_t n, std::uint64_t seed) {
  if constexpr (std::is_same_v<Op, op::prod>) return product_input<T>(n, seed);
  else return random_input<T>(n, seed);
}

// Segments over [0, n): random lengths, some empty, some with end < begin, some overlapping, one
// covering everything.
inline std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> random_segments(std::uint64_t n,
                                                                                       std::size_t count,
                                                                                       std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> b(count), e(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t lo = n ? rng() % (n + 1) : 0;
    const std::uint64_t hi = n ? lo + rng() % (n - lo + 1) : 0;
    b[i] = static_cast<std::int64_t>(lo), e[i] = static_cast<std::int64_t>(hi);
    if (i % 5 == 1) e[i] = b[i];                                   // empty
    if (i % 7 == 3 && b[i] > 0) e[i] = b[i] - 1;                   // end < begin: empty
  }
  if (count > 0) b[0] = 0, e[0] = static_cast<std::int64_t>(n);   // the whole array
  return {b, e};
}

template <class R>
void expect_same(const std::vector<R>& got, const std::vector<R>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_TRUE(same_bits(got[i], want[i])) << what << ": piece " << i << " is " << show(got[i]) << ", want "
                                            << show(want[i]);
}

// A matrix of float or double (m.cols >= 12) whose column minima, maxima and their indices turn on
// special values planted in some columns of a 16-byte vector and not its neighbours: a quiet NaN
// mid-column (column 1), a negative NaN in the last row (2), +inf (3), -inf in the last row (4),
// +0 with -0 in two rows (5: min and max both zero, of either sign by row), -0 only (6), +inf and
// -inf (7), the column's largest and smallest values each twice (8: the first row of each is the
// argmax and argmin), one value in every row (9), a column whose exact sum no pair of doubles
// holds, in whatever order it is taken (10: a huge value, 1 and a tiny one; redone with digits)
// and a quiet NaN in the last column's last row.
template <class T>
std::vector<T> special_float_columns(Matrix m, std::uint64_t seed) {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const std::uint64_t pitch = m.pitch ? m.pitch : m.cols, last = m.rows - 1;
  std::vector<T> x = random_input<T>(m.rows * pitch, seed);
  const auto at = [&](std::uint64_t r, std::uint64_t c) -> T& { return x[r * pitch + c]; };
  at(m.rows / 2, 1) = nan;
  at(last, 2) = -nan;
  at(3 % m.rows, 3) = inf;
  at(last, 4) = -inf;
  for (std::uint64_t r = 0; r < m.rows; ++r) at(r, 5) = T(0), at(r, 6) = -T(0), at(r, 9) = T(0.25);
  at(1 % m.rows, 5) = -T(0);
  at(last, 5) = -T(0);
  at(0, 7) = inf;
  at(last, 7) = -inf;
  at(m.rows / 3, 8) = T(8), at(m.rows / 2, 8) = T(8), at(m.rows / 4, 8) = T(-8), at(last, 8) = T(-8);
  if (m.rows >= 3) {
    const int e = sizeof(T) == 4 ? 120 : 900;
    for (std::uint64_t r = 0; r < m.rows; ++r) at(r, 10) = T(0);
    at(0, 10) = std::ldexp(T(1), e), at(1, 10) = T(1), at(last, 10) = std::ldexp(T(1), -e);
  }
  at(last, m.cols - 1) = nan;
  return x;
}

// rows x cols half or bfloat16 elements for their min and max: ordinary values of both signs, and
// in every third row, at a place that varies, one special (NaNs of both signs, infinities, signed
// zeros, subnormals, +-1); every eleventh row only zeros of either sign.
template <class T>
std::vector<T> special_16bit_rows(std::uint64_t rows, std::uint64_t cols) {
  const std::vector<std::uint16_t> specials = std::is_same_v<T, half>
      ? std::vector<std::uint16_t>{0x7e00, 0xfe01, 0x7c00, 0xfc00, 0x0000, 0x8000, 0x0001, 0x8001, 0x3c00, 0xbc00}
      : std::vector<std::uint16_t>{0x7fc0, 0xffc1, 0x7f80, 0xff80, 0x0000, 0x8000, 0x0001, 0x8001, 0x3f80, 0xbf80};
  std::vector<T> x(rows * cols);
  std::uint64_t state = 12345 + cols;
  for (std::uint64_t i = 0; i < x.size(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const std::uint32_t r = static_cast<std::uint32_t>(state >> 33);
    const std::uint64_t row = i / cols;
    std::uint16_t bits = static_cast<std::uint16_t>(r & 0x3bff) | static_cast<std::uint16_t>((r >> 16) & 0x8000);
    if (row % 3 == 1 && (r >> 20) % cols == 0) bits = specials[(row / 3 + (r >> 8)) % specials.size()];
    if (row % 11 == 5) bits = (r & 1) ? 0x8000 : 0x0000;
    x[i].bits = bits;
  }
  return x;
}

// special_16bit_rows of halves (rows >= 5, cols >= 8) whose first rows' sums test exactness and
// the edges: row 0 sums exactly to 2^-24 (65504, 2^-24 and -65504 among zeros), row 2 holds only
// -0 (sum -0), row 3 is 65504s and one -2^-24 (the float nearest needs the whole sum), row 4 holds
// +inf and -inf among ones (NaN).
inline std::vector<half> exact_half_rows(std::uint64_t rows, std::uint64_t cols) {
  const auto bits = [](std::uint16_t b) {
    half h;
    h.bits = b;
    return h;
  };
  std::vector<half> x = special_16bit_rows<half>(rows, cols);
  for (std::uint64_t c = 0; c < cols; ++c) {
    x[c] = bits(0x0000);
    x[2 * cols + c] = bits(0x8000);
    x[3 * cols + c] = bits(0x7bff);
    x[4 * cols + c] = bits(0x3c00);
  }
  x[0] = bits(0x7bff), x[cols / 2] = bits(0x0001), x[cols - 1] = bits(0xfbff);
  x[3 * cols + 5] = bits(0x8001);
  x[4 * cols + 1] = bits(0x7c00), x[4 * cols + cols - 2] = bits(0xfc00);
  return x;
}

// A matrix of half or bfloat16 (m.cols >= 14) whose column results turn on special values planted
// in one column of a two-column word and not the other: a quiet NaN mid-column (column 2), a
// negative NaN in the last row (5), +inf (6), -inf in the last row (7), +0 with -0 in two rows
// (8), -0 only (9), a signalling NaN in the first row (10), +inf and -inf (11: a NaN sum), and a
// quiet NaN in the last column's last row. Column 13 (odd: a word's high half) sums exactly to
// 1 + 2^-20 (half) or 1 + 2^-100 (bfloat16) from a huge value, 1, a tiny one and the huge one
// negated: a pair of doubles cannot hold bfloat16's three parts at once, so that column's pair is
// lost and redone.
template <class T>
std::vector<T> special_columns(Matrix m, std::uint64_t seed) {
  const bool is_half = std::is_same_v<T, half>;
  const auto bits = [](std::uint16_t b) {
    T t;
    t.bits = b;
    return t;
  };
  const std::uint64_t pitch = m.pitch ? m.pitch : m.cols, last = m.rows - 1;
  std::vector<T> x = random_input<T>(m.rows * pitch, seed);
  const auto at = [&](std::uint64_t r, std::uint64_t c) -> T& { return x[r * pitch + c]; };
  at(m.rows / 2, 2) = bits(is_half ? 0x7e00 : 0x7fc0);
  at(last, 5) = bits(is_half ? 0xfe00 : 0xffc0);
  at(3 % m.rows, 6) = bits(is_half ? 0x7c00 : 0x7f80);
  at(last, 7) = bits(is_half ? 0xfc00 : 0xff80);
  for (std::uint64_t r = 0; r < m.rows; ++r) at(r, 8) = bits(0x0000), at(r, 9) = bits(0x8000);
  at(1 % m.rows, 8) = bits(0x8000);
  at(last, 8) = bits(0x8000);
  at(0, 10) = bits(is_half ? 0x7c01 : 0x7f81);
  at(0, 11) = bits(is_half ? 0x7c00 : 0x7f80);
  at(last, 11) = bits(is_half ? 0xfc00 : 0xff80);
  if (m.rows >= 4) {
    for (std::uint64_t r = 0; r < m.rows; ++r) at(r, 13) = bits(0x0000);
    // half: 2^15, 1, 2^-20, -2^15; bfloat16: 2^100, 1, 2^-100, -2^100.
    at(0, 13) = bits(is_half ? 0x7800 : 0x7180);
    at(1, 13) = bits(is_half ? 0x3c00 : 0x3f80);
    at(2, 13) = bits(is_half ? 0x0010 : 0x0d80);
    at(last, 13) = bits(is_half ? 0xf800 : 0xf180);
  }
  at(last, m.cols - 1) = bits(is_half ? 0x7e00 : 0x7fc0);
  return x;
}

// A dense matrix of 16-bit floats (any column count from 2) with the extremes' hard cases planted:
// a negative NaN in column 0's last row; column 1 of -0 with a single +0; from 4 columns, column 2
// of -inf only and column 3 of +inf with one -0; +inf and a positive NaN in the last column (a
// column 1 or 3 there keeps its other cases); random values elsewhere.
template <class T>
std::vector<T> extreme_half_columns(std::uint64_t rows, std::uint64_t cols, std::uint64_t seed) {
  const bool is_half = std::is_same_v<T, half>;
  const auto bits = [](std::uint16_t b) {
    T t;
    t.bits = b;
    return t;
  };
  std::vector<T> x = random_input<T>(rows * cols, seed);
  const auto at = [&](std::uint64_t r, std::uint64_t c) -> T& { return x[r * cols + c]; };
  const std::uint64_t last = rows - 1;
  at(last, cols - 1) = bits(is_half ? 0x7c00 : 0x7f80);
  if (rows > 2) at(rows / 2, cols - 1) = bits(is_half ? 0x7e00 : 0x7fc0);
  at(last, 0) = bits(is_half ? 0xfe00 : 0xffc0);
  for (std::uint64_t r = 0; r < rows; ++r) at(r, 1) = bits(0x8000);
  at(rows / 3, 1) = bits(0x0000);
  if (cols >= 4) {
    for (std::uint64_t r = 0; r < rows; ++r) at(r, 2) = bits(is_half ? 0xfc00 : 0xff80), at(r, 3) = bits(is_half ? 0x7c00 : 0x7f80);
    at(rows / 2, 3) = bits(0x8000);
  }
  return x;
}

template <class F>
void for_each_op(F&& f) {
  f(op::sum{}), f(op::prod{}), f(op::min{}), f(op::max{}), f(op::mean{}), f(op::argmin{}), f(op::argmax{});
}

// Rows past a warp's 32 or 64 KiB (a block each on the GPU and on SIMT: 9001 elements of 4 or 8
// bytes, 33001 of 2) with a pitch, every third of them holding {2^e, 1, 2^-e, -2^e} among its
// random values (e = 600 for doubles, 100 for float and bfloat16, 15 and -20 for half: a pair of
// doubles cannot hold the first three; half's range fits it), rows 20 and 25 a NaN and an infinity.
template <class T>
struct LostRows {
  std::vector<T> x;
  Matrix m;
  std::uint64_t planted = 0;  // rows with the four values
};
// The planted values 2^e and 2^-e.
template <class T>
constexpr double lost_big = std::is_same_v<T, double> ? 0x1p600 : std::is_same_v<T, half> ? 0x1p15 : 0x1p100;
template <class T>
constexpr double lost_tiny = std::is_same_v<T, double> ? 0x1p-600 : std::is_same_v<T, half> ? 0x1p-20 : 0x1p-100;
template <class T>
LostRows<T> lost_rows(std::uint64_t rows, std::uint64_t seed) {
  const std::uint64_t cols = sizeof(T) == 2 ? 33001 : 9001;
  LostRows<T> l{random_input<T>(rows * (cols + 3), seed), Matrix{rows, cols, cols + 3}, 0};
  const double big = lost_big<T>, tiny = lost_tiny<T>;
  for (std::uint64_t r = 0; r < rows; r += 3, ++l.planted) {
    T* row = l.x.data() + r * l.m.pitch;
    const std::uint64_t k = r % 1000;
    row[5 + k] = from_double<T>(big), row[4000] = from_double<T>(1.0), row[6000 - k] = from_double<T>(tiny);
    row[cols - 1 - k] = from_double<T>(-big);
  }
  if (rows > 25) l.x[20 * l.m.pitch + 77] = from_double<T>(std::nan("")), l.x[25 * l.m.pitch + 88] = from_double<T>(-INFINITY);
  return l;
}

// lost_rows' rows as segments longer than a tile, then `shorts` segments {2^e, 1, 2^-e, -2^e}
// (exact sum 1 + 2^-e): short ones, which the warps list as lost where a pair cannot hold them
// (all but half's).
template <class T>
struct LostSegments {
  std::vector<T> x;
  std::vector<std::int64_t> begin, end;
  std::uint64_t planted = 0;  // long segments with the four values
};
template <class T>
LostSegments<T> lost_segments(std::uint64_t rows, std::uint64_t seed, unsigned shorts) {
  LostRows<T> l = lost_rows<T>(rows, seed);
  LostSegments<T> s{std::move(l.x), {}, {}, l.planted};
  for (std::uint64_t r = 0; r < l.m.rows; ++r)
    s.begin.push_back(static_cast<std::int64_t>(r * l.m.pitch)), s.end.push_back(s.begin.back() + static_cast<std::int64_t>(l.m.cols));
  for (unsigned k = 0; k < shorts; ++k) {
    s.begin.push_back(static_cast<std::int64_t>(s.x.size()));
    for (const double v : {lost_big<T>, 1.0, lost_tiny<T>, -lost_big<T>}) s.x.push_back(from_double<T>(v));
    s.end.push_back(static_cast<std::int64_t>(s.x.size()));
  }
  return s;
}

}  // namespace rltest
