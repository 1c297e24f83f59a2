#include "render/page.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "fmt/format.h"
#include "lab/report.hpp"
#include "render/explain_svg.hpp"
#include "render/svg.hpp"

namespace rl::render {
namespace {

bool emulated(const lab::RunReport& r) { return r.device.backend != gallery::Backend::cuda; }

std::string num(double v, int digits = 1) { return fmt::format("{:.{}f}", v, digits); }

const char* kStyle = R"(
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 24px auto; max-width: 1240px; color: #1c2833; }
h1 { font-size: 26px; margin-bottom: 4px; }
h2 { font-size: 20px; border-bottom: 2px solid #cfd8dc; padding-bottom: 4px; margin-top: 36px; }
h3 { font-size: 16px; margin: 22px 0 4px; }
p.note, .caption { color: #546e7a; font-size: 13px; }
table { border-collapse: collapse; font-size: 12.5px; margin: 8px 0; }
th, td { padding: 3px 8px; border-bottom: 1px solid #e0e6ea; text-align: right; white-space: nowrap; }
th { background: #eceff1; }
td.l, th.l { text-align: left; }
td.bad { color: #b71c1c; font-weight: bold; }
.figure { overflow-x: auto; border: 1px solid #e0e6ea; padding: 6px; margin: 8px 0; }
code { background: #f3f5f7; padding: 0 3px; }
nav a { margin-right: 14px; }
)";

std::string th(const std::vector<std::string>& cells, std::size_t left = 1) {
  std::string s = "<tr>";
  for (std::size_t k = 0; k < cells.size(); ++k)
    s += fmt::format("<th{}>{}</th>", k < left ? " class=\"l\"" : "", escape(cells[k]));
  return s + "</tr>\n";
}
std::string td(const std::vector<std::string>& cells, std::size_t left = 1, int bad = -1) {
  std::string s = "<tr>";
  for (std::size_t k = 0; k < cells.size(); ++k)
    s += fmt::format("<td{}>{}</td>", k < left ? " class=\"l\"" : (static_cast<int>(k) == bad ? " class=\"bad\"" : ""),
                     escape(cells[k]));
  return s + "</tr>\n";
}

std::string device_section(const PageInput& in) {
  const auto& r = in.run;
  std::string s = "<section id=\"device\"><h2>Device</h2>\n";
  s += fmt::format("<p>{}</p>\n", escape(lab::device_line(r.device, r.read_ceiling_gbs)));
  s += fmt::format("<p class=\"note\">n = {} | block {} | {} {} | accumulate {} | {} repeats, median{} | seed {}</p>\n",
                   r.plan.n, r.plan.block, core::name(r.plan.dtype), core::name(r.plan.op),
                   gallery::name(r.plan.accumulate), r.plan.repeats,
                   emulated(r) ? "" : (r.plan.flush_l2 ? ", L2 flushed between repeats" : ", L2 warm"), r.plan.seed);
  if (!in.command.empty()) s += fmt::format("<p class=\"note\">made by <code>{}</code></p>\n", escape(in.command));
  return s + "</section>\n";
}

std::string progression_section(const PageInput& in) {
  const auto& r = in.run;
  const bool gpu = !emulated(r);
  std::string s = "<section id=\"progression\"><h2>The progression</h2>\n";
  if (!gpu)
    s += "<p class=\"note\">On the SIMT emulator: times are CPU emulation, not GPU figures; their ratios are not the "
         "GPU's. Run <code>reducelab report</code> on a GPU for bandwidth.</p>\n";
  s += "<div class=\"figure\">" + progression_svg(r) + "</div>\n<table>\n";
  std::vector<std::string> header = {"kernel", "name", gpu ? "ms" : "cpu ms"};
  if (gpu) header.insert(header.end(), {"GB/s", "predicted GB/s", "% ceiling"});
  header.insert(header.end(), {"step", "total", "status"});
  s += th(header, 2);
  for (const auto& x : r.rows) {
    std::vector<std::string> c = {x.id, x.name, x.ms_median > 0 ? num(x.ms_median, 4) : "-"};
    if (gpu)
      c.insert(c.end(), {num(x.gb_per_s), x.predicted_gb_per_s ? num(*x.predicted_gb_per_s) : "n/a",
                         num(x.pct_of_read_ceiling)});
    c.insert(c.end(), {x.step_speedup > 0 ? fmt::format("{:.2f}x", x.step_speedup) : "-",
                       x.cumulative_speedup > 0 ? fmt::format("{:.2f}x", x.cumulative_speedup) : "-",
                       x.status + (x.note.empty() ? "" : " (" + x.note.substr(0, 90) + (x.note.size() > 90 ? "...)" : ")"))});
    s += td(c, 2, x.ok || x.status == "skipped" ? -1 : static_cast<int>(c.size()) - 1);
  }
  return s + "</table>\n</section>\n";
}

std::string littles_law_section(const PageInput& in) {
  const auto& r = in.run;
  std::string s = "<section id=\"littles-law\"><h2>Little's law</h2>\n";
  s += "<p>To sustain a bandwidth B against a memory latency L, L &times; B bytes must be in flight. A kernel keeps "
       "(resident threads per SM) &times; (independent loads per thread) &times; (bytes per load) in flight per SM, "
       "so it can read at most min(read ceiling, SMs &times; bytes in flight / L).</p>\n";
  if (emulated(r) || !r.latency) {
    s += "<p class=\"note\">n/a on this run: the emulator has no memory latency. On a GPU, <code>reducelab report"
         "</code> measures the latency with a pointer chase and fills this panel.</p>\n";
    return s + "</section>\n";
  }
  const auto& l = *r.latency;
  s += fmt::format(
      "<p>Measured here: DRAM latency {} ns (pointer chase over {:.0f} MiB), L2 latency {} ns (over {:.0f} MiB), read "
      "ceiling {} GB/s, {} SMs. To reach the ceiling from DRAM a GPU needs {:.0f} KiB in flight per SM.</p>\n",
      num(l.dram_ns), l.dram_buffer_bytes / 1048576.0, num(l.l2_ns), l.l2_buffer_bytes / 1048576.0,
      num(r.read_ceiling_gbs, 0), r.device.sm_count,
      r.read_ceiling_gbs * l.dram_ns / std::max(1, r.device.sm_count) / 1024.0);
  s += "<table>\n" + th({"kernel", "bytes in flight / SM", "predicted GB/s", "measured GB/s", "measured / predicted"});
  for (const auto& x : r.rows) {
    if (!x.predicted_gb_per_s) continue;
    const double ratio = *x.predicted_gb_per_s > 0 ? x.gb_per_s / *x.predicted_gb_per_s : 0;
    s += td({x.id, num(*x.bytes_in_flight_per_sm, 0), num(*x.predicted_gb_per_s), num(x.gb_per_s), num(ratio, 2)}, 1,
            ratio < 0.75 || ratio > 1.25 ? 4 : -1);
  }
  return s + "</table>\n</section>\n";
}

std::string counts_table(const analysis::Counts& c) {
  std::string s = "<table>\n" + th({"stride", "active threads", "active warps", "divergent", "SIMD util", "global acc",
                                    "lines", "sectors", "shared acc", "wavefronts", "bank ways"});
  auto row = [&](const std::string& label, const analysis::StepCounts& x) {
    s += td({label, std::to_string(x.active_threads), std::to_string(x.active_warps), std::to_string(x.divergent_warps),
             x.lane_slots ? fmt::format("{:.0f}%", 100 * x.simd_utilization) : "-", std::to_string(x.global_accesses),
             std::to_string(x.global_requests), std::to_string(x.global_sectors), std::to_string(x.shared_accesses),
             std::to_string(x.shared_wavefronts), x.bank_conflict_ways ? fmt::format("{}-way", x.bank_conflict_ways) : "-"});
  };
  for (const auto& x : c.steps) row(std::to_string(*x.step), x);
  row("total", c.totals);
  row("outside", c.outside);
  return s + "</table>\n";
}

std::string kernels_section(const PageInput& in) {
  std::string s = "<section id=\"kernels\"><h2>Each kernel, step by step</h2>\n";
  s += "<p class=\"note\">One execution of each kernel on the SIMT backend, every lane recorded: per reduction step, "
       "block 0's warps &times; 32 lanes, each warp's global accesses as the 128-byte lines and 32-byte sectors they "
       "touch, and the shared-memory lane &rarr; bank map of the step's worst access. The counts are the whole grid's.</p>\n";
  for (const auto& e : in.explained) {
    const auto& k = *e.plan.kernels.front();
    s += fmt::format("<article id=\"kernel-{}\"><h3>{} <code>{}</code></h3>\n", escape(k.id), escape(k.name), escape(k.id));
    s += fmt::format("<p>{}<br><span class=\"note\">Still slow: {}</span></p>\n", escape(k.technique), escape(k.still_slow));
    s += counts_table(e.counts);
    s += "<div class=\"figure\">" + explain_svg(e) + "</div>\n</article>\n";
  }
  for (const auto& [id, why] : in.unexplained)
    s += fmt::format("<p class=\"note\"><code>{}</code>: no pictures ({})</p>\n", escape(id), escape(why));
  return s + "</section>\n";
}

std::string bench_section(const PageInput& in) {
  std::string s = "<section id=\"bench\"><h2>Bench</h2>\n";
  if (!in.bench) {
    s += "<p class=\"note\">No bench JSON given: <code>reducelab bench --json FILE</code> on a GPU, then "
         "<code>reducelab report --bench FILE</code>.</p>\n";
    return s + "</section>\n";
  }
  s += fmt::format("<p class=\"note\">From {}.</p>\n<div class=\"figure\">{}</div>\n", escape(in.bench_source),
                   bench_svg(*in.bench));
  return s + "</section>\n";
}

}  // namespace

std::string progression_svg(const lab::RunReport& run) {
  const bool gpu = !emulated(run);
  Svg svg;
  std::vector<const lab::Row*> rows;
  for (const auto& x : run.rows)
    if (x.ms_median > 0) rows.push_back(&x);
  double top = 0;
  for (const auto* x : rows) {
    top = std::max(top, gpu ? x->gb_per_s : x->cumulative_speedup);
    if (gpu && x->predicted_gb_per_s) top = std::max(top, *x->predicted_gb_per_s);
  }
  if (gpu) top = std::max(top, run.read_ceiling_gbs);
  if (top <= 0) top = 1;
  const double x0 = 200, width = 760, bar = 16;
  svg.text(10, 18, gpu ? "GB/s of the bytes each kernel must read (bars), Little's-law prediction (ticks), read ceiling (dashed)"
                       : "speedup over reduceNeighbored, emulated on the CPU (not a GPU figure)",
           13, "start", R"(font-weight="bold")");
  double y = 32;
  for (const auto* x : rows) {
    const double v = gpu ? x->gb_per_s : x->cumulative_speedup;
    svg.text(x0 - 8, y + 12, x->id, 11, "end");
    svg.rect(x0, y, width * v / top, bar, x->ok ? "#1565c0" : "#c62828");
    svg.title_last(fmt::format("{}: {}", x->name, gpu ? num(v) + " GB/s" : fmt::format("{:.2f}x", v)));
    svg.text(x0 + width * v / top + 4, y + 12, gpu ? num(v, 0) : fmt::format("{:.2f}x", v), 10);
    if (gpu && x->predicted_gb_per_s) {
      const double px = x0 + width * *x->predicted_gb_per_s / top;
      svg.line(px, y - 2, px, y + bar + 2, "#ef6c00", 2.5);
      svg.title_last(fmt::format("predicted {} GB/s", num(*x->predicted_gb_per_s)));
    }
    y += bar + 5;
  }
  if (gpu && run.read_ceiling_gbs > 0) {
    const double cx = x0 + width * run.read_ceiling_gbs / top;
    svg.line(cx, 26, cx, y, "#2e7d32", 1.5, R"(stroke-dasharray="5,4")");
    svg.text(cx, y + 12, fmt::format("read ceiling {:.0f} GB/s", run.read_ceiling_gbs), 10, "middle");
  }
  svg.line(x0, 26, x0, y, "#455a64");
  svg.extend(x0 + width + 80, y + 16);
  return svg.str(gpu ? "the progression: GB/s per kernel" : "the progression: emulated speedup per kernel");
}

namespace {
// ", cold mode" for a timing mode; ", L2 flushed" for the l2 field of earlier files.
std::string r_mode_label(const std::string& mode) {
  return mode == "flushed" || mode == "warm" ? ", L2 " + mode : ", " + mode + " mode";
}
}  // namespace

std::string bench_svg(const nlohmann::json& bench) {
  if (!bench.is_object() || !bench.contains("rows") || !bench["rows"].is_array() || bench["rows"].empty())
    throw std::invalid_argument("not a reducelab bench JSON (no \"rows\" array)");
  const auto& first = bench["rows"][0];
  for (const char* key : {"impl", "n", "gb_per_s", "dtype", "op"})
    if (!first.contains(key)) throw std::invalid_argument(fmt::format("not a reducelab bench JSON (rows lack \"{}\")", key));
  // The first row's case and timing mode ("mode"; files of earlier versions carry "l2").
  auto mode_of = [](const nlohmann::json& r) { return r.value("mode", r.value("l2", std::string())); };
  const std::string dtype = first["dtype"], op = first["op"], mode = mode_of(first);
  const double ceiling = bench.value("read_ceiling_gb_per_s", bench.value("read_ceiling_gbs", 0.0));
  std::map<std::string, std::vector<std::pair<double, double>>> lines;
  double top = ceiling, lo = 1e300, hi = 0;
  for (const auto& r : bench["rows"]) {
    if (r.value("dtype", "") != dtype || r.value("op", "") != op || mode_of(r) != mode) continue;
    if (!r["n"].is_number() || !r["gb_per_s"].is_number()) continue;
    const double n = r["n"].get<double>(), g = r["gb_per_s"].get<double>();
    if (n <= 0) continue;
    lines[r["impl"].get<std::string>()].push_back({std::log2(n), g});
    top = std::max(top, g);
    lo = std::min(lo, std::log2(n));
    hi = std::max(hi, std::log2(n));
  }
  if (lines.empty() || hi <= lo) throw std::invalid_argument("bench JSON: fewer than two sizes to plot");
  Svg svg;
  const double x0 = 70, y0 = 40, w = 760, h = 320;
  auto X = [&](double lg) { return x0 + w * (lg - lo) / (hi - lo); };
  auto Y = [&](double g) { return y0 + h - h * g / top; };
  svg.text(10, 20,
           fmt::format("GB/s against n: {} {}{} on {}", dtype, op,
                       mode.empty() ? "" : r_mode_label(mode),
                       bench.contains("device") && bench["device"].contains("name") ? bench["device"]["name"].get<std::string>() : "the bench's device"),
           13, "start", R"(font-weight="bold")");
  for (int k = 0; k <= 4; ++k) {
    const double g = top * k / 4;
    svg.line(x0, Y(g), x0 + w, Y(g), "#eceff1");
    svg.text(x0 - 6, Y(g) + 4, num(g, 0), 10, "end");
  }
  for (int lg = static_cast<int>(std::ceil(lo)); lg <= static_cast<int>(hi); lg += 2)
    svg.text(X(lg), y0 + h + 16, fmt::format("2^{}", lg), 10, "middle");
  svg.line(x0, y0, x0, y0 + h, "#455a64");
  svg.line(x0, y0 + h, x0 + w, y0 + h, "#455a64");
  if (ceiling > 0) {
    const double c = ceiling;
    svg.line(x0, Y(c), x0 + w, Y(c), "#2e7d32", 1.2, R"(stroke-dasharray="5,4")");
    svg.text(x0 + w - 4, Y(c) - 4, fmt::format("read ceiling {:.0f}", c), 10, "end");
  }
  const char* colors[] = {"#1565c0", "#ef6c00", "#6a1b9a", "#00838f", "#c62828", "#558b2f"};
  std::size_t k = 0;
  for (auto& [impl, pts] : lines) {
    std::sort(pts.begin(), pts.end());
    std::string p;
    for (const auto& [lg, g] : pts) p += fmt::format("{:.1f},{:.1f} ", X(lg), Y(g));
    const char* color = colors[k % 6];
    svg.polyline(p, color, 2);
    svg.rect(x0 + w + 14, y0 + 18 * k, 12, 4, color);
    svg.text(x0 + w + 30, y0 + 18 * k + 6, impl, 11);
    ++k;
  }
  svg.extend(x0 + w + 130, y0 + h + 24);
  return svg.str("bench: GB/s against n");
}

std::string report_page(const PageInput& in) {
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  s += fmt::format("<title>reducelab report: {}</title>\n<style>{}</style>\n</head>\n<body>\n",
                   escape(in.run.device.name), kStyle);
  s += "<h1>reducelab report</h1>\n<nav><a href=\"#device\">Device</a><a href=\"#progression\">Progression</a>"
       "<a href=\"#littles-law\">Little's law</a><a href=\"#kernels\">Kernels</a><a href=\"#bench\">Bench</a></nav>\n";
  s += device_section(in);
  s += progression_section(in);
  s += littles_law_section(in);
  s += kernels_section(in);
  s += bench_section(in);
  s += "</body>\n</html>\n";
  return s;
}

}  // namespace rl::render
