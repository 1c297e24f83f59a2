#pragma once
// Reductions of many pieces of one array at once: the rows or the columns of a matrix, or
// segments given by offset arrays.
//
//   // A row-major rows x cols matrix of floats on the GPU, row r starting at d_x + r * pitch.
//   reducelab::Matrix m{rows, cols, pitch};
//   reducelab::reduce_axis(d_x, m, 1, reducelab::op::sum{}, d_row_sums, stream);   // rows values
//   reducelab::reduce_axis(d_x, m, 0, reducelab::op::max{}, d_col_max, stream);    // cols values
//   // Segment i is d_x[begin[i], end[i]) (CUB DeviceSegmentedReduce's contract).
//   reducelab::reduce_segments(d_x, count, d_begin, d_end, reducelab::op::argmax{}, d_out, stream);
//
// Every type and built-in operation of reducelab::reduce (reduce.hpp), with the same meaning
// and result types: each row, column or segment gets exactly what reducelab::reduce (or
// cpu::reduce) gives for its elements on their own, on every GPU, for every grid, and from the
// CPU functions below, bit for bit:
//   - floating-point sums and means are exact: the real sum of the piece rounded once to
//     nearest-even (the mean: the real sum divided by the length, rounded once), with
//     reducelab::reduce's rules for infinities, NaN and signed zeros. Since that value does not
//     depend on the order, rows, columns and segments are read however is fastest;
//   - integer sums and means, min, max, argmin and argmax give the same bits in any order;
//   - floating-point products (and user operations) keep reducelab::reduce's fixed order for a
//     piece of L elements, so columns of products are read one element per row (slower).
// argmin/argmax indices count from the start of the piece.
//
// Empty pieces (cols == 0, rows == 0, end <= begin) are not errors; each gets what
// reducelab::reduce gives for n == 0 (min/max/argmin/argmax, which reducelab::reduce reports
// as Errc::empty_input, give their identity and index -1 here):
//   sum 0, prod 1, mean NaN (NumPy's mean of nothing);
//   min +inf (floats) or the type's largest value, max -inf or the type's lowest: the
//   identity, as CUB writes for an empty segment (CUB's float min writes FLT_MAX, not +inf);
//   argmin/argmax the same value with index -1. NumPy raises for empty min/max/argmin/argmax;
//   here the index -1 is the flag that says a piece was empty: a non-empty piece never gives it.
//
// Sizes are 64-bit. Offsets are signed 64-bit element indices into `input` and must be
// non-negative; a segment with end <= begin is empty (as in CUB). The GPU calls take device
// pointers (input, offsets and output), return once the work is enqueued and never
// synchronise; the CPU calls (namespace cpu) take host pointers and return when done.
#include <cstdint>

#include "reducelab/reduce.hpp"

namespace reducelab {

// A row-major matrix: element (r, c) is at r * pitch + c. pitch (in elements) is at least cols;
// 0 means cols (rows packed together).
struct Matrix {
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
  std::uint64_t pitch = 0;
};

// axis 1 (the last): output[r] reduces row r (rows results). axis 0 (the first): output[c]
// reduces column c (cols results). Any other axis, a pitch below cols or a null pointer with
// work to do is Errc::invalid_argument.
template <class T, class Op>
[[nodiscard]] Status reduce_axis(const T* input, Matrix m, int axis, Op op, result_t<T, Op>* output,
                                 stream_t stream = nullptr, const Options& options = {});

// output[i] reduces input[begin[i], end[i]) for i < count.
template <class T, class Op>
[[nodiscard]] Status reduce_segments(const T* input, std::uint64_t count, const std::int64_t* begin,
                                     const std::int64_t* end, Op op, result_t<T, Op>* output,
                                     stream_t stream = nullptr, const Options& options = {});

namespace cpu {
// The same, on the CPU, with the same bits; `threads` cores (0: all).
template <class T, class Op>
[[nodiscard]] Status reduce_axis(const T* input, Matrix m, int axis, Op op, result_t<T, Op>* output,
                                 unsigned threads = 0);
template <class T, class Op>
[[nodiscard]] Status reduce_segments(const T* input, std::uint64_t count, const std::int64_t* begin,
                                     const std::int64_t* end, Op op, result_t<T, Op>* output,
                                     unsigned threads = 0);
}  // namespace cpu

#define REDUCELAB_DECLARE_SEGMENTS_(T, OP)                                                          \
  extern template Status reduce_axis<T, op::OP>(const T*, Matrix, int, op::OP, result_t<T, op::OP>*, \
                                                stream_t, const Options&);                          \
  extern template Status reduce_segments<T, op::OP>(const T*, std::uint64_t, const std::int64_t*,     \
                                                    const std::int64_t*, op::OP, result_t<T, op::OP>*, \
                                                    stream_t, const Options&);                      \
  namespace cpu {                                                                                   \
  extern template Status reduce_axis<T, op::OP>(const T*, Matrix, int, op::OP, result_t<T, op::OP>*, \
                                                unsigned);                                          \
  extern template Status reduce_segments<T, op::OP>(const T*, std::uint64_t, const std::int64_t*,     \
                                                    const std::int64_t*, op::OP, result_t<T, op::OP>*, \
                                                    unsigned);                                      \
  }
#define REDUCELAB_DECLARE_SEGMENTS_TYPE_(T) REDUCELAB_FOR_EACH_OP(REDUCELAB_DECLARE_SEGMENTS_, T)
REDUCELAB_FOR_EACH_TYPE(REDUCELAB_DECLARE_SEGMENTS_TYPE_)
#undef REDUCELAB_DECLARE_SEGMENTS_TYPE_
#undef REDUCELAB_DECLARE_SEGMENTS_

}  // namespace reducelab
