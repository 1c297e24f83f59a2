// The thrust rows of `reducelab bench`: thrust::reduce(thrust::cuda::par.on(stream), ...) with
// the same accumulator as the CUB rows (bench_cub.cu). thrust::reduce returns the value to the
// host, so each call allocates temporary storage (its default allocator: cudaMalloc and
// cudaFree), launches, copies the result back and synchronises. The timed region holds all of
// that; it is the cost of calling thrust::reduce, not only of its kernels.
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>

#include <cstring>
#include <cuda/functional>
#include <cuda/std/functional>

#include "lab/bench_calls.hpp"
#include "lab/bench_vendor.cuh"
#include "simt/portable.cuh"

namespace rl::lab::bench {
namespace {

template <class In, class Out, OpKind K>
class ThrustCall final : public Call {
 public:
  ThrustCall(const void* input, std::size_t n, void* host_result, void* stream)
      : in_(static_cast<const In*>(input)), n_(n), out_(host_result), stream_(static_cast<cudaStream_t>(stream)) {}
  void operator()() override {
    const auto policy = thrust::cuda::par.on(stream_);
    Out value;
    if constexpr (K == OpKind::sum)
      value = thrust::reduce(policy, in_, in_ + n_, Out(0), cuda::std::plus<Out>{});
    else if constexpr (K == OpKind::min)
      value = thrust::reduce(policy, in_, in_ + n_, core::top<Out>(), cuda::minimum<Out>{});
    else if constexpr (K == OpKind::max)
      value = thrust::reduce(policy, in_, in_ + n_, core::bottom<Out>(), cuda::maximum<Out>{});
    else  // an op without a functor of thrust's own: its combine and identity
      value = thrust::reduce(policy, in_, in_ + n_, core::combine_t<K, Out>::identity(), core::combine_t<K, Out>{});
    RL_CUDA_CHECK(cudaGetLastError());
    std::memcpy(out_, &value, sizeof value);
  }

 private:
  const In* in_;
  std::size_t n_;
  void* out_;
  cudaStream_t stream_;
};

}  // namespace

std::unique_ptr<Call> make_thrust_call(Dtype e, OpKind op, const void* input, std::size_t n, void* host_result,
                                       void* stream) {
  return with_vendor_case(e, op, [&]<class In, class Out, OpKind K>() -> std::unique_ptr<Call> {
    return std::make_unique<ThrustCall<In, Out, K>>(input, n, host_result, stream);
  });
}

}  // namespace rl::lab::bench
