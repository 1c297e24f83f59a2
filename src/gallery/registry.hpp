#pragma once
// The gallery's registry: one entry per textbook kernel. `reducelab list`, `run`, the tests and
// the docs all iterate over it, so adding a kernel is adding an entry, never editing a switch.
//
// An entry is declared once, beside its kernel, in the family's .cuh header: its description
// (id, seed, technique, constraints, footprint) and its launcher together, through
// RL_GALLERY_BIND (dispatch.cuh). Each family header is compiled once per backend, from the
// family list in gallery/CMakeLists.txt (g++ against the SIMT runtime, nvcc for CUDA); the
// registry reads the descriptions from the SIMT copy, which every build has, and the cub
// reference (CUDA only) from cub_reference.hpp.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "core/ops.hpp"

namespace rl::gallery {

using core::Dtype;
using core::OpKind;

enum class Backend { cuda, simt };
std::string_view name(Backend b);

// How int32 is accumulated. `wide` (the default) sums in int64 and cannot overflow for any
// n the device holds; `wrap` is the textbook's int arithmetic, which wraps modulo 2^32 and is
// labelled so wherever it is reported.
enum class Accumulate { wide, wrap };
std::string_view name(Accumulate a);

// What the lab hands a kernel's launcher. All pointers are device pointers of the backend.
struct LaunchArgs {
  void* input = nullptr;    // n elements; their type is input_type(entry, dtype, accumulate)
  void* scratch = nullptr;  // Entry::scratch_bytes(n, block, acc_bytes) bytes, contents undefined
  void* result = nullptr;   // one element of the accumulator type: the reduced value lands here
  std::size_t n = 0;
  unsigned block = 512;
  Dtype dtype = Dtype::int32;
  OpKind op = OpKind::sum;
  Accumulate accumulate = Accumulate::wide;
  unsigned param = 0;       // the entry's knob (e.g. coarse factor); 0 means its default
  void* stream = nullptr;   // cudaStream_t on the cuda backend; unused on simt
};

using LaunchFn = void (*)(const LaunchArgs&);

struct Constraints {
  bool pow2_block = true;         // block must be a power of two
  unsigned min_block = 32;        // at least a warp
  unsigned max_block = 1024;
  unsigned items_per_thread = 1;  // each block covers block * items_per_thread elements
  bool in_place = false;          // reduces in its input buffer: input holds accumulator type
  bool deterministic = true;      // same bits every run (false: float atomics, races)
  bool unsafe = false;            // has a data race on purpose (textbook lockstep warp)
  bool gpu_only = false;          // no SIMT launcher (gpu_only_reason says why)
  std::string_view gpu_only_reason{};
  bool is_reference = false;      // a library baseline (CUB), not a textbook kernel
  // Combines block values into the result with atomics (PMPP 10.7/10.8): the order of float
  // and double sums then varies run to run; integer results and min/max stay exact.
  bool float_atomics = false;
};

struct Entry {
  std::string_view id{};          // what users type: "neighbored", "unroll8", ...
  std::string_view name{};        // the kernel's name as the book spells it
  std::string_view family{};      // divergence, unrolling, shared-memory, pmpp, nested, modern
  std::string_view seed{};        // seed file and section, e.g. "000 §3"
  std::string_view technique{};   // what this version changes
  std::string_view still_slow{};  // what still costs time
  std::string_view final_pass{};  // how per-block partials become one value
  Constraints constraints{};
  // Bytes the kernel must read from global memory at size n (input element size given):
  // the figure GB/s is computed from, declared once here.
  std::size_t (*bytes_read)(std::size_t n, std::size_t input_bytes) = nullptr;
  // Device scratch the launcher needs (per-block partials, counters).
  std::size_t (*scratch_bytes)(std::size_t n, unsigned block, std::size_t acc_bytes) = nullptr;
  // What LaunchArgs::param selects for this entry, with its choices and default; "" when the
  // entry has no knob (param is then ignored).
  std::string_view param{};
  // Little's law: the global loads one thread issues before it needs the first of them (what it
  // keeps in flight), each `load_width` bytes wide (0: one input element). 0 loads: undeclared,
  // and no bandwidth is predicted.
  unsigned independent_loads = 0;
  unsigned load_width = 0;
  // The first rung of the ladder: `run` reports every row's cumulative speedup against it.
  bool speedup_baseline = false;
};

const std::vector<Entry>& registry();
const Entry* find(std::string_view id);
std::string ids();  // "neighbored, neighbored-less, ..." for messages and --help

// The launcher of an entry on a backend, or nullptr when that backend lacks it (cuda not built,
// or the entry is gpu-only).
LaunchFn launcher(const Entry& e, Backend b);

// Element size of the input buffer an entry expects, and of its result.
std::size_t input_bytes(const Entry& e, Dtype d, Accumulate a);  // in-place kernels: acc bytes
std::size_t accumulator_bytes(Dtype d, Accumulate a);
// What the kernels accumulate d in, and so what their result is: integers widened to int64
// (Accumulate::wide) or kept (wrap); floating point in its own type. dispatch.cuh instantiates it.
Dtype accumulator_dtype(Dtype d, Accumulate a);

// Whether an entry gives the same bits on every run for this dtype and op: false for the unsafe
// entries, and for float/double sums of the entries that combine with float atomics.
bool deterministic(const Entry& e, Dtype d, OpKind op);

// What one launch of an entry needs on the device for a plan (n, block, dtype, accumulate):
// the sizes the lab allocates and the bytes GB/s is computed from, asked of the entry once.
struct Footprint {
  std::size_t input_element_bytes = 0;  // input_bytes(): the accumulator's for in-place kernels
  std::size_t acc_bytes = 0;            // the result's size
  std::size_t input_bytes = 0;          // n * input_element_bytes
  std::size_t scratch_bytes = 0;        // Entry::scratch_bytes (0: none)
  std::size_t bytes_read = 0;           // Entry::bytes_read: what the kernel must read
  // Device memory a run needs: the input (twice for in-place kernels, which keep a pristine
  // copy), scratch and the result.
  std::size_t device_bytes() const {
    return input_bytes + (in_place ? input_bytes : 0) + scratch_bytes + acc_bytes;
  }
  bool in_place = false;
};
Footprint footprint(const Entry& e, std::size_t n, unsigned block, Dtype d, Accumulate a);

// An entry with its launcher on one backend: what a family header declares (RL_GALLERY_BIND).
struct Binding {
  Entry entry;
  LaunchFn launch;
};
// The launch tables of the two backends, concatenated from the families (bind.cpp).
const std::vector<Binding>& simt_bindings();
const std::vector<Binding>& cuda_bindings();  // empty when built without CUDA

}  // namespace rl::gallery
