// `reducelab bench`, its measurement: inputs and their exact reductions, the verdict on each
// result, the GPU and CPU sweeps through the lab's measurement loop, and the derived columns.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <thread>

#include "core/reference.hpp"
#include "fmt/format.h"
#include "lab/bench.hpp"
#include "lab/errors.hpp"
#include "lab/input.hpp"
#include "lab/sizes.hpp"
#include "lab/verify.hpp"

namespace rl::lab::bench {

#if !RL_WITH_CUDA
std::unique_ptr<Call> make_cub_call(Dtype, OpKind, const void*, std::size_t, void*, void*) {
  throw std::logic_error("CUB: this reducelab was built without CUDA");
}
std::unique_ptr<Call> make_thrust_call(Dtype, OpKind, const void*, std::size_t, void*, void*) {
  throw std::logic_error("thrust: this reducelab was built without CUDA");
}
void launch_empty_kernel(void*) { throw std::logic_error("bench: this reducelab was built without CUDA"); }
std::string cuda_versions() { return "built without CUDA"; }
#endif

std::size_t host_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::size_t(8) << 30;  // not Linux: assume 8 GiB
}

namespace {

unsigned host_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

// ---------------------------------------------------------------------------------------------
// Verdicts (lab/verify.hpp), per row

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
void finish(Row& row, std::vector<double> ms, bool all_ok) {
  for (double& t : ms) t *= 1e3;
  const TimeStats s = time_stats(std::move(ms));
  row.repeats = s.repeats;
  row.us_median = s.median;
  row.us_min = s.min;
  row.us_max = s.max;
  row.us_p25 = s.p25;
  row.us_p75 = s.p75;
  row.verified = all_ok;
  row.status = all_ok ? "ok" : "MISMATCH";
}


// Cases grouped by element type, so each input is made and uploaded once.
std::vector<std::pair<Dtype, std::vector<OpKind>>> by_elem(const std::vector<Case>& cases) {
  std::vector<std::pair<Dtype, std::vector<OpKind>>> out;
  for (const auto& c : cases) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& g) { return g.first == c.elem; });
    if (it == out.end()) out.push_back({c.elem, {c.op}});
    else it->second.push_back(c.op);
  }
  return out;
}

// Whether an implementation has a row for this case, and if not, why (for the notes).
std::string absent_because(Impl impl, const Case& c, bool cpu) {
  if (cpu && !info(impl).cpu) return "runs only on a GPU (this is --backend cpu)";
  return std::string(info(impl).absent(c));
}

void note_once(Report& r, const std::string& text) {
  if (std::find(r.notes.begin(), r.notes.end(), text) == r.notes.end()) r.notes.push_back(text);
}
// A size that was asked for and did not run: a note, and the run does not count as complete.
void skip(Report& r, const std::string& text) {
  if (std::find(r.skipped.begin(), r.skipped.end(), text) == r.skipped.end()) r.skipped.push_back(text);
  note_once(r, text);
}

// One note per implementation and reason, naming the cases it has no rows for. On the CPU
// backend the GPU-only implementations get one note of their own (run_cpu).
void add_absence_notes(Report& r, bool cpu) {
  for (Impl impl : r.plan.impls) {
    std::vector<std::pair<std::string, std::string>> reasons;  // reason, cases
    for (const auto& c : r.plan.cases) {
      const std::string why = absent_because(impl, c, cpu);
      if (why.empty() || (cpu && !info(impl).cpu)) continue;
      auto it = std::find_if(reasons.begin(), reasons.end(), [&](const auto& x) { return x.first == why; });
      const std::string what = fmt::format("{} {}", name(c.elem), core::name(c.op));
      if (it == reasons.end()) reasons.push_back({why, what});
      else it->second += ", " + what;
    }
    for (const auto& [why, cases] : reasons) note_once(r, fmt::format("{}: no rows for {}: {}", name(impl), cases, why));
    // Named in --impls and absent from every case: what was asked for did not run.
    if (r.plan.impls_named && !(cpu && !info(impl).cpu) && reasons.size() == 1 &&
        std::all_of(r.plan.cases.begin(), r.plan.cases.end(), [&](const Case& c) { return !absent_because(impl, c, cpu).empty(); }))
      skip(r, fmt::format("{}: no rows for any case asked for: {}", name(impl), reasons.front().first));
  }
}

// The sizes of `plan` that fit in memory (device_free 0: host only); the others are skipped.
std::vector<std::size_t> sizes_that_fit(Report& report, Dtype elem, std::size_t device_free) {
  const std::size_t reserve = std::size_t(512) << 20;  // CUB/thrust/library workspaces, the flush buffer
  const std::size_t host_free = host_available_bytes();
  std::vector<std::size_t> sizes;
  for (std::size_t n : report.plan.sizes) {
    const std::size_t bytes = n * size_of(elem);
    if (device_free && bytes + reserve > device_free)
      skip(report, fmt::format("{} n = {} skipped: its {} input does not fit in the {} of free device memory", name(elem),
                               size_text(n), bytes_text(bytes), bytes_text(device_free)));
    else if (bytes > host_free / 10 * 8)
      skip(report, fmt::format("{} n = {} skipped: its {} input does not fit in the {} of available host memory",
                               name(elem), size_text(n), bytes_text(bytes), bytes_text(host_free)));
    else
      sizes.push_back(n);
  }
  return sizes;
}

Row blank_row(Impl impl, const Case& c, std::size_t n) {
  Row row;
  row.impl = impl;
  row.c = c;
  row.n = n;
  row.bytes = n * size_of(c.elem);
  return row;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Derived columns

double limit_us(std::size_t bytes, double empty_launch_us, double read_ceiling_gbs) {
  if (empty_launch_us <= 0 || read_ceiling_gbs <= 0) return 0;
  return empty_launch_us + static_cast<double>(bytes) / (read_ceiling_gbs * 1e3);
}

double pct_of_limit(double limit_us, double us_median) {
  return limit_us > 0 && us_median > 0 ? 100.0 * limit_us / us_median : 0;
}

double limit_ceiling_gbs(const Report& report, Mode mode, std::size_t bytes) {
  const bool warm = mode == Mode::batch || mode == Mode::sync;
  if (warm && report.l2_read_ceiling_gbs > 0 && bytes <= report.l2_bytes) return report.l2_read_ceiling_gbs;
  return report.read_ceiling_gbs;
}

void derive(Report& report) {
  for (auto& r : report.rows) {
    r.gb_per_s = r.pct_of_read_ceiling = r.empty_launch_us = r.limit_ceiling_gbs = r.limit_us = r.pct_of_limit = 0;
    r.ratio_to_cub = 0;
    if (r.us_median <= 0) continue;
    r.gb_per_s = static_cast<double>(r.bytes) / (r.us_median * 1e3);
    if (report.read_ceiling_gbs > 0) r.pct_of_read_ceiling = 100.0 * r.gb_per_s / report.read_ceiling_gbs;
    if (r.cpu) continue;  // no GPU floors on the CPU
    if (auto f = report.empty_launch_us.find(r.mode); f != report.empty_launch_us.end()) r.empty_launch_us = f->second;
    r.limit_ceiling_gbs = limit_ceiling_gbs(report, r.mode, r.bytes);
    r.limit_us = limit_us(r.bytes, r.empty_launch_us, r.limit_ceiling_gbs);
    r.pct_of_limit = pct_of_limit(r.limit_us, r.us_median);
  }
  for (auto& r : report.rows) {
    if (r.us_median <= 0) continue;
    for (const auto& c : report.rows)
      if (info(c.impl).baseline && c.c == r.c && c.n == r.n && c.mode == r.mode && c.cpu == r.cpu && c.us_median > 0)
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

template <class T>
void sweep_elem_gpu(Report& report, Device& device, Dtype elem, const std::vector<OpKind>& ops) {
  const Plan& plan = report.plan;
  const std::vector<std::size_t> sizes = sizes_that_fit(report, elem, device.free_memory());
  if (sizes.empty()) return;
  const std::size_t max_n = sizes.back();
  const std::vector<T> input = random_input<T>(max_n, plan.seed + static_cast<std::uint64_t>(elem) * 1000);
  Buffer data(device, max_n * sizeof(T));
  device.upload(data.get(), input.data(), max_n * sizeof(T));

  core::Exact<T> truth;
  const std::size_t result_max = 16;
  Buffer result(device, result_max);
  std::vector<unsigned char> host_result(result_max), got(result_max);
  const bool cpu_bits_asked =
      std::any_of(plan.impls.begin(), plan.impls.end(), [](Impl i) { return info(i).cpu_bits; });

  for (std::size_t n : sizes) {
    extend(truth, input.data(), n);
    for (OpKind op : ops) {
      const Case c{elem, op};
      const std::size_t rbytes = result_bytes(elem, op);
      const Expected want = expect(truth, op, core::result_dtype(elem, op));
      // reducelab's float sums must equal the CPU backend's bits.
      std::vector<unsigned char> cpu_bits;
      const bool need_cpu_bits = is_floating(elem) && op == OpKind::sum && cpu_bits_asked;
      if (need_cpu_bits) {
        cpu_bits.resize(rbytes);
        cpu_reduce(elem, op, input.data(), n, cpu_bits.data());
      }
      for (Impl impl : plan.impls) {
        if (!absent_because(impl, c, false).empty()) continue;  // add_absence_notes says why
        const ImplInfo& row_impl = info(impl);
        std::unique_ptr<Call> call;
        try {
          call = row_impl.make(c, data.get(), n, row_impl.host_result ? host_result.data() : result.get(), device.stream());
        } catch (const std::exception& ex) {
          Row row = blank_row(impl, c, n);
          row.status = "error";
          row.note = ex.what();
          report.rows.push_back(row);
          continue;
        }
        const unsigned char* same = row_impl.cpu_bits && need_cpu_bits ? cpu_bits.data() : nullptr;
        for (Mode mode : plan.modes) {
          Row row = blank_row(impl, c, n);
          row.mode = mode;
          row.calls = mode == Mode::batch ? (plan.batch > 0 ? plan.batch : batch_calls(row.bytes)) : 1;
          try {
            bool all_ok = true;
            Measured m;
            // Poison the result so an unwritten one cannot pass.
            m.prepare = [&] {
              if (row_impl.host_result) std::memset(host_result.data(), 0xFF, rbytes);
              else device.fill(result.get(), 0xFF, rbytes);
            };
            m.call = [&] { (*call)(); };
            m.verify = [&](int rep) {
              if (row_impl.host_result) got = host_result;
              else device.download(got.data(), result.get(), rbytes);
              record(row, judge(want, got.data(), same, "reducelab::cpu::reduce"), rep, all_ok);
            };
            finish(row, measure(&device, mode, plan.repeats, row.calls, m), all_ok);
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
  if (plan.modes.empty()) plan.modes.assign(std::begin(kAllTimingModes), std::end(kAllTimingModes));
  const DeviceInfo& info = device.info();
  if (info.backend != Backend::cuda) throw UsageError("bench: needs a CUDA device, or --backend cpu");
  report.backend = "cuda";
  report.device_name = info.name;
  report.versions = cuda_versions();
  report.device = to_json(info);
  report.device["cuda_versions"] = report.versions;
  report.read_ceiling_gbs = device.read_ceiling_gbs();
  if (std::any_of(plan.modes.begin(), plan.modes.end(), [](Mode m) { return m != Mode::cold; })) {
    report.l2_read_ceiling_gbs = device.l2_read_ceiling_gbs();
    report.l2_bytes = info.l2_bytes;
  }
  device.flush_l2();  // allocates the flush buffer before free memory is read
  device.synchronize();
  // Each mode's floor: an empty launch timed in that mode (batch: as many calls as the smallest
  // row's batch, where launches are what dominates), before the sweep and again after each
  // element type's rows; the lowest median stands. Back-to-back launches go at the host's pace,
  // which drifts by 10-20 % in a run on a shared machine: one floor taken at the start sat
  // above the batch rows of reductions of 2^10 elements that it bounds.
  const auto empty = [stream = device.stream()] { launch_empty_kernel(stream); };
  const auto floors = [&] {
    for (Mode mode : plan.modes) {
      const double us = floor_us(device, mode, empty, 101, plan.batch > 0 ? plan.batch : batch_calls(0));
      const auto f = report.empty_launch_us.find(mode);
      if (f == report.empty_launch_us.end() || us < f->second) report.empty_launch_us[mode] = us;
    }
  };
  floors();
  for (Impl impl : plan.impls)
    if (const ImplInfo& row = bench::info(impl); !row.note.empty()) note_once(report, fmt::format("{}: {}", row.name, row.note));
  add_absence_notes(report, false);
  for (const auto& [elem, ops] : by_elem(plan.cases)) {
    core::with_dtype(elem, [&]<class T>() { sweep_elem_gpu<T>(report, device, elem, ops); });
    floors();
  }
  derive(report);
  return report;
}

// ---------------------------------------------------------------------------------------------
// The CPU backend

namespace {

template <class T>
void sweep_elem_cpu(Report& report, Dtype elem, const std::vector<OpKind>& ops) {
  const Plan& plan = report.plan;
  const std::vector<std::size_t> sizes = sizes_that_fit(report, elem, 0);
  if (sizes.empty()) return;
  const std::vector<T> input = random_input<T>(sizes.back(), plan.seed + static_cast<std::uint64_t>(elem) * 1000);
  core::Exact<T> truth;
  std::vector<unsigned char> got(16), one_thread(16);
  const std::optional<Impl> on_cpu = impl_with(&ImplInfo::cpu);  // what reducelab::cpu::reduce is timed as
  if (!on_cpu) throw std::logic_error("bench: no implementation in impls() runs on the CPU");
  for (std::size_t n : sizes) {
    extend(truth, input.data(), n);
    for (OpKind op : ops) {
      const Case c{elem, op};
      if (!absent_because(*on_cpu, c, true).empty()) continue;
      Row row = blank_row(*on_cpu, c, n);
      row.cpu = true;
      try {
        // The order depends on n alone: one thread must give the bits all cores give.
        const bool float_sum = is_floating(elem) && op == OpKind::sum;
        if (float_sum) cpu_reduce(elem, op, input.data(), n, one_thread.data(), 1);
        bool all_ok = true;
        Measured m;
        m.prepare = [&] { std::fill(got.begin(), got.end(), 0xFF); };
        m.call = [&] { cpu_reduce(elem, op, input.data(), n, got.data()); };
        m.verify = [&](int rep) {
          record(row, judge(expect(truth, op, core::result_dtype(elem, op)), got.data(), float_sum ? one_thread.data() : nullptr,
                           "reducelab::cpu::reduce on one thread"),
                 rep, all_ok);
        };
        finish(row, measure(nullptr, Mode::cold, plan.repeats, 1, m), all_ok);
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
  Report report;
  report.plan = plan_in;
  Plan& plan = report.plan;
  if (plan.repeats == 0) plan.repeats = 10;
  plan.modes.clear();
  report.backend = "cpu";
  report.device_name = cpu_model_name("this CPU");
  report.device = {{"name", report.device_name}, {"backend", "cpu"}, {"threads", host_threads()}};
  note_once(report, "cub, thrust and reducelab-nondet run only on a GPU: this is --backend cpu, which times "
                    "reducelab::cpu::reduce on every core (a steady clock around each call)");
  add_absence_notes(report, true);
  for (const auto& [elem, ops] : by_elem(plan.cases))
    core::with_dtype(elem, [&]<class T>() { sweep_elem_cpu<T>(report, elem, ops); });
  derive(report);
  return report;
}

Report run(const Plan& plan) {
  if (plan.cpu) return run_cpu(plan);
  std::string why;
  if (!cuda_usable(&why))
    throw std::runtime_error(fmt::format("bench: {}; bench needs a GPU (pass --backend cpu to time the CPU backend)", why));
  auto device = open_cuda_device();
  return run_gpu(plan, *device);
}

}  // namespace rl::lab::bench
