#pragma once
// What a reduction of the lab's input must give, and whether a device result gives it.
#include <string>

#include "lab/input.hpp"
#include "reducelab/ops.hpp"

namespace rl::lab {

using reducelab::OpKind;

struct Expected {
  long double value = 0;    // exact (integers: exactly representable up to 2^64)
  long double tolerance = 0;  // 0: bits must match; float sums get a rounding bound
  bool wraps = false;       // int32 with Accumulate::wrap: the textbook's modulo-2^32 sum
  std::string text;         // printed as the expected column
};

// The exact reduction of `in` under `op` (CPU reference, core/reference.hpp).
Expected expect(const HostArray& in, OpKind op, Accumulate acc);

struct Verdict {
  bool ok = false;
  long double value = 0;
  std::string text;  // the result as printed
};
// Reads one accumulator-typed value from `bytes` and compares it with `e`.
Verdict check(const Expected& e, const void* result_bytes, Dtype dtype, Accumulate acc);

}  // namespace rl::lab
