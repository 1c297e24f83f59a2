#include "lab/littles_law.hpp"

#include <algorithm>
#include <exception>
#include <map>

#include "fmt/format.h"
#include "lab/errors.hpp"
#include "lab/explain.hpp"
#include "nlohmann/json.hpp"

namespace rl::lab {

std::optional<double> bytes_in_flight_per_sm(const gallery::Entry& e, std::size_t input_bytes, unsigned block,
                                             int max_blocks_per_sm, std::uint64_t grid, int sm_count) {
  if (e.independent_loads == 0 || sm_count <= 0 || max_blocks_per_sm <= 0) return std::nullopt;
  const double blocks = std::min(static_cast<double>(max_blocks_per_sm), static_cast<double>(grid) / sm_count);
  const double width = e.load_width ? e.load_width : static_cast<double>(input_bytes);
  return blocks * block * e.independent_loads * width;
}

double predicted_gb_per_s(double bytes_per_sm, int sm_count, double latency_ns, double ceiling_gb_per_s) {
  if (latency_ns <= 0) return ceiling_gb_per_s;
  const double gbs = sm_count * bytes_per_sm / latency_ns;
  return ceiling_gb_per_s > 0 ? std::min(gbs, ceiling_gb_per_s) : gbs;
}

// ---- the table ---------------------------------------------------------------------------------

std::string_view name(LittlesCause c) {
  switch (c) {
    case LittlesCause::none: return "-";
    case LittlesCause::faster: return "faster than predicted";
    case LittlesCause::dram_traffic: return "DRAM traffic";
    case LittlesCause::occupancy: return "occupancy";
    case LittlesCause::barriers: return "barriers";
    case LittlesCause::memory_latency: return "memory latency";
    case LittlesCause::shared_memory: return "shared memory";
    case LittlesCause::issue: return "instruction issue";
    case LittlesCause::other: return "other warp states";
    case LittlesCause::unmeasured: return "not measured";
  }
  return "?";
}

LittlesCause cause_of_state(std::string_view r) {
  if (r == "barrier" || r == "membar") return LittlesCause::barriers;
  if (r == "long_scoreboard" || r == "lg_throttle" || r == "drain") return LittlesCause::memory_latency;
  if (r == "short_scoreboard" || r == "mio_throttle") return LittlesCause::shared_memory;
  if (r == "selected" || r == "not_selected" || r == "math_pipe_throttle" || r == "wait" || r == "dispatch_stall" ||
      r == "no_instruction" || r == "branch_resolving")
    return LittlesCause::issue;
  return LittlesCause::other;
}

namespace {

// Below this share of the theoretical occupancy, resident warps are what the law overcounts.
constexpr double kOccupancyShortfall = 0.6;
// A second warp state is named beside the first when it takes at least this share of warp time.
constexpr double kSecondStatePct = 10;

std::string states_text(const std::vector<StallShare>& top) {
  std::string s;
  for (std::size_t i = 0; i < top.size(); ++i) {
    if (i > 0 && top[i].pct < kSecondStatePct) break;
    if (i == 2) break;
    s += fmt::format("{}{:.0f}% of warp time {}", i ? ", " : "", top[i].pct, stall_meaning(top[i].reason));
  }
  return s;
}

}  // namespace

LittlesRow littles_row(const LittlesInput& in, double tolerance) {
  LittlesRow r;
  r.kernel = in.kernel;
  r.measured_gb_per_s = in.measured_gb_per_s;
  r.predicted_gb_per_s = in.predicted_gb_per_s;
  r.bytes_in_flight_per_sm = in.bytes_in_flight_per_sm;
  r.l1_bytes_per_input_byte = in.l1_bytes_per_input_byte;
  r.predicted = in.predicted_gb_per_s && *in.predicted_gb_per_s > 0;
  if (r.predicted) r.ratio = in.measured_gb_per_s / *in.predicted_gb_per_s;
  auto inside = [&](double ratio) { return ratio >= 1 - tolerance && ratio <= 1 + tolerance; };
  r.within = r.ratio && inside(*r.ratio);
  if (in.stalls) {
    const auto& s = *in.stalls;
    r.achieved_occupancy_pct = s.achieved_occupancy_pct;
    r.theoretical_occupancy_pct = s.theoretical_occupancy_pct;
    for (std::size_t i = 0; i < s.reasons.size() && i < 3; ++i) r.top_states.push_back(s.reasons[i]);
    if (s.dram_read_bytes && s.dram_write_bytes && in.input_bytes > 0)
      r.dram_bytes_per_input_byte = (*s.dram_read_bytes + *s.dram_write_bytes) / in.input_bytes;
    if (r.dram_bytes_per_input_byte && *r.dram_bytes_per_input_byte > 0 && r.predicted) {
      // The law bounds the bytes the memory system moves; a kernel that moves k bytes per byte
      // of input can read its input at most 1/k as fast.
      r.traffic_predicted_gb_per_s = *in.predicted_gb_per_s / std::max(1.0, *r.dram_bytes_per_input_byte);
      r.traffic_ratio = in.measured_gb_per_s / *r.traffic_predicted_gb_per_s;
    }
  }
  if (!r.predicted || r.within) return r;

  if (!in.stalls) {
    r.cause = LittlesCause::unmeasured;
    r.cause_text = "no warp states measured (profile --stalls)";
    return r;
  }
  std::string detail;
  const auto occ = r.achieved_occupancy_pct, theo = r.theoretical_occupancy_pct;
  if (occ && theo && *theo > 0)
    detail += fmt::format("; achieved occupancy {:.0f}% (theoretical {:.0f}%)", *occ, *theo);
  if (r.dram_bytes_per_input_byte) detail += fmt::format("; DRAM moves {:.2f} bytes per input byte", *r.dram_bytes_per_input_byte);
  const std::string states = states_text(r.top_states);

  if (*r.ratio > 1 + tolerance) {
    r.cause = LittlesCause::faster;
    r.cause_text = fmt::format("reads faster than its declared loads in flight allow: it keeps more in flight than "
                               "the law counts; {}{}",
                               states, detail);
    return r;
  }
  if (r.dram_bytes_per_input_byte && *r.dram_bytes_per_input_byte > 1 + tolerance && r.traffic_ratio &&
      inside(*r.traffic_ratio)) {
    r.cause = LittlesCause::dram_traffic;
    r.cause_text = fmt::format("moves {:.2f} bytes through DRAM per byte of input; with that traffic the law predicts "
                               "{:.0f} GB/s of input, {:.2f} of it measured; {}{}",
                               *r.dram_bytes_per_input_byte, *r.traffic_predicted_gb_per_s, *r.traffic_ratio, states,
                               detail);
    return r;
  }
  if (occ && theo && *theo > 0 && *occ < kOccupancyShortfall * *theo) {
    r.cause = LittlesCause::occupancy;
    r.cause_text = fmt::format("{:.0f}% of the SM's warps resident against the {:.0f}% the law assumes; {}{}", *occ,
                               *theo, states, detail);
    return r;
  }
  r.cause = r.top_states.empty() ? LittlesCause::unmeasured : cause_of_state(r.top_states.front().reason);
  r.cause_text = r.top_states.empty() ? "ncu reported no warp states" + detail : states + detail;
  return r;
}

std::optional<double> simt_l1_bytes_per_input_byte(const gallery::Entry& e, std::uint64_t n, unsigned block,
                                                   core::Dtype dtype) {
  if (e.constraints.is_reference || e.constraints.gpu_only || !e.bytes_read) return std::nullopt;
  Plan p;
  p.kernels = {&e};
  p.n = n;
  p.block = block;
  p.dtype = dtype;
  try {
    const ExplainReport r = explain(p);
    // A wrong sum leaves the count meaningless, except for the unsafe variant, whose wrong sum
    // is its lesson (its accesses are still the ones it made).
    if (!r.row.ok && !(r.row.unsafe && r.row.status == "MISMATCH")) return std::nullopt;
    analysis::StepCounts all = r.counts.totals;
    all.add(r.counts.outside);
    const double read = static_cast<double>(e.bytes_read(n, gallery::input_bytes(e, dtype, p.accumulate)));
    return read > 0 ? 32.0 * static_cast<double>(all.global_sectors) / read : std::optional<double>();
  } catch (const std::exception&) {
    return std::nullopt;  // a plan this kernel cannot take on the emulator: no count, no row lost
  }
}

namespace {

nlohmann::json parse_json(std::string_view text, std::string_view what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& ex) {
    throw UsageError(fmt::format("{}: not JSON ({})", what, ex.what()));
  }
}

std::optional<double> number_or_null(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

StallBreakdown stalls_from_json(const nlohmann::json& s) {
  StallBreakdown b;
  for (const auto& r : s.value("reasons", nlohmann::json::array()))
    b.reasons.push_back({r.value("reason", std::string()), r.value("pct_of_warp_time", 0.0)});
  std::stable_sort(b.reasons.begin(), b.reasons.end(), [](const StallShare& x, const StallShare& y) { return x.pct > y.pct; });
  b.achieved_occupancy_pct = number_or_null(s, "achieved_occupancy_pct");
  b.theoretical_occupancy_pct = number_or_null(s, "theoretical_occupancy_pct");
  b.waves_per_sm = number_or_null(s, "waves_per_sm");
  b.dram_read_bytes = number_or_null(s, "dram_read_bytes");
  b.dram_write_bytes = number_or_null(s, "dram_write_bytes");
  b.dram_throughput_pct = number_or_null(s, "dram_throughput_pct");
  return b;
}

}  // namespace

LittlesReport littles_law_report(std::string_view run_json, const std::vector<std::string>& profile_jsons,
                                 std::uint64_t simt_n, double tolerance) {
  if (!(tolerance > 0 && tolerance < 1))
    throw UsageError(fmt::format("--tolerance {}: give a fraction between 0 and 1 (0.25 is +-25 %)", tolerance));
  const nlohmann::json run = parse_json(run_json, "--run");
  if (run.value("command", std::string()) != "run" || !run.contains("rows") || !run.contains("params"))
    throw UsageError("--run: not the JSON of `reducelab run --format json`");
  const auto& params = run["params"];
  if (params.value("backend", std::string()) != "cuda")
    throw UsageError(fmt::format("--run: a run on the {} backend has no Little's-law prediction; use a run on a GPU",
                                 params.value("backend", std::string("?"))));
  LittlesReport rep;
  rep.device = run.value("device", nlohmann::json::object()).value("name", std::string("?"));
  rep.n = params.value("n", std::uint64_t{0});
  rep.block = params.value("block", 0u);
  rep.dtype = params.value("dtype", std::string());
  rep.tolerance = tolerance;
  rep.simt_n = simt_n;
  rep.read_ceiling_gb_per_s = run.value("read_ceiling_gb_per_s", 0.0);
  if (run.contains("latency") && run["latency"].is_object()) {
    rep.dram_latency_ns = number_or_null(run["latency"], "dram_ns");
    rep.l2_latency_ns = number_or_null(run["latency"], "l2_ns");
  }
  const auto dtype = core::parse_dtype(rep.dtype);

  std::map<std::string, StallBreakdown> stalls;
  for (std::size_t i = 0; i < profile_jsons.size(); ++i) {
    const std::string what = fmt::format("--profiles file {}", i + 1);
    const nlohmann::json p = parse_json(profile_jsons[i], what);
    if (p.value("command", std::string()) != "profile" || !p.contains("stalls") || !p["stalls"].is_object())
      throw UsageError(fmt::format("{}: not the JSON of `reducelab profile KERNEL --stalls --format json`", what));
    const auto& pp = p["params"];
    const std::string kernel = p.value("kernel", std::string());
    if (pp.value("n", std::uint64_t{0}) != rep.n || pp.value("block", 0u) != rep.block ||
        pp.value("dtype", std::string()) != rep.dtype)
      throw UsageError(fmt::format("{} ({}): profiled at n = {}, block {}, {}; the run has n = {}, block {}, {}", what,
                                   kernel, pp.value("n", std::uint64_t{0}), pp.value("block", 0u),
                                   pp.value("dtype", std::string()), rep.n, rep.block, rep.dtype));
    stalls[kernel] = stalls_from_json(p["stalls"]);
  }

  for (const auto& x : run["rows"]) {
    LittlesInput in;
    in.kernel = x.value("kernel", std::string());
    in.measured_gb_per_s = x.value("gb_per_s", 0.0);
    in.predicted_gb_per_s = number_or_null(x, "predicted_gb_per_s");
    in.bytes_in_flight_per_sm = number_or_null(x, "bytes_in_flight_per_sm");
    in.input_bytes = x.value("bytes", 0.0);
    if (auto s = stalls.find(in.kernel); s != stalls.end()) in.stalls = s->second;
    const gallery::Entry* e = gallery::find(in.kernel);
    if (simt_n > 0 && e && dtype && in.predicted_gb_per_s)
      in.l1_bytes_per_input_byte = simt_l1_bytes_per_input_byte(*e, simt_n, rep.block, *dtype);
    rep.rows.push_back(littles_row(in, tolerance));
  }
  return rep;
}

}  // namespace rl::lab
