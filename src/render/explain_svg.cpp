#include "render/explain_svg.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <set>

#include "fmt/format.h"
#include "render/svg.hpp"

namespace rl::render {
namespace {

constexpr const char* kActive = "#2e7d32";   // did the step's work
constexpr const char* kIdle = "#d7dce0";     // running, but not this step's work
constexpr const char* kExited = "#ffffff";   // returned from the kernel
constexpr const char* kSector = "#1565c0";   // a 32-byte sector the access touched
constexpr const char* kUnused = "#e3eaf2";   // a sector of a touched line it did not need
constexpr const char* kConflict = "#ef9a9a";
constexpr const char* kNoConflict = "#c8e6c9";

constexpr double kCell = 10, kLaneX = 44, kAccessX = kLaneX + 32 * kCell + 24;

std::string step_name(const std::optional<unsigned>& step) {
  return step ? fmt::format("stride {}", *step) : std::string("outside the steps");
}

bool has_accesses(const analysis::StepTrace& s) {
  return std::any_of(s.warps.begin(), s.warps.end(), [](const auto& w) { return !w.accesses.empty(); });
}

// Draws one warp row of lanes at (x, y).
void lanes_row(Svg& svg, double x, double y, const analysis::WarpStep& w) {
  for (unsigned lane = 0; lane < 32; ++lane) {
    const std::uint32_t bit = 1u << lane;
    if (!(w.present & bit)) continue;
    const bool active = w.active & bit, live = w.live & bit;
    svg.rect(x + lane * kCell, y, kCell - 1, kCell - 1, active ? kActive : live ? kIdle : kExited,
             active || live ? "" : R"(stroke="#9e9e9e" stroke-width="0.6")");
    svg.title_last(fmt::format("warp {} lane {} (thread {}): {}", w.warp, lane, w.warp * 32 + lane,
                               active ? "works" : live ? "idle" : "exited"));
  }
}

void legend(Svg& svg, double y) {
  double x = 10;
  auto item = [&](const char* fill, const char* extra, const std::string& label) {
    svg.rect(x, y - 9, 10, 10, fill, extra);
    svg.text(x + 14, y, label, 11);
    x += 24 + 6.6 * static_cast<double>(label.size());
  };
  item(kActive, "", "lane did the step's work");
  item(kIdle, "", "idle (waits)");
  item(kExited, R"(stroke="#9e9e9e" stroke-width="0.6")", "exited");
  item(kSector, "", "32-byte sector read/written");
  item(kUnused, "", "rest of its 128-byte line");
  item(kConflict, "", "bank with a conflict");
}

// One access as its lines (each 4 sectors), at most max_lines of them; returns the width used.
double access_strip(Svg& svg, double x, double y, const analysis::WarpAccess& a, unsigned max_lines) {
  std::map<std::uintptr_t, unsigned> lines;  // line -> bitmask of its 4 sectors
  for (const auto& l : a.lanes)
    for (std::uintptr_t b = l.address; b < l.address + a.bytes; b += 32) lines[b / 128] |= 1u << (b / 32 % 4);
  for (const auto& l : a.lanes) {
    const std::uintptr_t last = l.address + a.bytes - 1;
    lines[last / 128] |= 1u << (last / 32 % 4);
  }
  const std::string tag = a.write ? "W" : "R";
  svg.text(x, y + 8, tag, 10);
  double cx = x + 10;
  unsigned drawn = 0;
  for (const auto& [line, sectors] : lines) {
    if (drawn++ == max_lines) break;
    for (unsigned s = 0; s < 4; ++s) {
      svg.rect(cx + s * 4, y, 3.4, kCell - 1, sectors & (1u << s) ? kSector : kUnused);
    }
    svg.title_last(fmt::format("128-byte line at 0x{:x}", line * 128));
    cx += 19;
  }
  const std::string label = lines.size() > max_lines ? fmt::format("+{} {}L {}S", lines.size() - max_lines, a.lines, a.sectors)
                                                     : fmt::format("{}L {}S", a.lines, a.sectors);
  svg.text(cx + 2, y + 8, label, 9, "start", R"(fill="#37474f")");
  return cx + 8 + 5.4 * static_cast<double>(label.size()) - x;
}

// The lane -> bank map of one shared access; returns the height used.
// `origin`: the lowest shared address the block touched, taken as bank 0 (where a GPU places the
// start of a block's shared memory).
double bank_map(Svg& svg, double x, double y, const analysis::WarpAccess& a, unsigned warp, std::uintptr_t origin) {
  std::array<std::vector<std::pair<std::uintptr_t, std::vector<unsigned>>>, 32> banks;  // words, lanes on each
  for (const auto& l : a.lanes)
    for (std::uintptr_t w = (l.address - origin) / 4; w <= (l.address - origin + a.bytes - 1) / 4; ++w) {
      auto& words = banks[w % 32];
      auto it = std::find_if(words.begin(), words.end(), [&](const auto& p) { return p.first == w; });
      if (it == words.end()) words.push_back({w, {l.lane}});
      else if (std::find(it->second.begin(), it->second.end(), l.lane) == it->second.end()) it->second.push_back(l.lane);
    }
  svg.text(x, y + 10,
           fmt::format("shared memory, warp {}'s {} ({}): lane -> bank, one row per distinct word in a bank", warp,
                       a.write ? "write" : "read",
                       a.ways <= 1 ? std::string("conflict-free, 1 wavefront") : fmt::format("{}-way conflict, {} wavefronts", a.ways, a.ways)),
           11, "start", R"(font-weight="bold")");
  const double cw = 22, ch = 13, top = y + 28;
  for (unsigned b = 0; b < 32; ++b) svg.text(x + b * cw + cw / 2, top - 4, fmt::format("{}", b), 8, "middle", R"(fill="#607d8b")");
  double height = 0;
  for (unsigned b = 0; b < 32; ++b) {
    const auto& words = banks[b];
    const bool conflict = words.size() > 1;
    for (std::size_t r = 0; r < words.size(); ++r) {
      const double cy = top + r * ch;
      svg.rect(x + b * cw, cy, cw - 1, ch - 1, conflict ? kConflict : kNoConflict);
      const auto& lanes = words[r].second;
      svg.title_last(fmt::format("bank {}, byte {} of shared memory: lanes {}", b, words[r].first * 4, fmt::join(lanes, ",")));
      svg.text(x + b * cw + cw / 2, cy + 9.5, lanes.size() == 1 ? fmt::format("{}", lanes[0]) : fmt::format("{}+", lanes[0]),
               8, "middle");
      height = std::max(height, (r + 1) * ch);
    }
    if (conflict)
      svg.text(x + b * cw + cw / 2, top + words.size() * ch + 9, fmt::format("{}x", words.size()), 8, "middle",
               R"(fill="#b71c1c")");
  }
  svg.text(x - 4, top + 9, "bank", 8, "end", R"(fill="#607d8b")");
  return 28 + height + 14;
}

// The step's header: the whole grid's counts for it.
std::string step_header(const std::optional<unsigned>& step, const analysis::StepCounts* c) {
  std::string s = step_name(step);
  if (!c) return s;
  if (step)
    s += fmt::format(" | grid: {} lanes worked in {} warp executions ({} divergent, {:.0f}% of lane slots)",
                     c->active_threads, c->active_warps, c->divergent_warps, 100 * c->simd_utilization);
  if (c->global_accesses)
    s += fmt::format(" | global: {} warp accesses, {} lines, {} sectors", c->global_accesses, c->global_requests,
                     c->global_sectors);
  if (c->shared_accesses)
    s += fmt::format(" | shared: {} accesses, {} wavefronts, worst {}-way", c->shared_accesses, c->shared_wavefronts,
                     c->bank_conflict_ways);
  return s;
}

double draw_tree(Svg& svg, double y, const std::vector<TreeLevel>& levels) {
  std::size_t width = 0;
  for (const auto& l : levels)
    for (const auto& n : l.nodes) width = std::max(width, n.element + 1);
  const double dx = std::clamp(1000.0 / static_cast<double>(width), 12.0, 28.0), dy = 44, x0 = 90;
  svg.text(10, y + 12, "the reduction tree of block 0: each dot is an element a step wrote; lines join the elements it combined",
           12, "start", R"(font-weight="bold")");
  y += 34;
  std::map<std::size_t, double> last_level_y;  // element -> y of the level that last wrote it
  for (std::size_t k = 0; k < levels.size(); ++k) {
    const double ly = y + k * dy;
    svg.text(x0 - 10, ly + 4, k == 0 ? std::string("input") : fmt::format("stride {}", *levels[k].step), 10, "end");
    for (const auto& n : levels[k].nodes) {
      const double nx = x0 + n.element * dx;
      for (std::size_t f : n.from) {
        auto it = last_level_y.find(f);
        const double fy = it == last_level_y.end() ? y : it->second;
        svg.line(x0 + f * dx, fy, nx, ly, f == n.element ? "#90a4ae" : "#1565c0", 1.2);
      }
    }
    for (const auto& n : levels[k].nodes) {
      const double nx = x0 + n.element * dx;
      svg.circle(nx, ly, 4.5, k == 0 ? "#90a4ae" : kActive);
      svg.title_last(fmt::format("element {}", n.element));
      if (k == 0 || width <= 32) svg.text(nx, ly - 7, fmt::format("{}", n.element), 8, "middle", R"(fill="#546e7a")");
    }
    for (const auto& n : levels[k].nodes) last_level_y[n.element] = ly;
  }
  return 34 + levels.size() * dy + 6;
}

}  // namespace

std::vector<TreeLevel> reduction_tree(const analysis::Trace& trace, std::size_t max_elements) {
  // The lowest address each memory space is touched at in the steps: element 0.
  std::uintptr_t base[2] = {~std::uintptr_t(0), ~std::uintptr_t(0)};
  unsigned width[2] = {0, 0};
  for (const auto& s : trace.steps) {
    if (!s.step) continue;
    for (const auto& w : s.warps)
      for (const auto& a : w.accesses)
        for (const auto& l : a.lanes) {
          base[a.shared] = std::min(base[a.shared], l.address);
          width[a.shared] = std::max(width[a.shared], a.bytes);
        }
  }
  auto element = [&](bool shared, std::uintptr_t address) { return (address - base[shared]) / width[shared]; };
  std::vector<TreeLevel> levels(1);
  std::set<std::size_t> inputs;
  for (const auto& s : trace.steps) {
    if (!s.step) continue;
    TreeLevel level;
    level.step = s.step;
    std::map<std::size_t, std::set<std::size_t>> written;  // element -> elements combined into it
    for (const auto& w : s.warps) {
      // Per lane: what it read and wrote in this step.
      std::map<unsigned, std::pair<std::set<std::size_t>, std::set<std::size_t>>> lanes;
      for (const auto& a : w.accesses)
        for (const auto& l : a.lanes) {
          if (!(w.active & (1u << l.lane))) continue;
          auto& [reads, writes] = lanes[l.lane];
          (a.write ? writes : reads).insert(element(a.shared, l.address));
        }
      for (const auto& [lane, rw] : lanes)
        for (std::size_t to : rw.second) {
          written[to].insert(rw.first.begin(), rw.first.end());
        }
    }
    if (written.empty()) continue;
    for (auto& [to, from] : written) {
      if (levels.size() == 1) inputs.insert(from.begin(), from.end());
      level.nodes.push_back({to, std::vector<std::size_t>(from.begin(), from.end())});
    }
    levels.push_back(std::move(level));
  }
  if (levels.size() < 2) return {};
  for (std::size_t e : inputs) levels[0].nodes.push_back({e, {}});
  for (const auto& l : levels)
    for (const auto& n : l.nodes)
      if (n.element >= max_elements) return {};
  return levels;
}

std::string lanes_svg(const analysis::StepTrace& step, unsigned max_warps, const std::string& label) {
  Svg svg;
  double y = 6;
  unsigned shown = 0;
  for (const auto& w : step.warps) {
    if (shown++ == max_warps) break;
    svg.text(kLaneX - 6, y + 8, fmt::format("w{}", w.warp), 9, "end");
    lanes_row(svg, kLaneX, y, w);
    y += kCell + 2;
  }
  if (step.warps.size() > max_warps)
    svg.text(kLaneX, y + 9, fmt::format("+{} more warps", step.warps.size() - max_warps), 9);
  return svg.str(label);
}

std::string explain_svg(const lab::ExplainReport& r, const PictureLimits& limits) {
  const auto& e = *r.plan.kernels.front();
  Svg svg;
  svg.text(10, 20,
           fmt::format("{} ({}): n = {}, block {}, {} {} - one execution on the SIMT backend", e.name, e.id, r.plan.n,
                       r.plan.block, core::name(r.plan.dtype), core::name(r.plan.op)),
           15, "start", R"(font-weight="bold")");
  svg.text(10, 38,
           "Each step: block 0's warps (rows) x 32 lanes, then each warp's global accesses as the 128-byte lines "
           "(4 sectors each) they touch (R read, W write; nL mS = lines, sectors).",
           11);
  legend(svg, 58);
  std::uintptr_t shared_origin = ~std::uintptr_t(0);
  for (const auto& s : r.trace.steps)
    for (const auto& w : s.warps)
      for (const auto& a : w.accesses)
        if (a.shared)
          for (const auto& l : a.lanes) shared_origin = std::min(shared_origin, l.address);
  double y = 72;
  if (!r.probed) {
    svg.text(10, y + 12, "This kernel has no probes in its reduction steps: only the accesses outside steps are drawn.",
             12, "start", R"(fill="#b71c1c")");
    y += 24;
  }
  if (r.plan.n <= limits.max_tree_elements) {
    const auto tree = reduction_tree(r.trace, limits.max_tree_elements);
    if (!tree.empty()) y += draw_tree(svg, y, tree);
    else if (r.probed)
      svg.text(10, y + 12, "no reduction tree in memory to draw (the steps combine values in registers)", 11),
          y += 22;
  }
  for (std::size_t k = 0; k < r.trace.steps.size(); ++k) {
    const auto& s = r.trace.steps[k];
    if (!s.step && !has_accesses(s)) continue;
    const analysis::StepCounts* c = s.step ? (k < r.counts.steps.size() ? &r.counts.steps[k] : nullptr) : &r.counts.outside;
    y += 14;
    svg.line(10, y - 4, 1100, y - 4, "#cfd8dc");
    svg.text(10, y + 10, step_header(s.step, c), 12, "start", R"(font-weight="bold")");
    y += 20;
    unsigned shown = 0;
    const analysis::WarpAccess* worst = nullptr;
    unsigned worst_warp = 0;
    for (const auto& w : s.warps) {
      if (shown++ == limits.max_warps) break;
      svg.text(kLaneX - 6, y + 8, fmt::format("w{}", w.warp), 9, "end");
      lanes_row(svg, kLaneX, y, w);
      double x = kAccessX;
      unsigned drawn = 0, shared = 0, global = 0;
      for (const auto& a : w.accesses) {
        if (a.shared) {
          ++shared;
          if (!worst || a.ways > worst->ways) worst = &a, worst_warp = w.warp;
          continue;
        }
        ++global;
        if (drawn++ >= limits.max_accesses) continue;
        x += access_strip(svg, x, y, a, limits.max_lines) + 12;
      }
      if (global > limits.max_accesses) svg.text(x, y + 8, fmt::format("+{} accesses", global - limits.max_accesses), 9), x += 80;
      if (shared) {
        unsigned ways = 0;
        for (const auto& a : w.accesses)
          if (a.shared) ways = std::max(ways, a.ways);
        svg.text(x, y + 8, fmt::format("shared: {} access{}, worst {}-way", shared, shared == 1 ? "" : "es", ways), 9,
                 "start", ways > 1 ? R"(fill="#b71c1c")" : R"(fill="#2e7d32")");
      }
      y += kCell + 2;
    }
    if (s.warps.size() > limits.max_warps) {
      svg.text(kLaneX, y + 9, fmt::format("+{} more warps in block 0 (the header counts the whole grid)", s.warps.size() - limits.max_warps), 10);
      y += 14;
    }
    if (worst) y += 6 + bank_map(svg, kLaneX, y + 6, *worst, worst_warp, shared_origin);
  }
  y += 16;
  svg.text(10, y, fmt::format("result {} expected {}: {}", r.row.result, r.row.expected, r.row.status), 11);
  return svg.str(fmt::format("{} explained: lanes, sectors and banks per step", e.name));
}

}  // namespace rl::render
