#pragma once
// The (element, op) cases CUB and thrust are instantiated for, as CUDA types: int32, float and
// double x every lab op; half and bf16 sums (into float). nvcc only.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "lab/bench_calls.hpp"

namespace rl::lab::bench {

// Calls f.template operator()<In, Out, K>() for a case vendor_has() accepts: In is the stored
// element as CUDA names it, Out the type of the result (reducelab's accumulator for sums), K the
// op's row (core/ops.hpp). Any lab op is instantiated; the vendors' own entry points (Sum, Min,
// Max, plus, minimum, maximum) are chosen by K where they exist, and every other op is reduced
// with its core::Combine and identity.
template <class F>
auto with_vendor_case(Dtype e, OpKind op, F&& f) {
  auto by_op = [&]<class T>() {
    return core::with_lab_op(op, [&]<class Tag>() {
      return f.template operator()<T, reducelab::result_t<T, Tag>, core::op_of<Tag>>();
    });
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
