// The gallery's entries, in the order the books teach them. Each is declared beside its kernel in
// its family's header (RL_GALLERY_BIND); the registry reads them from the SIMT launch table,
// which every build has, and adds the CUDA-only cub reference (cub_reference.hpp).
#include "gallery/registry.hpp"

#include <algorithm>
#include <string>

#include "gallery/cub_reference.hpp"

namespace rl::gallery {

std::string_view name(Backend b) {
  switch (b) {
    case Backend::cuda: return "cuda";
    case Backend::simt: return "simt";
  }
  return "?";
}

std::string_view name(Accumulate a) {
  switch (a) {
    case Accumulate::wide: return "wide";
    case Accumulate::wrap: return "wrap";
  }
  return "?";
}

const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = [] {
    std::vector<Entry> r;
    for (const Binding& b : simt_bindings()) r.push_back(b.entry);
    r.push_back(kCubEntry);
    return r;
  }();
  return entries;
}

const Entry* find(std::string_view id) {
  for (const auto& e : registry())
    if (e.id == id) return &e;
  return nullptr;
}

std::string ids() {
  std::string s;
  for (const auto& e : registry()) {
    if (!s.empty()) s += ", ";
    s += e.id;
  }
  return s;
}

LaunchFn launcher(const Entry& e, Backend b) {
  if (b == Backend::simt && e.constraints.gpu_only) return nullptr;
  const auto& table = b == Backend::cuda ? cuda_bindings() : simt_bindings();
  for (const auto& binding : table)
    if (binding.entry.id == e.id) return binding.launch;
  return nullptr;
}

Dtype accumulator_dtype(Dtype d, Accumulate a) {
  return core::is_integer(d) && a == Accumulate::wide ? Dtype::int64 : d;
}

std::size_t accumulator_bytes(Dtype d, Accumulate a) { return core::size_of(accumulator_dtype(d, a)); }

std::size_t input_bytes(const Entry& e, Dtype d, Accumulate a) {
  return e.constraints.in_place ? accumulator_bytes(d, a) : core::size_of(d);
}

Footprint footprint(const Entry& e, std::size_t n, unsigned block, Dtype d, Accumulate a) {
  Footprint f;
  f.in_place = e.constraints.in_place;
  f.input_element_bytes = input_bytes(e, d, a);
  f.acc_bytes = accumulator_bytes(d, a);
  f.input_bytes = n * f.input_element_bytes;
  f.scratch_bytes = e.scratch_bytes ? e.scratch_bytes(n, block, f.acc_bytes) : 0;
  f.bytes_read = e.bytes_read ? e.bytes_read(n, f.input_element_bytes) : f.input_bytes;
  return f;
}

bool deterministic(const Entry& e, Dtype d, OpKind op) {
  if (e.constraints.unsafe) return false;
  // Atomics combine in whatever order the blocks arrive: the same bits for integers (their ops
  // are exact) and for min and max (the result is one of the inputs); any other floating-point
  // op, sums first, rounds differently from run to run.
  if (e.constraints.float_atomics) return core::is_integer(d) || op == OpKind::min || op == OpKind::max;
  return e.constraints.deterministic;
}

}  // namespace rl::gallery
