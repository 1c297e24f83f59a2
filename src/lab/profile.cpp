#include "lab/profile.hpp"

#include <glob.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <stdexcept>

#include "fmt/format.h"
#include "lab/errors.hpp"
#include "lab/explain.hpp"

namespace rl::lab {

// NVIDIA's "Nsight Compute CLI: nvprof metric comparison" table, the lines the seeds use.
const std::vector<MetricMapping>& metric_mappings() {
  static const std::vector<MetricMapping> m = {
      {"inst_per_warp", "smsp__average_inst_executed_per_warp.ratio",
       "instructions executed per warp, averaged over the warps", "", 1},
      {"gld_throughput", "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second",
       "bytes of global loads the L1 delivered per second", "GB/s", 1e-9},
      {"gld_efficiency", "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
       "bytes the loads asked for per byte of the 32-byte sectors moved", "%", 1},
      {"gld_transactions_per_request", "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio",
       "32-byte sectors per global load request", "", 1},
      {"branch_efficiency", "smsp__sass_average_branch_targets_threads_uniform.pct",
       "branches whose active threads all went the same way", "%", 1},
      {"warp_execution_efficiency", "smsp__thread_inst_executed_per_inst_executed.ratio",
       "active threads per executed warp instruction (nvprof: as % of 32)", "%", 100.0 / 32},
      {"shared_ld_bank_conflict", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
       "extra shared-memory load wavefronts caused by bank conflicts", "", 1},
      {"shared_st_bank_conflict", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
       "extra shared-memory store wavefronts caused by bank conflicts", "", 1},
      {"achieved_occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active",
       "resident warps per active cycle, of the SM's maximum (nvprof: a ratio)", "", 0.01},
  };
  return m;
}

std::string ncu_metric_list() {
  std::string s(kNcuDuration);
  for (const auto& m : metric_mappings()) s += "," + std::string(m.ncu);
  return s;
}

namespace {

// A count both sides take: the ncu metrics summed, and the SIMT counter beside them.
struct CompareSpec {
  const char* what;
  std::vector<std::string_view> ncu;  // summed
  std::uint64_t (*simt)(const analysis::StepCounts&);
  const char* not_compared = nullptr;  // why the two figures are different quantities
};
// Warp-level SASS instructions and L1 sectors/wavefronts of global and shared loads and stores.
const std::vector<CompareSpec>& compare_specs() {
  static const std::vector<CompareSpec> specs = {
      {"global instructions (warp accesses)",
       {"smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum"},
       [](const analysis::StepCounts& c) { return c.global_accesses; }},
      {"global requests (128-byte lines)",
       {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"},
       [](const analysis::StepCounts& c) { return c.global_requests; },
       "not compared: on Hopper ncu counts one request per warp instruction, whatever lines it touches; the SIMT "
       "figure is the 128-byte lines each warp access touches"},
      {"global sectors (32 bytes)",
       {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"},
       [](const analysis::StepCounts& c) { return c.global_sectors; }},
      {"shared instructions (warp accesses)",
       {"smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum"},
       [](const analysis::StepCounts& c) { return c.shared_accesses; }},
      {"shared wavefronts",
       {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"},
       [](const analysis::StepCounts& c) { return c.shared_wavefronts; }},
      {"shared bank conflicts (wavefronts - instructions)",
       {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"},
       [](const analysis::StepCounts& c) { return c.shared_wavefronts - c.shared_accesses; }},
  };
  return specs;
}

// Lanes per instruction of one memory class: the source page's predicated-on thread executions of
// the class over the SASS counter's warp instructions, against the recorder's lanes over accesses.
struct LaneSpec {
  const char* what;
  double SassMemoryLanes::*sass;
  std::string_view warps;  // ncu metric
  analysis::StepCounts::ClassCounts analysis::StepCounts::*simt;
};
const std::vector<LaneSpec>& lane_specs() {
  static const std::vector<LaneSpec> specs = {
      {"lanes per instruction: global loads", &SassMemoryLanes::global_loads, "smsp__sass_inst_executed_op_global_ld.sum",
       &analysis::StepCounts::global_loads},
      {"lanes per instruction: global stores", &SassMemoryLanes::global_stores,
       "smsp__sass_inst_executed_op_global_st.sum", &analysis::StepCounts::global_stores},
      {"lanes per instruction: shared loads", &SassMemoryLanes::shared_loads, "smsp__sass_inst_executed_op_shared_ld.sum",
       &analysis::StepCounts::shared_loads},
      {"lanes per instruction: shared stores", &SassMemoryLanes::shared_stores,
       "smsp__sass_inst_executed_op_shared_st.sum", &analysis::StepCounts::shared_stores},
  };
  return specs;
}
constexpr std::string_view kNcuSourcePage =
    "ncu source page (SourceCounters): the class's Predicated-On Thread Instructions Executed / ";
// Every instruction's active threads: ncu counts it, the emulator does not (see compare_counts).
constexpr std::string_view kNcuThreadsPerInstruction = "smsp__thread_inst_executed_per_inst_executed.ratio";

// One CSV record: fields split on commas outside quotes, "" inside quotes is a quote.
std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    out.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

int column(const std::vector<std::string>& header, std::string_view name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

std::string at(const std::vector<std::string>& row, int i) {
  return i >= 0 && static_cast<std::size_t>(i) < row.size() ? row[i] : std::string();
}

}  // namespace

std::optional<double> parse_ncu_number(std::string_view text) {
  std::string digits;
  for (char c : text)
    if (c != ',' && c != ' ') digits += c;
  if (digits.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size()) return std::nullopt;
  return v;
}

std::vector<NcuKernel> parse_ncu_csv(std::string_view text) {
  const auto lines = lines_of(text);
  std::size_t h = 0;
  while (h < lines.size() && lines[h].rfind("\"ID\",", 0) != 0) ++h;
  if (h == lines.size()) throw std::runtime_error("ncu printed no CSV report (no line starting with \"ID\")");
  const std::vector<std::string> header = csv_fields(lines[h]);
  const int id = column(header, "ID"), name = column(header, "Kernel Name"), block = column(header, "Block Size"),
            grid = column(header, "Grid Size");
  const int metric_name = column(header, "Metric Name"), metric_unit = column(header, "Metric Unit"),
            metric_value = column(header, "Metric Value");
  std::vector<NcuKernel> kernels;
  std::map<std::string, std::size_t> by_id;
  auto kernel_for = [&](const std::vector<std::string>& row) -> NcuKernel& {
    const std::string key = at(row, id);
    auto [it, fresh] = by_id.try_emplace(key, kernels.size());
    if (fresh) kernels.push_back({at(row, name), at(row, block), at(row, grid), {}, {}});
    return kernels[it->second];
  };
  const bool details = metric_name >= 0 && metric_value >= 0;
  std::vector<std::string> units;
  for (std::size_t i = h + 1; i < lines.size(); ++i) {
    if (lines[i].empty() || lines[i][0] != '"') continue;  // ==PROF== lines, application output
    const std::vector<std::string> row = csv_fields(lines[i]);
    if (details) {
      NcuKernel& k = kernel_for(row);
      k.values[at(row, metric_name)] = at(row, metric_value);
      k.units[at(row, metric_name)] = at(row, metric_unit);
      continue;
    }
    if (at(row, id).empty()) {  // the raw page's second line: the units of each metric
      units = row;
      continue;
    }
    NcuKernel& k = kernel_for(row);
    for (std::size_t c = 0; c < header.size() && c < row.size(); ++c) {
      if (static_cast<int>(c) == id || static_cast<int>(c) == name || static_cast<int>(c) == block ||
          static_cast<int>(c) == grid)
        continue;
      k.values[header[c]] = row[c];
      k.units[header[c]] = c < units.size() ? units[c] : std::string();
    }
  }
  return kernels;
}

namespace {
// "@!P0  LDG.E.128 R8, [R2.64]" -> "LDG": the opcode without its predicate and modifiers.
std::string_view sass_opcode(std::string_view source) {
  auto skip_spaces = [&] {
    while (!source.empty() && source.front() == ' ') source.remove_prefix(1);
  };
  skip_spaces();
  if (!source.empty() && source.front() == '@') {
    const auto sp = source.find(' ');
    source.remove_prefix(sp == std::string_view::npos ? source.size() : sp);
    skip_spaces();
  }
  return source.substr(0, source.find_first_of(" .;"));
}
}  // namespace

SassMemoryLanes parse_ncu_sass_source(std::string_view text) {
  const auto lines = lines_of(text);
  std::size_t h = 0;
  while (h < lines.size() && lines[h].rfind("\"Address\",\"Source\"", 0) != 0) ++h;
  if (h == lines.size())
    throw std::runtime_error("ncu printed no source page (no line starting with \"Address\",\"Source\")");
  const std::vector<std::string> header = csv_fields(lines[h]);
  const int source = column(header, "Source"), threads = column(header, "Predicated-On Thread Instructions Executed"),
            space = column(header, "Address Space");
  for (auto [i, name] : {std::pair{source, "Source"}, std::pair{threads, "Predicated-On Thread Instructions Executed"},
                         std::pair{space, "Address Space"}})
    if (i < 0) throw std::runtime_error(fmt::format("ncu's source page has no \"{}\" column", name));
  SassMemoryLanes out;
  for (std::size_t i = h + 1; i < lines.size(); ++i) {
    if (lines[i].empty() || lines[i][0] != '"') continue;  // ==PROF== lines, application output
    const std::vector<std::string> row = csv_fields(lines[i]);
    if (row.size() != header.size()) break;  // the next kernel's page or another table
    ++out.instructions_listed;
    const std::string text = at(row, source);
    const std::string_view op = sass_opcode(text);
    const std::string where = at(row, space);
    double* c = nullptr;
    if (op == "LDG") c = &out.global_loads;
    else if (op == "STG") c = &out.global_stores;
    else if (op == "LDS" || op == "LDSM") c = &out.shared_loads;
    else if (op == "STS") c = &out.shared_stores;
    else if (op == "LD" || op == "ST") {  // generic: the space the addresses fell in
      const bool load = op == "LD";
      if (where == "Global") c = load ? &out.global_loads : &out.global_stores;
      else if (where == "Shared") c = load ? &out.shared_loads : &out.shared_stores;
    }
    if (c == nullptr) continue;
    *c += parse_ncu_number(at(row, threads)).value_or(0);
  }
  return out;
}

std::vector<ProfileMetric> profile_metrics(const NcuKernel& k) {
  std::vector<ProfileMetric> out;
  for (const auto& m : metric_mappings()) {
    ProfileMetric p;
    p.nvprof = m.nvprof;
    p.ncu = m.ncu;
    p.meaning = m.meaning;
    p.nvprof_unit = m.nvprof_unit;
    if (auto v = k.values.find(p.ncu); v != k.values.end()) {
      p.value = parse_ncu_number(v->second);
      p.unit = k.units.count(p.ncu) ? k.units.at(p.ncu) : "";
      if (p.value) p.nvprof_value = *p.value * m.to_nvprof;
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::string ncu_compare_metric_list() {
  std::vector<std::string> names;
  auto add = [&](std::string_view m) {
    if (std::find(names.begin(), names.end(), m) == names.end()) names.emplace_back(m);
  };
  for (const auto& c : compare_specs())
    for (auto m : c.ncu) add(m);
  add(kNcuThreadsPerInstruction);
  std::string s;
  for (const auto& m : names) s += (s.empty() ? "" : ",") + m;
  return s;
}

namespace {
std::optional<double> ncu_value(const NcuKernel& k, std::string_view metric) {
  const auto v = k.values.find(std::string(metric));
  return v == k.values.end() ? std::nullopt : parse_ncu_number(v->second);
}

// A row whose two sides count different things: shown, left out of the N/M, the reason first.
void mark_not_compared(ComparedCount& c, const char* why) {
  if (why == nullptr) return;
  c.comparable = false;
  c.note = c.note.empty() ? std::string(why) : std::string(why) + "; " + c.note;
}
}  // namespace

std::vector<ComparedCount> compare_counts(const analysis::Counts& simt, const NcuKernel& gpu,
                                          const SassMemoryLanes* sass) {
  analysis::StepCounts all = simt.totals;
  all.add(simt.outside);
  std::vector<ComparedCount> out;
  for (const auto& spec : compare_specs()) {
    ComparedCount c;
    c.what = spec.what;
    double sum = 0;
    bool all_there = true;
    for (auto m : spec.ncu) {
      c.ncu += (c.ncu.empty() ? "" : " + ") + std::string(m);
      if (const auto x = ncu_value(gpu, m)) sum += *x;
      else all_there = false;
    }
    if (all_there) c.gpu = sum;
    c.simt = static_cast<double>(spec.simt(all));
    c.equal = c.gpu && *c.gpu == *c.simt;
    if (!c.gpu) c.note = "ncu did not report it";
    mark_not_compared(c, spec.not_compared);
    out.push_back(std::move(c));
  }
  for (const auto& spec : lane_specs()) {
    ComparedCount c;
    c.what = spec.what;
    c.ratio = true;
    c.ncu = std::string(kNcuSourcePage) + std::string(spec.warps);
    const auto& mine = all.*(spec.simt);
    auto per = [](double lanes, double instructions) { return instructions > 0 ? lanes / instructions : 0.0; };
    c.simt = per(static_cast<double>(mine.lanes), static_cast<double>(mine.accesses));
    const auto warps = ncu_value(gpu, spec.warps);
    if (sass == nullptr) {
      c.note = "ncu's source page was not read";
    } else if (!warps) {
      c.note = "ncu did not report it";
    } else {
      const double threads = (*sass).*(spec.sass);
      c.gpu = per(threads, *warps);
      // Equal when the lanes and the instructions behind the ratio are both equal, not merely the
      // quotient.
      c.equal = threads == static_cast<double>(mine.lanes) && *warps == static_cast<double>(mine.accesses);
      c.note = fmt::format("lanes/instructions: simt {}/{}, ncu {:.0f}/{:.0f}", mine.lanes, mine.accesses, threads, *warps);
    }
    out.push_back(std::move(c));
  }
  ComparedCount whole;
  whole.what = "thread instructions per warp instruction (every instruction)";
  whole.ncu = std::string(kNcuThreadsPerInstruction);
  whole.ratio = true;
  whole.gpu = ncu_value(gpu, kNcuThreadsPerInstruction);
  whole.comparable = false;
  // The emulator runs the CUDA source, not the SASS: it sees the memory accesses and the probed
  // steps, not the arithmetic, branch and address instructions the compiler emits around them.
  whole.note = fmt::format(
      "ncu only: SIMT runs the source, not the SASS, so it cannot count every instruction (the lanes at the probed "
      "steps: {:.3f} of 32)",
      32 * simt.totals.simd_utilization);
  out.push_back(std::move(whole));
  return out;
}

std::pair<std::size_t, std::size_t> equal_of_comparable(const std::vector<ComparedCount>& rows) {
  std::size_t equal = 0, comparable = 0;
  for (const auto& c : rows) {
    comparable += c.comparable;
    equal += c.comparable && c.equal;
  }
  return {equal, comparable};
}

const std::vector<StallReason>& stall_reasons() {
  static const std::vector<StallReason> r = {
      {"barrier", "at a barrier (__syncthreads)"},
      {"membar", "at a memory fence"},
      {"long_scoreboard", "waiting for a global-memory load (long scoreboard)"},
      {"short_scoreboard", "waiting for a shared-memory or other MIO result (short scoreboard)"},
      {"mio_throttle", "with the shared-memory instruction queue full (MIO throttle)"},
      {"lg_throttle", "with the global load/store queue full (LG throttle)"},
      {"wait", "in a fixed-latency wait between dependent instructions"},
      {"math_pipe_throttle", "with its math pipe busy"},
      {"not_selected", "eligible but another warp was picked to issue"},
      {"selected", "issuing an instruction"},
      {"dispatch_stall", "held at dispatch"},
      {"no_instruction", "with no instruction fetched (instruction cache)"},
      {"branch_resolving", "resolving a branch target"},
      {"drain", "draining its stores before exit"},
      {"sleeping", "asleep (__nanosleep or a yield)"},
      {"tex_throttle", "with the texture queue full"},
      {"imc_miss", "missing the constant cache"},
      {"misc", "for other reasons"},
  };
  return r;
}

std::string stall_metric(std::string_view reason) {
  return fmt::format("smsp__warp_issue_stalled_{}_per_warp_active.pct", reason);
}

std::string_view stall_meaning(std::string_view reason) {
  for (const auto& r : stall_reasons())
    if (r.reason == reason) return r.meaning;
  return reason;
}

std::string ncu_stall_metric_list() {
  std::string s;
  for (const auto& r : stall_reasons()) s += (s.empty() ? "" : ",") + stall_metric(r.reason);
  for (auto m : {kNcuTheoreticalOccupancy, kNcuWaves, kNcuDramRead, kNcuDramWrite, kNcuDramThroughput})
    s += "," + std::string(m);
  return s;  // achieved occupancy is in the profile's own list (achieved_occupancy)
}

StallBreakdown stall_breakdown(const NcuKernel& k) {
  StallBreakdown b;
  for (const auto& r : stall_reasons())
    if (const auto v = ncu_value(k, stall_metric(r.reason))) b.reasons.push_back({std::string(r.reason), *v});
  std::stable_sort(b.reasons.begin(), b.reasons.end(), [](const StallShare& x, const StallShare& y) { return x.pct > y.pct; });
  b.achieved_occupancy_pct = ncu_value(k, kNcuAchievedOccupancy);
  b.theoretical_occupancy_pct = ncu_value(k, kNcuTheoreticalOccupancy);
  b.waves_per_sm = ncu_value(k, kNcuWaves);
  b.dram_read_bytes = ncu_value(k, kNcuDramRead);
  b.dram_write_bytes = ncu_value(k, kNcuDramWrite);
  b.dram_throughput_pct = ncu_value(k, kNcuDramThroughput);
  return b;
}

std::vector<std::string> rejected_metrics(std::string_view output, const std::vector<std::string>& asked) {
  std::vector<std::string> out;
  auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  // Whether `name` stands in `line` as a whole word: not inside a longer name, though it may end a
  // sentence with a period.
  auto names = [&](std::string_view line, std::string_view name) {
    for (auto at = line.find(name); at != std::string_view::npos; at = line.find(name, at + 1)) {
      const std::size_t end = at + name.size();
      const bool starts = at == 0 || !name_char(line[at - 1]);
      const bool ends = end == line.size() || !name_char(line[end]) ||
                        (line[end] == '.' && (end + 1 == line.size() || !name_char(line[end + 1])));
      if (starts && ends) return true;
    }
    return false;
  };
  for (auto line : lines_of(output)) {
    if (line.find("==ERROR==") == std::string_view::npos) continue;
    for (const auto& m : asked) {
      if (std::find(out.begin(), out.end(), m) != out.end()) continue;
      // The full name, or its base without the rollup (ncu may name either).
      const std::string_view base = std::string_view(m).substr(0, m.find('.'));
      if (names(line, m) || (base.size() < m.size() && names(line, base))) out.push_back(m);
    }
  }
  return out;
}

std::string find_ncu() {
  if (const char* env = std::getenv("REDUCELAB_NCU"); env && *env) {
    if (access(env, X_OK) != 0)
      throw UsageError(fmt::format("REDUCELAB_NCU={}: not an executable file; point it at Nsight Compute's ncu", env));
    return env;
  }
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest(path);
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const std::string_view dir = rest.substr(0, colon);
      if (!dir.empty()) candidates.push_back(std::string(dir) + "/ncu");
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  candidates.push_back("/usr/local/cuda/bin/ncu");
  glob_t g{};
  if (glob("/opt/nvidia/nsight-compute/*/ncu", 0, nullptr, &g) == 0)
    for (std::size_t i = 0; i < g.gl_pathc; ++i) candidates.push_back(g.gl_pathv[i]);
  globfree(&g);
  for (const auto& c : candidates)
    if (access(c.c_str(), X_OK) == 0) return c;
  throw UsageError(
      "profile: ncu (Nsight Compute) not found in PATH, /usr/local/cuda/bin or /opt/nvidia/nsight-compute/*; "
      "install it or set REDUCELAB_NCU");
}

namespace {

std::string shell_quoted(std::string_view s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string self_executable() {
  char buf[4096];
  const ssize_t len = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (len <= 0) throw std::runtime_error("profile: cannot find this program's path (/proc/self/exe)");
  return std::string(buf, static_cast<std::size_t>(len));
}

// Runs `command` through the shell; returns its exit status and everything it printed.
int run_capture(const std::string& command, std::string* output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error("profile: cannot start ncu (popen failed)");
  char buf[8192];
  std::size_t got = 0;
  while ((got = std::fread(buf, 1, sizeof(buf), pipe)) > 0) output->append(buf, got);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string last_line(const std::string& text) {
  std::string_view t(text);
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.remove_suffix(1);
  const auto nl = t.rfind('\n');
  return std::string(nl == std::string_view::npos ? t : t.substr(nl + 1));
}

}  // namespace

ProfileReport profile(const Plan& plan, bool compare, bool stalls) {
  const gallery::Entry& e = *plan.kernels.front();
  if (e.constraints.is_reference)
    throw UsageError(fmt::format("profile {}: CUB runs kernels of its own; profile a gallery kernel", e.id));
  validate(plan, *open_simt_device());  // the plan's own mistakes first, before any tool or device
  if (compare && plan.n > kSimtCompareMaxN)
    throw UsageError(fmt::format("--n {}: profile --compare runs the kernel on the SIMT emulator too; give --n <= {} "
                                 "(e.g. --n 65536)",
                                 plan.n, kSimtCompareMaxN));
  ProfileReport report;
  report.plan = plan;
  report.ncu = find_ncu();
  auto device = open_device(BackendChoice::cuda);  // no GPU: UsageError, one line
  validate(plan, *device);
  report.device = device->info().name;
  device.reset();  // ncu's child process gets the GPU to itself

  // The kernel as ncu names it (demangled: namespace and template arguments around the name).
  const std::string name_regex = fmt::format("regex:(^|.*[^A-Za-z0-9_]){}([<(].*|$)", e.name);
  report.command = fmt::format(
      "{} --backend cuda run --kernels {} --n {} --block {} --dtype {} --op {} --accumulate {} --param {} --seed {} "
      "--repeats 1 --hot --no-ceiling --format csv",
      shell_quoted(self_executable()), e.id, plan.n, plan.block, core::name(plan.dtype), core::name(plan.op),
      gallery::name(plan.accumulate), plan.param, plan.seed);
  std::vector<std::string> metrics;
  {
    std::string list = ncu_metric_list();
    if (compare) list += "," + ncu_compare_metric_list();
    if (stalls) list += "," + ncu_stall_metric_list();
    std::string_view rest(list);
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const std::string one(rest.substr(0, comma));
      if (!one.empty() && std::find(metrics.begin(), metrics.end(), one) == metrics.end()) metrics.push_back(one);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  // Both ncu passes profile the same launch: the run's first kernel of this name, clocks as they are.
  const std::string ncu_launch = fmt::format(
      "{} --clock-control none --target-processes all --kernel-name-base demangled --kernel-name {} --launch-count 1",
      shell_quoted(report.ncu), shell_quoted(name_regex));
  std::string output;
  int status = 0;
  // A metric this ncu or this GPU does not have makes ncu refuse the whole run: drop the ones it
  // names and ask once more, reporting them as unavailable.
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::string joined;
    for (const auto& m : metrics) joined += (joined.empty() ? "" : ",") + m;
    const std::string ncu_command =
        fmt::format("{} --csv --page raw --print-units base --metrics {} {}", ncu_launch, joined, report.command);
    output.clear();
    status = run_capture(ncu_command, &output);
    if (attempt > 0 || output.find("ERR_NVGPUCTRPERM") != std::string::npos) break;
    const auto rejected = rejected_metrics(output, metrics);
    if (rejected.empty()) break;
    for (const auto& r : rejected) {
      report.unavailable.push_back(r);
      metrics.erase(std::find(metrics.begin(), metrics.end(), r));
    }
  }
  if (output.find("ERR_NVGPUCTRPERM") != std::string::npos)
    throw std::runtime_error(
        "profile: ncu may not read this GPU's performance counters (ERR_NVGPUCTRPERM); run as root or allow "
        "profiling for all users (NVreg_RestrictProfilingToAdminUsers=0)");
  std::vector<NcuKernel> kernels;
  try {
    kernels = parse_ncu_csv(output);
  } catch (const std::runtime_error&) {
    throw std::runtime_error(fmt::format("profile: ncu exited with status {} and no report; its last line: {}", status,
                                         last_line(output)));
  }
  if (kernels.empty())
    throw std::runtime_error(fmt::format("profile: ncu profiled no kernel named {} (exit status {}); its last line: {}",
                                         e.name, status, last_line(output)));
  const NcuKernel& k = kernels.front();
  report.kernel_name = k.name;
  report.grid = k.grid;
  report.block = k.block;
  if (auto d = k.values.find(std::string(kNcuDuration)); d != k.values.end()) report.duration_ns = parse_ncu_number(d->second);
  report.metrics = profile_metrics(k);
  if (compare) {
    // A second pass for the per-class lanes: the source page lists every SASS instruction with its
    // warp and thread executions (one kernel launch, the same one as above).
    std::string page;
    const int page_status = run_capture(
        fmt::format("{} --section SourceCounters --page source --print-source sass --csv {}", ncu_launch, report.command),
        &page);
    try {
      report.sass = parse_ncu_sass_source(page);
    } catch (const std::runtime_error& err) {
      report.unavailable.push_back(fmt::format("source page (exit status {}: {}; its last line: {})", page_status,
                                               err.what(), last_line(page)));
    }
    const ExplainReport simt = explain(plan);  // the same plan, one launch, every lane recorded
    report.compared = true;
    report.simt_status = simt.row.status;
    report.comparison = compare_counts(simt.counts, k, report.sass ? &*report.sass : nullptr);
  }
  if (stalls) {
    report.stalled = true;
    report.stalls = stall_breakdown(k);
  }
  return report;
}

}  // namespace rl::lab
