// reducelab: parse, call a layer, print. Bad input is one line on stderr and exit status 2;
// a row that fails verification makes the run exit 1.
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include "gallery/registry.hpp"
#include "lab/bench.hpp"
#include "lab/bench_shapes.hpp"
#include "lab/device.hpp"
#include "lab/divergence_run.hpp"
#include "lab/errors.hpp"
#include "lab/profile.hpp"
#include "lab/report.hpp"
#include "lab/run.hpp"

namespace {

using namespace rl;
using lab::UsageError;

lab::BackendChoice parse_backend(const std::string& s) {
  if (s == "auto") return lab::BackendChoice::automatic;
  if (s == "cuda") return lab::BackendChoice::cuda;
  if (s == "simt") return lab::BackendChoice::simt;
  throw UsageError(fmt::format("--backend {}: unknown backend; choose auto, cuda or simt", s));
}

lab::Format parse_format(const std::string& s) {
  if (auto f = lab::parse_format(s)) return *f;
  throw UsageError(fmt::format("--format {}: unknown format; choose table, csv or json", s));
}

// Sizes as users write them: 16777216, 2^24, 1<<24, 16M (binary suffixes k/M/G).
std::size_t parse_size(const std::string& flag, const std::string& s) {
  auto bad = [&] { return UsageError(fmt::format("{} {}: not a size; write e.g. 1000003, 2^24, 1<<24 or 16M", flag, s)); };
  try {
    std::size_t pos = 0;
    if (auto caret = s.find('^'); caret != std::string::npos) {
      const unsigned long long base = std::stoull(s.substr(0, caret)), exp = std::stoull(s.substr(caret + 1), &pos);
      if (base != 2 || exp > 62 || pos != s.size() - caret - 1) throw bad();
      return std::size_t(1) << exp;
    }
    if (auto shift = s.find("<<"); shift != std::string::npos) {
      const unsigned long long base = std::stoull(s.substr(0, shift)), exp = std::stoull(s.substr(shift + 2), &pos);
      if (exp > 62 || pos != s.size() - shift - 2) throw bad();
      return static_cast<std::size_t>(base) << exp;
    }
    if (!s.empty() && s[0] == '-') throw bad();
    const unsigned long long v = std::stoull(s, &pos);
    if (pos == s.size()) return v;
    const std::string suffix = s.substr(pos);
    if (suffix == "k" || suffix == "K") return v << 10;
    if (suffix == "M") return v << 20;
    if (suffix == "G") return v << 30;
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception&) {
  }
  throw bad();
}

// "W" or "WxH", each a positive size.
analysis::Extent2 parse_extent(const std::string& flag, const std::string& s) {
  const auto x = s.find('x');
  analysis::Extent2 e;
  e.x = parse_size(flag, s.substr(0, x));
  e.y = x == std::string::npos ? 1 : parse_size(flag, s.substr(x + 1));
  return e;
}

std::vector<const gallery::Entry*> parse_kernels(const std::string& spec, bool* all) {
  std::vector<const gallery::Entry*> out;
  *all = spec == "all";
  if (*all) {
    for (const auto& e : gallery::registry()) out.push_back(&e);
    return out;
  }
  std::stringstream ss(spec);
  for (std::string id; std::getline(ss, id, ',');) {
    if (id.empty()) continue;
    const gallery::Entry* e = gallery::find(id);
    if (!e) throw UsageError(fmt::format("--kernels {}: unknown kernel; known: all, {}", id, gallery::ids()));
    out.push_back(e);
  }
  return out;
}

void configure_simt(const std::string& schedule, const std::string& checks) {
  if (checks != "on" && checks != "off")
    throw UsageError(fmt::format("--simt-checks {}: choose on or off", checks));
  lab::SimtOptions options;
  options.checks = checks == "on";
  if (schedule == "in-order") options.schedule = lab::SimtOptions::in_order;
  else if (schedule == "reverse") options.schedule = lab::SimtOptions::reverse;
  else if (schedule.rfind("random", 0) == 0) {
    std::uint64_t seed = 1;
    if (schedule.size() > 6) {
      if (schedule[6] != ':') throw UsageError(fmt::format("--simt-schedule {}: write random or random:SEED", schedule));
      seed = parse_size("--simt-schedule", schedule.substr(7));
    }
    options.schedule = lab::SimtOptions::random;
    options.seed = seed;
  } else {
    throw UsageError(fmt::format("--simt-schedule {}: choose in-order, reverse or random[:SEED]", schedule));
  }
  lab::configure_simt(options);
}

int run_cli(int argc, char** argv) {
  CLI::App app{"reducelab: parallel reduction on NVIDIA GPUs, done right and explained"};
  app.require_subcommand(1);
  app.fallthrough();  // --backend and --simt-* may come before or after the subcommand
  std::string backend = "auto";
  app.add_option("--backend", backend, "auto (cuda when a GPU is present, else simt), cuda or simt")
      ->capture_default_str();
  std::string schedule = "in-order", checks = "on";
  app.add_option("--simt-schedule", schedule,
                 "emulator only: order fibers resume in: in-order, reverse or random[:SEED]; a missing barrier "
                 "shows as a wrong answer or a race report")
      ->capture_default_str();
  app.add_option("--simt-checks", checks, "emulator only: race and barrier checks on or off (bounds are always checked)")
      ->capture_default_str();

  auto* list = app.add_subcommand("list", "print the kernel gallery (the registry)");
  std::string list_format = "table";
  list->add_option("--format", list_format, "table, csv or json")->capture_default_str();

  auto* divergence = app.add_subcommand(
      "divergence", "count warps that diverge on a boundary check x < W && y < H (seed 003), per grid region");
  std::string extent_text, dblock_text = "16x16", dformat = "table";
  divergence->add_option("--extent", extent_text, "W or WxH: the data the threads test against")->required();
  divergence->add_option("--block", dblock_text, "BX or BXxBY threads per block")->capture_default_str();
  divergence->add_option("--format", dformat, "table, csv or json")->capture_default_str();

  auto* explain = app.add_subcommand(
      "explain",
      "per-step counts of one kernel on the SIMT backend: active lanes, divergence, memory requests, bank conflicts; "
      "--backend cuda adds the GPU's registers, shared memory, occupancy and instrumented lane counts");
  std::string ekernel, en_text = "2048", edtype = "float", eop = "sum", eformat = "table";
  unsigned eblock = 256;
  explain->add_option("kernel", ekernel, "a kernel id (see `reducelab list`)")->required();
  explain->add_option("--n", en_text, "elements")->capture_default_str();
  explain->add_option("--block", eblock, "threads per block")->capture_default_str();
  explain->add_option("--dtype", edtype, "int32, float or double (4-byte float by default, as the seeds count)")
      ->capture_default_str();
  explain->add_option("--op", eop, "sum, min or max")->capture_default_str();
  explain->add_option("--format", eformat, "table, csv or json")->capture_default_str();

  auto* profile = app.add_subcommand(
      "profile", "the seeds' nvprof metrics for one kernel, measured on the GPU by Nsight Compute (ncu)");
  std::string pkernel, pn_text = "2^24", pdtype = "int32", pop = "sum", pformat = "table", paccumulate = "wide";
  unsigned pblock = 512;
  profile->add_option("kernel", pkernel, "a kernel id (see `reducelab list`)")->required();
  profile->add_option("--n", pn_text, "elements (seed 000: 2^24)")->capture_default_str();
  profile->add_option("--block", pblock, "threads per block")->capture_default_str();
  profile->add_option("--dtype", pdtype, "int32, float or double")->capture_default_str();
  profile->add_option("--op", pop, "sum, min or max")->capture_default_str();
  profile->add_option("--accumulate", paccumulate, "int32 only: wide or wrap (the seeds' int)")->capture_default_str();
  profile->add_option("--format", pformat, "table, csv or json")->capture_default_str();

  auto* demos = app.add_subcommand(
      "demos", "seed 002's divergence (mathKernel1/2, branch-free) and block-shape (sumMatrixOnGPU2D) experiments: "
               "counts on simt, times on a GPU when there is one");
  std::string dmformat = "table";
  int drepeats = 20;
  demos->add_option("--repeats", drepeats, "timed repeats on the GPU")->capture_default_str();
  demos->add_option("--format", dmformat, "table, csv or json")->capture_default_str();

  auto* run = app.add_subcommand("run", "verify and time gallery kernels side by side");
  std::string kernels = "all", n_text, dtype = "int32", op = "sum", format = "table", accumulate = "wide";
  unsigned block = 512, param = 0;
  int repeats = 0;
  std::uint64_t seed = 1;
  bool hot = false, no_ceiling = false;
  run->add_option("--kernels", kernels, "comma-separated ids, or all (see `reducelab list`)")->capture_default_str();
  run->add_option("--n", n_text, "elements (default 2^24 on a GPU, 2^16 on the SIMT emulator); 2^k and 16M work");
  run->add_option("--block", block, "threads per block (seed 000's argv[1])")->capture_default_str();
  run->add_option("--dtype", dtype, "int32, float or double")->capture_default_str();
  run->add_option("--op", op, "sum, min or max")->capture_default_str();
  run->add_option("--accumulate", accumulate,
                  "int32 only: wide (int64, cannot overflow) or wrap (the textbook's int, wraps)")
      ->capture_default_str();
  run->add_option("--param", param, "the kernel's knob, e.g. pmpp-coarsened's coarse factor (0: default)");
  run->add_option("--repeats", repeats, "timed repeats (default 20 on a GPU, 3 on simt)");
  run->add_option("--seed", seed, "input seed: values are rand() & 0xFF as seed 000 draws them")->capture_default_str();
  run->add_flag("--hot", hot, "leave L2 warm between repeats (default: flush it)");
  run->add_flag("--no-ceiling", no_ceiling, "skip measuring the read ceiling (for sanitizer runs)");
  run->add_option("--format", format, "table, csv or json")->capture_default_str();

  auto* bench = app.add_subcommand(
      "bench", "time reducelab::reduce, CUB and thrust over sizes, dtypes and ops against the read ceiling (GPU)");
  lab::bench::Args bargs;
  bench->add_option("--sizes", bargs.sizes, "A..B stepped by --step (default 2^10..2^30; 2^10..2^24 on --backend cpu), or a list 1000,2^20,16M");
  bench->add_option("--step", bargs.step, "factor between the sizes of a range (default 4)");
  bench->add_option("--dtypes", bargs.dtypes, "int8..int64, uint8..uint64, half, bf16, float, double (default: the issue's targets)");
  bench->add_option("--ops", bargs.ops, "sum, min, max (default: the issue's targets)");
  bench->add_option("--impls", bargs.impls, "reducelab, reducelab-nondet, cub, thrust (default: all)");
  bench->add_option("--repeat,--repeats", bargs.repeats, "timed repeats per row (default 20 on a GPU, 10 on the CPU)");
  bench->add_option("--seed", bargs.seed, "input seed")->capture_default_str();
  bench->add_flag("--hot", bargs.hot, "leave L2 warm between repeats (default: flush it)");
  bench->add_flag("--both", bargs.both, "report L2-flushed and L2-warm rows");
  bench->add_option("--format", bargs.format, "table, csv or json")->capture_default_str();
  bench->add_option("--out", bargs.out, "write the output to FILE instead of stdout");
  bench->add_option("--json", bargs.json, "also write the JSON to FILE");
  bench->add_option("--plot", bargs.plot, "FILE.png, FILE.svg or FILE (both): GB/s against n, via scripts/plot-bench");
  lab::bench::ShapeArgs sargs;
  bench->add_option("--shape", sargs.shape, "RxC: reduce_axis over a rows x cols matrix against CUB's segmented reduce (GPU)");
  bench->add_option("--axis", sargs.axis, "with --shape: 1 (one result per row) or 0 (per column); default both");
  bench->add_option("--segments", sargs.segments, "FILE of segment lengths, or uniform:A..B or powerlaw (add :zeros for empty ones): reduce_segments against CUB (GPU)");
  bench->add_option("--n", sargs.n, "with a --segments DIST: elements in all (default 2^26)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "reducelab: error: %s (see --help)\n", e.what());
    return 2;
  }

  if (*bench && lab::bench::wants_shapes(sargs)) {
    if (!bargs.sizes.empty() || !bargs.impls.empty() || bargs.hot || bargs.both || !bargs.plot.empty() || !bargs.out.empty())
      throw lab::UsageError("bench --shape/--segments: --sizes, --impls, --hot, --both, --plot and --out do not apply");
    sargs.dtypes = bargs.dtypes, sargs.ops = bargs.ops, sargs.repeats = bargs.repeats, sargs.seed = bargs.seed;
    sargs.format = bargs.format, sargs.json = bargs.json;
    return lab::bench::shapes_command(sargs, std::cout);
  }
  if (*bench) {  // takes --backend cpu, which the other subcommands do not
    bargs.backend = backend;
    return lab::bench::command(bargs, std::cout);
  }
  const auto choice = parse_backend(backend);
  configure_simt(schedule, checks);
  if (*list) {
    lab::print_list(parse_format(list_format), std::cout);
    return 0;
  }
  if (*explain) {
    lab::Plan plan;
    bool all = false;
    plan.kernels = parse_kernels(ekernel, &all);
    if (all || plan.kernels.size() != 1) throw UsageError(fmt::format("explain {}: name one kernel", ekernel));
    plan.n = parse_size("--n", en_text);
    plan.block = eblock;
    const auto d = reducelab::parse_dtype(edtype);
    if (!d) throw UsageError(fmt::format("--dtype {}: unknown dtype; choose {}", edtype, reducelab::dtype_choices()));
    plan.dtype = *d;
    const auto o = reducelab::parse_op(eop);
    if (!o) throw UsageError(fmt::format("--op {}: unknown op; choose {}", eop, reducelab::op_choices()));
    plan.op = *o;
    const auto fmt_choice = parse_format(eformat);
    if (choice == lab::BackendChoice::cuda) {  // auto stays on simt: the counts are exact there
      auto device = lab::open_device(choice);  // no GPU: one line, exit 2
      lab::print_explain(lab::explain_cuda(plan, *device), fmt_choice, std::cout);
      return 0;
    }
    lab::print_explain(lab::explain(plan), fmt_choice, std::cout);
    return 0;
  }
  if (*profile) {
    lab::Plan plan;
    bool all = false;
    plan.kernels = parse_kernels(pkernel, &all);
    if (all || plan.kernels.size() != 1) throw UsageError(fmt::format("profile {}: name one kernel", pkernel));
    plan.n = parse_size("--n", pn_text);
    plan.block = pblock;
    const auto d = reducelab::parse_dtype(pdtype);
    if (!d) throw UsageError(fmt::format("--dtype {}: unknown dtype; choose {}", pdtype, reducelab::dtype_choices()));
    plan.dtype = *d;
    const auto o = reducelab::parse_op(pop);
    if (!o) throw UsageError(fmt::format("--op {}: unknown op; choose {}", pop, reducelab::op_choices()));
    plan.op = *o;
    if (paccumulate == "wide") plan.accumulate = gallery::Accumulate::wide;
    else if (paccumulate == "wrap") plan.accumulate = gallery::Accumulate::wrap;
    else throw UsageError(fmt::format("--accumulate {}: choose wide or wrap", paccumulate));
    const auto fmt_choice = parse_format(pformat);
    if (choice == lab::BackendChoice::simt)
      throw UsageError("profile --backend simt: ncu reads a GPU's counters; the emulator's counts are `reducelab explain`");
    lab::print_profile(lab::profile(plan), fmt_choice, std::cout);
    return 0;
  }
  if (*demos) {
    const auto fmt_choice = parse_format(dmformat);
    lab::DemoOptions options;
    options.repeats = drepeats;
    if (drepeats < 1) throw UsageError(fmt::format("--repeats {}: give at least 1", drepeats));
    std::unique_ptr<lab::Device> gpu;
    if (choice != lab::BackendChoice::simt) {
      auto device = lab::open_device(choice);  // cuda without a GPU: one line, exit 2
      if (device->info().backend == gallery::Backend::cuda) gpu = std::move(device);
    }
    lab::print_demos(lab::run_demos(options, gpu.get()), fmt_choice, std::cout);
    return 0;
  }
  if (*divergence) {
    const auto extent = parse_extent("--extent", extent_text), block2 = parse_extent("--block", dblock_text);
    try {
      const auto report = analysis::boundary_divergence(extent, block2);  // validates first
      lab::print_divergence(report, lab::executed_boundary_divergence(extent, block2), parse_format(dformat), std::cout);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    return 0;
  }
  // run
  lab::Plan plan;
  const auto fmt_choice = parse_format(format);
  plan.kernels = parse_kernels(kernels, &plan.all_kernels);
  const auto d = reducelab::parse_dtype(dtype);
  if (!d) throw UsageError(fmt::format("--dtype {}: unknown dtype; choose {}", dtype, reducelab::dtype_choices()));
  plan.dtype = *d;
  const auto o = reducelab::parse_op(op);
  if (!o) throw UsageError(fmt::format("--op {}: unknown op; choose {}", op, reducelab::op_choices()));
  plan.op = *o;
  if (accumulate == "wide") plan.accumulate = gallery::Accumulate::wide;
  else if (accumulate == "wrap") plan.accumulate = gallery::Accumulate::wrap;
  else throw UsageError(fmt::format("--accumulate {}: choose wide or wrap", accumulate));
  plan.block = block;
  plan.param = param;
  plan.seed = seed;
  plan.flush_l2 = !hot;
  plan.measure_ceiling = !no_ceiling;

  auto device = lab::open_device(choice);
  const auto b = device->info().backend;
  plan.n = n_text.empty() ? lab::default_n(b) : parse_size("--n", n_text);
  plan.repeats = repeats ? repeats : lab::default_repeats(b);
  lab::validate(plan, *device);  // bad input fails before anything else is printed
  if (b == gallery::Backend::simt && fmt_choice == lab::Format::table)
    std::cerr << fmt::format("reducelab: running on the SIMT emulator ({}); n = {}{}\n", device->info().chosen_because,
                             plan.n, n_text.empty() ? " (the emulator's default; pass --n to change it)" : "");
  const lab::RunReport report = lab::run(plan, *device);
  lab::print_run(report, fmt_choice, std::cout);
  return report.all_ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_cli(argc, argv);
  } catch (const rl::lab::UsageError& e) {
    std::fprintf(stderr, "reducelab: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reducelab: error: %s\n", e.what());
    return 1;
  }
}
