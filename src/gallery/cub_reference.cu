// The reference row: CUB's cub::DeviceReduce (CUDA only; compiled by nvcc into
// reducelab_gallery_cuda). Not a textbook kernel: the library baseline every gallery kernel is
// measured against, on the same device in the same process.
//
// DeviceReduce::Sum / Min / Max where the input and accumulator types agree, DeviceReduce::Reduce
// with the op's combine and identity otherwise (int32 accumulated as int64, an op CUB has no
// entry point for). Temp storage is carved from the launcher's scratch: the registry declares
// cub_scratch_bound(n) bytes (geometry.hpp; its entry: cub_reference.hpp), the launcher queries
// CUB's exact need and throws if the bound is short.
#include <cub/device/device_reduce.cuh>

#include <string>
#include <type_traits>

#include "gallery/bind.hpp"
#include "gallery/common.cuh"
#include "gallery/cub_reference.hpp"
#include "gallery/dispatch.cuh"

namespace rl::gallery {
namespace {

template <class In, class Acc, class Op>
cudaError_t cub_reduce(void* temp, std::size_t& temp_bytes, const In* in, Acc* out, std::size_t n,
                       cudaStream_t stream) {
  using core::OpKind;
  constexpr bool same = std::is_same_v<In, Acc>;
  if constexpr (same && Op::kind == OpKind::sum)
    return cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, stream);
  else if constexpr (same && Op::kind == OpKind::min)
    return cub::DeviceReduce::Min(temp, temp_bytes, in, out, n, stream);
  else if constexpr (same && Op::kind == OpKind::max)
    return cub::DeviceReduce::Max(temp, temp_bytes, in, out, n, stream);
  else  // a wider accumulator, or an op CUB has no entry point for: the op's combine and identity
    return cub::DeviceReduce::Reduce(temp, temp_bytes, in, out, n, Op{}, Op::identity(), stream);
}

template <class In, class Acc, class Op>
void launch_cub(const LaunchArgs& a) {
  if (a.n == 0) throw std::invalid_argument("cub::DeviceReduce: n must be at least 1");
  const auto stream = static_cast<cudaStream_t>(a.stream);
  const In* in = dev_const<In>(a.input);
  Acc* out = dev<Acc>(a.result);
  std::size_t need = 0;
  RL_CUDA_CHECK((cub_reduce<In, Acc, Op>(nullptr, need, in, out, a.n, stream)));  // size query only
  const std::size_t have = cub_scratch_bound(a.n, sizeof(Acc));
  if (need > have)
    throw std::runtime_error("cub::DeviceReduce needs " + std::to_string(need) +
                             " bytes of temp storage at n=" + std::to_string(a.n) + ", the registry declares " +
                             std::to_string(have) + " (raise cub_scratch_bound in gallery/geometry.hpp)");
  RL_CUDA_CHECK((cub_reduce<In, Acc, Op>(a.scratch, need, in, out, a.n, stream)));
  RL_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

std::vector<Binding> cuda_cub_bindings() { return {RL_GALLERY_BIND(launch_cub, {kCubEntry})}; }

}  // namespace rl::gallery
