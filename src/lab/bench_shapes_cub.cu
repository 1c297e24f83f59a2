// The CUB rows of `reducelab bench --shape/--segments`: cub::DeviceSegmentedReduce over
// begin/end offsets, for the cases CUB is instantiated for in bench (vendor_has): int32, float,
// double x every lab op; half and bf16 sums into float.
#include <cuda_runtime.h>

#include <algorithm>
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda/std/functional>
#include <type_traits>

#include "lab/bench_shapes_calls.hpp"
#include "lab/bench_vendor.cuh"
#include "simt/portable.cuh"

namespace rl::lab::bench {
namespace {

template <class In, class Out, OpKind K>
cudaError_t cub_segmented(void* temp, std::size_t& bytes, const In* in, Out* out, std::size_t count,
                          const std::int64_t* begin, const std::int64_t* end, cudaStream_t stream) {
  const auto segments = static_cast<::cuda::std::int64_t>(count);
  if constexpr (K == OpKind::sum) {
    if constexpr (std::is_same_v<In, Out>)
      return cub::DeviceSegmentedReduce::Sum(temp, bytes, in, out, segments, begin, end, stream);
    else
      return cub::DeviceSegmentedReduce::Reduce(temp, bytes, in, out, segments, begin, end, ::cuda::std::plus<Out>{},
                                                Out(0), stream);
  } else if constexpr (K == OpKind::min) {
    return cub::DeviceSegmentedReduce::Min(temp, bytes, in, out, segments, begin, end, stream);
  } else if constexpr (K == OpKind::max) {
    return cub::DeviceSegmentedReduce::Max(temp, bytes, in, out, segments, begin, end, stream);
  } else {  // an op CUB has no entry point for: its combine and identity
    using Op = core::combine_t<K, Out>;
    return cub::DeviceSegmentedReduce::Reduce(temp, bytes, in, out, segments, begin, end, Op{}, Op::identity(),
                                              stream);
  }
}

template <class In, class Out, OpKind K>
class CubSegmentedCall final : public Call {
 public:
  CubSegmentedCall(const void* input, std::size_t count, const std::int64_t* begin, const std::int64_t* end,
                   void* output, void* stream)
      : in_(static_cast<const In*>(input)), out_(static_cast<Out*>(output)), count_(count), begin_(begin),
        end_(end), stream_(static_cast<cudaStream_t>(stream)) {
    RL_CUDA_CHECK((cub_segmented<In, Out, K>(nullptr, bytes_, in_, out_, count_, begin_, end_, stream_)));
    RL_CUDA_CHECK(cudaMalloc(&temp_, std::max<std::size_t>(bytes_, 1)));
  }
  ~CubSegmentedCall() override { cudaFree(temp_); }
  void operator()() override {
    std::size_t bytes = bytes_;
    RL_CUDA_CHECK((cub_segmented<In, Out, K>(temp_, bytes, in_, out_, count_, begin_, end_, stream_)));
    RL_CUDA_CHECK(cudaGetLastError());
  }

 private:
  const In* in_;
  Out* out_;
  std::size_t count_;
  const std::int64_t* begin_;
  const std::int64_t* end_;
  cudaStream_t stream_;
  void* temp_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace

std::unique_ptr<Call> make_cub_segmented_call(Dtype e, OpKind op, const void* input, std::size_t count,
                                              const std::int64_t* begin, const std::int64_t* end, void* output,
                                              void* stream) {
  return with_vendor_case(e, op, [&]<class In, class Out, OpKind K>() -> std::unique_ptr<Call> {
    return std::make_unique<CubSegmentedCall<In, Out, K>>(input, count, begin, end, output, stream);
  });
}

}  // namespace rl::lab::bench
