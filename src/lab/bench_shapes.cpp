// `reducelab bench --shape RxC [--axis 0|1]` and `--segments FILE|DIST` (bench_shapes.hpp).
#include "lab/bench_shapes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <iostream>
#include <random>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "lab/bench_shapes_calls.hpp"
#include "lab/device.hpp"
#include "lab/errors.hpp"
#include "lab/flags.hpp"
#include "lab/input.hpp"
#include "lab/sizes.hpp"
#include "lab/measure.hpp"
#include "lab/report.hpp"
#include "reducelab/version.hpp"
#include "nlohmann/json.hpp"
#include "reducelab/segments.hpp"

namespace rl::lab::bench {

#if !defined(RL_BENCH_WITH_CUB)
std::unique_ptr<Call> make_cub_segmented_call(Dtype, OpKind, const void*, std::size_t, const std::int64_t*,
                                              const std::int64_t*, void*, void*) {
  return nullptr;
}
#endif

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= s.size()) {
    const std::size_t next = s.find(sep, at);
    out.push_back(s.substr(at, next == std::string::npos ? std::string::npos : next - at));
    if (next == std::string::npos) break;
    at = next + 1;
  }
  return out;
}

struct Layout {
  bool matrix = false;
  std::uint64_t rows = 0, cols = 0;
  std::vector<int> axes;
  std::vector<std::int64_t> begin, end;  // segments
  std::uint64_t n = 0;                   // input elements
  std::string text;                      // "16384x16384" or "segments uniform:1..64 (n = ...)"
};

// Segment lengths from a DIST or a file of lengths; consecutive segments over [0, n).
std::vector<std::uint64_t> segment_lengths(const std::string& spec, std::uint64_t n, std::uint64_t seed) {
  std::vector<std::string> parts = split(spec, ':');
  const bool zeros = parts.size() > 1 && parts.back() == "zeros";
  if (zeros) parts.pop_back();
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> lengths;
  auto fill = [&](auto draw) {
    for (std::uint64_t total = 0; total < n;) {
      std::uint64_t len = (zeros && lengths.size() % 8 == 7) ? 0 : std::min(draw(), n - total);
      lengths.push_back(len);
      total += len;
    }
  };
  if (parts[0] == "uniform" && parts.size() == 2) {
    const auto range = parts[1].find("..");
    if (range == std::string::npos) throw UsageError(fmt::format("--segments: '{}' needs uniform:A..B", spec));
    const std::uint64_t lo = parse_size("--segments", parts[1].substr(0, range), spec);
    const std::uint64_t hi = parse_size("--segments", parts[1].substr(range + 2), spec);
    if (lo < 1 || hi < lo) throw UsageError(fmt::format("--segments: '{}' needs 1 <= A <= B", spec));
    std::uniform_int_distribution<std::uint64_t> d(lo, hi);
    fill([&] { return d(rng); });
  } else if (parts[0] == "powerlaw" && parts.size() == 1) {
    // Pareto lengths, exponent 1.2, from 1 up to 2^20: mostly short segments, a few very long.
    std::uniform_real_distribution<double> u(0.0, 1.0);
    fill([&] { return static_cast<std::uint64_t>(std::min(std::pow(1.0 - u(rng), -1.0 / 1.2), 1048576.0)); });
  } else {
    std::ifstream in(spec);
    if (!in) throw UsageError(fmt::format("--segments: '{}' is neither a DIST (uniform:A..B, powerlaw, with :zeros) nor a readable file", spec));
    std::string word;
    while (in >> word) lengths.push_back(parse_size("--segments " + spec, word));
    if (lengths.empty()) throw UsageError(fmt::format("--segments: '{}' holds no lengths", spec));
  }
  return lengths;
}

Layout parse_layout(const ShapeArgs& a) {
  Layout l;
  if (!a.shape.empty() && !a.segments.empty()) throw UsageError("--shape and --segments: pick one");
  if (!a.shape.empty()) {
    const auto x = a.shape.find_first_of("xX");
    if (x == std::string::npos) throw UsageError(fmt::format("--shape: '{}' is not RxC", a.shape));
    l.matrix = true;
    l.rows = parse_size("--shape", a.shape.substr(0, x), a.shape);
    l.cols = parse_size("--shape", a.shape.substr(x + 1), a.shape);
    if (l.rows == 0 || l.cols == 0 || l.rows > (std::uint64_t(1) << 40) / l.cols)
      throw UsageError(fmt::format("--shape: '{}' must have 1..2^40 elements", a.shape));
    l.n = l.rows * l.cols;
    if (a.axis.empty()) l.axes = {1, 0};
    else if (a.axis == "0" || a.axis == "1") l.axes = {a.axis[0] - '0'};
    else throw UsageError(fmt::format("--axis: '{}' is not 0 or 1", a.axis));
    l.text = fmt::format("{}x{}", l.rows, l.cols);
  } else {
    if (!a.axis.empty()) throw UsageError("--axis goes with --shape");
    const std::uint64_t n = a.n.empty() ? (std::uint64_t(1) << 26) : parse_size("--n", a.n);
    const auto lengths = segment_lengths(a.segments, n, a.seed);
    std::int64_t at = 0;
    for (auto len : lengths) {
      l.begin.push_back(at);
      at += static_cast<std::int64_t>(len);
      l.end.push_back(at);
    }
    l.n = static_cast<std::uint64_t>(at);
    l.axes = {-1};
    l.text = fmt::format("segments {} ({} of them)", a.segments, lengths.size());
  }
  return l;
}

struct ShapeRow {
  std::string impl, dtype, op, layout, status, note;
  int axis = -1;
  // bytes: the input's; offset_bytes: the segments' begin and end offsets (none for a matrix);
  // written_bytes: the results'.
  std::uint64_t pieces = 0, bytes = 0, offset_bytes = 0, written_bytes = 0, mismatches = 0;
  double us_median = 0, us_min = 0, us_max = 0, gb_per_s = 0, pct_of_read_ceiling = 0, ratio_to_cub = 0;
  double floor_us = 0, pct_of_floor = 0;
};

// The run's two ceilings, measured once per process.
struct Ceilings {
  double read_gbs = 0, copy_gbs = 0;
};

void set_times(ShapeRow& r, std::vector<double> us, const Ceilings& c) {
  const TimeStats t = time_stats(std::move(us));
  r.us_median = t.median;
  r.us_min = t.min;
  r.us_max = t.max;
  r.gb_per_s = static_cast<double>(r.bytes) / (r.us_median * 1e3);
  if (c.read_gbs > 0) r.pct_of_read_ceiling = 100.0 * r.gb_per_s / c.read_gbs;
  r.floor_us = moved_floor_us(static_cast<double>(r.bytes + r.offset_bytes), static_cast<double>(r.written_bytes),
                              c.read_gbs, c.copy_gbs);
  if (r.floor_us > 0) r.pct_of_floor = 100.0 * r.floor_us / r.us_median;
}

// The lab's loop in cold mode (each call behind an L2 flush); the warm-up loads the module and
// allocates workspaces. The result is verified once, after the loop.
std::vector<double> time_call(Device& device, const std::function<void()>& call, int repeats) {
  Measured m;
  m.call = call;
  std::vector<double> us = lab::measure(&device, TimingMode::cold, repeats, 1, m);
  for (double& t : us) t *= 1e3;
  return us;
}

// One dtype x op over one layout (and axis): reducelab, then CUB where it applies.
template <class T, class Op>
void measure(Device& device, const Layout& l, int axis, Dtype elem, OpKind opk, const void* d_input,
             const std::vector<T>& host, const std::int64_t* d_begin, const std::int64_t* d_end, int repeats,
             const Ceilings& ceiling, std::vector<ShapeRow>& rows) {
  using R = reducelab::result_t<T, Op>;
  const reducelab::Matrix m{l.rows, l.cols, 0};
  const std::uint64_t pieces = l.matrix ? (axis == 1 ? l.rows : l.cols) : l.begin.size();
  std::vector<R> want(pieces);
  reducelab::Status st = l.matrix ? reducelab::cpu::reduce_axis(host.data(), m, axis, Op{}, want.data())
                                  : reducelab::cpu::reduce_segments(host.data(), pieces, l.begin.data(), l.end.data(),
                                                                    Op{}, want.data());
  if (!st) throw std::runtime_error("bench: the CPU reference failed: " + st.message());
  auto length_of = [&](std::uint64_t p) {
    return l.matrix ? (axis == 1 ? l.cols : l.rows)
                    : static_cast<std::uint64_t>(std::max<std::int64_t>(0, l.end[p] - l.begin[p]));
  };

  Buffer out(device, std::max<std::size_t>(1, pieces * sizeof(R)));
  std::vector<R> got(pieces);
  auto base = [&](const std::string& impl) {
    ShapeRow r;
    r.impl = impl, r.dtype = std::string(name(elem)), r.op = std::string(core::name(opk)), r.layout = l.text;
    r.axis = axis, r.pieces = pieces, r.bytes = l.n * sizeof(T);
    r.offset_bytes = l.matrix ? 0 : 2 * pieces * sizeof(std::int64_t);
    r.written_bytes = pieces * sizeof(R);
    return r;
  };
  auto poison = [&] { device.fill(out.get(), 0x5a, pieces * sizeof(R)); };

  // reducelab: the same bits as the CPU backend, element by element.
  ShapeRow mine = base("reducelab");
  const auto* x = static_cast<const T*>(d_input);
  auto call = [&] {
    const reducelab::Status s =
        l.matrix ? reducelab::reduce_axis(x, m, axis, Op{}, static_cast<R*>(out.get()),
                                          static_cast<reducelab::stream_t>(device.stream()))
                 : reducelab::reduce_segments(x, pieces, d_begin, d_end, Op{}, static_cast<R*>(out.get()),
                                              static_cast<reducelab::stream_t>(device.stream()));
    if (!s) throw std::runtime_error("bench: reducelab failed: " + s.message());
  };
  poison();
  set_times(mine, time_call(device, call, repeats), ceiling);
  device.download(got.data(), out.get(), pieces * sizeof(R));
  for (std::uint64_t p = 0; p < pieces; ++p)
    if (std::memcmp(&got[p], &want[p], sizeof(R)) != 0) ++mine.mismatches;
  mine.status = mine.mismatches == 0 ? "ok" : "MISMATCH";
  const std::size_t mine_at = rows.size();
  rows.push_back(mine);

  // CUB: rows and segments (a column is not a range of offsets), the cases bench instantiates.
  // d_begin/d_end are the segments' offsets, or for a matrix its rows' (run_shapes).
  if (!vendor_has(elem, opk) || (l.matrix && axis == 0)) return;
  auto cub = make_cub_segmented_call(elem, opk, d_input, pieces, d_begin, d_end, out.get(), device.stream());
  if (!cub) return;
  ShapeRow theirs = base("cub-segmented");
  poison();
  set_times(theirs, time_call(device, [&] { (*cub)(); }, repeats), ceiling);
  device.download(got.data(), out.get(), pieces * sizeof(R));
  for (std::uint64_t p = 0; p < pieces; ++p) {
    if (length_of(p) == 0) continue;  // CUB writes its own initial value for an empty segment
    if constexpr (std::is_floating_point_v<R> && std::is_same_v<Op, reducelab::op::sum>) {
      // CUB sums floats in float, in its own order: within its rounding (inputs lie in [-1, 1)).
      const double bound = 4.0 * (static_cast<double>(length_of(p)) + 1.0) * std::numeric_limits<float>::epsilon();
      if (!(std::fabs(static_cast<double>(got[p]) - static_cast<double>(want[p])) <= bound)) ++theirs.mismatches;
    } else if (std::memcmp(&got[p], &want[p], sizeof(R)) != 0) {
      ++theirs.mismatches;
    }
  }
  theirs.status = theirs.mismatches == 0 ? "ok" : "MISMATCH";
  rows[mine_at].ratio_to_cub = theirs.us_median / rows[mine_at].us_median;
  theirs.ratio_to_cub = 1.0;
  rows.push_back(theirs);
}

}  // namespace

bool wants_shapes(const ShapeArgs& a) { return !a.shape.empty() || !a.segments.empty(); }

double moved_floor_us(double read_bytes, double written_bytes, double read_ceiling_gbs, double copy_ceiling_gbs) {
  if (read_ceiling_gbs <= 0 || copy_ceiling_gbs <= 0) return 0;
  const double us_per_byte_read = 1.0 / (read_ceiling_gbs * 1e3);
  const double us_per_byte_written = std::max(0.0, 2.0 / (copy_ceiling_gbs * 1e3) - us_per_byte_read);
  return read_bytes * us_per_byte_read + written_bytes * us_per_byte_written;
}

ShapesReport run_shapes(const ShapeArgs& a) {
  const Layout layout = parse_layout(a);
  const auto elems = a.dtypes.empty() ? std::vector<Dtype>{Dtype::int32, Dtype::float32, Dtype::half, Dtype::float64}
                                      : dtype_list_flag("--dtypes", a.dtypes, Rows::all);
  const auto ops = a.ops.empty() ? std::vector<OpKind>{OpKind::sum, OpKind::max} : op_list_flag("--ops", a.ops, Rows::lab);
  const int repeats = a.repeats.empty() ? 20 : count_flag("--repeat", a.repeats, 1, 100000, "timed repeats");
  if (a.format != "table" && a.format != "json") throw UsageError(fmt::format("--format: '{}' is not table or json", a.format));
  std::string why;
  if (!cuda_usable(&why)) throw std::runtime_error(fmt::format("bench --shape/--segments: {}; it needs a GPU", why));
  auto device = open_cuda_device();
  const Ceilings ceiling{device->read_ceiling_gbs(), device->copy_ceiling_gbs()};
  device->flush_l2();

  std::vector<ShapeRow> rows;
  // The offsets CUB's segmented reduce reads: the segments', or a matrix's rows' (built once for
  // every dtype and op: 4 GiB for 2^28 rows).
  Buffer d_begin, d_end;
  {
    std::vector<std::int64_t> row_begin, row_end;
    const bool rows_for_cub = layout.matrix && std::find(layout.axes.begin(), layout.axes.end(), 1) != layout.axes.end();
    if (rows_for_cub) {
      row_begin.resize(layout.rows), row_end.resize(layout.rows);
      for (std::uint64_t r = 0; r < layout.rows; ++r)
        row_begin[r] = static_cast<std::int64_t>(r * layout.cols), row_end[r] = row_begin[r] + static_cast<std::int64_t>(layout.cols);
    }
    const auto& b = layout.matrix ? row_begin : layout.begin;
    const auto& e = layout.matrix ? row_end : layout.end;
    const std::size_t bytes = std::max<std::size_t>(1, b.size() * sizeof(std::int64_t));
    d_begin = Buffer(*device, bytes), d_end = Buffer(*device, bytes);
    if (!b.empty()) {
      device->upload(d_begin.get(), b.data(), b.size() * sizeof(std::int64_t));
      device->upload(d_end.get(), e.data(), e.size() * sizeof(std::int64_t));
    }
  }
  for (Dtype e : elems) {
    core::with_dtype(e, [&]<class T>() {
      const std::vector<T> host = random_input<T>(layout.n, a.seed);
      Buffer d_input(*device, std::max<std::size_t>(1, layout.n * sizeof(T)));
      device->upload(d_input.get(), host.data(), layout.n * sizeof(T));
      for (OpKind op : ops)
        for (int axis : layout.axes)
          core::with_lab_op(op, [&]<class Op>() {
            measure<T, Op>(*device, layout, axis, e, op, d_input.get(), host,
                           static_cast<const std::int64_t*>(d_begin.get()), static_cast<const std::int64_t*>(d_end.get()),
                           repeats, ceiling, rows);
          });
    });
  }

  nlohmann::json j;
  j["command"] = "bench";
  j["reducelab_version"] = reducelab::version_string;
  j["device"] = to_json(device->info());
  j["device"]["backend"] = "cuda";
  j["params"] = {{"shape", a.shape}, {"axis", a.axis},       {"segments", a.segments}, {"n", layout.n},
                 {"dtypes", a.dtypes}, {"ops", a.ops},     {"repeats", repeats},     {"seed", a.seed},
                 {"format", a.format}, {"json", a.json},   {"mode", "cold"}};
  j["read_ceiling_gb_per_s"] = ceiling.read_gbs;
  j["copy_ceiling_gb_per_s"] = ceiling.copy_gbs;
  j["layout"] = layout.text;
  j["repeats"] = repeats;
  j["mode"] = "cold";
  j["rows"] = nlohmann::json::array();
  ShapesReport report;
  report.all_verified = true;
  for (const auto& r : rows) {
    report.all_verified = report.all_verified && r.status == "ok";
    j["rows"].push_back({{"impl", r.impl}, {"dtype", r.dtype}, {"op", r.op}, {"layout", r.layout}, {"axis", r.axis},
                         {"pieces", r.pieces}, {"bytes", r.bytes}, {"median_us", r.us_median}, {"min_us", r.us_min},
                         {"max_us", r.us_max}, {"gb_per_s", r.gb_per_s}, {"pct_of_read_ceiling", r.pct_of_read_ceiling},
                         {"offset_bytes", r.offset_bytes}, {"written_bytes", r.written_bytes}, {"floor_us", r.floor_us},
                         {"pct_of_floor", r.pct_of_floor}, {"ratio_to_cub", r.ratio_to_cub}, {"status", r.status}, {"verified", r.status == "ok"},
                         {"mismatches", r.mismatches}});
  }
  std::string t = fmt::format("{}: {} (read ceiling {:.0f} GB/s, copy ceiling {:.0f} GB/s moved), median of {} "
                              "repeats, cold (each call behind an L2 flush)\n",
                              device->info().name, layout.text, ceiling.read_gbs, ceiling.copy_gbs, repeats);
  t += fmt::format("{:<14} {:<7} {:<4} {:>4} {:>10} {:>11} {:>8} {:>7} {:>7} {:>7}  {}\n", "impl", "dtype", "op", "axis",
                   "pieces", "us", "GB/s", "%ceil", "%floor", "xCUB", "status");
  for (const auto& r : rows)
    t += fmt::format("{:<14} {:<7} {:<4} {:>4} {:>10} {:>11.1f} {:>8.0f} {:>7.1f} {:>7.1f} {:>7}  {}\n", r.impl, r.dtype,
                     r.op, r.axis < 0 ? std::string("-") : std::to_string(r.axis), r.pieces, r.us_median, r.gb_per_s,
                     r.pct_of_read_ceiling, r.pct_of_floor,
                     r.ratio_to_cub > 0 ? fmt::format("{:.2f}", r.ratio_to_cub) : "-",
                     r.status == "ok" ? r.status : fmt::format("{} ({} pieces)", r.status, r.mismatches));
  report.json = std::move(j);
  report.table = std::move(t);
  return report;
}

}  // namespace rl::lab::bench
