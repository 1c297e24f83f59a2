#pragma once
// What `reducelab bench` times, one object per implementation and case: the element types it
// sweeps, and the calls it makes (reducelab::reduce, CUB, thrust). Read by g++ (bench.cpp,
// bench_reducelab.cpp) and by nvcc (bench_cub.cu, bench_thrust.cu), so it carries no JSON and
// no CUDA types.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "reducelab/ops.hpp"
#include "reducelab/reduce.hpp"
#include "reducelab/types.hpp"

namespace rl::lab {
class Device;
}

namespace rl::lab::bench {

using reducelab::OpKind;

// Calls f.template operator()<Op>() with the library's tag for a bench operation.
template <class F>
decltype(auto) with_op(OpKind op, F&& f) {
  switch (op) {
    case OpKind::sum: return f.template operator()<reducelab::op::sum>();
    case OpKind::min: return f.template operator()<reducelab::op::min>();
    case OpKind::max: break;
  }
  return f.template operator()<reducelab::op::max>();
}

// The element types of the library (reducelab/reduce.hpp), as the bench names them.
enum class Elem { int8, int16, int32, int64, uint8, uint16, uint32, uint64, half, bf16, float32, float64 };
inline constexpr Elem kAllElems[] = {Elem::int8,   Elem::int16,  Elem::int32, Elem::int64,
                                     Elem::uint8,  Elem::uint16, Elem::uint32, Elem::uint64,
                                     Elem::half,   Elem::bf16,   Elem::float32, Elem::float64};

constexpr std::string_view name(Elem e) {
  switch (e) {
    case Elem::int8: return "int8";
    case Elem::int16: return "int16";
    case Elem::int32: return "int32";
    case Elem::int64: return "int64";
    case Elem::uint8: return "uint8";
    case Elem::uint16: return "uint16";
    case Elem::uint32: return "uint32";
    case Elem::uint64: return "uint64";
    case Elem::half: return "half";
    case Elem::bf16: return "bf16";
    case Elem::float32: return "float";
    case Elem::float64: return "double";
  }
  return "?";
}

constexpr bool is_floating(Elem e) {
  return e == Elem::half || e == Elem::bf16 || e == Elem::float32 || e == Elem::float64;
}

// Calls f.template operator()<T>() with the library's C++ type for e.
template <class F>
constexpr decltype(auto) with_elem(Elem e, F&& f) {
  switch (e) {
    case Elem::int8: return f.template operator()<std::int8_t>();
    case Elem::int16: return f.template operator()<std::int16_t>();
    case Elem::int32: return f.template operator()<std::int32_t>();
    case Elem::int64: return f.template operator()<std::int64_t>();
    case Elem::uint8: return f.template operator()<std::uint8_t>();
    case Elem::uint16: return f.template operator()<std::uint16_t>();
    case Elem::uint32: return f.template operator()<std::uint32_t>();
    case Elem::uint64: return f.template operator()<std::uint64_t>();
    case Elem::half: return f.template operator()<reducelab::half>();
    case Elem::bf16: return f.template operator()<reducelab::bfloat16>();
    case Elem::float32: return f.template operator()<float>();
    case Elem::float64: break;
  }
  return f.template operator()<double>();
}

constexpr std::size_t size_of(Elem e) {
  switch (e) {
    case Elem::int8: case Elem::uint8: return 1;
    case Elem::int16: case Elem::uint16: case Elem::half: case Elem::bf16: return 2;
    case Elem::int32: case Elem::uint32: case Elem::float32: return 4;
    case Elem::int64: case Elem::uint64: case Elem::float64: return 8;
  }
  return 0;
}

// Bytes of the value an (element, op) reduces to: the accumulator type for sums (integers ->
// 64 bits, half/bf16 -> float, float, double), the element itself for min and max.
constexpr std::size_t result_bytes(Elem e, OpKind op) {
  if (op != OpKind::sum) return size_of(e);
  return e == Elem::half || e == Elem::bf16 || e == Elem::float32 ? 4 : 8;
}

// One implementation's reduction of one input, set up outside the timed region (temporary
// storage allocated, sizes queried): operator() enqueues exactly what is timed.
class Call {
 public:
  virtual ~Call() = default;
  virtual void operator()() = 0;
};

// CUB and thrust are instantiated for int32, float and double x sum, min, max, and for half
// and bf16 sums only (keeps their compile time small).
bool vendor_has(Elem e, OpKind op);

// cub::DeviceReduce writing the result to `result` (device memory, result_bytes(e, op)).
// Sums: DeviceReduce::Sum where element and accumulator agree (float, double), otherwise
// DeviceReduce::Reduce with the accumulator as initial value (int32 -> int64, half/bf16 ->
// float), so CUB reads the same bytes and returns the same type as reducelab. Temp storage is
// allocated here, once. CUDA builds only (bench_cub.cu).
std::unique_ptr<Call> make_cub_call(Elem e, OpKind op, const void* input, std::size_t n, void* result,
                                    void* stream);
// thrust::reduce(thrust::cuda::par.on(stream), ...) with the same accumulator as CUB. It returns
// the value to the host: it is written to host_result. Thrust allocates its temporary storage
// and copies the result back on every call, and that is part of what is timed: it is what a
// caller of thrust::reduce pays. CUDA builds only (bench_thrust.cu).
std::unique_ptr<Call> make_thrust_call(Elem e, OpKind op, const void* input, std::size_t n, void* host_result,
                                       void* stream);
// Enqueues an empty kernel <<<1, 1>>> on `stream`: what each timing mode's floor times.
void launch_empty_kernel(void* stream);
// "CUDA runtime 13.0, driver 13.0".
std::string cuda_versions();

// reducelab::reduce with default Options (deterministic) or Options{.deterministic = false};
// bench_reducelab.cpp.
std::unique_ptr<Call> make_reducelab_call(Elem e, OpKind op, const void* input, std::size_t n, void* result,
                                          void* stream, bool deterministic);
// reducelab::cpu::reduce into host memory (result_bytes(e, op) bytes); threads 0 = all cores.
void cpu_reduce(Elem e, OpKind op, const void* input, std::size_t n, void* result, unsigned threads = 0);

}  // namespace rl::lab::bench
