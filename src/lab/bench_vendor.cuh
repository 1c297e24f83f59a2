#pragma once
// The (element, op) cases CUB and thrust are instantiated for, as CUDA types: int32, float and
// double x sum, min, max; half and bf16 sums (into float). nvcc only.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "lab/bench_calls.hpp"

namespace rl::lab::bench {

// Calls f.template operator()<In, Out, K>() for a case vendor_has() accepts: In is the stored
// element as CUDA names it, Out the type of the result (reducelab's accumulator for sums).
template <class F>
auto with_vendor_case(Dtype e, OpKind op, F&& f) {
  auto by_op = [&]<class T>() {
    switch (op) {
      case OpKind::sum:
        if constexpr (std::is_same_v<T, std::int32_t>)
          return f.template operator()<T, std::int64_t, OpKind::sum>();
        else
          return f.template operator()<T, T, OpKind::sum>();
      case OpKind::min: return f.template operator()<T, T, OpKind::min>();
      default: break;  // max (vendor_has admits the lab's ops only)
    }
    return f.template operator()<T, T, OpKind::max>();
  };
  if (!vendor_has(e, op))
    throw std::logic_error(std::string("CUB/thrust are not instantiated for ") + std::string(name(e)));
  switch (e) {
    case Dtype::int32: return by_op.template operator()<std::int32_t>();
    case Dtype::float32: return by_op.template operator()<float>();
    case Dtype::float64: return by_op.template operator()<double>();
    case Dtype::half: return f.template operator()<__half, float, OpKind::sum>();
    case Dtype::bf16: return f.template operator()<__nv_bfloat16, float, OpKind::sum>();
    default: break;
  }
  throw std::logic_error("unreachable");
}

}  // namespace rl::lab::bench
