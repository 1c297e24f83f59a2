#pragma once
// What `reducelab bench` times, one object per implementation and case: the calls it makes
// (reducelab::reduce, CUB, thrust). Read by g++ (bench_*.cpp) and by nvcc (bench_cub.cu,
// bench_thrust.cu, bench_shapes_cub.cu), so it carries no JSON and no CUDA types.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/dtype.hpp"
#include "core/ops.hpp"
#include "reducelab/reduce.hpp"
#include "reducelab/types.hpp"

namespace rl::lab {
class Device;
}

namespace rl::lab::bench {

using core::Dtype;
using core::OpKind;

// One implementation's reduction of one input, set up outside the timed region (temporary
// storage allocated, sizes queried): operator() enqueues exactly what is timed.
class Call {
 public:
  virtual ~Call() = default;
  virtual void operator()() = 0;
};

// CUB and thrust are instantiated for int32, float and double x sum, min, max, and for half
// and bf16 sums only (keeps their compile time small).
bool vendor_has(Dtype e, OpKind op);

// cub::DeviceReduce writing the result to `result` (device memory, result_bytes(e, op)).
// Sums: DeviceReduce::Sum where element and accumulator agree (float, double), otherwise
// DeviceReduce::Reduce with the accumulator as initial value (int32 -> int64, half/bf16 ->
// float), so CUB reads the same bytes and returns the same type as reducelab. Temp storage is
// allocated here, once. CUDA builds only (bench_cub.cu).
std::unique_ptr<Call> make_cub_call(Dtype e, OpKind op, const void* input, std::size_t n, void* result,
                                    void* stream);
// thrust::reduce(thrust::cuda::par.on(stream), ...) with the same accumulator as CUB. It returns
// the value to the host: it is written to host_result. Thrust allocates its temporary storage
// and copies the result back on every call, and that is part of what is timed: it is what a
// caller of thrust::reduce pays. CUDA builds only (bench_thrust.cu).
std::unique_ptr<Call> make_thrust_call(Dtype e, OpKind op, const void* input, std::size_t n, void* host_result,
                                       void* stream);
// Enqueues an empty kernel <<<1, 1>>> on `stream`: what each timing mode's floor times.
void launch_empty_kernel(void* stream);
// "CUDA runtime 13.0, driver 13.0".
std::string cuda_versions();

// reducelab::reduce with default Options (deterministic) or Options{.deterministic = false};
// bench_reducelab.cpp.
std::unique_ptr<Call> make_reducelab_call(Dtype e, OpKind op, const void* input, std::size_t n, void* result,
                                          void* stream, bool deterministic);
// reducelab::cpu::reduce into host memory (result_bytes(e, op) bytes); threads 0 = all cores.
void cpu_reduce(Dtype e, OpKind op, const void* input, std::size_t n, void* result, unsigned threads = 0);

}  // namespace rl::lab::bench
