#pragma once
// reducelab::reduce — a reduction of a device array into one value, written to device memory.
//
//   float* d_x = ...;                 // n floats on the GPU
//   float* d_sum = ...;               // where the result goes (device memory)
//   if (auto st = reducelab::sum(d_x, n, d_sum, stream); !st) std::cerr << st.message() << "\n";
//
// One call, one kernel launch, no synchronisation and no temporary storage to size: the library
// keeps a small workspace per (device, stream), so concurrent calls on different streams are
// safe and calls can be captured into a CUDA graph. Errors come back as a Status; the library
// never exits or throws.
//
// The result is the same bits on every run, on every GPU, for every grid and in
// reducelab::cpu::reduce: floating-point sums and means are exact (rounded once), integer
// operations, min, max, argmin and argmax do not depend on order, and floating-point products
// and user operations follow an order fixed by n alone (docs/performance.md).
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "reducelab/types.hpp"

struct CUstream_st;

namespace reducelab {

using stream_t = CUstream_st*;  // the same type as cudaStream_t; nullptr is the default stream

// The built-in operations. Each is a tag; what it computes, returns, and does at the edges
// (the same on the GPU, in cpu::reduce and on the SIMT emulator; docs/contract.md in full):
//   sum             accumulate_t<T> (int32 -> int64, half -> float, ...). Integers wrap modulo
//                   2^64 (two's complement). Floating point: exact, the real sum of the elements
//                   rounded once to nearest-even (docs/performance.md, "Exact sums"); NaN if any
//                   element is NaN or both infinities occur, else an infinity if one occurs; a
//                   rounded sum past the type's range is +-inf; an exact zero is +0 unless every
//                   element is -0. n == 0: +0.
//   prod            accumulate_t<T>. Integers wrap modulo 2^64; floating-point products are
//                   carried in double (float, half, bf16) in an order fixed by n; overflow gives
//                   +-inf, 0 * inf and any NaN give NaN. n == 0: 1.
//   min, max        T. Any NaN in the input gives NaN (NumPy's rule), reported as the canonical
//                   quiet NaN. -0 orders below +0: min(-0, +0) is -0, max(-0, +0) is +0.
//                   n == 0: Errc::empty_input, nothing is written.
//   mean            double: the exact sum (128-bit for integers, exact for floating point)
//                   divided by n and rounded once to the nearest double. n == 0: NaN.
//   argmin, argmax  ArgResult<T>: the value and the index of its first occurrence, by the order
//                   min and max use (-0 below +0, so argmin/argmax pick the element min/max
//                   return); a NaN counts as the extreme, so the first NaN wins.
//                   n == 0: Errc::empty_input, nothing is written.
namespace op {
struct sum {};
struct prod {};
struct min {};
struct max {};
struct mean {};
struct argmin {};
struct argmax {};
}  // namespace op

template <class Op>
inline constexpr bool is_builtin_op =
    std::is_same_v<Op, op::sum> || std::is_same_v<Op, op::prod> || std::is_same_v<Op, op::min> ||
    std::is_same_v<Op, op::max> || std::is_same_v<Op, op::mean> ||
    std::is_same_v<Op, op::argmin> || std::is_same_v<Op, op::argmax>;

// Whether an operation has no value on an empty input (min, max, argmin, argmax): reducing
// n == 0 elements with it returns Errc::empty_input.
template <class Op>
inline constexpr bool needs_an_element = std::is_same_v<Op, op::min> || std::is_same_v<Op, op::max> ||
                                         std::is_same_v<Op, op::argmin> || std::is_same_v<Op, op::argmax>;

template <class Op>
constexpr const char* op_name() {
  if constexpr (std::is_same_v<Op, op::sum>) return "sum";
  else if constexpr (std::is_same_v<Op, op::prod>) return "prod";
  else if constexpr (std::is_same_v<Op, op::min>) return "min";
  else if constexpr (std::is_same_v<Op, op::max>) return "max";
  else if constexpr (std::is_same_v<Op, op::mean>) return "mean";
  else if constexpr (std::is_same_v<Op, op::argmin>) return "argmin";
  else if constexpr (std::is_same_v<Op, op::argmax>) return "argmax";
  else return "a user operation";
}

// A user operation is a functor with a value type, an identity and an associative combine:
//   struct MaxAbs {
//     using value_type = float;
//     __host__ __device__ float identity() const { return 0.f; }
//     __host__ __device__ float operator()(float a, float b) const { return fmaxf(fabsf(a), fabsf(b)); }
//   };
// Each element is converted to value_type before it is combined. User operations are templates
// compiled in the caller's .cu file: include "reducelab/reduce.cuh" there.

template <class T, class Op>
struct result {
  using type = typename Op::value_type;  // user functors
};
template <class T> struct result<T, op::sum> { using type = accumulate_t<T>; };
template <class T> struct result<T, op::prod> { using type = accumulate_t<T>; };
template <class T> struct result<T, op::min> { using type = T; };
template <class T> struct result<T, op::max> { using type = T; };
template <class T> struct result<T, op::mean> { using type = double; };
template <class T> struct result<T, op::argmin> { using type = ArgResult<T>; };
template <class T> struct result<T, op::argmax> { using type = ArgResult<T>; };
template <class T, class Op>
using result_t = typename result<T, Op>::type;

enum class Errc {
  ok = 0,
  invalid_argument,  // a null pointer with n > 0, a bad option
  no_device,         // built without CUDA, or no usable GPU
  out_of_memory,     // the workspace could not be allocated
  cuda_error,        // a CUDA call failed; cuda_error() holds its code
  empty_input,       // n == 0 for an operation with no value on no elements (min, max, argmin, argmax)
};

class Status {
 public:
  Status() = default;
  Status(Errc code, std::string message, int cuda_error = 0)
      : code_(code), cuda_error_(cuda_error), message_(std::move(message)) {}
  bool ok() const { return code_ == Errc::ok; }
  explicit operator bool() const { return ok(); }
  Errc code() const { return code_; }
  int cuda_error() const { return cuda_error_; }  // a cudaError_t, 0 unless code() is cuda_error
  const std::string& message() const { return message_; }

 private:
  Errc code_ = Errc::ok;
  int cuda_error_ = 0;
  std::string message_;
};

// Knobs for tests and benchmarks; the defaults are what a user wants.
struct Options {
  // Blocks to launch. 0: a persistent grid sized from occupancy. Any other value gives the same
  // result (the order does not depend on it); tests force several to prove that.
  unsigned grid = 0;
  // false: floating-point sums and means are not exact: carried in double, with block partials
  // combined by atomicAdd in whatever order blocks finish (the usual nondeterministic design).
  // Only the benchmark uses it, to show what exactness costs. Ignored where order cannot
  // matter (integers, min, max, argmin, argmax).
  bool deterministic = true;
};

// Reduces input[0, n) on `stream` and writes the result to *output (device memory). input may
// have any alignment. Returns once the work is enqueued.
template <class T, class Op>
[[nodiscard]] Status reduce(const T* input, std::uint64_t n, Op op, result_t<T, Op>* output,
              stream_t stream = nullptr, const Options& options = {});

template <class T>
[[nodiscard]] Status sum(const T* input, std::uint64_t n, result_t<T, op::sum>* output, stream_t stream = nullptr) {
  return reduce(input, n, op::sum{}, output, stream);
}
template <class T>
[[nodiscard]] Status prod(const T* input, std::uint64_t n, result_t<T, op::prod>* output, stream_t stream = nullptr) {
  return reduce(input, n, op::prod{}, output, stream);
}
template <class T>
[[nodiscard]] Status min(const T* input, std::uint64_t n, T* output, stream_t stream = nullptr) {
  return reduce(input, n, op::min{}, output, stream);
}
template <class T>
[[nodiscard]] Status max(const T* input, std::uint64_t n, T* output, stream_t stream = nullptr) {
  return reduce(input, n, op::max{}, output, stream);
}
template <class T>
[[nodiscard]] Status mean(const T* input, std::uint64_t n, double* output, stream_t stream = nullptr) {
  return reduce(input, n, op::mean{}, output, stream);
}
template <class T>
[[nodiscard]] Status argmin(const T* input, std::uint64_t n, ArgResult<T>* output, stream_t stream = nullptr) {
  return reduce(input, n, op::argmin{}, output, stream);
}
template <class T>
[[nodiscard]] Status argmax(const T* input, std::uint64_t n, ArgResult<T>* output, stream_t stream = nullptr) {
  return reduce(input, n, op::argmax{}, output, stream);
}

// The host-returning convenience: reduces, copies the result back and waits for `stream`.
template <class R>
struct Result {
  R value{};
  Status status;
  explicit operator bool() const { return status.ok(); }
};
template <class T, class Op>
[[nodiscard]] Result<result_t<T, Op>> reduce_to_host(const T* input, std::uint64_t n, Op op,
                                       stream_t stream = nullptr);

// Whether this build has the CUDA backend and a GPU is usable; the message says why not.
[[nodiscard]] Status gpu_available();

// The CPU backend: the same order, so the same bits, computed on `threads` cores (0: all).
// Returns like reduce_to_host: check the Status (empty_input, or a null input with n > 0), then
// read .value.
namespace cpu {
template <class T, class Op>
[[nodiscard]] Result<result_t<T, Op>> reduce(const T* input, std::uint64_t n, Op op, unsigned threads = 0);
}  // namespace cpu

// The element types and built-in operations compiled into the library (others: reduce.cuh).
#define REDUCELAB_FOR_EACH_TYPE(X)                                                      \
  X(std::int8_t) X(std::int16_t) X(std::int32_t) X(std::int64_t) X(std::uint8_t)        \
  X(std::uint16_t) X(std::uint32_t) X(std::uint64_t) X(::reducelab::half)               \
  X(::reducelab::bfloat16) X(float) X(double)
#define REDUCELAB_FOR_EACH_OP(X, T) \
  X(T, sum) X(T, prod) X(T, min) X(T, max) X(T, mean) X(T, argmin) X(T, argmax)

#define REDUCELAB_DECLARE_(T, OP)                                                              \
  extern template Status reduce<T, op::OP>(const T*, std::uint64_t, op::OP,                    \
                                           result_t<T, op::OP>*, stream_t, const Options&);    \
  extern template Result<result_t<T, op::OP>> reduce_to_host<T, op::OP>(const T*, std::uint64_t, \
                                                                        op::OP, stream_t);     \
  namespace cpu {                                                                              \
  extern template Result<result_t<T, op::OP>> reduce<T, op::OP>(const T*, std::uint64_t, op::OP, unsigned); \
  }
#define REDUCELAB_DECLARE_TYPE_(T) REDUCELAB_FOR_EACH_OP(REDUCELAB_DECLARE_, T)
REDUCELAB_FOR_EACH_TYPE(REDUCELAB_DECLARE_TYPE_)
#undef REDUCELAB_DECLARE_TYPE_
#undef REDUCELAB_DECLARE_

}  // namespace reducelab
