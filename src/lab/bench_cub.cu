// The CUB rows of `reducelab bench`, the empty kernel its floors time, and the CUDA versions for the header.
//
// Instantiated for int32, float and double x every lab op, and half and bf16 sums (vendor_has).
// Min and max are DeviceReduce::Min and Max; an op without an entry point of its own is
// DeviceReduce::Reduce with its core::Combine and identity.
// Sums return reducelab's accumulator type: DeviceReduce::Sum where it is the element type
// (float, double), DeviceReduce::Reduce with cuda::std::plus<Acc> and Acc(0) where it is wider
// (int32 -> int64, half/bf16 -> float). CUB still reads the elements as they are stored, so it
// moves the same bytes as reducelab. Note that reducelab carries float sums in double inside
// the reduction; CUB's float Sum accumulates in float.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <string>
#include <type_traits>
#include <vector>

#include "lab/bench_calls.hpp"
#include "lab/bench_vendor.cuh"
#include "lab/device.hpp"
#include "reducelab/detail/agent_reduce.cuh"  // the kernels' half of the launch protocol
#include "reducelab/detail/launch.cuh"
#include "simt/portable.cuh"

namespace rl::lab::bench {
namespace {

template <class In, class Out, OpKind K>
cudaError_t cub_reduce(void* temp, std::size_t& temp_bytes, const In* in, Out* out, std::size_t n,
                       cudaStream_t stream) {
  if constexpr (K == OpKind::sum) {
    if constexpr (std::is_same_v<In, Out>)
      return cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, stream);
    else
      return cub::DeviceReduce::Reduce(temp, temp_bytes, in, out, n, cuda::std::plus<Out>{}, Out(0), stream);
  } else if constexpr (K == OpKind::min) {
    return cub::DeviceReduce::Min(temp, temp_bytes, in, out, n, stream);
  } else if constexpr (K == OpKind::max) {
    return cub::DeviceReduce::Max(temp, temp_bytes, in, out, n, stream);
  } else {  // an op CUB has no entry point for: its combine and identity
    using Op = core::combine_t<K, Out>;
    return cub::DeviceReduce::Reduce(temp, temp_bytes, in, out, n, Op{}, Op::identity(), stream);
  }
}

template <class In, class Out, OpKind K>
class CubCall final : public Call {
 public:
  CubCall(const void* input, std::size_t n, void* result, void* stream)
      : in_(static_cast<const In*>(input)),
        out_(static_cast<Out*>(result)),
        n_(n),
        stream_(static_cast<cudaStream_t>(stream)) {
    RL_CUDA_CHECK((cub_reduce<In, Out, K>(nullptr, temp_bytes_, in_, out_, n_, stream_)));  // size query
    RL_CUDA_CHECK(cudaMalloc(&temp_, std::max<std::size_t>(temp_bytes_, 1)));
  }
  ~CubCall() override { cudaFree(temp_); }
  void operator()() override {
    std::size_t bytes = temp_bytes_;
    RL_CUDA_CHECK((cub_reduce<In, Out, K>(temp_, bytes, in_, out_, n_, stream_)));
    RL_CUDA_CHECK(cudaGetLastError());
  }

 private:
  const In* in_;
  Out* out_;
  std::size_t n_;
  cudaStream_t stream_;
  void* temp_ = nullptr;
  std::size_t temp_bytes_ = 0;
};

// The floor's kernel does nothing, but takes part in the library's launch protocol (launched by
// its launch_kernel, letting the next kernel start at once, then waiting for the one before), so
// back-to-back floors overlap at least as much as back-to-back reduces do; launched plainly,
// batch rows came out faster than their floor (%limit up to 176%).
__global__ void empty_kernel() {
  reducelab::detail::let_consumer_start();
  reducelab::detail::wait_for_producer();
}

}  // namespace

std::unique_ptr<Call> make_cub_call(Dtype e, OpKind op, const void* input, std::size_t n, void* result,
                                    void* stream) {
  return with_vendor_case(e, op, [&]<class In, class Out, OpKind K>() -> std::unique_ptr<Call> {
    return std::make_unique<CubCall<In, Out, K>>(input, n, result, stream);
  });
}

void launch_empty_kernel(void* stream) {
  RL_CUDA_CHECK(reducelab::detail::launch_kernel(empty_kernel, 1, static_cast<cudaStream_t>(stream)));
}

std::string cuda_versions() {
  int runtime = 0, driver = 0;
  RL_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  RL_CUDA_CHECK(cudaDriverGetVersion(&driver));
  auto text = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  return "CUDA runtime " + text(runtime) + ", driver " + text(driver);
}

}  // namespace rl::lab::bench
