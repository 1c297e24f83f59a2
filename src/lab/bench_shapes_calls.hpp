#pragma once
// The calls `reducelab bench --shape/--segments` times (g++ and nvcc read this; no CUDA types).
#include <cstdint>
#include <memory>

#include "lab/bench_calls.hpp"

namespace rl::lab::bench {

// cub::DeviceSegmentedReduce over device offsets begin/end, writing result_bytes(e, op) per
// segment to `output`; temporary storage allocated here. CUDA builds only (bench_shapes_cub.cu).
std::unique_ptr<Call> make_cub_segmented_call(Dtype e, OpKind op, const void* input, std::size_t count,
                                              const std::int64_t* begin, const std::int64_t* end, void* output,
                                              void* stream);

}  // namespace rl::lab::bench
