#pragma once
// The lab's one verdict: what a reduction of an input must give (its exact reduction,
// core::Exact), and whether a result gives it. `run`, `explain` and `bench` all judge with it.
#include <array>
#include <cstring>
#include <atomic>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/dtype.hpp"
#include "core/ops.hpp"
#include "core/reference.hpp"
#include "lab/input.hpp"

namespace rl::lab {

using core::OpKind;

// The truth a result is judged against: the exact reduction of an input under one lab op, and
// the dtype the result is stored in (the library's result type, or the gallery's accumulator).
struct Expected {
  OpKind op = OpKind::sum;
  Dtype result = Dtype::int64;
  std::size_t n = 0;
  __int128 integer = 0;                    // integer sums: exact
  long double real = 0;                    // floating-point sums: far below one rounding off
  long double abs_sum = 0;                 // sum of |x|, for the rounding bound
  std::array<unsigned char, 16> folded{};  // any other op: its combine's fold, as a `result`
  bool wraps = false;                      // an integer sum narrower than 64 bits (the textbook's int)
  std::string text;                        // printed as the expected column
};

// From an exact reduction (bench extends one as its sizes grow).
template <class T>
Expected expect(const core::Exact<T>& truth, OpKind op, Dtype result);
// The exact reduction of a gallery input, judged as the kernels' accumulator holds it.
Expected expect(const HostArray& in, OpKind op, Accumulate acc);

struct Verdict {
  bool ok = false;
  std::string result;    // the value as printed
  std::string expected;  // what it had to be, as printed
  std::string check;     // how it was judged: "equal bits", "exact (128-bit reference)", "|error| ... <= ..."
};
// Reads one `e.result` value from `got` and judges it: min and max must be the element's bits;
// integer sums exact (modulo 2^32 where the sum wraps); floating-point sums within the rounding
// bound of core::float_tolerance. `same_bits`, when given, is a value (of e.result) the result
// must also equal bit for bit, named `same_bits_name` in the check (reducelab's float sums equal
// reducelab::cpu::reduce's).
Verdict judge(const Expected& e, const void* got, const void* same_bits = nullptr,
              std::string_view same_bits_name = {});

// Extends `truth` (the exact reduction of data[0, truth.n)) to data[0, to), across the host's
// cores.
template <class T>
void extend(core::Exact<T>& truth, const T* data, std::size_t to) {
  if (to <= truth.n) return;
  std::vector<core::Exact<T>> parts(std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<std::size_t> next{0};
  parallel_for(truth.n, to, [&](std::size_t b, std::size_t e) { parts[next++].add({data + b, e - b}); });
  for (const auto& p : parts) truth.merge(p);
}

// ---------------------------------------------------------------------------------------------

std::string expected_text(const Expected& e);  // the `text` of e (verify.cpp)

template <class T>
Expected expect(const core::Exact<T>& truth, OpKind op, Dtype result) {
  Expected e;
  e.op = op;
  e.result = result;
  e.n = truth.n;
  e.abs_sum = truth.abs_sum;
  if (op == OpKind::sum) {
    if constexpr (std::is_integral_v<T>) e.integer = truth.integer;
    else e.real = truth.value();
    e.wraps = core::is_integer(result) && core::size_of(result) < 8;
  } else {
    // Every other lab op: the fold of its own combine (core::Exact), stored as `result`.
    const auto x = truth.fold(op);
    using F = std::remove_const_t<decltype(x)>;
    core::with_dtype(result, [&]<class R>() {
      static_assert(sizeof(R) <= sizeof(e.folded));
      R r;
      if constexpr (std::is_same_v<R, F> || (std::is_arithmetic_v<R> && std::is_arithmetic_v<F>)) {
        r = static_cast<R>(x);
      } else if constexpr (std::is_same_v<R, reducelab::half> && std::is_same_v<F, float>) {
        r = reducelab::to_half(x);  // a fold of halves is a half: exact
      } else if constexpr (std::is_same_v<R, reducelab::bfloat16> && std::is_same_v<F, float>) {
        r = reducelab::to_bfloat16(x);
      } else {
        throw std::invalid_argument("verify: " + std::string(core::name(result)) + " cannot hold a " +
                                    std::string(core::name(core::dtype_of<T>)));
      }
      std::memcpy(e.folded.data(), &r, sizeof r);
    });
  }
  e.text = expected_text(e);
  return e;
}

}  // namespace rl::lab
