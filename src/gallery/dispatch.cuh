#pragma once
// (dtype, op, accumulate) -> one instantiation of a launcher template <In, Acc, Op>.
//
// Every binding goes through RL_GALLERY_BIND, so each kernel is instantiated exactly for the
// gallery's rows of the dtype table (core/dtype.hpp) times the lab's rows of the op table
// (core/ops.hpp), the op as its core::Combine over Acc:
//   integers + Accumulate::wide -> Acc = long long  (int32: cannot overflow)
//   integers + Accumulate::wrap -> Acc = In         (the textbook's int; wraps mod 2^32)
//   floating point              -> Acc = In
#include <stdexcept>

#include "gallery/common.cuh"

namespace rl::gallery::inline RL_GALLERY_BACKEND {

// Calls f.template operator()<In, Acc, Op>() for the types `a` asks for.
template <class F>
void dispatch(const LaunchArgs& a, F&& f) {
  core::with_gallery_dtype(a.dtype, [&]<class In>() {
    core::with_lab_op(a.op, [&]<class Tag>() {
      if constexpr (std::is_integral_v<In>) {
        if (a.accumulate == Accumulate::wrap) return f.template operator()<In, In, core::Combine<Tag, In>>();
        return f.template operator()<In, long long, core::Combine<Tag, long long>>();
      } else {
        return f.template operator()<In, In, core::Combine<Tag, In>>();
      }
    });
  });
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
