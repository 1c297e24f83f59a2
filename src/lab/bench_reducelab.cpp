// The reducelab rows of `reducelab bench`: reducelab::reduce on the GPU (default Options, and
// Options{.deterministic = false} for the order-costs-nothing comparison) and
// reducelab::cpu::reduce for --backend cpu.

#include "lab/bench_calls.hpp"
#include "reducelab/reduce.hpp"

namespace rl::lab::bench {

namespace {

template <class T, class Op>
class ReducelabCall final : public Call {
 public:
  ReducelabCall(const void* input, std::size_t n, void* result, void* stream, bool deterministic)
      : input_(static_cast<const T*>(input)),
        n_(n),
        result_(static_cast<reducelab::result_t<T, Op>*>(result)),
        stream_(static_cast<reducelab::stream_t>(stream)) {
    options_.deterministic = deterministic;
  }
  void operator()() override {
    const reducelab::Status st = reducelab::reduce(input_, n_, Op{}, result_, stream_, options_);
    if (!st) throw std::runtime_error("reducelab::reduce: " + st.message());
  }

 private:
  const T* input_;
  std::uint64_t n_;
  reducelab::result_t<T, Op>* result_;
  reducelab::stream_t stream_;
  reducelab::Options options_;
};

}  // namespace

std::unique_ptr<Call> make_reducelab_call(Dtype e, OpKind op, const void* input, std::size_t n, void* result,
                                          void* stream, bool deterministic) {
  return core::with_dtype(e, [&]<class T>() {
    return core::with_lab_op(op, [&]<class Op>() -> std::unique_ptr<Call> {
      return std::make_unique<ReducelabCall<T, Op>>(input, n, result, stream, deterministic);
    });
  });
}

void cpu_reduce(Dtype e, OpKind op, const void* input, std::size_t n, void* result, unsigned threads) {
  core::with_dtype(e, [&]<class T>() {
    core::with_lab_op(op, [&]<class Op>() {
      const auto r = reducelab::cpu::reduce(static_cast<const T*>(input), n, Op{}, threads);
      if (!r) throw std::runtime_error(r.status.message());
      *static_cast<reducelab::result_t<T, Op>*>(result) = r.value;
    });
  });
}


}  // namespace rl::lab::bench
