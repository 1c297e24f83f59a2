#pragma once
// The operations the lab knows, described once, beside the library's tags (reducelab::op::sum,
// ...): the CLI, the lab, the gallery, bench and the `reduce` command read this table. Adding an
// operation is adding a row to RL_OP_TABLE (and a case to tests/core/names_test.cpp): a LIB row
// is an operation of the library only; a LAB row is one the gallery's kernels and bench also
// run, and it carries what they need: the identity and the combine. Everything a kernel does
// with an op is built from those two: the shared-memory and shuffle trees call the combine, and
// an atomic into the result is a compare-and-swap loop around it (gallery/atomic.cuh). The
// hardware's own instructions (atomicAdd, atomicMin, __reduce_add_sync, CUB's Sum/Min/Max) are
// used where a row's id has one, as a faster path to the same value.
// Read by g++ and by nvcc (the gallery's dispatch).
#include <array>
#include <cstddef>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/dtype.hpp"
#include "reducelab/config.hpp"
#include "reducelab/reduce.hpp"

namespace rl::core {

// The identities of min and max: +-infinity where the type has it, else its extreme values.
template <class T>
RL_HD_INLINE constexpr T top() {
  return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
}
template <class T>
RL_HD_INLINE constexpr T bottom() {
  return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                              : std::numeric_limits<T>::lowest();
}

// One row per operation, in the order choices are listed:
//   X(id, lab, identity, combine)
// id: the library's tag reducelab::op::id and the name users type. lab: the gallery's kernels
// and bench run it too, and the row then carries what they need: `identity`, an expression of
// the value type T, and `combine`, an expression of two values a and b of type T (associative
// and commutative, PMPP 10.1). A row of the library only (lab = false) leaves both empty.
#define RL_OP_TABLE(X)                                     \
  X(sum, true, T(0), a + b)                                \
  X(prod, false, , )                                       \
  X(min, true, ::rl::core::top<T>(), b < a ? b : a)        \
  X(max, true, ::rl::core::bottom<T>(), b > a ? b : a)     \
  X(mean, false, , )                                       \
  X(argmin, false, , )                                     \
  X(argmax, false, , )

enum class OpKind {
#define RL_OP_ENUM_(id, lab, ...) id,
  RL_OP_TABLE(RL_OP_ENUM_)
#undef RL_OP_ENUM_
};

struct OpInfo {
  OpKind id;
  std::string_view name;
  bool lab;  // the gallery and bench run it (a Combine exists)
};

inline constexpr OpInfo kOps[] = {
#define RL_OP_INFO_(id, lab, ...) OpInfo{OpKind::id, #id, lab},
    RL_OP_TABLE(RL_OP_INFO_)
#undef RL_OP_INFO_
};

constexpr const OpInfo& info(OpKind op) { return kOps[static_cast<std::size_t>(op)]; }
constexpr std::string_view name(OpKind op) { return info(op).name; }

// The row of a library tag: op_of<reducelab::op::max> is OpKind::max.
template <class Tag>
struct op_of_;
#define RL_OP_OF_(id, lab, ...)                       \
  template <>                                    \
  struct op_of_<::reducelab::op::id> {           \
    static constexpr OpKind value = OpKind::id;  \
  };
RL_OP_TABLE(RL_OP_OF_)
#undef RL_OP_OF_
template <class Tag>
inline constexpr OpKind op_of = op_of_<Tag>::value;

// Calls f.template operator()<Tag>() with the library's tag for op (reducelab::op::sum, ...).
template <class F>
constexpr decltype(auto) with_op(OpKind op, F&& f) {
  switch (op) {
#define RL_OP_CASE_(id, lab, ...) \
  case OpKind::id: return f.template operator()<::reducelab::op::id>();
    RL_OP_TABLE(RL_OP_CASE_)
#undef RL_OP_CASE_
  }
  throw std::invalid_argument("unknown op");
}

// The same over the lab's rows only (f is instantiated for those tags alone).
template <class F>
constexpr decltype(auto) with_lab_op(OpKind op, F&& f) {
  switch (op) {
#define RL_LAB_OP_CASE_(id, lab, ...)                                                   \
  case OpKind::id:                                                                 \
    if constexpr (lab) return f.template operator()<::reducelab::op::id>();        \
    break;
    RL_OP_TABLE(RL_LAB_OP_CASE_)
#undef RL_LAB_OP_CASE_
  }
  throw std::invalid_argument("the lab does not run " + std::string(name(op)));
}

// Calls f.template operator()<Tag>() for every lab row in table order (the rows' folds in
// core::Exact, ...).
template <class F>
constexpr void for_each_lab_op(F&& f) {
#define RL_FOR_LAB_OP_(id, lab, ...) \
  if constexpr (lab) f.template operator()<::reducelab::op::id>();
  RL_OP_TABLE(RL_FOR_LAB_OP_)
#undef RL_FOR_LAB_OP_
}

inline constexpr auto kAllOps = ids_where<kOps>();
inline constexpr auto kLabOps = ids_where<kOps, &OpInfo::lab>();

// A name as users type it, in any case; with lab_only, only the lab's rows.
std::optional<OpKind> parse_op(std::string_view typed, bool lab_only = false);
// "sum, min, max" (lab_only) or every name, for error messages.
std::string op_choices(bool lab_only = false);

// What a lab operation returns for element type d: the library's result type (sums: the
// accumulator, min and max: the element), as a row of the dtype table.
constexpr Dtype result_dtype(Dtype d, OpKind op) {
  return with_dtype(d, [op]<class T>() {
    return with_lab_op(op, [&]<class Tag>() { return dtype_of<::reducelab::result_t<T, Tag>>; });
  });
}
constexpr std::size_t result_bytes(Dtype d, OpKind op) { return size_of(result_dtype(d, op)); }

// The kernels' combine of a lab operation over a value type, made from its row: an associative,
// commutative operator() with an identity. A class template over its value type so that call
// sites convert their arguments (the SIMT backend hands kernels proxy references, which a
// deduced template would reject). `kind` is the row, for the faster paths keyed off it.
template <class Tag, class T>
struct Combine;

#define RL_OP_COMBINE_true(id, identity_, ...)                              \
  template <class T>                                                        \
  struct Combine<::reducelab::op::id, T> {                                  \
    using value_type = T;                                                   \
    static constexpr OpKind kind = OpKind::id;                              \
    RL_HD_INLINE static constexpr T identity() { return identity_; }        \
    RL_HD_INLINE T operator()(T a, T b) const { return __VA_ARGS__; }       \
  };
#define RL_OP_COMBINE_false(id, ...)
#define RL_OP_COMBINE_(id, lab, ...) RL_OP_COMBINE_##lab(id, __VA_ARGS__)
RL_OP_TABLE(RL_OP_COMBINE_)
#undef RL_OP_COMBINE_
#undef RL_OP_COMBINE_false
#undef RL_OP_COMBINE_true

// The library's tag of a row: tag_t<OpKind::max> is reducelab::op::max.
template <OpKind K>
struct tag_of_;
#define RL_OP_TAG_(id, lab, ...)           \
  template <>                              \
  struct tag_of_<OpKind::id> {             \
    using type = ::reducelab::op::id;      \
  };
RL_OP_TABLE(RL_OP_TAG_)
#undef RL_OP_TAG_
template <OpKind K>
using tag_t = typename tag_of_<K>::type;

// The combine of a lab row over T: combine_t<OpKind::min, float> is Combine<op::min, float>.
template <OpKind K, class T>
using combine_t = Combine<tag_t<K>, T>;

template <class T>
using Sum = Combine<::reducelab::op::sum, T>;
template <class T>
using Min = Combine<::reducelab::op::min, T>;
template <class T>
using Max = Combine<::reducelab::op::max, T>;

}  // namespace rl::core
