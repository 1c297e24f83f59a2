#include "lab/bench.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <thread>

#include "core/reference.hpp"
#include "fmt/format.h"
#include "lab/errors.hpp"
#include "lab/read_ceiling.hpp"

namespace rl::lab::bench {

// ---------------------------------------------------------------------------------------------
// Names and flags

std::string_view name(Impl i) {
  switch (i) {
    case Impl::reducelab: return "reducelab";
    case Impl::reducelab_nondet: return "reducelab-nondet";
    case Impl::cub: return "cub";
    case Impl::thrust: return "thrust";
  }
  return "?";
}

std::string_view name(L2 m) { return m == L2::flushed ? "flushed" : "warm"; }

// size_of and result_bytes are plain switches so nvcc reads them without template lambdas;
// they must agree with the library's types.
static_assert([] {
  for (Elem e : kAllElems)
    if (!with_elem(e, [e]<class T>() {
          return sizeof(T) == size_of(e) && sizeof(reducelab::accumulate_t<T>) == result_bytes(e, OpKind::sum) &&
                 sizeof(T) == result_bytes(e, OpKind::min);
        }))
      return false;
  return true;
}());

bool vendor_has(Elem e, OpKind op) {
  if (e == Elem::int32 || e == Elem::float32 || e == Elem::float64) return true;
  return (e == Elem::half || e == Elem::bf16) && op == OpKind::sum;
}

#if !RL_WITH_CUDA
std::unique_ptr<Call> make_cub_call(Elem, OpKind, const void*, std::size_t, void*, void*) {
  throw std::logic_error("CUB: this reducelab was built without CUDA");
}
std::unique_ptr<Call> make_thrust_call(Elem, OpKind, const void*, std::size_t, void*, void*) {
  throw std::logic_error("thrust: this reducelab was built without CUDA");
}
double empty_launch_us(Device&, int) { return 0; }
std::string cuda_versions() { return "built without CUDA"; }
#endif

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::optional<Elem> parse_elem(const std::string& typed) {
  const std::string s = lower(typed);
  if (s == "int" || s == "i32") return Elem::int32;
  if (s == "float32" || s == "f32") return Elem::float32;
  if (s == "float64" || s == "f64") return Elem::float64;
  if (s == "fp16" || s == "f16" || s == "float16") return Elem::half;
  if (s == "bfloat16") return Elem::bf16;
  for (Elem e : kAllElems)
    if (s == name(e)) return e;
  return std::nullopt;
}

std::string elem_choices() {
  std::string out;
  for (Elem e : kAllElems) out += (out.empty() ? "" : ", ") + std::string(name(e));
  return out;
}

// One size as the other subcommands take it: 1000003, 2^24, 1<<24, 16M (k, M, G are binary).
std::size_t parse_size_term(const std::string& flag, const std::string& whole, const std::string& s) {
  auto bad = [&] { return UsageError(fmt::format("{} {}: not a size; write e.g. 1000003, 2^24, 1<<24 or 16M", flag, whole)); };
  if (s.empty() || s[0] == '-' || s[0] == '+') throw bad();
  try {
    std::size_t pos = 0;
    if (auto caret = s.find('^'); caret != std::string::npos) {
      const auto base = std::stoull(s.substr(0, caret), &pos);
      if (pos != caret) throw bad();
      const auto exp = std::stoull(s.substr(caret + 1), &pos);
      if (base != 2 || exp > 50 || pos != s.size() - caret - 1) throw bad();
      return std::size_t(1) << exp;
    }
    if (auto shift = s.find("<<"); shift != std::string::npos) {
      const auto base = std::stoull(s.substr(0, shift), &pos);
      if (pos != shift) throw bad();
      const auto exp = std::stoull(s.substr(shift + 2), &pos);
      if (exp > 50 || pos != s.size() - shift - 2 || base > (std::size_t(1) << 50) >> exp) throw bad();
      return static_cast<std::size_t>(base) << exp;
    }
    const auto v = std::stoull(s, &pos);
    const std::string suffix = s.substr(pos);
    const int shift = suffix.empty() ? 0 : suffix == "k" || suffix == "K" ? 10 : suffix == "M" ? 20 : suffix == "G" ? 30 : -1;
    if (shift < 0 || v > (std::size_t(1) << 50) >> shift) throw bad();
    return static_cast<std::size_t>(v) << shift;
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception&) {
  }
  throw bad();
}

std::string size_text(std::size_t n) {
  if (std::has_single_bit(n) && n >= 1024) return fmt::format("2^{}", std::countr_zero(n));
  return std::to_string(n);
}

std::string bytes_text(std::size_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.{}f} {}", v, v == std::floor(v) ? 0 : 1, units[u]);
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
    const std::size_t lo = parse_size_term("--sizes", range, range.substr(0, dots));
    const std::size_t hi = parse_size_term("--sizes", range, range.substr(dots + 2));
    if (lo == 0) throw UsageError(fmt::format("--sizes {}: a size must be at least 1", range));
    if (hi < lo) throw UsageError(fmt::format("--sizes {}: the range runs downward", range));
    for (std::size_t n = lo; n <= hi; n *= step) {
      sizes.push_back(n);
      if (n > hi / step) break;
    }
  } else {
    for (const auto& term : split(range, ',')) {
      const std::size_t n = parse_size_term("--sizes", term, term);
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

  std::vector<Elem> elems;
  for (const auto& d : split(a.dtypes, ',')) {
    const auto e = parse_elem(d);
    if (!e) throw UsageError(fmt::format("--dtypes {}: unknown dtype; choose {}", d, elem_choices()));
    if (std::find(elems.begin(), elems.end(), *e) == elems.end()) elems.push_back(*e);
  }
  if (!a.dtypes.empty() && elems.empty()) throw UsageError(fmt::format("--dtypes {}: no dtype given", a.dtypes));
  std::vector<OpKind> ops;
  for (const auto& o : split(a.ops, ',')) {
    const auto op = reducelab::parse_op(o);
    if (!op) throw UsageError(fmt::format("--ops {}: unknown op; choose {}", o, reducelab::op_choices()));
    if (std::find(ops.begin(), ops.end(), *op) == ops.end()) ops.push_back(*op);
  }
  if (!a.ops.empty() && ops.empty()) throw UsageError(fmt::format("--ops {}: no op given", a.ops));
  if (elems.empty() && ops.empty()) {
    // The default cases: int32/float/double x sum/min/max, then half/bf16 sums.
    for (Elem e : {Elem::int32, Elem::float32, Elem::float64})
      for (OpKind op : reducelab::kAllOps) p.cases.push_back({e, op});
    p.cases.push_back({Elem::half, OpKind::sum});
    p.cases.push_back({Elem::bf16, OpKind::sum});
  } else {
    if (elems.empty()) elems = {Elem::int32, Elem::float32, Elem::float64, Elem::half, Elem::bf16};
    if (ops.empty()) ops.assign(std::begin(reducelab::kAllOps), std::end(reducelab::kAllOps));
    for (Elem e : elems)
      for (OpKind op : ops) p.cases.push_back({e, op});
  }

  for (const auto& i : split(a.impls, ',')) {
    const std::string s = lower(i);
    auto it = std::find_if(std::begin(kAllImpls), std::end(kAllImpls), [&](Impl x) { return name(x) == s; });
    if (it == std::end(kAllImpls))
      throw UsageError(fmt::format("--impls {}: unknown implementation; choose reducelab, reducelab-nondet, cub, thrust", i));
    if (std::find(p.impls.begin(), p.impls.end(), *it) == p.impls.end()) p.impls.push_back(*it);
  }
  if (!a.impls.empty() && p.impls.empty()) throw UsageError(fmt::format("--impls {}: no implementation given", a.impls));
  p.impls_named = !p.impls.empty();
  if (p.impls.empty()) p.impls.assign(std::begin(kAllImpls), std::end(kAllImpls));
  if (p.cpu && std::find(p.impls.begin(), p.impls.end(), Impl::reducelab) == p.impls.end())
    throw UsageError(fmt::format("--impls {}: only reducelab runs with --backend cpu", a.impls));

  if (!a.repeats.empty()) {
    std::size_t pos = 0;
    long v = 0;
    try {
      v = std::stol(a.repeats, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    if (pos != a.repeats.size() || v < 1 || v > 100000)
      throw UsageError(fmt::format("--repeat {}: give 1..100000 timed repeats", a.repeats));
    p.repeats = static_cast<int>(v);
  }
  if (a.hot && a.both) throw UsageError("--hot --both: --both already reports the warm rows beside the flushed ones");
  if (a.both) p.l2 = {L2::flushed, L2::warm};
  else p.l2 = {a.hot ? L2::warm : L2::flushed};

  const auto f = parse_format(a.format);
  if (!f) throw UsageError(fmt::format("--format {}: unknown format; choose table, csv or json", a.format));
  p.format = *f;

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

// ---------------------------------------------------------------------------------------------
// Inputs and their exact reductions

namespace {

unsigned host_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

// Runs f(begin, end) over [begin, end) split across the host's cores.
template <class F>
void parallel_for(std::size_t begin, std::size_t end, F&& f) {
  const std::size_t n = end - begin;
  const std::size_t parts = std::min<std::size_t>(host_threads(), std::max<std::size_t>(1, n >> 16));
  if (parts <= 1) {
    f(begin, end);
    return;
  }
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < parts; ++t)
    pool.emplace_back([&, t] { f(begin + n * t / parts, begin + n * (t + 1) / parts); });
  for (auto& th : pool) th.join();
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Random values, reproducible by seed and index. 8- and 16-bit integers span their type;
// wider integers stay within 2^20 so sums stay readable; floats are uniform in [-1, 1); half and
// bfloat16 are random bit patterns of magnitude 2^-14 .. 1 (no zeros, infinities or NaNs).
template <class T>
T element(std::uint64_t seed, std::size_t i) {
  const std::uint64_t r = splitmix64(seed * 0x2545f4914f6cdd1dull + i);
  if constexpr (std::is_same_v<T, reducelab::half>) {
    const auto exp = static_cast<std::uint16_t>(1 + (r >> 11) % 14);
    return reducelab::half{static_cast<std::uint16_t>(((r >> 63) << 15) | (exp << 10) | (r & 0x3ff))};
  } else if constexpr (std::is_same_v<T, reducelab::bfloat16>) {
    const auto exp = static_cast<std::uint16_t>(113 + (r >> 11) % 14);
    return reducelab::bfloat16{static_cast<std::uint16_t>(((r >> 63) << 15) | (exp << 7) | (r & 0x7f))};
  } else if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(r >> 40) * 0x1p-23f - 1.0f;
  } else if constexpr (std::is_same_v<T, double>) {
    return static_cast<double>(r >> 11) * 0x1p-52 - 1.0;
  } else if constexpr (sizeof(T) <= 2) {
    return static_cast<T>(r);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(static_cast<std::int64_t>(r % (1u << 21)) - (1 << 20));
  } else {
    return static_cast<T>(r % (1u << 20));
  }
}

template <class T>
long double real(T x) {
  if constexpr (reducelab::is_half_like<T>) return reducelab::to_float(x);
  else return static_cast<long double>(x);
}

// The exact reduction of a prefix of the input, extended as the sweep's sizes grow: integers
// summed in 128 bits, floating point in Neumaier's compensated long double sum.
template <class T>
struct Truth {
  std::size_t n = 0;
  __int128 isum = 0;
  long double sum = 0, comp = 0, abs_sum = 0;
  T min{}, max{};

  static void add(long double& s, long double& c, long double x) {
    const long double t = s + x;
    c += std::fabs(s) >= std::fabs(x) ? (s - t) + x : (x - t) + s;
    s = t;
  }
  void merge(const Truth& o) {
    if (o.n == 0) return;
    if (n == 0 || real(o.min) < real(min)) min = o.min;
    if (n == 0 || real(o.max) > real(max)) max = o.max;
    isum += o.isum;
    add(sum, comp, o.sum);
    comp += o.comp;
    abs_sum += o.abs_sum;
    n += o.n;
  }
  // Extends the prefix to data[0, to).
  void extend(const T* data, std::size_t to) {
    if (to <= n) return;
    std::vector<Truth> parts(host_threads());
    std::atomic<std::size_t> next{0};
    parallel_for(n, to, [&](std::size_t b, std::size_t e) {
      Truth& t = parts[next++];
      t.n = e - b;
      t.min = t.max = data[b];
      for (std::size_t i = b; i < e; ++i) {
        const T x = data[i];
        if constexpr (std::is_integral_v<T>) t.isum += x;
        else {
          add(t.sum, t.comp, real(x));
          t.abs_sum += std::fabs(real(x));
        }
        if (real(x) < real(t.min)) t.min = x;
        if (real(x) > real(t.max)) t.max = x;
      }
    });
    for (const auto& p : parts) merge(p);
  }
  long double exact() const { return sum + comp; }
};

template <class T>
std::string value_text(T v) {
  if constexpr (reducelab::is_half_like<T>) return fmt::format("{:.9g}", reducelab::to_float(v));
  else if constexpr (std::is_same_v<T, float>) return fmt::format("{:.9g}", v);
  else if constexpr (std::is_same_v<T, double>) return fmt::format("{:.17g}", v);
  else return std::to_string(v);
}

std::string int128_text(__int128 v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  unsigned __int128 u = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u) {
    s += static_cast<char>('0' + static_cast<int>(u % 10));
    u /= 10;
  }
  if (neg) s += '-';
  return {s.rbegin(), s.rend()};
}

struct Verdict {
  bool ok = false;
  std::string result, expected, check;
};

// Judges `got` (result_bytes(e, op) bytes) against the truth. `same_bits`, when given, is a value
// the result must equal bit for bit (reducelab's float sums: reducelab::cpu::reduce's).
template <class T>
Verdict judge(OpKind op, const unsigned char* got, const Truth<T>& truth,
              const std::vector<unsigned char>* same_bits, const char* same_bits_name) {
  Verdict v;
  if (op != OpKind::sum) {
    T r;
    std::memcpy(&r, got, sizeof r);
    const T want = op == OpKind::min ? truth.min : truth.max;
    v.result = value_text(r);
    v.expected = value_text(want);
    v.ok = std::memcmp(&r, &want, sizeof r) == 0;
    v.check = "equal bits";
    return v;
  }
  using R = reducelab::accumulate_t<T>;
  R r;
  std::memcpy(&r, got, sizeof r);
  v.result = value_text(r);
  if constexpr (std::is_integral_v<R>) {
    v.expected = int128_text(truth.isum);
    v.ok = r == static_cast<R>(truth.isum);
    v.check = "exact (128-bit reference)";
  } else {
    const double u = std::is_same_v<R, float> ? 0x1p-24 : 0x1p-53;
    const double bound = core::float_tolerance(truth.n, truth.abs_sum, u);
    const long double err = std::fabs(static_cast<long double>(r) - truth.exact());
    const bool close = err <= bound;  // false for NaN
    v.check = fmt::format("|error| {:.2e} <= {:.2e}", static_cast<double>(err), bound);
    if (same_bits) {
      R want;
      std::memcpy(&want, same_bits->data(), sizeof want);
      v.expected = value_text(want);
      v.ok = std::memcmp(&r, &want, sizeof r) == 0 && close;
      v.check = fmt::format("bits equal {}; {}", same_bits_name, v.check);
    } else {
      v.expected = value_text(static_cast<R>(truth.exact()));
      v.ok = close;
    }
    if (!close) v.check = fmt::format("|error| {:.2e} OVER the bound {:.2e}", static_cast<double>(err), bound);
  }
  return v;
}

void time_stats(Row& row, std::vector<double> us) {
  if (us.empty()) return;
  std::sort(us.begin(), us.end());
  auto at = [&](double q) {  // linear interpolation between order statistics
    const double pos = q * (us.size() - 1);
    const std::size_t i = static_cast<std::size_t>(pos);
    return i + 1 < us.size() ? us[i] + (pos - i) * (us[i + 1] - us[i]) : us[i];
  };
  row.repeats = static_cast<int>(us.size());
  row.us_median = at(0.5);
  row.us_min = us.front();
  row.us_max = us.back();
  row.us_p25 = at(0.25);
  row.us_p75 = at(0.75);
}

// A repeat's verdict joins the row: the row shows the warm-up's check, or the first failure.
void record(Row& row, const Verdict& v, int rep, bool& all_ok) {
  if (rep < 0 || (!v.ok && all_ok)) {
    row.result = v.result;
    row.expected = v.expected;
    row.check = v.check;
  }
  all_ok = all_ok && v.ok;
}

// The row's times and its status once every repeat has run.
void finish(Row& row, std::vector<double> us, bool all_ok) {
  time_stats(row, std::move(us));
  row.verified = all_ok;
  row.status = all_ok ? "ok" : "MISMATCH";
}


std::size_t host_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::size_t(8) << 30;  // not Linux: assume 8 GiB
}

std::string case_text(const Case& c) {
  std::string s = fmt::format("{} {}", name(c.elem), reducelab::name(c.op));
  if (c.op == OpKind::sum && result_bytes(c.elem, c.op) != size_of(c.elem))
    s += with_elem(c.elem, []<class T>() {
      return std::string(std::is_same_v<reducelab::accumulate_t<T>, float> ? " (into float)"
                         : std::is_signed_v<reducelab::accumulate_t<T>> ? " (into int64)"
                                                                         : " (into uint64)");
    });
  return s;
}

// Cases grouped by element type, so each input is made and uploaded once.
std::vector<std::pair<Elem, std::vector<OpKind>>> by_elem(const std::vector<Case>& cases) {
  std::vector<std::pair<Elem, std::vector<OpKind>>> out;
  for (const auto& c : cases) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& g) { return g.first == c.elem; });
    if (it == out.end()) out.push_back({c.elem, {c.op}});
    else it->second.push_back(c.op);
  }
  return out;
}

// Whether an implementation has a row for this case, and if not, why (for the notes).
std::string absent_because(Impl impl, const Case& c, bool cpu) {
  if (cpu && impl != Impl::reducelab) return "runs only on a GPU (this is --backend cpu)";
  if ((impl == Impl::reducelab || impl == Impl::reducelab_nondet) && !library_built())
    return "this reducelab was built without the library (no reducelab_reduce target)";
  if (impl == Impl::reducelab_nondet && !(is_floating(c.elem) && c.op == OpKind::sum))
    return "only floating-point sums have a nondeterministic variant; the order cannot change this result";
  if ((impl == Impl::cub || impl == Impl::thrust) && !vendor_has(c.elem, c.op))
    return "instantiated only for int32/float/double x sum/min/max and half/bf16 sums";
  return {};
}

void note_once(Report& r, const std::string& text);
// A size that was asked for and did not run: a note, and the run does not count as complete.
void skip(Report& r, const std::string& text) {
  if (std::find(r.skipped.begin(), r.skipped.end(), text) == r.skipped.end()) r.skipped.push_back(text);
  note_once(r, text);
}
void note_once(Report& r, const std::string& text) {
  if (std::find(r.notes.begin(), r.notes.end(), text) == r.notes.end()) r.notes.push_back(text);
}

// One note per implementation and reason, naming the cases it has no rows for. On the CPU
// backend the GPU-only implementations get one note of their own (run_cpu).
void add_absence_notes(Report& r, bool cpu) {
  for (Impl impl : r.plan.impls) {
    std::vector<std::pair<std::string, std::string>> reasons;  // reason, cases
    for (const auto& c : r.plan.cases) {
      const std::string why = absent_because(impl, c, cpu);
      if (why.empty() || (cpu && impl != Impl::reducelab)) continue;
      auto it = std::find_if(reasons.begin(), reasons.end(), [&](const auto& x) { return x.first == why; });
      const std::string what = fmt::format("{} {}", name(c.elem), reducelab::name(c.op));
      if (it == reasons.end()) reasons.push_back({why, what});
      else it->second += ", " + what;
    }
    for (const auto& [why, cases] : reasons) note_once(r, fmt::format("{}: no rows for {}: {}", name(impl), cases, why));
    // Named in --impls and absent from every case: what was asked for did not run.
    if (r.plan.impls_named && !(cpu && impl != Impl::reducelab) && reasons.size() == 1 &&
        std::all_of(r.plan.cases.begin(), r.plan.cases.end(), [&](const Case& c) { return !absent_because(impl, c, cpu).empty(); }))
      skip(r, fmt::format("{}: no rows for any case asked for: {}", name(impl), reasons.front().first));
  }
}

// The host input of one element type, made once for the largest size that runs.
struct HostInput {
  std::vector<unsigned char> bytes;
  template <class T>
  const T* as() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
};

template <class T>
HostInput make_input(std::size_t n, std::uint64_t seed) {
  HostInput in;
  in.bytes.resize(n * sizeof(T));
  T* data = reinterpret_cast<T*>(in.bytes.data());
  parallel_for(0, n, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) data[i] = element<T>(seed, i);
  });
  return in;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Derived columns

double limit_us(std::size_t bytes, double empty_launch_us, double read_ceiling_gbs) {
  if (empty_launch_us <= 0 || read_ceiling_gbs <= 0) return 0;
  return empty_launch_us + static_cast<double>(bytes) / (read_ceiling_gbs * 1e3);
}

void derive(Report& report) {
  for (auto& r : report.rows) {
    r.gb_per_s = r.pct_of_read_ceiling = r.limit_us = r.pct_of_limit = r.ratio_to_cub = 0;
    if (r.us_median <= 0) continue;
    r.gb_per_s = static_cast<double>(r.bytes) / (r.us_median * 1e3);
    if (report.read_ceiling_gbs > 0) r.pct_of_read_ceiling = 100.0 * r.gb_per_s / report.read_ceiling_gbs;
    r.limit_us = limit_us(r.bytes, report.empty_launch_us, report.read_ceiling_gbs);
    if (r.limit_us > 0) r.pct_of_limit = 100.0 * r.limit_us / r.us_median;
  }
  for (auto& r : report.rows) {
    if (r.us_median <= 0) continue;
    for (const auto& c : report.rows)
      if (c.impl == Impl::cub && c.c == r.c && c.n == r.n && c.l2 == r.l2 && c.us_median > 0)
        r.ratio_to_cub = c.us_median / r.us_median;
  }
}

bool Report::all_verified() const {
  return std::all_of(rows.begin(), rows.end(), [](const Row& r) { return r.verified; });
}

std::string Report::shortfall() const {
  const auto bad = std::count_if(rows.begin(), rows.end(), [](const Row& x) { return !x.verified; });
  if (bad) return fmt::format("{} of {} rows failed verification or errored", bad, rows.size());
  if (rows.empty())
    return "no rows ran" + (skipped.empty() ? std::string() : ": " + skipped.front() +
                                                             (skipped.size() > 1 ? fmt::format(" (and {} more)", skipped.size() - 1) : ""));
  if (!skipped.empty())
    return fmt::format("{} part(s) asked for did not run: {}{}", skipped.size(), skipped.front(),
                       skipped.size() > 1 ? " (see the notes)" : "");
  return {};
}

std::string summary(const Report& r) {
  const std::string why = r.shortfall();
  if (why.empty()) return fmt::format("all {} rows verified", r.rows.size());
  const auto ok = std::count_if(r.rows.begin(), r.rows.end(), [](const Row& x) { return x.verified; });
  return r.rows.empty() ? why : fmt::format("{} of {} rows verified; {}", ok, r.rows.size(), why);
}

// ---------------------------------------------------------------------------------------------
// The GPU sweep

namespace {

struct Target {
  std::unique_ptr<Call> call;
  bool host_result = false;  // thrust hands its value to the host
};

template <class T>
void sweep_elem_gpu(Report& report, Device& device, Elem elem, const std::vector<OpKind>& ops) {
  const Plan& plan = report.plan;
  const std::size_t reserve = std::size_t(512) << 20;  // CUB/thrust/library workspaces, the flush buffer
  const std::size_t device_free = device.free_memory();
  const std::size_t host_free = host_available_bytes();
  std::vector<std::size_t> sizes;
  for (std::size_t n : plan.sizes) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes + reserve > device_free)
      skip(report, fmt::format("{} n = {} skipped: its {} input does not fit in the {} of free device memory",
                                    name(elem), size_text(n), bytes_text(bytes), bytes_text(device_free)));
    else if (bytes > host_free / 10 * 8)
      skip(report, fmt::format("{} n = {} skipped: its {} input does not fit in the {} of available host memory",
                                    name(elem), size_text(n), bytes_text(bytes), bytes_text(host_free)));
    else
      sizes.push_back(n);
  }
  if (sizes.empty()) return;
  const std::size_t max_n = sizes.back();
  const HostInput input = make_input<T>(max_n, plan.seed + static_cast<std::uint64_t>(elem) * 1000);
  Buffer data(device, max_n * sizeof(T));
  device.upload(data.get(), input.bytes.data(), max_n * sizeof(T));

  Truth<T> truth;
  const std::size_t result_max = 16;
  Buffer result(device, result_max);
  std::vector<unsigned char> host_result(result_max), got(result_max);

  for (std::size_t n : sizes) {
    truth.extend(input.as<T>(), n);
    for (OpKind op : ops) {
      const Case c{elem, op};
      const std::size_t rbytes = result_bytes(elem, op);
      // reducelab's float sums must equal the CPU backend's bits.
      std::vector<unsigned char> cpu_bits;
      const bool need_cpu_bits = is_floating(elem) && op == OpKind::sum && library_built() &&
                                 std::find(plan.impls.begin(), plan.impls.end(), Impl::reducelab) != plan.impls.end();
      if (need_cpu_bits) {
        cpu_bits.resize(rbytes);
        cpu_reduce(elem, op, input.as<T>(), n, cpu_bits.data());
      }
      for (Impl impl : plan.impls) {
        if (!absent_because(impl, c, false).empty()) continue;  // add_absence_notes says why
        Target target;
        try {
          switch (impl) {
            case Impl::reducelab:
            case Impl::reducelab_nondet:
              target.call = make_reducelab_call(elem, op, data.get(), n, result.get(), device.stream(),
                                                impl == Impl::reducelab);
              break;
            case Impl::cub:
              target.call = make_cub_call(elem, op, data.get(), n, result.get(), device.stream());
              break;
            case Impl::thrust:
              target.call = make_thrust_call(elem, op, data.get(), n, host_result.data(), device.stream());
              target.host_result = true;
              break;
          }
        } catch (const std::exception& ex) {
          Row row;
          row.impl = impl;
          row.c = c;
          row.n = n;
          row.bytes = n * sizeof(T);
          row.status = "error";
          row.note = ex.what();
          report.rows.push_back(row);
          continue;
        }
        const std::vector<unsigned char>* same = impl == Impl::reducelab && need_cpu_bits ? &cpu_bits : nullptr;
        for (L2 mode : plan.l2) {
          Row row;
          row.impl = impl;
          row.c = c;
          row.n = n;
          row.bytes = n * sizeof(T);
          row.l2 = mode;
          try {
            std::vector<double> us;
            bool all_ok = true;
            for (int rep = -1; rep < plan.repeats; ++rep) {  // rep -1: the warm-up, verified, not timed
              // Poison the result so an unwritten one cannot pass.
              if (target.host_result) std::memset(host_result.data(), 0xFF, rbytes);
              else device.fill(result.get(), 0xFF, rbytes);
              if (mode == L2::flushed) device.flush_l2();
              if (rep < 0) {
                (*target.call)();
                device.synchronize();
              } else {
                us.push_back(1e3 * device.time_ms([&] { (*target.call)(); }));
              }
              if (target.host_result) got = host_result;
              else device.download(got.data(), result.get(), rbytes);
              const Verdict v = judge<T>(op, got.data(), truth, same, "reducelab::cpu::reduce");
              record(row, v, rep, all_ok);
            }
            finish(row, us, all_ok);
          } catch (const std::exception& ex) {
            row.status = "error";
            row.verified = false;
            row.note = ex.what();
          }
          report.rows.push_back(row);
        }
      }
    }
  }
}

}  // namespace

Report run_gpu(const Plan& plan_in, Device& device) {
  Report report;
  report.plan = plan_in;
  Plan& plan = report.plan;
  if (plan.repeats == 0) plan.repeats = 20;
  const DeviceInfo& info = device.info();
  if (info.backend != Backend::cuda) throw UsageError("bench: needs a CUDA device, or --backend cpu");
  report.backend = "cuda";
  report.device_name = info.name;
  report.versions = cuda_versions();
  report.device = to_json(info);
  report.device["cuda_versions"] = report.versions;
  report.read_ceiling_gbs = device.read_ceiling_gbs();
  report.empty_launch_us = empty_launch_us(device, 101);
  device.flush_l2();  // allocates the flush buffer before free memory is read
  device.synchronize();
  if (std::find(plan.impls.begin(), plan.impls.end(), Impl::thrust) != plan.impls.end())
    note_once(report, "thrust: thrust::reduce allocates temporary storage and copies its result to the host on "
                      "every call; its times include both, as a caller pays them");
  add_absence_notes(report, false);
  for (const auto& [elem, ops] : by_elem(plan.cases))
    with_elem(elem, [&]<class T>() { sweep_elem_gpu<T>(report, device, elem, ops); });
  derive(report);
  return report;
}

// ---------------------------------------------------------------------------------------------
// The CPU backend

namespace {

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "this CPU";
}

template <class T>
void sweep_elem_cpu(Report& report, Elem elem, const std::vector<OpKind>& ops) {
  const Plan& plan = report.plan;
  const std::size_t host_free = host_available_bytes();
  std::vector<std::size_t> sizes;
  for (std::size_t n : plan.sizes) {
    if (n * sizeof(T) > host_free / 10 * 8)
      skip(report, fmt::format("{} n = {} skipped: its {} input does not fit in the {} of available host memory",
                                    name(elem), size_text(n), bytes_text(n * sizeof(T)), bytes_text(host_free)));
    else
      sizes.push_back(n);
  }
  if (sizes.empty()) return;
  const HostInput input = make_input<T>(sizes.back(), plan.seed + static_cast<std::uint64_t>(elem) * 1000);
  Truth<T> truth;
  std::vector<unsigned char> got(16), one_thread(16);
  for (std::size_t n : sizes) {
    truth.extend(input.as<T>(), n);
    for (OpKind op : ops) {
      const Case c{elem, op};
      if (!absent_because(Impl::reducelab, c, true).empty()) continue;
      Row row;
      row.impl = Impl::reducelab;
      row.c = c;
      row.n = n;
      row.bytes = n * sizeof(T);
      row.cpu = true;
      try {
        // The order depends on n alone: one thread must give the bits all cores give.
        const bool float_sum = is_floating(elem) && op == OpKind::sum;
        if (float_sum) cpu_reduce(elem, op, input.as<T>(), n, one_thread.data(), 1);
        std::vector<double> us;
        bool all_ok = true;
        for (int rep = -1; rep < plan.repeats; ++rep) {
          std::fill(got.begin(), got.end(), 0xFF);
          const auto t0 = std::chrono::steady_clock::now();
          cpu_reduce(elem, op, input.as<T>(), n, got.data());
          const auto t1 = std::chrono::steady_clock::now();
          if (rep >= 0) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
          const Verdict v = judge<T>(op, got.data(), truth, float_sum ? &one_thread : nullptr,
                                     "reducelab::cpu::reduce on one thread");
          record(row, v, rep, all_ok);
        }
        finish(row, us, all_ok);
      } catch (const std::exception& ex) {
        row.status = "error";
        row.note = ex.what();
      }
      report.rows.push_back(row);
    }
  }
}

}  // namespace

Report run_cpu(const Plan& plan_in) {
  if (!library_built())
    throw std::runtime_error("bench --backend cpu: this reducelab was built without the library (no reducelab_reduce target)");
  Report report;
  report.plan = plan_in;
  Plan& plan = report.plan;
  if (plan.repeats == 0) plan.repeats = 10;
  report.backend = "cpu";
  report.device_name = cpu_name();
  report.device = {{"name", report.device_name}, {"backend", "cpu"}, {"threads", host_threads()}};
  note_once(report, "cub, thrust and reducelab-nondet run only on a GPU: this is --backend cpu, which times "
                    "reducelab::cpu::reduce on every core (a steady clock around each call)");
  add_absence_notes(report, true);
  for (const auto& [elem, ops] : by_elem(plan.cases))
    with_elem(elem, [&]<class T>() { sweep_elem_cpu<T>(report, elem, ops); });
  derive(report);
  return report;
}

// ---------------------------------------------------------------------------------------------
// Output

nlohmann::json to_json(const Report& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& x : r.rows)
    rows.push_back({{"impl", std::string(name(x.impl))},
                    {"dtype", std::string(name(x.c.elem))},
                    {"op", std::string(reducelab::name(x.c.op))},
                    {"n", x.n},
                    {"bytes", x.bytes},
                    {"l2", x.cpu ? "n/a" : std::string(name(x.l2))},
                    {"repeats", x.repeats},
                    {"us_median", x.us_median},
                    {"us_min", x.us_min},
                    {"us_max", x.us_max},
                    {"us_p25", x.us_p25},
                    {"us_p75", x.us_p75},
                    {"gb_per_s", x.gb_per_s},
                    {"pct_of_read_ceiling", x.pct_of_read_ceiling},
                    {"limit_us", x.limit_us},
                    {"pct_of_limit", x.pct_of_limit},
                    {"ratio_to_cub", x.ratio_to_cub},
                    {"result", x.result},
                    {"expected", x.expected},
                    {"check", x.check},
                    {"status", x.status},
                    {"verified", x.verified},
                    {"note", x.note}});
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& c : r.plan.cases)
    cases.push_back({{"dtype", std::string(name(c.elem))},
                     {"op", std::string(reducelab::name(c.op))},
                     {"result_bytes", result_bytes(c.elem, c.op)}});
  nlohmann::json impls = nlohmann::json::array(), l2 = nlohmann::json::array();
  for (Impl i : r.plan.impls) impls.push_back(std::string(name(i)));
  for (L2 m : r.plan.l2) l2.push_back(std::string(name(m)));
  return {{"command", "bench"},
          {"device", r.device},
          {"backend", r.backend},
          {"read_ceiling_gbs", r.read_ceiling_gbs},
          {"empty_launch_us", r.empty_launch_us},
          {"repeats", r.plan.repeats},
          {"seed", r.plan.seed},
          {"sizes", r.plan.sizes},
          {"cases", cases},
          {"impls", impls},
          {"l2_modes", r.backend == "cpu" ? nlohmann::json::array() : l2},
          {"notes", r.notes},
          {"skipped", r.skipped},
          {"summary", summary(r)},
          {"all_verified", r.all_verified()},
          {"rows", rows}};
}

namespace {

std::string num(double v, int digits) { return v > 0 ? fmt::format("{:.{}f}", v, digits) : "-"; }

// Microseconds with three significant figures or more: 5.21, 24.5, 949.
std::string us_text(double us) {
  if (us <= 0) return "-";
  return us < 10 ? fmt::format("{:.2f}", us) : us < 100 ? fmt::format("{:.1f}", us) : fmt::format("{:.0f}", us);
}

std::vector<std::string> header(bool cpu) {
  if (cpu) return {"impl", "n", "bytes", "us", "min-max", "GB/s", "verified"};
  return {"impl", "n", "bytes", "L2", "us", "min-max", "GB/s", "%ceiling", "%limit", "vs CUB", "verified"};
}

std::vector<std::string> cells(const Row& x) {
  std::string verified = x.status;
  if (!x.verified) {
    verified += x.status == "error" ? ": " + x.note : fmt::format(": got {} want {} ({})", x.result, x.expected, x.check);
    if (verified.size() > 120) verified = verified.substr(0, 117) + "...";
  }
  std::vector<std::string> c = {std::string(name(x.impl)), size_text(x.n), bytes_text(x.bytes)};
  if (!x.cpu) c.push_back(std::string(name(x.l2)));
  c.insert(c.end(), {us_text(x.us_median), x.us_median > 0 ? us_text(x.us_min) + "-" + us_text(x.us_max) : "-",
                     num(x.gb_per_s, 1)});
  if (!x.cpu)
    c.insert(c.end(), {num(x.pct_of_read_ceiling, 1), num(x.pct_of_limit, 1),
                       x.ratio_to_cub > 0 ? fmt::format("{:.2f}x", x.ratio_to_cub) : "-"});
  c.push_back(verified);
  return c;
}

}  // namespace

void print(const Report& r, Format f, std::ostream& out) {
  if (f == Format::json) {
    out << to_json(r).dump(2) << '\n';
    return;
  }
  const bool cpu = r.backend == "cpu";
  if (f == Format::csv) {
    std::vector<std::string> h = {"impl", "dtype", "op", "n", "bytes", "l2", "repeats", "us_median", "us_min",
                                  "us_max", "us_p25", "us_p75", "gb_per_s", "pct_of_read_ceiling", "limit_us",
                                  "pct_of_limit", "ratio_to_cub", "result", "expected", "check", "status",
                                  "verified", "note"};
    std::vector<std::vector<std::string>> rows;
    auto g = [](double v) { return fmt::format("{:.6g}", v); };
    for (const auto& x : r.rows)
      rows.push_back({std::string(name(x.impl)), std::string(name(x.c.elem)), std::string(reducelab::name(x.c.op)),
                      std::to_string(x.n), std::to_string(x.bytes), x.cpu ? "n/a" : std::string(name(x.l2)),
                      std::to_string(x.repeats), g(x.us_median), g(x.us_min), g(x.us_max), g(x.us_p25), g(x.us_p75),
                      g(x.gb_per_s), g(x.pct_of_read_ceiling), g(x.limit_us), g(x.pct_of_limit), g(x.ratio_to_cub),
                      x.result, x.expected, x.check, x.status, x.verified ? "true" : "false", x.note});
    print_csv(h, rows, out);
    return;
  }
  if (cpu) {
    out << fmt::format("reducelab bench | backend cpu: reducelab::cpu::reduce on {} ({} threads)\n", r.device_name,
                       r.device.value("threads", 0));
    out << fmt::format("{} repeats per row after a verified warm-up; median us (steady clock) and min-max\n",
                       r.plan.repeats);
  } else {
    const auto& d = r.device;
    out << fmt::format("reducelab bench | device: {} (sm_{}), {} SMs, L2 {}, {} | backend cuda\n", r.device_name,
                       d.value("compute_capability", std::string("?")), d.value("sm_count", 0),
                       bytes_text(d.value("l2_bytes", std::size_t(0))), r.versions);
    out << fmt::format("read ceiling {:.0f} GB/s (read-only kernel, 16-byte loads, 1 GiB, median) | empty launch {:.2f} us "
                       "(CUDA events, median) | limit(n) = empty launch + bytes / read ceiling\n",
                       r.read_ceiling_gbs, r.empty_launch_us);
    out << fmt::format("{} repeats per row after a verified warm-up: median us (CUDA events) and min-max; L2 'flushed' = "
                       "2x L2 read before each repeat, 'warm' = not\n",
                       r.plan.repeats);
    out << "%ceiling = GB/s / read ceiling; %limit = limit(n) / time; vs CUB = CUB's time / this time\n";
  }
  for (const auto& c : r.plan.cases) {
    std::vector<const Row*> rows;
    for (const auto& x : r.rows)
      if (x.c == c) rows.push_back(&x);
    if (rows.empty()) continue;
    std::stable_sort(rows.begin(), rows.end(), [](const Row* a, const Row* b) {
      if (a->l2 != b->l2) return a->l2 < b->l2;
      if (a->n != b->n) return a->n < b->n;
      return a->impl < b->impl;
    });
    out << '\n' << case_text(c) << '\n';
    std::vector<std::vector<std::string>> table;
    for (const Row* x : rows) table.push_back(cells(*x));
    print_table(header(cpu), table, out, 1, true);
  }
  if (!r.notes.empty()) {
    out << "\nnotes:\n";
    for (const auto& n : r.notes) out << "  - " << n << '\n';
  }
  out << '\n' << summary(r) << '\n';
}

// ---------------------------------------------------------------------------------------------
// The subcommand

namespace {

bool executable(const std::filesystem::path& p) { return ::access(p.c_str(), X_OK) == 0; }

// scripts/plot-bench, wherever this binary runs from: $REDUCELAB_PLOT_BENCH, beside the binary
// (scripts/gpu-pack copies it there), the source tree's scripts/ above a build folder, or the
// source tree this binary was built from.
std::filesystem::path find_plot_script() {
  if (const char* env = std::getenv("REDUCELAB_PLOT_BENCH"); env && *env) return env;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    if (executable(self.parent_path() / "plot-bench")) return self.parent_path() / "plot-bench";
    for (auto dir = self.parent_path(); dir.has_relative_path(); dir = dir.parent_path())
      if (executable(dir / "scripts" / "plot-bench")) return dir / "scripts" / "plot-bench";
  }
#ifdef RL_SOURCE_DIR
  if (executable(std::filesystem::path(RL_SOURCE_DIR) / "scripts" / "plot-bench"))
    return std::filesystem::path(RL_SOURCE_DIR) / "scripts" / "plot-bench";
#endif
  return {};
}

// Runs the script on the JSON; returns its exit status (it prints its own one-line reason).
int run_plot(const std::filesystem::path& script, const std::string& json, const std::vector<std::string>& files) {
  std::vector<std::string> argv_s = {script.string(), json};
  for (const auto& f : files) argv_s.insert(argv_s.end(), {"-o", f});
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::cout.flush();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("bench --plot: fork failed");
  if (pid == 0) {
    ::execv(argv[0], argv.data());
    std::fprintf(stderr, "reducelab: bench --plot: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  if (!f) throw std::runtime_error(fmt::format("cannot write {}", path));
}

}  // namespace

std::string cost_estimate(const Plan& plan, std::size_t host_free) {
  std::size_t largest = 0, total = 0;
  Elem largest_elem = Elem::int8;
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

// Every file named is checked before anything runs: no sweep ends on a path it cannot write.
void check_output_folders(const Args& a, const Plan& p) {
  auto check_path = [](const char* flag, const std::string& path, const std::string& given) {
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
      throw UsageError(fmt::format("{} {}: folder {} does not exist", flag, given, dir.string()));
    if (std::filesystem::is_directory(path, ec)) throw UsageError(fmt::format("{} {}: is a folder", flag, given));
  };
  if (!a.out.empty()) check_path("--out", a.out, a.out);
  if (!a.json.empty()) check_path("--json", a.json, a.json);
  for (const auto& f : p.plot_files) check_path("--plot", f, a.plot);
}

int command(const Args& args, std::ostream& out) {
  const Plan plan = parse(args);  // bad flags fail before anything runs
  check_output_folders(args, plan);
  if (const std::string cost = cost_estimate(plan, host_available_bytes()); !cost.empty())
    std::fprintf(stderr, "reducelab: %s\n", cost.c_str());
  Report report;
  if (plan.cpu) {
    report = run_cpu(plan);
  } else {
    std::string why;
    if (!cuda_usable(&why))
      throw std::runtime_error(fmt::format("bench: {}; bench needs a GPU (pass --backend cpu to time the CPU backend)", why));
    auto device = open_cuda_device();
    report = run_gpu(plan, *device);
  }
  std::ostringstream text;
  print(report, plan.format, text);
  if (plan.out.empty()) out << text.str();
  else write_file(plan.out, text.str());

  std::string json_path = plan.json;
  if (json_path.empty() && !plan.plot_files.empty())
    json_path = std::filesystem::path(plan.plot_files.front()).replace_extension(".json").string();
  if (!json_path.empty()) write_file(json_path, to_json(report).dump(2) + "\n");

  int status = 0;
  if (const std::string why = report.shortfall(); !why.empty()) {
    out.flush();
    std::fprintf(stderr, "reducelab: error: bench: %s\n", why.c_str());
    status = 1;
  }
  if (!plan.plot_files.empty()) {
    const auto script = find_plot_script();
    if (script.empty()) {
      std::fprintf(stderr, "reducelab: bench --plot: scripts/plot-bench not found (set REDUCELAB_PLOT_BENCH); the JSON is in %s\n",
                   json_path.c_str());
      return 1;
    }
    if (run_plot(script, json_path, plan.plot_files) != 0) return 1;
  }
  return status;
}

}  // namespace rl::lab::bench
