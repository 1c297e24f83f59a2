#pragma once
// The element types the lab knows, described once: the CLI, the lab, the gallery, bench and the
// `reduce` command all read this table. Adding an element type is adding a row to
// RL_DTYPE_TABLE (and a case to tests/core/names_test.cpp); everything below is derived from it.
// Read by g++ and by nvcc (the gallery's dispatch), so it holds no JSON and no CUDA types.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "reducelab/types.hpp"

namespace rl::core {

// One row per element type, in the order choices are listed:
//   X(id, C++ type, name as printed, other names users may type (space-separated),
//     NumPy's type code ("" where NumPy has none), gallery)
// `gallery`: the textbook kernels are instantiated for it (with_gallery_dtype).
// Size, accumulator and integer-or-floating are the library's (reducelab/types.hpp).
#define RL_DTYPE_TABLE(X)                                                      \
  X(int8, std::int8_t, "int8", "", "i1", false)                                \
  X(int16, std::int16_t, "int16", "", "i2", false)                             \
  X(int32, std::int32_t, "int32", "int i32", "i4", true)                       \
  X(int64, std::int64_t, "int64", "", "i8", false)                             \
  X(uint8, std::uint8_t, "uint8", "", "u1", false)                             \
  X(uint16, std::uint16_t, "uint16", "", "u2", false)                          \
  X(uint32, std::uint32_t, "uint32", "", "u4", false)                          \
  X(uint64, std::uint64_t, "uint64", "", "u8", false)                          \
  X(half, ::reducelab::half, "half", "fp16 f16 float16", "f2", false)          \
  X(bf16, ::reducelab::bfloat16, "bf16", "bfloat16", "", false)                \
  X(float32, float, "float", "float32 f32", "f4", true)                         \
  X(float64, double, "double", "float64 f64", "f8", true)

enum class Dtype {
#define RL_DTYPE_ENUM_(id, T, name, aliases, numpy, gallery) id,
  RL_DTYPE_TABLE(RL_DTYPE_ENUM_)
#undef RL_DTYPE_ENUM_
};

struct DtypeInfo {
  Dtype id;
  std::string_view name;
  std::string_view aliases;    // space-separated
  std::string_view numpy;      // NumPy's kind and size ("f4"), without the byte-order mark
  std::size_t size;            // bytes of one element
  std::size_t sum_size;        // bytes of what a sum of it returns (reducelab::accumulate_t)
  bool integer;                // an integer type (else floating point)
  bool gallery;                // the textbook kernels take it
};

inline constexpr DtypeInfo kDtypes[] = {
#define RL_DTYPE_INFO_(id, T, name, aliases, numpy, gallery)                                                  \
  DtypeInfo{Dtype::id, name, aliases, numpy, sizeof(T), sizeof(::reducelab::accumulate_t<T>),                \
            !::reducelab::is_floating<T>, gallery},
    RL_DTYPE_TABLE(RL_DTYPE_INFO_)
#undef RL_DTYPE_INFO_
};

constexpr const DtypeInfo& info(Dtype d) { return kDtypes[static_cast<std::size_t>(d)]; }
constexpr std::string_view name(Dtype d) { return info(d).name; }
constexpr std::size_t size_of(Dtype d) { return info(d).size; }
constexpr bool is_integer(Dtype d) { return info(d).integer; }
constexpr bool is_floating(Dtype d) { return !info(d).integer; }

// The row of a C++ type: dtype_of<float> is Dtype::float32.
template <class T>
struct dtype_of_;
#define RL_DTYPE_OF_(id, T, name, aliases, numpy, gallery) \
  template <>                                              \
  struct dtype_of_<T> {                                    \
    static constexpr Dtype value = Dtype::id;              \
  };
RL_DTYPE_TABLE(RL_DTYPE_OF_)
#undef RL_DTYPE_OF_
template <class T>
inline constexpr Dtype dtype_of = dtype_of_<T>::value;

// Calls f.template operator()<T>() with the C++ type of d.
template <class F>
constexpr decltype(auto) with_dtype(Dtype d, F&& f) {
  switch (d) {
#define RL_DTYPE_CASE_(id, T, name, aliases, numpy, gallery) \
  case Dtype::id: return f.template operator()<T>();
    RL_DTYPE_TABLE(RL_DTYPE_CASE_)
#undef RL_DTYPE_CASE_
  }
  throw std::invalid_argument("unknown dtype");
}

// The same over the rows the gallery takes; f is instantiated for those types only, and any
// other dtype is refused (the lab screens dtypes before they reach a launcher).
template <class F>
void with_gallery_dtype(Dtype d, F&& f) {
  with_dtype(d, [&]<class T>() {
    if constexpr (info(dtype_of<T>).gallery) f.template operator()<T>();
    else throw std::invalid_argument("gallery: no kernel is instantiated for " + std::string(name(d)));
  });
}

// The ids of a table's rows in table order: all of them, or those whose bool column `Column`
// is set (ids_where<kDtypes, &DtypeInfo::gallery>()).
template <const auto& Table, auto Column = nullptr>
constexpr auto ids_where() {
  constexpr auto kept = [](const auto& row) {
    if constexpr (Column == nullptr) return true;
    else return row.*Column;
  };
  constexpr std::size_t count = [&] {
    std::size_t c = 0;
    for (const auto& row : Table) c += kept(row);
    return c;
  }();
  std::array<decltype(Table[0].id), count> out{};
  std::size_t i = 0;
  for (const auto& row : Table)
    if (kept(row)) out[i++] = row.id;
  return out;
}
inline constexpr auto kAllDtypes = ids_where<kDtypes>();
inline constexpr auto kGalleryDtypes = ids_where<kDtypes, &DtypeInfo::gallery>();

// A name or alias as users type it, in any case ("INT", "f64", "bfloat16"); with gallery_only,
// only the rows the gallery takes.
std::optional<Dtype> parse_dtype(std::string_view typed, bool gallery_only = false);
// "int32, float, double" (gallery_only) or every name, for error messages.
std::string dtype_choices(bool gallery_only = false);
// NumPy's type code ("i4", "f2"; no byte-order mark) -> dtype.
std::optional<Dtype> dtype_of_numpy(std::string_view code);

}  // namespace rl::core
