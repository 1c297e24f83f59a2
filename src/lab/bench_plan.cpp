// `reducelab bench`, its plan: the flags as typed, checked and resolved into a Plan.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <numeric>
#include <filesystem>
#include <sstream>

#include "fmt/format.h"
#include "lab/bench.hpp"
#include "lab/errors.hpp"
#include "lab/flags.hpp"
#include "lab/sizes.hpp"

namespace rl::lab::bench {

namespace {

std::string_view vendor_absent(const Case& c) {
  return vendor_has(c.elem, c.op) ? "" : "instantiated only for int32/float/double x the lab's ops and half/bf16 sums";
}

const ImplInfo kImpls[] = {
    {.name = "reducelab",
     .description = "reducelab::reduce, deterministic",
     .cpu = true,
     .cpu_bits = true,
     .absent = [](const Case&) { return std::string_view(); },
     .make = [](const Case& c, const void* in, std::size_t n, void* result, void* stream) {
       return make_reducelab_call(c.elem, c.op, in, n, result, stream, /*deterministic=*/true);
     }},
    {.name = "reducelab-nondet",
     .description = "reducelab::reduce with Options{.deterministic = false}",
     .absent = [](const Case& c) {
       return is_floating(c.elem) && c.op == OpKind::sum
                  ? std::string_view()
                  : "only floating-point sums have a nondeterministic variant; the order cannot change this result";
     },
     .make = [](const Case& c, const void* in, std::size_t n, void* result, void* stream) {
       return make_reducelab_call(c.elem, c.op, in, n, result, stream, /*deterministic=*/false);
     }},
    {.name = "cub",
     .description = "cub::DeviceReduce",
     .baseline = true,
     .absent = vendor_absent,
     .make = [](const Case& c, const void* in, std::size_t n, void* result, void* stream) {
       return make_cub_call(c.elem, c.op, in, n, result, stream);
     }},
    {.name = "thrust",
     .description = "thrust::reduce, the result returned to the host",
     .host_result = true,
     .note = "thrust::reduce allocates temporary storage and copies its result to the host on every call; its "
             "times include both, as a caller pays them",
     .absent = vendor_absent,
     .make = [](const Case& c, const void* in, std::size_t n, void* host_result, void* stream) {
       return make_thrust_call(c.elem, c.op, in, n, host_result, stream);
     }},
};

}  // namespace

std::span<const ImplInfo> impls() { return kImpls; }

const ImplInfo& info(Impl i) {
  for (const auto& row : kImpls)
    if (row.name == i.name) return row;
  throw std::logic_error("bench: no implementation named '" + std::string(i.name) + "' in impls()");
}

std::string_view name(Impl i) { return info(i).name; }

Impl impl(std::string_view name) { return info(Impl{name}).id(); }

std::optional<Impl> impl_with(bool ImplInfo::*role) {
  for (const auto& row : kImpls)
    if (row.*role) return row.id();
  return std::nullopt;
}

std::string impl_help() {
  std::string out;
  for (const auto& row : kImpls)
    out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", row.name, row.description);
  return out + "; default: all";
}

bool vendor_has(Dtype e, OpKind op) {
  if (!core::info(op).lab) return false;
  if (e == Dtype::int32 || e == Dtype::float32 || e == Dtype::float64) return true;
  return (e == Dtype::half || e == Dtype::bf16) && op == OpKind::sum;
}

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::vector<std::size_t> parse_sizes(const std::string& spec, const std::string& step_text, bool cpu) {
  std::vector<std::size_t> sizes;
  if (!step_text.empty() && spec.find("..") == std::string::npos && !spec.empty())
    throw UsageError(fmt::format("--step {}: applies to a range (--sizes A..B), not to a list", step_text));
  std::size_t step = 4;
  if (!step_text.empty()) {
    std::size_t pos = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(step_text, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    if (pos != step_text.size() || step_text[0] == '-' || v < 2 || v > 1024)
      throw UsageError(fmt::format("--step {}: give the factor between sizes, 2..1024", step_text));
    step = v;
  }
  const std::string range = spec.empty() ? (cpu ? "2^10..2^24" : "2^10..2^30") : spec;
  if (auto dots = range.find(".."); dots != std::string::npos) {
    const std::size_t lo = parse_size("--sizes", range.substr(0, dots), range);
    const std::size_t hi = parse_size("--sizes", range.substr(dots + 2), range);
    if (lo == 0) throw UsageError(fmt::format("--sizes {}: a size must be at least 1", range));
    if (hi < lo) throw UsageError(fmt::format("--sizes {}: the range runs downward", range));
    for (std::size_t n = lo; n <= hi; n *= step) {
      sizes.push_back(n);
      if (n > hi / step) break;
    }
  } else {
    for (const auto& term : split_list(range, ',')) {
      const std::size_t n = parse_size("--sizes", term);
      if (n == 0) throw UsageError(fmt::format("--sizes {}: a size must be at least 1", term));
      sizes.push_back(n);
    }
    if (sizes.empty()) throw UsageError(fmt::format("--sizes {}: no size given", range));
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

}  // namespace

Plan parse(const Args& a) {
  Plan p;
  if (a.backend == "cpu") p.cpu = true;
  else if (a.backend == "simt")
    throw UsageError("--backend simt: bench times real hardware; the emulator's times mean nothing here. "
                     "Use --backend cuda, or cpu to time reducelab::cpu::reduce");
  else if (a.backend != "auto" && a.backend != "cuda")
    throw UsageError(fmt::format("--backend {}: unknown backend; bench takes auto, cuda or cpu", a.backend));

  p.sizes = parse_sizes(a.sizes, a.step, p.cpu);

  std::vector<Dtype> elems = a.dtypes.empty() ? std::vector<Dtype>{} : dtype_list_flag("--dtypes", a.dtypes, Rows::all);
  std::vector<OpKind> ops = a.ops.empty() ? std::vector<OpKind>{} : op_list_flag("--ops", a.ops, Rows::lab);
  if (elems.empty() && ops.empty()) {
    // The default cases: int32/float/double x sum/min/max, then half/bf16 sums.
    for (Dtype e : {Dtype::int32, Dtype::float32, Dtype::float64})
      for (OpKind op : core::kLabOps) p.cases.push_back({e, op});
    p.cases.push_back({Dtype::half, OpKind::sum});
    p.cases.push_back({Dtype::bf16, OpKind::sum});
  } else {
    if (elems.empty()) elems = {Dtype::int32, Dtype::float32, Dtype::float64, Dtype::half, Dtype::bf16};
    if (ops.empty()) ops.assign(core::kLabOps.begin(), core::kLabOps.end());
    for (Dtype e : elems)
      for (OpKind op : ops) p.cases.push_back({e, op});
  }

  for (const auto& i : split_list(a.impls, ',')) {
    const std::string s = lower(i);
    auto it = std::find_if(impls().begin(), impls().end(), [&](const ImplInfo& x) { return x.name == s; });
    if (it == impls().end()) {
      std::string choices;
      for (const auto& row : impls()) choices += (choices.empty() ? "" : ", ") + std::string(row.name);
      throw UsageError(fmt::format("--impls {}: unknown implementation; choose {}", i, choices));
    }
    if (std::find(p.impls.begin(), p.impls.end(), it->id()) == p.impls.end()) p.impls.push_back(it->id());
  }
  if (!a.impls.empty() && p.impls.empty()) throw UsageError(fmt::format("--impls {}: no implementation given", a.impls));
  p.impls_named = !p.impls.empty();
  if (p.impls.empty())
    for (const auto& row : impls()) p.impls.push_back(row.id());
  if (p.cpu && std::none_of(p.impls.begin(), p.impls.end(), [](Impl i) { return info(i).cpu; }))
    throw UsageError(fmt::format("--impls {}: only reducelab runs with --backend cpu", a.impls));

  if (!a.repeats.empty()) p.repeats = count_flag("--repeat", a.repeats, 1, 100000, "timed repeats");
  for (const auto& m : split_list(a.modes, ',')) {
    const auto mode = parse_timing_mode(lower(m));
    if (!mode) throw UsageError(fmt::format("--modes {}: unknown timing mode; choose cold, batch, sync", m));
    if (std::find(p.modes.begin(), p.modes.end(), *mode) == p.modes.end()) p.modes.push_back(*mode);
  }
  if (!a.modes.empty() && p.modes.empty()) throw UsageError(fmt::format("--modes {}: no mode given", a.modes));
  if (p.cpu && !p.modes.empty())
    throw UsageError(fmt::format("--modes {}: the CPU backend has one timing mode of its own (a steady clock around "
                                 "each call); cold, batch and sync are GPU modes",
                                 a.modes));
  if (!p.cpu && p.modes.empty()) p.modes.assign(std::begin(kAllTimingModes), std::end(kAllTimingModes));
  if (!a.batch.empty()) {
    p.batch = count_flag("--batch", a.batch, 1, 100000, "calls per batch repeat");
    if (std::find(p.modes.begin(), p.modes.end(), Mode::batch) == p.modes.end())
      throw UsageError(fmt::format("--batch {}: applies to the batch mode, which --modes leaves out", a.batch));
  }

  const auto f = parse_format(a.format);
  if (!f) throw UsageError(fmt::format("--format {}: unknown format; choose table, csv or json", a.format));
  p.format = *f;
  p.format_text = a.format;
  p.backend_text = a.backend;
  p.sizes_text = a.sizes;
  p.step_text = a.step;
  p.plot_text = a.plot;

  if (!a.plot.empty()) {
    const std::filesystem::path path(a.plot);
    const std::string ext = lower(path.extension().string());
    if (ext == ".png" || ext == ".svg") p.plot_files = {a.plot};
    else if (ext.empty()) p.plot_files = {a.plot + ".png", a.plot + ".svg"};
    else throw UsageError(fmt::format("--plot {}: give FILE.png, FILE.svg, or FILE without an extension for both", a.plot));
  }
  auto same = [](const std::string& x, const std::string& y) {
    std::error_code ec;
    return std::filesystem::weakly_canonical(std::filesystem::absolute(x, ec), ec) ==
           std::filesystem::weakly_canonical(std::filesystem::absolute(y, ec), ec);
  };
  if (!a.out.empty() && !a.json.empty() && same(a.out, a.json))
    throw UsageError(fmt::format("--out {} --json {}: the same file twice; the JSON would overwrite the output", a.out, a.json));
  if (!a.out.empty())
    for (const auto& f : p.plot_files)
      if (same(a.out, f) || same(a.out, std::filesystem::path(f).replace_extension(".json").string()))
        throw UsageError(fmt::format("--out {} --plot {}: the plot writes that file", a.out, a.plot));
  p.out = a.out;
  p.json = a.json;
  p.seed = a.seed;
  return p;
}

int batch_calls(std::size_t bytes) {
  const std::size_t calls = (std::size_t(1) << 28) / std::max<std::size_t>(bytes, 1);
  return static_cast<int>(std::clamp<std::size_t>(calls, 4, 200));
}

std::string cost_estimate(const Plan& plan, std::size_t host_free) {
  std::size_t largest = 0, total = 0;
  Dtype largest_elem = Dtype::int8;
  for (const Case& c : plan.cases)
    for (std::size_t n : plan.sizes) {
      const std::size_t bytes = n * size_of(c.elem);
      if (bytes > host_free / 10 * 8) continue;  // skipped, and the notes will say so
      total += bytes;
      if (bytes > largest) largest = bytes, largest_elem = c.elem;
    }
  if (largest < (std::size_t(1) << 30)) return {};
  std::string line = fmt::format("bench: the largest input ({}, n = {}) takes {} of {} memory ({} available)",
                                 name(largest_elem), size_text(largest / size_of(largest_elem)), bytes_text(largest),
                                 plan.cpu ? "host" : "host and device", bytes_text(host_free));
  // This machine's read rate, measured on a 64 MiB buffer: enough for "roughly".
  std::vector<std::uint64_t> probe((std::size_t(64) << 20) / 8, 1);
  double best = 1e30;
  volatile std::uint64_t sink = 0;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    sink = sink + std::accumulate(probe.begin(), probe.end(), std::uint64_t(0));
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const double gbs = static_cast<double>(probe.size() * 8) / best / 1e9;
  if (plan.cpu) {
    const double passes = (plan.repeats > 0 ? plan.repeats : 10) + 2.0;  // warm-up, repeats, one-thread check
    line += fmt::format("; it reads about {} in all: roughly {:.0f} s at the {:.1f} GB/s one core reads here",
                        bytes_text(static_cast<std::size_t>(static_cast<double>(total) * passes)),
                        static_cast<double>(total) * passes / (gbs * 1e9), gbs);
  } else {
    // On a GPU the timed repeats take milliseconds; the host's part dominates: making the input,
    // its exact reference and the upload, about three passes over it at one core's read rate.
    constexpr double kHostPasses = 3.0;
    line += fmt::format("; roughly {:.0f} s, mostly on the host (making the input and its exact reference at "
                        "the {:.1f} GB/s one core reads here)",
                        static_cast<double>(total) * kHostPasses / (gbs * 1e9), gbs);
  }
  return line;
}

}  // namespace rl::lab::bench
