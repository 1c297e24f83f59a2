#include "lab/reduce_file.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <ostream>
#include <vector>

#include "reducelab/detail/cpu_reduce.hpp"
#include "core/simt_reduce.hpp"
#include "fmt/format.h"
#include "core/dtype.hpp"
#include "core/ops.hpp"
#include "lab/errors.hpp"
#include "lab/flags.hpp"
#include "nlohmann/json.hpp"
#include "reducelab/reduce.hpp"

namespace rl::lab {
namespace {

using core::Dtype;
using core::OpKind;

// The value of 'key': in a .npy header dict, as written (quotes kept).
std::string header_field(const std::string& header, const std::string& key, const std::string& file) {
  const auto at = header.find("'" + key + "'");
  if (at == std::string::npos) throw UsageError(fmt::format("--input {}: the .npy header has no '{}'", file, key));
  std::size_t i = header.find(':', at);
  if (i == std::string::npos) throw UsageError(fmt::format("--input {}: the .npy header is malformed", file));
  ++i;
  while (i < header.size() && header[i] == ' ') ++i;
  std::size_t end = i;
  if (i < header.size() && header[i] == '(') end = header.find(')', i) + 1;
  else if (i < header.size() && header[i] == '\'') end = header.find('\'', i + 1) + 1;
  else end = header.find_first_of(",}", i);
  if (end == std::string::npos || end == 0) throw UsageError(fmt::format("--input {}: the .npy header is malformed", file));
  return header.substr(i, end - i);
}

struct Loaded {
  Dtype elem;
  std::vector<unsigned char> bytes;  // 16-byte aligned start (vector's allocator is enough here)
  std::uint64_t n = 0;
};

Loaded load(const ReduceFileArgs& a) {
  std::ifstream f(a.input, std::ios::binary);
  if (!f) throw UsageError(fmt::format("--input {}: cannot open it", a.input));
  std::vector<unsigned char> all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::optional<Dtype> given;
  if (!a.dtype.empty()) given = dtype_flag("--dtype", a.dtype, Rows::all);
  Loaded l;
  std::size_t offset = 0;
  static const unsigned char magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (all.size() >= 10 && std::memcmp(all.data(), magic, 6) == 0) {
    const unsigned major = all[6];
    std::size_t header_len = 0;
    if (major == 1) header_len = all[8] | (std::size_t(all[9]) << 8), offset = 10;
    else if ((major == 2 || major == 3) && all.size() >= 12)
      header_len = all[8] | (std::size_t(all[9]) << 8) | (std::size_t(all[10]) << 16) | (std::size_t(all[11]) << 24), offset = 12;
    else throw UsageError(fmt::format("--input {}: .npy version {} is not one this reads (1, 2 or 3)", a.input, major));
    if (offset + header_len > all.size()) throw UsageError(fmt::format("--input {}: the .npy header runs past the end", a.input));
    const std::string header(all.begin() + offset, all.begin() + offset + header_len);
    offset += header_len;
    std::string descr = header_field(header, "descr", a.input);
    descr = descr.size() >= 2 ? descr.substr(1, descr.size() - 2) : descr;
    // NumPy's descr: a byte-order mark ('|' one byte, '<' little-endian) and the type code.
    const auto e = descr.size() >= 3 && (descr[0] == '<' || descr[0] == '|') ? core::dtype_of_numpy(descr.substr(1))
                                                                             : std::nullopt;
    if (!e) throw UsageError(fmt::format("--input {}: dtype '{}' is not one reducelab reduces (little-endian int8..int64, "
                                         "uint8..uint64, float16, float32, float64)", a.input, descr));
    if (given && *given != *e)
      throw UsageError(fmt::format("--dtype {}: the file holds {}", a.dtype, core::name(*e)));
    l.elem = *e;
    const std::string shape = header_field(header, "shape", a.input);
    const std::string fortran = header_field(header, "fortran_order", a.input);
    std::uint64_t n = 1;
    int dims = 0;
    for (std::size_t i = 0; i < shape.size();) {
      if (std::isdigit(static_cast<unsigned char>(shape[i]))) {
        std::size_t j = i;
        while (j < shape.size() && std::isdigit(static_cast<unsigned char>(shape[j]))) ++j;
        n *= std::stoull(shape.substr(i, j - i));
        ++dims;
        i = j;
      } else {
        ++i;
      }
    }
    if (fortran == "True" && dims > 1)
      throw UsageError(fmt::format("--input {}: a Fortran-order array; save it in C order (np.ascontiguousarray)", a.input));
    l.n = n;
  } else {
    if (!given) throw UsageError(fmt::format("--input {}: not a .npy file; give --dtype to read it as raw elements", a.input));
    l.elem = *given;
    if (all.size() % core::size_of(l.elem) != 0)
      throw UsageError(fmt::format("--input {}: {} bytes are not a whole number of {}-byte {} elements", a.input,
                                   all.size(), core::size_of(l.elem), core::name(l.elem)));
    l.n = all.size() / core::size_of(l.elem);
  }
  const std::size_t data = all.size() - offset;
  if (data != l.n * core::size_of(l.elem))
    throw UsageError(fmt::format("--input {}: holds {} bytes of data; its header says {} elements of {} bytes", a.input,
                                 data, l.n, core::size_of(l.elem)));
  l.bytes.assign(all.begin() + offset, all.end());
  return l;
}

// The bits of a floating-point result, as hex ("0x7fc00000"): tells NaNs apart.
template <class V>
std::string bits_text(V v) {
  if constexpr (std::is_same_v<V, reducelab::half> || std::is_same_v<V, reducelab::bfloat16>) {
    return fmt::format("{:#06x}", v.bits);
  } else if constexpr (std::is_floating_point_v<V>) {
    using U = std::conditional_t<sizeof(V) == 4, std::uint32_t, std::uint64_t>;
    U u;
    std::memcpy(&u, &v, sizeof u);
    return fmt::format("{:#0{}x}", u, 2 + 2 * sizeof(V));
  } else {
    return {};
  }
}

template <class V>
std::string value_text(V v, bool* integer) {
  if constexpr (std::is_same_v<V, reducelab::half> || std::is_same_v<V, reducelab::bfloat16>) {
    return value_text(reducelab::to_float(v), integer);
  } else if constexpr (std::is_integral_v<V>) {
    *integer = true;
    return fmt::format("{}", v);
  } else {
    *integer = false;
    if (v != v) return "nan";
    return fmt::format("{}", v);  // shortest round trip; "inf", "-inf", "-0"
  }
}

template <class T, class Op>
void reduce_typed(const Loaded& l, const std::string& backend, ReduceFileResult& r) {
  // A copy with the element type's alignment (the file's bytes start anywhere).
  std::vector<T> x(l.n);
  if (l.n) std::memcpy(static_cast<void*>(x.data()), l.bytes.data(), l.n * sizeof(T));
  const T* p = l.n ? x.data() : nullptr;
  reducelab::result_t<T, Op> v{};
  if (backend == "cpu") {
    const auto got = reducelab::cpu::reduce(p, l.n, Op{});
    if (!got) {
      r.error = got.status.message();
      return;
    }
    v = got.value;
  } else {
    if (const reducelab::Status s = reducelab::detail::check_input<Op>(p, l.n); !s) {
      r.error = s.message();
      return;
    }
    v = reducelab::detail::simt_reduce(p, l.n, Op{});
  }
  if constexpr (std::is_same_v<Op, reducelab::op::argmin> || std::is_same_v<Op, reducelab::op::argmax>) {
    r.value = value_text(v.value, &r.integer_value);
    r.bits = bits_text(v.value);
    r.index = v.index;
  } else {
    r.value = value_text(v, &r.integer_value);
    r.bits = bits_text(v);
  }
}

}  // namespace

ReduceFileResult reduce_file(const ReduceFileArgs& a) {
  const OpKind op = op_flag("--op", a.op, Rows::all);
  if (a.backend != "cpu" && a.backend != "simt")
    throw UsageError(fmt::format("--backend {}: reduce runs on cpu or simt", a.backend));
  if (a.format != "text" && a.format != "json")
    throw UsageError(fmt::format("--format {}: unknown format; choose text or json", a.format));
  const Loaded l = load(a);
  ReduceFileResult r;
  r.dtype = std::string(core::name(l.elem));
  r.op = std::string(core::name(op));
  r.backend = a.backend;
  r.n = l.n;
  core::with_dtype(l.elem, [&]<class T>() {
    core::with_op(op, [&]<class Tag>() { reduce_typed<T, Tag>(l, a.backend, r); });
  });
  return r;
}

void print_reduce_file(const ReduceFileResult& r, const std::string& format, std::ostream& out) {
  if (format == "json") {
    nlohmann::json j = {{"dtype", r.dtype}, {"op", r.op}, {"backend", r.backend}, {"n", r.n}};
    if (!r.error.empty()) j["error"] = r.error;
    else if (r.integer_value) j["value"] = nlohmann::json::parse(r.value);
    else j["value"] = r.value;
    if (r.index && r.error.empty()) j["index"] = *r.index;
    if (!r.bits.empty() && r.error.empty()) j["bits"] = r.bits;
    out << j.dump() << '\n';
    return;
  }
  if (!r.error.empty()) return;  // the CLI prints the error
  out << r.value;
  if (r.index) out << " at index " << *r.index;
  out << '\n';
}

}  // namespace rl::lab
