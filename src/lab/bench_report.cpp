// `reducelab bench`, its report: a Report as a table, CSV or JSON (docs/json.md).
#include <algorithm>
#include <ostream>

#include "fmt/format.h"
#include "lab/bench.hpp"
#include "lab/sizes.hpp"
#include "reducelab/version.hpp"

namespace rl::lab::bench {

namespace {

std::string mode_text(const Row& x) { return x.cpu ? std::string(kWallMode) : std::string(name(x.mode)); }

std::string case_text(const Case& c) {
  std::string s = fmt::format("{} {}", name(c.elem), core::name(c.op));
  if (c.op == OpKind::sum && result_bytes(c.elem, c.op) != size_of(c.elem))
    s += core::with_dtype(c.elem, []<class T>() {
      return std::string(std::is_same_v<reducelab::accumulate_t<T>, float> ? " (into float)"
                         : std::is_signed_v<reducelab::accumulate_t<T>> ? " (into int64)"
                                                                         : " (into uint64)");
    });
  return s;
}

// Every flag value needed to repeat the run, after defaults are resolved.
nlohmann::json params(const Report& r) {
  const Plan& p = r.plan;
  nlohmann::json dtypes = nlohmann::json::array(), ops = nlohmann::json::array(), impls = nlohmann::json::array(),
                 modes = nlohmann::json::array();
  for (const auto& c : p.cases) {
    const std::string d(name(c.elem)), o(core::name(c.op));
    if (std::find(dtypes.begin(), dtypes.end(), d) == dtypes.end()) dtypes.push_back(d);
    if (std::find(ops.begin(), ops.end(), o) == ops.end()) ops.push_back(o);
  }
  for (Impl i : p.impls) impls.push_back(std::string(name(i)));
  for (Mode m : p.modes) modes.push_back(std::string(name(m)));
  return {{"backend", r.backend},
          {"sizes", p.sizes},
          {"sizes_flag", p.sizes_text},
          {"step_flag", p.step_text},
          {"dtypes", dtypes},
          {"ops", ops},
          {"impls", impls},
          {"modes", modes},
          {"batch", p.batch},
          {"repeats", p.repeats},
          {"seed", p.seed},
          {"format", p.format_text},
          {"plot", p.plot_text},
          {"out", p.out},
          {"json", p.json}};
}

}  // namespace

nlohmann::json to_json(const Report& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& x : r.rows)
    rows.push_back({{"impl", std::string(name(x.impl))},
                    {"dtype", std::string(name(x.c.elem))},
                    {"op", std::string(core::name(x.c.op))},
                    {"n", x.n},
                    {"bytes", x.bytes},
                    {"mode", mode_text(x)},
                    {"calls", x.calls},
                    {"repeats", x.repeats},
                    {"median_us", x.us_median},
                    {"min_us", x.us_min},
                    {"max_us", x.us_max},
                    {"p25_us", x.us_p25},
                    {"p75_us", x.us_p75},
                    {"gb_per_s", x.gb_per_s},
                    {"pct_of_read_ceiling", x.pct_of_read_ceiling},
                    {"empty_launch_us", x.empty_launch_us},
                    {"limit_ceiling_gb_per_s", x.limit_ceiling_gbs},
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
                     {"op", std::string(core::name(c.op))},
                     {"result_bytes", result_bytes(c.elem, c.op)}});
  nlohmann::json impls = nlohmann::json::array(), modes = nlohmann::json::array();
  for (Impl i : r.plan.impls) impls.push_back(std::string(name(i)));
  if (r.backend == "cpu") {
    modes.push_back({{"mode", std::string(kWallMode)},
                     {"description", "a steady clock around each call of reducelab::cpu::reduce"},
                     {"empty_launch_us", 0.0}});
  } else {
    for (Mode m : r.plan.modes) {
      const auto f = r.empty_launch_us.find(m);
      modes.push_back({{"mode", std::string(name(m))},
                       {"description", std::string(describe(m))},
                       {"empty_launch_us", f == r.empty_launch_us.end() ? 0.0 : f->second}});
    }
  }
  nlohmann::json device = r.device.is_object() ? r.device : nlohmann::json::object();
  if (!device.contains("name")) device["name"] = r.device_name;
  device["backend"] = r.backend;
  return {{"command", "bench"},
          {"reducelab_version", reducelab::version_string},
          {"device", device},
          {"params", params(r)},
          {"read_ceiling_gb_per_s", r.read_ceiling_gbs},
          {"l2_read_ceiling_gb_per_s", r.l2_read_ceiling_gbs},
          {"modes", modes},
          {"sizes", r.plan.sizes},
          {"cases", cases},
          {"impls", impls},
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
  return {"impl", "n", "bytes", "mode", "us", "min-max", "GB/s", "%ceiling", "%limit", "vs CUB", "verified"};
}

std::vector<std::string> cells(const Row& x) {
  std::string verified = x.status;
  if (!x.verified) {
    verified += x.status == "error" ? ": " + x.note : fmt::format(": got {} want {} ({})", x.result, x.expected, x.check);
    if (verified.size() > 120) verified = verified.substr(0, 117) + "...";
  }
  std::vector<std::string> c = {std::string(name(x.impl)), size_text(x.n), bytes_text(x.bytes)};
  if (!x.cpu) c.push_back(x.mode == Mode::batch ? fmt::format("batch/{}", x.calls) : std::string(name(x.mode)));
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
    std::vector<std::string> h = {"impl", "dtype", "op", "n", "bytes", "mode", "calls", "repeats", "median_us",
                                  "min_us", "max_us", "p25_us", "p75_us", "gb_per_s", "pct_of_read_ceiling",
                                  "empty_launch_us", "limit_ceiling_gb_per_s", "limit_us", "pct_of_limit", "ratio_to_cub", "result", "expected",
                                  "check", "status", "verified", "note"};
    std::vector<std::vector<std::string>> rows;
    auto g = [](double v) { return fmt::format("{:.6g}", v); };
    for (const auto& x : r.rows)
      rows.push_back({std::string(name(x.impl)), std::string(name(x.c.elem)), std::string(core::name(x.c.op)),
                      std::to_string(x.n), std::to_string(x.bytes), mode_text(x), std::to_string(x.calls),
                      std::to_string(x.repeats), g(x.us_median), g(x.us_min), g(x.us_max), g(x.us_p25), g(x.us_p75),
                      g(x.gb_per_s), g(x.pct_of_read_ceiling), g(x.empty_launch_us), g(x.limit_ceiling_gbs), g(x.limit_us), g(x.pct_of_limit),
                      g(x.ratio_to_cub), x.result, x.expected, x.check, x.status, x.verified ? "true" : "false", x.note});
    print_csv(h, rows, out);
    return;
  }
  if (cpu) {
    out << fmt::format("reducelab bench | backend cpu: reducelab::cpu::reduce on {} ({} threads)\n", r.device_name,
                       r.device.value("threads", 0));
    out << fmt::format("{} repeats per row after a verified warm-up; median us (steady clock around each call: the CPU "
                       "backend's one timing mode) and min-max\n",
                       r.plan.repeats);
  } else {
    const auto& d = r.device;
    out << fmt::format("reducelab bench | device: {} (sm_{}), {} SMs, L2 {}, {} | backend cuda\n", r.device_name,
                       d.value("compute_capability", std::string("?")), d.value("sm_count", 0),
                       bytes_text(d.value("l2_bytes", std::size_t(0))), r.versions);
    out << fmt::format("read ceiling {:.0f} GB/s (read-only kernels, 16-byte loads, 1 GiB, the better median of two)\n", r.read_ceiling_gbs);
    if (r.l2_read_ceiling_gbs > 0)
      out << fmt::format("L2 read ceiling {:.0f} GB/s (the same loads over half the L2, 20 passes in one launch, median): "
                         "the ceiling of batch and sync rows whose input fits in L2\n",
                         r.l2_read_ceiling_gbs);
    out << fmt::format("{} repeats per row after a verified warm-up: median us per call and min-max. Timing modes, each "
                       "with its floor (an empty launch timed in that mode, median):\n",
                       r.plan.repeats);
    for (Mode m : r.plan.modes) {
      const auto fl = r.empty_launch_us.find(m);
      out << fmt::format("  {:<5}  empty launch {} us: {}\n", name(m),
                         us_text(fl == r.empty_launch_us.end() ? 0 : fl->second), describe(m));
    }
    out << "%ceiling = GB/s / read ceiling; %limit = (the mode's empty launch + bytes / the row's ceiling) / time; "
           "vs CUB = CUB's time / this time, same mode\n";
  }
  for (const auto& c : r.plan.cases) {
    std::vector<const Row*> rows;
    for (const auto& x : r.rows)
      if (x.c == c) rows.push_back(&x);
    if (rows.empty()) continue;
    std::stable_sort(rows.begin(), rows.end(), [](const Row* a, const Row* b) {
      if (a->mode != b->mode) return a->mode < b->mode;
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

}  // namespace rl::lab::bench
