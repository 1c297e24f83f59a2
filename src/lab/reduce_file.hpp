#pragma once
// `reducelab reduce`: one built-in operation of the library over the numbers in a file (a NumPy
// .npy array, or raw little-endian elements of a named type), on the CPU backend or the
// library's kernel on the SIMT emulator.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

namespace rl::lab {

struct ReduceFileArgs {
  std::string input;     // FILE.npy, or any other name: raw elements of `dtype`
  std::string dtype;     // int8..int64, uint8..uint64, half, bf16, float, double; required for raw
  std::string op;        // sum, prod, min, max, mean, argmin, argmax
  std::string backend;   // cpu or simt
  std::string format;    // text or json
};

struct ReduceFileResult {
  std::string dtype, op, backend;
  std::uint64_t n = 0;
  // The value as text: integers in full, floating point as the shortest decimal that reads back
  // to the same value ("nan", "inf", "-inf", "-0"). Empty when there is none (status set).
  std::string value;
  bool integer_value = false;
  std::string bits;                   // a floating-point value's bits in hex, in its own width
  std::optional<std::int64_t> index;  // argmin/argmax
  std::string error;                  // the library's Status message when it returned an error
};

// Throws UsageError for a file that cannot be read or does not hold what it says, and for bad
// options. A library error (an empty input to min) comes back in `error`.
ReduceFileResult reduce_file(const ReduceFileArgs& args);
void print_reduce_file(const ReduceFileResult& r, const std::string& format, std::ostream& out);

}  // namespace rl::lab
