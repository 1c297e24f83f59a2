// A build without CUDA: reduce_axis and reduce_segments on the GPU say why they cannot run.
#include "reducelab/segments.hpp"

namespace reducelab {

template <class T, class Op>
Status reduce_axis(const T*, Matrix, int, Op, result_t<T, Op>*, stream_t, const Options&) {
  return gpu_available();
}
template <class T, class Op>
Status reduce_segments(const T*, std::uint64_t, const std::int64_t*, const std::int64_t*, Op, result_t<T, Op>*,
                       stream_t, const Options&) {
  return gpu_available();
}

#define REDUCELAB_SEGMENTS_NONE_(T, OP)                                                                     \
  template Status reduce_axis<T, op::OP>(const T*, Matrix, int, op::OP, result_t<T, op::OP>*, stream_t,    \
                                         const Options&);                                                 \
  template Status reduce_segments<T, op::OP>(const T*, std::uint64_t, const std::int64_t*, const std::int64_t*, \
                                             op::OP, result_t<T, op::OP>*, stream_t, const Options&);
#define REDUCELAB_SEGMENTS_NONE_TYPE_(T) REDUCELAB_FOR_EACH_OP(REDUCELAB_SEGMENTS_NONE_, T)
REDUCELAB_FOR_EACH_TYPE(REDUCELAB_SEGMENTS_NONE_TYPE_)

}  // namespace reducelab
