#include "lab/report.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <cstdlib>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "reducelab/version.hpp"

namespace rl::lab {

std::optional<Format> parse_format(std::string_view s) {
  if (s == "table") return Format::table;
  if (s == "csv") return Format::csv;
  if (s == "json") return Format::json;
  return std::nullopt;
}

namespace {

bool emulated(const DeviceInfo& d) { return d.backend == Backend::simt; }

}  // namespace

void print_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                 std::ostream& out, std::size_t left, bool last_left) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& r : rows)
    for (std::size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const bool align_left = c < left || (last_left && c + 1 == cells.size());
      s += align_left ? fmt::format("{:<{}}", cells[c], width[c]) : fmt::format("{:>{}}", cells[c], width[c]);
      if (c + 1 < cells.size()) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << '\n';
  };
  line(header);
  std::string rule;
  for (std::size_t c = 0; c < header.size(); ++c) rule += std::string(width[c], '-') + (c + 1 < header.size() ? "  " : "");
  out << rule << '\n';
  for (const auto& r : rows) line(r);
}

namespace {

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

void print_csv(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
               std::ostream& out) {
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << csv_cell(cells[i]);
    out << '\n';
  };
  line(header);
  for (const auto& r : rows) line(r);
}

namespace {

std::string fixed(double v, int digits) { return v > 0 ? fmt::format("{:.{}f}", v, digits) : "-"; }

}  // namespace

std::string device_line(const DeviceInfo& d, double read_ceiling_gbs) {
  if (emulated(d))
    return fmt::format("device: {} | backend simt ({}) | warp {} | times are CPU emulation, not GPU figures",
                       d.name, d.chosen_because, d.warp_size);
  return fmt::format(
      "device: {} (sm_{}{}) | backend cuda ({}) | {} SMs | warp {} | L2 {:.0f} MiB | theoretical {:.0f} GB/s "
      "(memory clock {} MHz x {}-bit bus x 2) | {}",
      d.name, d.cc_major, d.cc_minor, d.chosen_because, d.sm_count, d.warp_size, d.l2_bytes / 1048576.0,
      d.theoretical_gbs, d.memory_clock_khz / 1000, d.bus_width_bits,
      read_ceiling_gbs > 0 ? fmt::format("measured read ceiling {:.0f} GB/s", read_ceiling_gbs)
                           : std::string("read ceiling not measured (--no-ceiling)"));
}

nlohmann::json to_json(const DeviceInfo& d) {
  return {{"name", d.name},
          {"backend", std::string(gallery::name(d.backend))},
          {"emulated", emulated(d)},
          {"chosen_because", d.chosen_because},
          {"sm_count", d.sm_count},
          {"warp_size", d.warp_size},
          {"l2_bytes", d.l2_bytes},
          {"memory_clock_khz", d.memory_clock_khz},
          {"bus_width_bits", d.bus_width_bits},
          {"theoretical_gb_per_s", d.theoretical_gbs},
          {"global_memory_bytes", d.global_memory_bytes},
          {"compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)}};
}

nlohmann::json command_json(std::string_view command, nlohmann::json device, nlohmann::json params) {
  return {{"command", command},
          {"device", std::move(device)},
          {"params", std::move(params)},
          {"reducelab_version", reducelab::version_string}};
}

namespace {
// The flags every command that launches a gallery kernel shares.
nlohmann::json launch_params(const Plan& p, std::string_view backend) {
  return {{"backend", backend},
          {"n", p.n},
          {"block", p.block},
          {"dtype", std::string(core::name(p.dtype))},
          {"op", std::string(core::name(p.op))},
          {"accumulate", std::string(gallery::name(p.accumulate))},
          {"param", p.param},
          {"seed", p.seed}};
}
}  // namespace

nlohmann::json plan_params(const Plan& p, Backend backend) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto* e : p.kernels) kernels.push_back(e->id);
  nlohmann::json j = launch_params(p, gallery::name(backend));
  j.update({{"kernels", p.all_kernels ? nlohmann::json("all") : kernels},
            {"repeats", p.repeats},
            {"hot", !p.flush_l2},
            {"no_ceiling", !p.measure_ceiling}});
  return j;
}

nlohmann::json to_json(const RunReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& x : r.rows)
    rows.push_back({{"kernel", x.id},
                    {"kernel_function", x.name},
                    {"family", x.family},
                    {"n", x.n},
                    {"block", x.block},
                    {"bytes", x.bytes_read},
                    {"repeats", x.repeats},
                    {"us_median", x.ms_median * 1e3},
                    {"us_min", x.ms_min * 1e3},
                    {"us_max", x.ms_max * 1e3},
                    {"gb_per_s", x.gb_per_s},
                    {"pct_of_theoretical", x.pct_of_theoretical},
                    {"pct_of_read_ceiling", x.pct_of_read_ceiling},
                    {"step_speedup", x.step_speedup},
                    {"cumulative_speedup", x.cumulative_speedup},
                    {"result", x.result},
                    {"expected", x.expected},
                    {"status", x.status},
                    {"verified", x.ok},
                    {"deterministic", x.deterministic},
                    {"unsafe", x.unsafe},
                    {"note", x.note},
                    {"bytes_in_flight_per_sm", x.bytes_in_flight_per_sm ? nlohmann::json(*x.bytes_in_flight_per_sm) : nlohmann::json(nullptr)},
                    {"predicted_gb_per_s", x.predicted_gb_per_s ? nlohmann::json(*x.predicted_gb_per_s) : nlohmann::json(nullptr)}});
  nlohmann::json j = command_json("run", to_json(r.device), plan_params(r.plan, r.device.backend));
  j.update({{"read_ceiling_gb_per_s", r.read_ceiling_gbs},
          {"latency", r.latency ? nlohmann::json{{"dram_ns", r.latency->dram_ns},
                                                 {"l2_ns", r.latency->l2_ns},
                                                 {"dram_buffer_bytes", r.latency->dram_buffer_bytes},
                                                 {"l2_buffer_bytes", r.latency->l2_buffer_bytes}}
                                : nlohmann::json(nullptr)},
          {"l2_flushed", r.plan.flush_l2},
          {"all_verified", r.all_ok()},
          {"verified_rows", r.count("ok")},
          {"skipped_rows", r.count("skipped")},
          {"summary", summary(r)},
          {"rows", rows}});
  return j;
}

std::string summary(const RunReport& r) {
  std::string line;
  const auto skipped = r.count("skipped");
  if (const std::string why = r.shortfall(); !why.empty()) line = why;
  else line = fmt::format("all rows verified ({} ran{})", r.count("ok") + r.count("MISMATCH"),
                          skipped ? fmt::format("; {} skipped, see their notes", skipped) : "");
  // The unsafe variant's wrong answer is reported only when it ran and was wrong; its race only
  // when the emulator's checks reported one.
  for (const auto& x : r.rows) {
    if (!(x.unsafe && x.status == "MISMATCH")) continue;
    line += fmt::format("; {} (unsafe by design) gave a wrong answer", x.id);
    if (x.note.find("race reported") != std::string::npos) line += ", and the emulator reported its data race";
  }
  return line;
}

void print_run(const RunReport& r, Format f, std::ostream& out) {
  if (f == Format::json) {
    out << to_json(r).dump(2) << '\n';
    return;
  }
  const bool gpu = !emulated(r.device);
  std::vector<std::string> header = {"kernel", "name", "block", gpu ? "ms" : "cpu_ms", "spread"};
  if (gpu) header.insert(header.end(), {"GB/s", "predicted", "%peak", "%ceiling"});
  else header.push_back("predicted");  // Little's law needs a GPU's latency: n/a
  header.insert(header.end(), {"step", "total", "result", "expected", "status"});
  std::vector<std::vector<std::string>> rows;
  for (const auto& x : r.rows) {
    std::vector<std::string> c = {x.id, x.name, std::to_string(x.block), fixed(x.ms_median, 4),
                                  x.ms_median > 0 ? fmt::format("{:.4f}-{:.4f}", x.ms_min, x.ms_max) : "-"};
    if (gpu)
      c.insert(c.end(), {fixed(x.gb_per_s, 1), x.predicted_gb_per_s ? fixed(*x.predicted_gb_per_s, 1) : "n/a",
                         fixed(x.pct_of_theoretical, 1), fixed(x.pct_of_read_ceiling, 1)});
    else
      c.push_back("n/a");
    std::string status = x.status;
    if (!x.note.empty()) {
      // The table keeps a note to one screen line; --format json carries it whole.
      std::string note = x.note;
      if (note.size() > 110) note = note.substr(0, 107) + "...";
      status += " (" + note + ")";
    }
    c.insert(c.end(), {x.step_speedup > 0 ? fmt::format("{:.2f}x", x.step_speedup) : "-",
                       x.cumulative_speedup > 0 ? fmt::format("{:.2f}x", x.cumulative_speedup) : "-",
                       x.result.empty() ? "-" : x.result, x.expected, status});
    rows.push_back(std::move(c));
  }
  if (f == Format::csv) {
    print_csv(header, rows, out);
    return;
  }
  out << device_line(r.device, r.read_ceiling_gbs) << '\n';
  const Plan& p = r.plan;
  out << fmt::format("n = {} | dtype {} | op {} | accumulate {} | {} repeats, median{} | seed {}\n\n", p.n,
                     core::name(p.dtype), core::name(p.op), gallery::name(p.accumulate), p.repeats,
                     gpu ? (p.flush_l2 ? ", L2 flushed between repeats" : ", L2 warm") : "", p.seed);
  print_table(header, rows, out);
  out << '\n' << summary(r) << '\n';
}

nlohmann::json registry_json(const DeviceInfo& device) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& e : gallery::registry()) {
    const auto& c = e.constraints;
    arr.push_back({{"id", e.id},
                   {"name", e.name},
                   {"family", e.family},
                   {"seed", e.seed},
                   {"technique", e.technique},
                   {"still_slow", e.still_slow},
                   {"final_pass", e.final_pass},
                   {"constraints",
                    {{"pow2_block", c.pow2_block},
                     {"min_block", c.min_block},
                     {"max_block", c.max_block},
                     {"items_per_thread", c.items_per_thread},
                     {"in_place", c.in_place},
                     {"deterministic", c.deterministic},
                     {"unsafe", c.unsafe},
                     {"gpu_only", c.gpu_only},
                     {"gpu_only_reason", c.gpu_only_reason},
                     {"is_reference", c.is_reference}}},
                   {"independent_loads", e.independent_loads},
                   {"load_width", e.load_width},
                   {"bytes_read_per_element", e.bytes_read ? static_cast<double>(e.bytes_read(1 << 20, 4)) / (1 << 20) / 4 : 1.0},
                   {"backends",
                    {{"cuda", gallery::launcher(e, Backend::cuda) != nullptr},
                     {"simt", gallery::launcher(e, Backend::simt) != nullptr}}}});
  }
  nlohmann::json j = command_json("list", to_json(device), {{"backend", std::string(gallery::name(device.backend))}});
  j["kernels"] = std::move(arr);
  return j;
}

namespace {
// Code points, not bytes: the seeds' "§" is two bytes and one column.
std::size_t columns(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}
// The first `width` columns of s (whole code points).
std::string first_columns(const std::string& s, std::size_t width) {
  std::size_t cols = 0, k = 0;
  for (; k < s.size(); ++k) {
    if ((s[k] & 0xC0) != 0x80) {
      if (cols == width) break;
      ++cols;
    }
  }
  return s.substr(0, k);
}
// Words of `text` in lines of at most `width` columns; a longer word is cut.
std::vector<std::string> wrap(const std::string& text, std::size_t width) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) continue;
    while (columns(word) > width) {
      if (!line.empty()) lines.push_back(std::move(line)), line.clear();
      lines.push_back(first_columns(word, width));
      word = word.substr(lines.back().size());
    }
    if (line.empty()) line = word;
    else if (columns(line) + 1 + columns(word) <= width) line += " " + word;
    else lines.push_back(std::move(line)), line = word;
  }
  if (!line.empty()) lines.push_back(std::move(line));
  if (lines.empty()) lines.push_back("");
  return lines;
}
}  // namespace

std::size_t terminal_width() {
  if (const char* c = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long v = std::strtol(c, &end, 10);
    if (end != c && *end == 0 && v >= 20 && v <= 1000) return static_cast<std::size_t>(v);
  }
  winsize w{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col >= 20) return w.ws_col;
  return 100;  // a pipe or a file: a width that reads well in a pager and in a terminal
}

std::string gallery_markdown() {
  std::string md = "| id | kernel | family | seed | what it adds |\n| --- | --- | --- | --- | --- |\n";
  for (const auto& e : gallery::registry()) {
    std::string technique(e.technique);
    std::replace(technique.begin(), technique.end(), '|', '/');
    md += fmt::format("| `{}` | `{}` | {} | {} | {}{}{} |\n", e.id, e.name, e.family, e.seed, technique,
                      e.constraints.unsafe ? " **(unsafe: data race)**" : "",
                      e.constraints.gpu_only ? " *(GPU only)*" : "");
  }
  return md;
}

void print_list(Format f, std::ostream& out, std::size_t width, const DeviceInfo* device) {
  if (f == Format::json) {
    if (!device) throw std::logic_error("print_list: the JSON names a device");
    out << registry_json(*device).dump(2) << '\n';
    return;
  }
  std::vector<std::string> header = {"id", "name", "family", "seed", "block", "technique", "still slow"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : gallery::registry()) {
    const auto& c = e.constraints;
    std::string block = fmt::format("{}{}..{}", c.pow2_block ? "2^k " : "", c.min_block, c.max_block);
    std::string tech(e.technique);
    if (c.unsafe) tech = "[UNSAFE: data race] " + tech;
    if (c.gpu_only) tech = "[GPU only] " + tech;
    rows.push_back({std::string(e.id), std::string(e.name), std::string(e.family), std::string(e.seed), block,
                    tech, std::string(e.still_slow)});
  }
  if (f == Format::csv) {
    print_csv(header, rows, out);
    return;
  }
  // The table fits `width`: id and name, then family and seed where there is room, then the
  // technique and what is still slow wrapped into the rest; the full text is in --format json.
  std::size_t id_w = 2, name_w = 4, family_w = 6, seed_w = 4;
  for (const auto& r : rows) {
    id_w = std::max(id_w, columns(r[0]));
    name_w = std::max(name_w, columns(r[1]));
    family_w = std::max(family_w, columns(r[2]));
    seed_w = std::max(seed_w, columns(r[3]));
  }
  const std::size_t gap = 2, min_text = 30;
  const bool with_family = id_w + name_w + family_w + seed_w + 4 * gap + min_text + 20 <= width;
  std::size_t fixed = id_w + gap + name_w + gap + (with_family ? family_w + gap + seed_w + gap : 0);
  const bool with_name = fixed + min_text <= width;
  if (!with_name) fixed = id_w + gap;
  const std::size_t text_w = width > fixed + 10 ? width - fixed : 10;
  auto pad = [](const std::string& s, std::size_t w) { return s + std::string(w > columns(s) ? w - columns(s) : 0, ' '); };
  auto emit = [&](std::string line) {
    if (columns(line) > width) line = first_columns(line, width);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  };
  auto prefix = [&](const std::vector<std::string>& r, bool first) {
    std::string p = pad(first ? r[0] : "", id_w + gap);
    if (with_name) p += pad(first ? r[1] : "", name_w + gap);
    if (with_family) p += pad(first ? r[2] : "", family_w + gap) + pad(first ? r[3] : "", seed_w + gap);
    return p;
  };
  emit(prefix({"id", "name", "family", "seed"}, true) + "what it adds / still slow (full text: --format json)");
  for (const auto& r : rows) {
    std::vector<std::string> lines = wrap(r[5], text_w);
    for (const auto& l : wrap("still slow: " + r[6], text_w)) lines.push_back(l);
    for (std::size_t k = 0; k < lines.size(); ++k) emit(prefix(r, k == 0) + lines[k]);
  }
}

void print_divergence(const analysis::DivergenceReport& r, std::optional<std::uint64_t> executed, Format f,
                      std::ostream& out, const DeviceInfo& device) {
  if (f == Format::json) {
    nlohmann::json regions = nlohmann::json::array();
    for (const auto& c : r.regions)
      regions.push_back({{"region", c.region}, {"blocks", c.blocks}, {"warps", c.warps},
                         {"divergent_warps", c.divergent_warps}, {"idle_warps", c.idle_warps}});
    nlohmann::json j = command_json(
        "divergence", to_json(device),
        {{"extent", fmt::format("{}x{}", r.extent.x, r.extent.y)}, {"block", fmt::format("{}x{}", r.block.x, r.block.y)}});
    j.update(nlohmann::json{{"extent", {r.extent.x, r.extent.y}},
                          {"block", {r.block.x, r.block.y}},
                          {"grid", {r.grid.x, r.grid.y}},
                          {"warps_per_block", r.warps_per_block},
                          {"total_warps", r.total_warps},
                          {"divergent_warps", r.divergent_warps},
                          {"executed_divergent_warps", executed ? nlohmann::json(*executed) : nlohmann::json(nullptr)},
                          {"regions", regions}});
    out << j.dump(2) << '\n';
    return;
  }
  std::vector<std::string> header = {"region", "blocks", "warps", "divergent", "idle"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : r.regions)
    rows.push_back({c.region, std::to_string(c.blocks), std::to_string(c.warps), std::to_string(c.divergent_warps),
                    std::to_string(c.idle_warps)});
  rows.push_back({"total", std::to_string(r.grid.x * r.grid.y), std::to_string(r.total_warps),
                  std::to_string(r.divergent_warps), ""});
  if (f == Format::csv) {
    print_csv({"region", "blocks", "warps", "divergent_warps", "idle_warps"}, rows, out);
    return;
  }
  out << fmt::format("extent {}x{}, block {}x{}, grid {}x{}, {} warps per block; threads test x < {} && y < {}\n\n",
                     r.extent.x, r.extent.y, r.block.x, r.block.y, r.grid.x, r.grid.y, r.warps_per_block, r.extent.x,
                     r.extent.y);
  print_table(header, rows, out, 1);
  out << fmt::format("\n{} of {} warps diverge ({:.1f}%)\n", r.divergent_warps, r.total_warps,
                     100.0 * r.divergent_warps / r.total_warps);
  if (executed)
    out << fmt::format("executed on the SIMT backend (boundaryCheck2D with a probe in the branch): {} divergent warps{}\n",
                       *executed, *executed == r.divergent_warps ? ", the same" : ", WHICH DIFFERS");
  else
    out << "not executed on the SIMT backend: the extent is over 2^24 elements\n";
}

nlohmann::json to_json(const analysis::StepCounts& s) {
  nlohmann::json j = {{"active_threads", s.active_threads},
                      {"active_warps", s.active_warps},
                      {"divergent_warps", s.divergent_warps},
                      {"lane_slots", s.lane_slots},
                      {"simd_utilization", s.simd_utilization},
                      {"lanes_histogram", s.lanes_histogram},
                      {"global_accesses", s.global_accesses},
                      {"global_requests", s.global_requests},
                      {"global_sectors", s.global_sectors},
                      {"shared_accesses", s.shared_accesses},
                      {"shared_wavefronts", s.shared_wavefronts},
                      {"bank_conflict_ways", s.bank_conflict_ways}};
  if (s.step) j["stride"] = *s.step;
  return j;
}

namespace {

// The lane fields of a step (what the instrumented GPU build counts; it records no addresses).
nlohmann::json lanes_json(const analysis::StepCounts& s) {
  nlohmann::json j = {{"active_threads", s.active_threads},   {"active_warps", s.active_warps},
                      {"divergent_warps", s.divergent_warps}, {"lane_slots", s.lane_slots},
                      {"simd_utilization", s.simd_utilization}, {"lanes_histogram", s.lanes_histogram}};
  if (s.step) j["stride"] = *s.step;
  return j;
}

nlohmann::json resources_json(const KernelResources& k) {
  return {{"name", k.name},
          {"grid", k.grid},
          {"block", k.block},
          {"registers", k.registers},
          {"static_shared_bytes", k.static_shared},
          {"dynamic_shared_bytes", k.dynamic_shared},
          {"local_bytes", k.local_bytes},
          {"max_blocks_per_sm", k.max_blocks_per_sm},
          {"occupancy", k.occupancy},
          {"explained", k.explained}};
}

std::vector<std::string> explain_cells(std::string label, const analysis::StepCounts& s, bool memory) {
  std::vector<std::string> c = {label,
                                std::to_string(s.active_threads),
                                std::to_string(s.active_warps),
                                std::to_string(s.divergent_warps),
                                std::to_string(s.lane_slots),
                                s.lane_slots ? fmt::format("{:.3f}", s.simd_utilization) : "-"};
  if (memory)
    c.insert(c.end(), {std::to_string(s.global_accesses), std::to_string(s.global_requests),
                       std::to_string(s.global_sectors), std::to_string(s.shared_accesses),
                       s.shared_accesses ? fmt::format("{}-way", s.bank_conflict_ways) : "-",
                       std::to_string(s.shared_wavefronts)});
  return c;
}

const std::vector<std::string> kLaneHeader = {"stride", "active thr", "active warps", "divergent", "lane slots",
                                              "SIMD util"};
const std::vector<std::string> kMemoryHeader = {"global acc", "requests", "sectors", "shared acc", "bank ways",
                                                "wavefronts"};

void print_simt_table(const analysis::Counts& counts, std::ostream& out) {
  std::vector<std::string> header = kLaneHeader;
  header.insert(header.end(), kMemoryHeader.begin(), kMemoryHeader.end());
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : counts.steps) rows.push_back(explain_cells(std::to_string(*s.step), s, true));
  rows.push_back(explain_cells("total", counts.totals, true));
  rows.push_back(explain_cells("outside", counts.outside, true));
  print_table(header, rows, out, 1, false);
}

// explain's flags: the kernel and its plan, and the backend it ran on.
nlohmann::json explain_params(const ExplainReport& r) {
  nlohmann::json j = launch_params(r.plan, gallery::name(r.backend));
  j["kernel"] = r.plan.kernels.front()->id;
  return j;
}

void print_explain_cuda(const ExplainReport& r, Format f, std::ostream& out) {
  const auto& e = *r.plan.kernels.front();
  const GpuExplain& g = *r.gpu;
  if (f == Format::json) {
    nlohmann::json steps = nlohmann::json::array(), launches = nlohmann::json::array();
    for (const auto& s : g.lanes.steps) steps.push_back(lanes_json(s));
    for (const auto& k : g.launches) launches.push_back(resources_json(k));
    nlohmann::json j = command_json("explain", to_json(g.device), explain_params(r));
    j.update({{"kernel", e.id},
                        {"kernel_function", e.name},
                        {"probed", r.probed},
                        {"instrumented", g.instrumented},
                        {"steps", steps},
                        {"totals", g.instrumented ? lanes_json(g.lanes.totals) : nlohmann::json(nullptr)},
                        {"irregular_probes", g.irregular_probes},
                        {"launches", launches},
                        {"result", r.row.result},
                        {"expected", r.row.expected},
                        {"status", r.row.status},
                        {"verified", r.row.ok},
                        {"instrumented_status", g.instrumented ? nlohmann::json(g.instrumented_row.status) : nlohmann::json(nullptr)},
                        {"instrumented_verified", g.instrumented ? nlohmann::json(g.instrumented_row.ok) : nlohmann::json(nullptr)},
                        {"simt_compared", g.simt_compared},
                        {"lanes_equal_simt", g.simt_compared ? nlohmann::json(g.lanes_equal) : nlohmann::json(nullptr)}});
    if (r.simt_ran) {
      nlohmann::json simt_steps = nlohmann::json::array();
      for (const auto& s : r.counts.steps) simt_steps.push_back(to_json(s));
      j["simt"] = {{"steps", simt_steps}, {"totals", to_json(r.counts.totals)}, {"outside_steps", to_json(r.counts.outside)}};
    }
    out << j.dump(2) << '\n';
    return;
  }
  std::vector<std::string> kheader = {"kernel", "grid", "block", "registers", "static smem", "dynamic smem", "local",
                                      "blocks/SM", "occupancy"};
  std::vector<std::vector<std::string>> krows;
  for (const auto& k : g.launches)
    krows.push_back({k.name + (k.explained ? "" : " (bookkeeping)"), std::to_string(k.grid), std::to_string(k.block),
                     std::to_string(k.registers), std::to_string(k.static_shared), std::to_string(k.dynamic_shared),
                     std::to_string(k.local_bytes), std::to_string(k.max_blocks_per_sm),
                     fmt::format("{:.0f}%", 100 * k.occupancy)});
  std::vector<std::vector<std::string>> lrows;
  for (const auto& s : g.lanes.steps) lrows.push_back(explain_cells(std::to_string(*s.step), s, false));
  if (g.instrumented) lrows.push_back(explain_cells("total", g.lanes.totals, false));
  if (f == Format::csv) {
    print_csv(kheader, krows, out);
    out << '\n';
    print_csv(kLaneHeader, lrows, out);
    return;
  }
  out << device_line(g.device, 0) << '\n';
  out << fmt::format("{} ({}) on the GPU: n = {}, block {}, {} {}\n\n", e.name, e.id, r.plan.n, r.plan.block,
                     core::name(r.plan.dtype), core::name(r.plan.op));
  out << "Launches (cudaFuncGetAttributes; blocks/SM from cudaOccupancyMaxActiveBlocksPerMultiprocessor;\n"
         "occupancy = resident warps / the SM's maximum):\n\n";
  print_table(kheader, krows, out, 1, false);
  out << fmt::format("\nresult {} expected {}: {}\n\n", r.row.result, r.row.expected, r.row.status);
  if (!g.instrumented) {
    out << "This kernel has no instrumented GPU build (no probes): no lane counts from the GPU.\n";
  } else {
    out << "Active lanes counted on the GPU by the instrumented build (__activemask/__popc per warp execution,\n"
           "int32 summed in int64: which lanes reach a step does not depend on the dtype):\n\n";
    print_table(kLaneHeader, lrows, out, 1, false);
    out << fmt::format("\ninstrumented run: result {} expected {}: {}{}\n", g.instrumented_row.result,
                       g.instrumented_row.expected, g.instrumented_row.status,
                       g.irregular_probes ? fmt::format(" ({} probes with a step not 0 or 2^k were not counted)", g.irregular_probes) : "");
  }
  if (r.simt_ran) {
    out << "\nThe same plan on the SIMT backend, with the memory counts the GPU build does not record:\n\n";
    print_simt_table(r.counts, out);
    if (g.simt_compared) {
      std::string why;
      same_lane_counts(r.counts, g.lanes, &why);
      out << (g.lanes_equal ? "\nGPU and SIMT lane counts are equal at every step.\n"
                            : "\nGPU and SIMT lane counts DIFFER: " + why + "\n");
    }
  } else {
    out << fmt::format("\nSIMT counts not run: n is over {} (the emulator would take too long).\n", kSimtCompareMaxN);
  }
}

}  // namespace

void print_explain(const ExplainReport& r, Format f, std::ostream& out) {
  if (r.gpu) return print_explain_cuda(r, f, out);
  const auto& e = *r.plan.kernels.front();
  if (f == Format::json) {
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& s : r.counts.steps) steps.push_back(to_json(s));
    nlohmann::json j = command_json("explain", to_json(r.device), explain_params(r));
    j.update({{"kernel", e.id},
              {"kernel_function", e.name},
              {"probed", r.probed},
              {"steps", steps},
              {"totals", to_json(r.counts.totals)},
              {"outside_steps", to_json(r.counts.outside)},
              {"result", r.row.result},
              {"expected", r.row.expected},
              {"status", r.row.status},
              {"verified", r.row.ok}});
    out << j.dump(2) << '\n';
    return;
  }
  if (f == Format::csv) {
    std::vector<std::string> header = kLaneHeader;
    header.insert(header.end(), kMemoryHeader.begin(), kMemoryHeader.end());
    std::vector<std::vector<std::string>> rows;
    for (const auto& s : r.counts.steps) rows.push_back(explain_cells(std::to_string(*s.step), s, true));
    rows.push_back(explain_cells("total", r.counts.totals, true));
    rows.push_back(explain_cells("outside", r.counts.outside, true));
    print_csv(header, rows, out);
    return;
  }
  out << fmt::format("{} ({}) on the SIMT backend: n = {}, block {}, {} {}, {} bytes per element in the kernel\n",
                     e.name, e.id, r.plan.n, r.plan.block, core::name(r.plan.dtype), core::name(r.plan.op),
                     gallery::input_bytes(e, r.plan.dtype, r.plan.accumulate));
  out << "Counts are exact: the kernel ran, and every lane's work and memory access was recorded.\n"
         "requests = distinct 128-byte lines per warp access (PMPP 10.5); sectors = 32-byte sectors; bank ways =\n"
         "the worst warp access's distinct words in one bank; 'outside' = accesses outside the reduction steps.\n\n";
  if (!r.probed) out << "This kernel has no probes in its reduction steps yet: only memory totals are shown.\n\n";
  print_simt_table(r.counts, out);
  out << fmt::format("\nresult {} expected {}: {}\n", r.row.result, r.row.expected, r.row.status);
}

namespace {
std::string number(const std::optional<double>& v) {
  if (!v) return "n/a";
  const double a = *v < 0 ? -*v : *v;
  if (a != 0 && (a >= 1e7 || a < 1e-3)) return fmt::format("{:.4g}", *v);
  return fmt::format("{:.3f}", *v);
}
nlohmann::json maybe(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
}  // namespace

nlohmann::json compare_json(const ProfileReport& r) {
  if (!r.compared) return nullptr;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& c : r.comparison)
    rows.push_back({{"count", c.what}, {"ncu", c.ncu}, {"simt", maybe(c.simt)}, {"gpu", maybe(c.gpu)},
                    {"comparable", c.comparable}, {"equal", c.comparable ? nlohmann::json(c.equal) : nlohmann::json(nullptr)},
                    {"ratio", c.ratio}, {"note", c.note}});
  const auto [equal, comparable] = equal_of_comparable(r.comparison);
  return {{"simt_status", r.simt_status}, {"equal", equal}, {"comparable", comparable}, {"counts", rows}};
}

namespace {
nlohmann::json stalls_json(const ProfileReport& r) {
  if (!r.stalled) return nullptr;
  const auto& s = r.stalls;
  nlohmann::json reasons = nlohmann::json::array();
  for (const auto& x : s.reasons)
    reasons.push_back({{"reason", x.reason}, {"ncu", stall_metric(x.reason)}, {"pct_of_warp_time", x.pct},
                       {"meaning", stall_meaning(x.reason)}});
  return {{"reasons", reasons},
          {"achieved_occupancy_pct", maybe(s.achieved_occupancy_pct)},
          {"theoretical_occupancy_pct", maybe(s.theoretical_occupancy_pct)},
          {"waves_per_sm", maybe(s.waves_per_sm)},
          {"dram_read_bytes", maybe(s.dram_read_bytes)},
          {"dram_write_bytes", maybe(s.dram_write_bytes)},
          {"dram_throughput_pct", maybe(s.dram_throughput_pct)}};
}

void print_stalls(const ProfileReport& r, std::ostream& out) {
  const auto& s = r.stalls;
  out << "\nWhere the warps' time went (ncu warp states, % of the warps' active time):\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& x : s.reasons)
    rows.push_back({x.reason, fmt::format("{:.1f}%", x.pct), std::string(stall_meaning(x.reason))});
  print_table({"state", "warp time", "the warp is"}, rows, out, 1, false);
  auto pct = [](const std::optional<double>& v) { return v ? fmt::format("{:.1f}%", *v) : std::string("n/a"); };
  out << fmt::format("\nachieved occupancy {} of the SM's warps (theoretical {}); {} waves per SM\n",
                     pct(s.achieved_occupancy_pct), pct(s.theoretical_occupancy_pct),
                     s.waves_per_sm ? fmt::format("{:.2f}", *s.waves_per_sm) : "n/a");
  const std::size_t bytes = gallery::input_bytes(*r.plan.kernels.front(), r.plan.dtype, r.plan.accumulate) * r.plan.n;
  if (s.dram_read_bytes && s.dram_write_bytes)
    out << fmt::format("DRAM: read {:.0f} + wrote {:.0f} bytes = {:.2f} x the input's {} bytes; {} of peak throughput\n",
                       *s.dram_read_bytes, *s.dram_write_bytes,
                       bytes ? (*s.dram_read_bytes + *s.dram_write_bytes) / static_cast<double>(bytes) : 0.0, bytes,
                       pct(s.dram_throughput_pct));
}
}  // namespace

void print_profile(const ProfileReport& r, Format f, std::ostream& out) {
  const auto& e = *r.plan.kernels.front();
  if (f == Format::json) {
    nlohmann::json metrics = nlohmann::json::array();
    for (const auto& m : r.metrics)
      metrics.push_back({{"nvprof", m.nvprof}, {"ncu", m.ncu}, {"value", maybe(m.value)}, {"unit", m.unit},
                         {"nvprof_value", maybe(m.nvprof_value)}, {"nvprof_unit", m.nvprof_unit}, {"meaning", m.meaning}});
    nlohmann::json params = launch_params(r.plan, "cuda");
    params.update({{"kernel", e.id}, {"compare", r.compared}, {"stalls", r.stalled}});
    nlohmann::json j = command_json("profile", {{"name", r.device}, {"backend", "cuda"}}, params);
    j.update({{"kernel", e.id},
              {"kernel_function", e.name},
              {"ncu", r.ncu},
              {"ncu_kernel_name", r.kernel_name},
              {"grid", r.grid},
              {"block_size", r.block},
              {"duration_us", r.duration_ns ? nlohmann::json(*r.duration_ns / 1e3) : nlohmann::json(nullptr)},
              {"metrics", metrics},
              {"compare", compare_json(r)},
              {"stalls", stalls_json(r)},
              {"unavailable_metrics", r.unavailable}});
    out << j.dump(2) << '\n';
    return;
  }
  std::vector<std::string> header = {"nvprof metric", "ncu metric", "value", "unit", "as nvprof"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& m : r.metrics)
    rows.push_back({m.nvprof, m.ncu, number(m.value), m.unit.empty() ? "-" : m.unit,
                    m.nvprof_value ? number(m.nvprof_value) + (m.nvprof_unit.empty() ? "" : " " + m.nvprof_unit) : "n/a"});
  if (f == Format::csv) {
    print_csv(header, rows, out);
    return;
  }
  out << fmt::format("device: {} | ncu {} --clock-control none (clocks left as they are)\n", r.device, r.ncu);
  out << fmt::format("{} ({}): n = {}, block {}, {} {}; ncu profiled {} (grid {}, block {}), the run's first launch\n",
                     e.name, e.id, r.plan.n, r.plan.block, core::name(r.plan.dtype), core::name(r.plan.op),
                     r.kernel_name, r.grid, r.block);
  if (r.duration_ns) out << fmt::format("duration under the profiler: {:.1f} us\n", *r.duration_ns / 1e3);
  out << '\n';
  print_table(header, rows, out, 2, false);
  for (const auto& m : r.unavailable) out << fmt::format("this ncu rejected {}: reported as n/a\n", m);
  if (r.stalled) print_stalls(r, out);
  if (!r.compared) return;
  out << fmt::format("\nThe same launch on the SIMT backend (result {}), count by count:\n\n", r.simt_status);
  std::vector<std::vector<std::string>> crows;
  for (const auto& c : r.comparison) {
    auto shown = [&](const std::optional<double>& v) {
      return !v ? std::string("n/a") : fmt::format("{:.{}f}", *v, c.ratio ? 3 : 0);  // counts are whole numbers
    };
    crows.push_back({c.what, c.simt ? shown(c.simt) : "-", shown(c.gpu),
                     !c.comparable ? (c.simt ? "not compared" : "ncu only") : c.equal ? "equal" : "DIFFERENT",
                     c.note.empty() ? c.ncu : c.note});
  }
  print_table({"count", "simt", "ncu", "", "ncu metric / note"}, crows, out, 1, true);
  const auto [equal, comparable] = equal_of_comparable(r.comparison);
  out << fmt::format("\n{}/{} metrics equal\n", equal, comparable);
}

void print_littles_law(const LittlesReport& r, Format f, std::ostream& out) {
  const std::string tol = fmt::format("+-{:.0f}%", 100 * r.tolerance);
  auto states = [](const LittlesRow& x) {
    std::string s;
    for (const auto& st : x.top_states) s += fmt::format("{}{} {:.0f}%", s.empty() ? "" : ", ", st.reason, st.pct);
    return s.empty() ? std::string("-") : s;
  };
  auto opt = [](const std::optional<double>& v, int digits) {
    return v ? fmt::format("{:.{}f}", *v, digits) : std::string("-");
  };
  std::size_t predicted = 0, outside = 0;
  for (const auto& x : r.rows) {
    predicted += x.predicted;
    outside += x.predicted && !x.within;
  }
  if (f == Format::json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& x : r.rows) {
      nlohmann::json top = nlohmann::json::array();
      for (const auto& st : x.top_states) top.push_back({{"reason", st.reason}, {"pct_of_warp_time", st.pct}});
      rows.push_back({{"kernel", x.kernel},
                      {"measured_gb_per_s", x.measured_gb_per_s},
                      {"predicted_gb_per_s", maybe(x.predicted_gb_per_s)},
                      {"bytes_in_flight_per_sm", maybe(x.bytes_in_flight_per_sm)},
                      {"ratio", maybe(x.ratio)},
                      {"within", x.predicted ? nlohmann::json(x.within) : nlohmann::json(nullptr)},
                      {"dram_bytes_per_input_byte", maybe(x.dram_bytes_per_input_byte)},
                      {"traffic_predicted_gb_per_s", maybe(x.traffic_predicted_gb_per_s)},
                      {"traffic_ratio", maybe(x.traffic_ratio)},
                      {"l1_bytes_per_input_byte", maybe(x.l1_bytes_per_input_byte)},
                      {"achieved_occupancy_pct", maybe(x.achieved_occupancy_pct)},
                      {"theoretical_occupancy_pct", maybe(x.theoretical_occupancy_pct)},
                      {"top_states", top},
                      {"cause", x.predicted && !x.within ? nlohmann::json(std::string(name(x.cause))) : nlohmann::json(nullptr)},
                      {"cause_text", x.cause_text}});
    }
    nlohmann::json j = command_json("littles-law", {{"name", r.device}, {"backend", "cuda"}},
                                    {{"n", r.n}, {"block", r.block}, {"dtype", r.dtype}, {"tolerance", r.tolerance},
                                     {"simt_n", r.simt_n}});
    j.update({{"dram_latency_ns", maybe(r.dram_latency_ns)},
              {"l2_latency_ns", maybe(r.l2_latency_ns)},
              {"read_ceiling_gb_per_s", r.read_ceiling_gb_per_s},
              {"predicted_rows", predicted},
              {"outside_rows", outside},
              {"rows", rows}});
    out << j.dump(2) << '\n';
    return;
  }
  std::vector<std::string> header = {"kernel", "bytes in flight / SM", "predicted GB/s", "measured GB/s",
                                     "measured / predicted", "DRAM bytes / input byte", "predicted over DRAM traffic",
                                     "L1 bytes / input byte (SIMT)", "warp time (largest states)", "cause"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& x : r.rows) {
    std::string ratio = x.ratio ? fmt::format("{:.2f}{}", *x.ratio, x.within ? "" : " (outside " + tol + ")") : "n/a";
    std::string cause = !x.predicted ? "no prediction" : x.within ? "-" : fmt::format("{}: {}", name(x.cause), x.cause_text);
    std::string traffic = x.traffic_predicted_gb_per_s
                              ? fmt::format("{:.0f} ({:.2f})", *x.traffic_predicted_gb_per_s, *x.traffic_ratio)
                              : "-";
    rows.push_back({x.kernel, opt(x.bytes_in_flight_per_sm, 0), opt(x.predicted_gb_per_s, 0),
                    fmt::format("{:.0f}", x.measured_gb_per_s), ratio, opt(x.dram_bytes_per_input_byte, 2), traffic,
                    opt(x.l1_bytes_per_input_byte, 2), states(x), cause});
  }
  if (f == Format::csv) {
    print_csv(header, rows, out);
    return;
  }
  out << fmt::format("Little's law on {}: n = {}, {}, block {}; DRAM latency {} ns, L2 latency {} ns, read ceiling "
                     "{:.0f} GB/s{}\n\n",
                     r.device, r.n, r.dtype, r.block, opt(r.dram_latency_ns, 0), opt(r.l2_latency_ns, 0),
                     r.read_ceiling_gb_per_s,
                     r.simt_n ? fmt::format("; L1 traffic counted on the SIMT backend at n = {}", r.simt_n) : "");
  // A Markdown table: readable here, and pasted as it is into docs/littles-law.md.
  auto cell = [](std::string s) {
    for (std::size_t at = s.find('|'); at != std::string::npos; at = s.find('|', at + 2)) s.replace(at, 1, "\\|");
    return s;
  };
  out << "|";
  for (const auto& h : header) out << ' ' << h << " |";
  out << "\n|";
  for (std::size_t i = 0; i < header.size(); ++i) out << (i == 0 || i >= 8 ? " --- |" : " ---: |");
  out << '\n';
  for (const auto& row : rows) {
    out << "|";
    for (const auto& c : row) out << ' ' << cell(c) << " |";
    out << '\n';
  }
  std::map<std::string, std::size_t> by_cause;
  for (const auto& x : r.rows)
    if (x.predicted && !x.within) ++by_cause[std::string(name(x.cause))];
  std::string causes;
  for (const auto& [c, k] : by_cause) causes += fmt::format("{}{} {}", causes.empty() ? "" : ", ", k, c);
  out << fmt::format("\n{} of {} predicted rows outside {}{}\n", outside, predicted, tol,
                     causes.empty() ? "" : " (" + causes + ")");
}

void print_demos(const DemoReport& r, Format f, std::ostream& out) {
  auto pct = [](double v) { return v > 0 ? fmt::format("{:.1f}%", 100 * v) : std::string("-"); };
  auto ratio = [](double v) { return v > 0 ? fmt::format("{:.2f}", v) : std::string("-"); };
  if (f == Format::json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& x : r.rows) {
      nlohmann::json j = {{"id", x.id},
                          {"kernel_function", x.kernel},
                          {"launch", x.launch},
                          {"count_size", x.count_size},
                          {"warps", x.warps},
                          {"body_warp_executions", x.body_warp_executions},
                          {"divergent_warps", x.divergent_warps},
                          {"lane_utilization", x.lane_utilization},
                          {"load_accesses", x.load_accesses},
                          {"load_requests", x.load_requests},
                          {"load_sectors", x.load_sectors},
                          {"requests_per_access", x.requests_per_access},
                          {"sectors_per_request", x.sectors_per_request},
                          {"load_efficiency", x.load_efficiency},
                          {"line_efficiency", x.line_efficiency},
                          {"counts_verified", x.counts_ok}};
      if (r.timed)
        j.update({{"gpu_size", x.gpu_size}, {"us_median", x.ms_median * 1e3}, {"us_min", x.ms_min * 1e3},
                  {"us_max", x.ms_max * 1e3}, {"gpu_verified", x.gpu_ok}});
      rows.push_back(j);
    }
    nlohmann::json j = command_json("demos", to_json(r.device),
                                    {{"backend", r.timed ? "cuda" : "simt"}, {"repeats", r.options.repeats}});
    j.update({{"timed", r.timed},
              {"sizes",
               {{"math_n_simt", r.options.math_n_simt},
                {"math_n_gpu", r.options.math_n_gpu},
                {"math_block", r.options.math_block},
                {"matrix_simt", r.options.matrix_simt},
                {"matrix_gpu", r.options.matrix_gpu}}},
              {"rows", rows}});
    out << j.dump(2) << '\n';
    return;
  }
  std::vector<std::string> header = {"demo", "kernel", "launch", "size", "warps", "body execs", "divergent",
                                     "lane util", "req/access", "sectors/req", "load eff", "128B-line eff"};
  if (r.timed) header.insert(header.end(), {"GPU size", "ms", "spread"});
  header.push_back("status");
  std::vector<std::vector<std::string>> rows;
  for (const auto& x : r.rows) {
    const bool matrix = x.load_accesses > 0;
    std::vector<std::string> c = {x.id,
                                  x.kernel,
                                  x.launch,
                                  matrix ? fmt::format("{0}x{0}", x.count_size) : std::to_string(x.count_size),
                                  std::to_string(x.warps),
                                  std::to_string(x.body_warp_executions),
                                  std::to_string(x.divergent_warps),
                                  fmt::format("{:.3f}", x.lane_utilization),
                                  ratio(x.requests_per_access),
                                  ratio(x.sectors_per_request),
                                  pct(x.load_efficiency),
                                  pct(x.line_efficiency)};
    if (r.timed)
      c.insert(c.end(), {matrix ? fmt::format("{0}x{0}", x.gpu_size) : std::to_string(x.gpu_size),
                         fmt::format("{:.4f}", x.ms_median), fmt::format("{:.4f}-{:.4f}", x.ms_min, x.ms_max)});
    c.push_back(x.counts_ok && (!r.timed || x.gpu_ok) ? "ok" : "WRONG OUTPUT");
    rows.push_back(std::move(c));
  }
  if (f == Format::csv) {
    print_csv(header, rows, out);
    return;
  }
  out << device_line(r.device, 0) << '\n';
  out << "Seed 002's divergence (mathKernel*) and block-shape (sumMatrixOnGPU2D) experiments. Counts: SIMT backend,\n"
         "exact, at the 'size' column; body execs = warp executions of the branch bodies; lane util = active lanes /\n"
         "lane slots there; loads: requests = 128-byte lines per warp access, sectors = 32-byte sectors; load eff =\n"
         "requested bytes / sector bytes moved (today's GPUs), 128B-line eff = requested / whole lines (nvprof on Fermi).\n";
  if (r.timed)
    out << fmt::format("Times: CUDA events, median of {} (L2 flushed before each), at 'GPU size'.\n", r.options.repeats);
  out << '\n';
  print_table(header, rows, out, 3, true);
}

}  // namespace rl::lab
