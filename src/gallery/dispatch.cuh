#pragma once
// (dtype, op, accumulate) -> one instantiation of a launcher template <In, Acc, Op>.
//
// The only switch over types in the gallery: every binding goes through RL_GALLERY_BIND, so each
// kernel is instantiated exactly for
//   int32 + Accumulate::wide -> In = int,    Acc = long long   (cannot overflow)
//   int32 + Accumulate::wrap -> In = int,    Acc = int         (the textbook's int; wraps mod 2^32)
//   float                    -> In = float,  Acc = float
//   double                   -> In = double, Acc = double
// times the ops Sum, Min, Max of reducelab/ops.hpp over Acc.
#include <stdexcept>

#include "gallery/common.cuh"

namespace rl::gallery::inline RL_GALLERY_BACKEND {

template <class In, class Acc, class F>
void dispatch_op(OpKind op, F& f) {
  switch (op) {
    case OpKind::sum: return f.template operator()<In, Acc, reducelab::Sum<Acc>>();
    case OpKind::min: return f.template operator()<In, Acc, reducelab::Min<Acc>>();
    case OpKind::max: return f.template operator()<In, Acc, reducelab::Max<Acc>>();
  }
  throw std::invalid_argument("gallery: unknown op");
}

// Calls f.template operator()<In, Acc, Op>() for the types `a` asks for.
template <class F>
void dispatch(const LaunchArgs& a, F&& f) {
  switch (a.dtype) {
    case Dtype::int32:
      if (a.accumulate == Accumulate::wrap) return dispatch_op<int, int>(a.op, f);
      return dispatch_op<int, long long>(a.op, f);
    case Dtype::float32: return dispatch_op<float, float>(a.op, f);
    case Dtype::float64: return dispatch_op<double, double>(a.op, f);
  }
  throw std::invalid_argument("gallery: unknown dtype");
}

}  // namespace rl::gallery::inline RL_GALLERY_BACKEND

// One gallery entry, declared beside its kernel: RL_GALLERY_BIND(launcher, {.id = ..., ...})
// is a Binding of the registry Entry given as designated initializers and a launcher that calls
// the template `launcher<In, Acc, Op>` dispatched on the LaunchArgs. The lambda is captureless,
// so it converts to the plain function pointer LaunchFn.
#define RL_GALLERY_BIND(launcher, ...)                                                   \
  ::rl::gallery::Binding {                                                               \
    ::rl::gallery::Entry __VA_ARGS__, [](const ::rl::gallery::LaunchArgs& rl_args_) {    \
      ::rl::gallery::dispatch(rl_args_, [&]<class In_, class Acc_, class Op_>() {        \
        launcher<In_, Acc_, Op_>(rl_args_);                                              \
      });                                                                                \
    }                                                                                    \
  }
