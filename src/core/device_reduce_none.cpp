// A build without CUDA: the GPU entry points exist and say why they cannot run.
#include "reducelab/reduce.hpp"

namespace reducelab {

Status gpu_available() { return Status(Errc::no_device, "reducelab was built without the CUDA backend"); }

template <class T, class Op>
Status reduce(const T*, std::uint64_t, Op, result_t<T, Op>*, stream_t, const Options&) {
  return gpu_available();
}
template <class T, class Op>
Result<result_t<T, Op>> reduce_to_host(const T*, std::uint64_t, Op, stream_t) {
  Result<result_t<T, Op>> r;
  r.status = gpu_available();
  return r;
}

#define REDUCELAB_NONE_(T, OP)                                                                    \
  template Status reduce<T, op::OP>(const T*, std::uint64_t, op::OP, result_t<T, op::OP>*, stream_t, \
                                    const Options&);                                             \
  template Result<result_t<T, op::OP>> reduce_to_host<T, op::OP>(const T*, std::uint64_t, op::OP, stream_t);
#define REDUCELAB_NONE_TYPE_(T) REDUCELAB_FOR_EACH_OP(REDUCELAB_NONE_, T)
REDUCELAB_FOR_EACH_TYPE(REDUCELAB_NONE_TYPE_)

}  // namespace reducelab
