// reducelab: parse, call a layer, print. Bad input is one line on stderr and exit status 2;
// a row that fails verification makes the run exit 1.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include "gallery/registry.hpp"
#include "cli/bench_command.hpp"
#include "lab/bench.hpp"
#include "lab/bench_shapes.hpp"
#include "lab/sizes.hpp"
#include "dist/bench_dist.hpp"
#include "lab/device.hpp"
#include "lab/divergence_run.hpp"
#include "lab/errors.hpp"
#include "lab/flags.hpp"
#include "lab/profile.hpp"
#include "lab/reduce_file.hpp"
#include "lab/report.hpp"
#include "lab/run.hpp"
#include "render/explain_svg.hpp"
#include "render/page.hpp"
#include "render/write.hpp"

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

using lab::parse_size;

// --dtype and --op as the gallery's subcommands take them (run, explain, profile, report).
core::Dtype parse_dtype_flag(const std::string& s) { return lab::dtype_flag("--dtype", s, lab::Rows::lab); }
core::OpKind parse_op_flag(const std::string& s) { return lab::op_flag("--op", s, lab::Rows::lab); }

// "W" or "WxH", each a positive size.
analysis::Extent2 parse_extent(const std::string& flag, const std::string& s) {
  const auto x = s.find('x');
  analysis::Extent2 e;
  e.x = parse_size(flag, s.substr(0, x));
  e.y = x == std::string::npos ? 1 : parse_size(flag, s.substr(x + 1));
  if (e.x == 0 || e.y == 0)
    throw UsageError(fmt::format("{} {}: {} be at least 1", flag, s,
                                 x == std::string::npos ? "it must" : "both dimensions must"));
  return e;
}

// A decimal integer 0..2^64-1 and nothing else ("-1", "", "12x" are refused).
std::uint64_t parse_seed(const std::string& flag, const std::string& s) {
  const bool digits = !s.empty() && s.size() <= 20 && s.find_first_not_of("0123456789") == std::string::npos;
  std::uint64_t v = 0;
  bool fits = digits;
  if (digits) try {
      std::size_t pos = 0;
      v = std::stoull(s, &pos);
      fits = pos == s.size();
    } catch (const std::exception&) {
      fits = false;
    }
  if (!fits) throw UsageError(fmt::format("{} {}: give a seed 0..18446744073709551615", flag, s));
  return v;
}

// `flag` names the option (--kernels) or the subcommand's argument (explain) the ids came from.
std::vector<const gallery::Entry*> parse_kernels(const std::string& flag, const std::string& spec, bool* all) {
  std::vector<const gallery::Entry*> out;
  *all = spec == "all";
  if (*all) {
    for (const auto& e : gallery::registry()) out.push_back(&e);
    return out;
  }
  std::stringstream ss(spec);
  for (std::string id; std::getline(ss, id, ',');) {
    if (id.empty()) continue;
    if (id == "all") throw UsageError(fmt::format("{} {}: all stands alone; give all or a list of ids", flag, spec));
    const gallery::Entry* e = gallery::find(id);
    if (!e) throw UsageError(fmt::format("{} {}: unknown kernel; known: all, {}", flag, id, gallery::ids()));
    if (std::find(out.begin(), out.end(), e) != out.end())
      throw UsageError(fmt::format("{} {}: {} is named twice", flag, spec, id));
    out.push_back(e);
  }
  if (out.empty()) throw UsageError(fmt::format("{} {}: no kernel given", flag, spec));
  return out;
}

// explain and profile: one kernel by id, and the size, block, dtype and op it runs with.
lab::Plan one_kernel_plan(const std::string& command, const std::string& id, const std::string& n_text, unsigned block,
                          const std::string& dtype, const std::string& op) {
  lab::Plan plan;
  bool all = false;
  plan.kernels = parse_kernels(command, id, &all);
  if (all || plan.kernels.size() != 1) throw UsageError(fmt::format("{} {}: name one kernel", command, id));
  plan.n = parse_size("--n", n_text);
  plan.block = block;
  plan.dtype = parse_dtype_flag(dtype);
  plan.op = parse_op_flag(op);
  return plan;
}

gallery::Accumulate parse_accumulate(const std::string& s) {
  if (s == "wide") return gallery::Accumulate::wide;
  if (s == "wrap") return gallery::Accumulate::wrap;
  throw UsageError(fmt::format("--accumulate {}: choose wide or wrap", s));
}

// An option given with an empty value (--n '') is refused rather than read as "not given".
void reject_empty_values(const CLI::App& app) {
  for (const CLI::Option* o : app.get_options()) {
    if (o->count() == 0 || o->get_type_size() == 0) continue;
    for (const std::string& v : o->results())
      if (v.empty()) throw UsageError(fmt::format("{} '': an empty value; give one or leave the option out", o->get_name()));
  }
  for (const CLI::App* sub : app.get_subcommands()) reject_empty_values(*sub);
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
      const std::string text = schedule.substr(7);
      if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
        throw UsageError(fmt::format("--simt-schedule {}: SEED must be a decimal integer", schedule));
      seed = parse_seed("--simt-schedule", text);
    }
    options.schedule = lab::SimtOptions::random;
    options.seed = seed;
  } else {
    throw UsageError(fmt::format("--simt-schedule {}: choose in-order, reverse or random[:SEED]", schedule));
  }
  lab::configure_simt(options);
}

// `reducelab report`: the run, each kernel's recorded execution, the bench JSON, into one page.
int report_command(lab::BackendChoice choice, const std::string& out_dir, const std::string& kernels,
                   const std::string& n_text, unsigned block, const std::string& dtype, int repeats,
                   const std::string& explain_n, unsigned explain_block, const std::string& bench_file, int argc,
                   char** argv) {
  namespace fs = std::filesystem;
  render::PageInput page;
  // Everything a user can get wrong fails before anything runs or is written.
  if (!bench_file.empty()) {
    std::ifstream in(bench_file);
    if (!in) throw UsageError(fmt::format("--bench {}: cannot read it", bench_file));
    try {
      page.bench = nlohmann::json::parse(in);
      (void)render::bench_svg(*page.bench);
    } catch (const std::exception& e) {
      throw UsageError(fmt::format("--bench {}: {}", bench_file, e.what()));
    }
    page.bench_source = fs::path(bench_file).filename().string();
  }
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !fs::is_directory(out_dir, ec))
    throw UsageError(fmt::format("--out {}: exists and is not a folder", out_dir));
  const fs::path parent = fs::absolute(fs::path(out_dir)).parent_path();
  if (!fs::is_directory(parent, ec)) throw UsageError(fmt::format("--out {}: no folder {}", out_dir, parent.string()));
  lab::Plan plan;
  plan.kernels = parse_kernels("--kernels", kernels, &plan.all_kernels);
  plan.dtype = parse_dtype_flag(dtype);
  plan.block = block;
  plan.all_kernels = true;  // a kernel that cannot take the plan is a skipped row, not a failed page
  const std::size_t en = parse_size("--explain-n", explain_n);
  auto device = lab::open_device(choice);
  const auto b = device->info().backend;
  plan.n = n_text.empty() ? lab::default_n(b) : parse_size("--n", n_text);
  plan.repeats = repeats ? repeats : lab::default_repeats(b);
  lab::validate(plan, *device);
  fs::create_directories(out_dir, ec);
  if (ec) throw UsageError(fmt::format("--out {}: cannot create it ({})", out_dir, ec.message()));
  render::check_writable((fs::path(out_dir) / "index.html").string(), "--out");
  std::cerr << fmt::format("reducelab report: running {} kernel(s) on {} (n = {})\n", plan.kernels.size(),
                           device->info().name, plan.n);
  page.run = lab::run(plan, *device);
  for (const auto* e : plan.kernels) {
    lab::Plan p;
    p.kernels = {e};
    p.n = en;
    p.block = explain_block;
    p.dtype = core::Dtype::float32;
    try {
      page.explained.push_back(lab::explain(p));
    } catch (const UsageError& err) {
      page.unexplained.emplace_back(std::string(e->id), err.what());
    }
  }
  page.command = "reducelab";
  for (int k = 1; k < argc; ++k) page.command += std::string(" ") + argv[k];
  const std::string html = render::report_page(page);
  // run.json: the run's JSON, named for this command with its own flags beside the run's.
  nlohmann::json json = lab::to_json(page.run);
  json["command"] = "report";
  json["params"].update({{"out", out_dir},
                         {"explain_n", en},
                         {"explain_block", explain_block},
                         {"bench", bench_file.empty() ? nlohmann::json(nullptr) : nlohmann::json(bench_file)}});
  render::write_file((fs::path(out_dir) / "run.json").string(), json.dump(2) + "\n", "--out");
  render::write_file((fs::path(out_dir) / "index.html").string(), html, "--out");
  std::cout << fmt::format("wrote {} and {}\n", (fs::path(out_dir) / "index.html").string(),
                           (fs::path(out_dir) / "run.json").string());
  return page.run.all_ok() ? 0 : 1;
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
  list->add_option("--format", list_format, "table, csv, json or markdown")->capture_default_str();

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
  std::string esvg;
  explain->add_option("--svg", esvg,
                      "also draw the execution to FILE (SVG): per step block 0's lanes, sectors and lines per warp "
                      "access, shared-memory banks; the reduction tree when n <= 64");

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
  bool pcompare = false;
  profile->add_flag("--compare", pcompare,
                    "also run the launch on the SIMT backend and set its counts beside ncu's, each marked equal or not "
                    "(n <= 2^20)");
  bool pstalls = false;
  profile->add_flag("--stalls", pstalls,
                    "also collect where the warps' time goes (ncu's warp states as % of warp time), achieved "
                    "occupancy and DRAM bytes: the measured causes for docs/littles-law.md");

  auto* littles = app.add_subcommand(
      "littles-law", "Little's law per kernel from a GPU run's JSON and `profile --stalls` JSON files: predicted "
                     "against measured GB/s, each row outside the tolerance named with its measured cause");
  std::string lrun, lformat = "table", lsimt_n_text = "65536";
  std::vector<std::string> lprofiles;
  double ltolerance = 0.25;
  littles->add_option("--run", lrun, "FILE: `reducelab run --backend cuda --format json` output")->required();
  littles->add_option("--profiles", lprofiles, "FILE...: `reducelab profile KERNEL --stalls --format json` outputs");
  littles->add_option("--simt-n", lsimt_n_text,
                      "count each kernel's L1 traffic per input byte on the SIMT backend at this n (0: skip)")
      ->capture_default_str();
  littles->add_option("--tolerance", ltolerance, "a row is inside when measured/predicted is within 1 +- this")
      ->capture_default_str();
  littles->add_option("--format", lformat, "table (Markdown), csv or json")->capture_default_str();

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
  std::string seed_text = "1";
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
  run->add_option("--seed", seed_text, "input seed: values are rand() & 0xFF as seed 000 draws them")->capture_default_str();
  run->add_flag("--hot", hot, "leave L2 warm between repeats (default: flush it)");
  run->add_flag("--no-ceiling", no_ceiling,
                "skip measuring the read ceiling and the memory latency (for sanitizer runs); no predicted GB/s");
  run->add_option("--format", format, "table, csv or json")->capture_default_str();

  auto* report_cmd = app.add_subcommand(
      "report", "one self-contained HTML page: the device, the progression, Little's law, every kernel's pictures "
                "and counts, the bench plot (--bench)");
  std::string rout, rkernels = "all", rn_text, rdtype = "int32", rbench, ren_text = "1024";
  unsigned rblock = 512, reblock = 128;
  int rrepeats = 0;
  report_cmd->add_option("--out", rout, "folder to write index.html and run.json into (created if missing)")->required();
  report_cmd->add_option("--kernels", rkernels, "comma-separated ids, or all")->capture_default_str();
  report_cmd->add_option("--n", rn_text, "elements of the timed run (default 2^24 on a GPU, 2^16 on the SIMT emulator)");
  report_cmd->add_option("--block", rblock, "threads per block of the timed run")->capture_default_str();
  report_cmd->add_option("--dtype", rdtype, "int32, float or double")->capture_default_str();
  report_cmd->add_option("--repeats", rrepeats, "timed repeats (default 20 on a GPU, 3 on simt)");
  report_cmd->add_option("--explain-n", ren_text, "elements of each kernel's recorded execution (the pictures)")
      ->capture_default_str();
  report_cmd->add_option("--explain-block", reblock, "threads per block of the pictures")->capture_default_str();
  report_cmd->add_option("--bench", rbench, "a `reducelab bench --json` file to plot");

  auto* bench = app.add_subcommand(
      "bench", "time reducelab::reduce, CUB and thrust over sizes, dtypes and ops against the read ceiling (GPU)");
  lab::bench::Args bargs;
  bench->add_option("--sizes", bargs.sizes, "A..B stepped by --step (default 2^10..2^30; 2^10..2^24 on --backend cpu), or a list 1000,2^20,16M");
  bench->add_option("--step", bargs.step, "factor between the sizes of a range (default 4)");
  bench->add_option("--dtypes", bargs.dtypes, "int8..int64, uint8..uint64, half, bf16, float, double (default: int32/float/double, then half and bf16 sums)");
  bench->add_option("--ops", bargs.ops, "sum, min, max (default: sum, min and max; sums only for half and bf16)");
  bench->add_option("--impls", bargs.impls, lab::bench::impl_help());
  bench->add_option("--repeat,--repeats", bargs.repeats, "timed repeats per row (default 20 on a GPU, 10 on the CPU)");
  std::string bseed_text = "1";
  bench->add_option("--seed", bseed_text, "input seed")->capture_default_str();
  bench->add_option("--modes", bargs.modes,
                    "timing modes, any of cold (each call behind an L2 flush: GPU time), batch (back-to-back calls, "
                    "L2 warm: a loop's time per call), sync (event, call, event, host waits: latency) "
                    "(default: all three; the CPU backend has only its steady clock)");
  bench->add_option("--batch", bargs.batch, "calls per timed repeat in batch mode (default: by size, 4..200)");
  bench->add_option("--format", bargs.format, "table, csv or json")->capture_default_str();
  bench->add_option("--out", bargs.out, "write the output to FILE instead of stdout");
  bench->add_option("--json", bargs.json, "also write the JSON to FILE");
  bench->add_option("--plot", bargs.plot, "FILE.png, FILE.svg or FILE (both): GB/s against n, via scripts/plot-bench");
  reducelab::dist::bench::Args dargs;  // --gpus: the sharded reduce over NCCL (src/dist)
  auto* gpus_opt = bench->add_option("--gpus", dargs.gpus, "N: reducelab::dist over 1..N GPUs (or the N processes of mpirun) against one GPU and CUB + ncclAllReduce");
  bench->add_option("--weak", dargs.weak, "with --gpus: the weak-scaling sizes per GPU (default 2^20,2^22,...,2^30,2^31)");
  lab::bench::ShapeArgs sargs;
  bench->add_option("--shape", sargs.shape, "RxC: reduce_axis over a rows x cols matrix against CUB's segmented reduce (GPU)");
  bench->add_option("--axis", sargs.axis, "with --shape: 1 (one result per row) or 0 (per column); default both");
  bench->add_option("--segments", sargs.segments, "FILE of segment lengths, or uniform:A..B or powerlaw (add :zeros for empty ones): reduce_segments against CUB (GPU)");
  bench->add_option("--n", sargs.n, "with a --segments DIST: elements in all (default 2^26)");

  auto* reduce = app.add_subcommand(
      "reduce", "one operation of the library over a file's numbers (.npy, or raw elements with --dtype), on the CPU "
                "backend (--backend cpu, the default here) or the library's kernel on the emulator (--backend simt)");
  lab::ReduceFileArgs rargs;
  rargs.format = "text";
  reduce->add_option("--input", rargs.input, "FILE.npy, or a file of raw little-endian elements of --dtype")->required();
  reduce->add_option("--dtype", rargs.dtype, "int8..int64, uint8..uint64, half, bf16, float, double (raw files)");
  reduce->add_option("--op", rargs.op, "sum, prod, min, max, mean, argmin or argmax; several: one result per line")
      ->required();
  reduce->add_option("--format", rargs.format, "text or json")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "reducelab: error: %s (see --help)\n", e.what());
    return 2;
  }

  reject_empty_values(app);
  if (*bench && lab::bench::wants_shapes(sargs)) {
    if (!bargs.sizes.empty() || !bargs.impls.empty() || !bargs.modes.empty() || !bargs.batch.empty() ||
        !bargs.plot.empty() || !bargs.out.empty())
      throw lab::UsageError("bench --shape/--segments: --sizes, --impls, --modes, --batch, --plot and --out do not apply");
    sargs.dtypes = bargs.dtypes, sargs.ops = bargs.ops, sargs.repeats = bargs.repeats, sargs.seed = bargs.seed;
    sargs.format = bargs.format, sargs.json = bargs.json;
    return cli::shapes_command(sargs, std::cout);
  }
  if (*bench && *gpus_opt) {
    dargs.dtypes = bargs.dtypes, dargs.ops = bargs.ops, dargs.sizes = bargs.sizes, dargs.repeats = bargs.repeats;
    dargs.json = bargs.json, dargs.plot = bargs.plot;
    return reducelab::dist::bench::command(dargs, std::cout);
  }
  if (*bench) {  // takes --backend cpu, which the other subcommands do not
    bargs.backend = backend;
    bargs.seed = parse_seed("--seed", bseed_text);
    return cli::bench_command(bargs, std::cout);
  }
  if (*reduce) {  // takes --backend cpu, like bench
    rargs.backend = backend == "auto" ? "cpu" : backend;
    if (rargs.backend == "simt") configure_simt(schedule, checks);
    // Several operations (--op min,max) give one result each, in order; every one is checked
    // before any runs.
    std::vector<lab::ReduceFileResult> results;
    std::vector<std::string> ops;
    std::stringstream ss(rargs.op);
    for (std::string o; std::getline(ss, o, ',');) ops.push_back(o);
    if (ops.empty()) throw UsageError(fmt::format("--op {}: no operation given", rargs.op));
    for (const std::string& o : ops) {
      lab::ReduceFileArgs one = rargs;
      one.op = o;
      results.push_back(lab::reduce_file(one));
    }
    int status = 0;
    for (const auto& r : results) {
      lab::print_reduce_file(r, rargs.format, std::cout);
      if (!r.error.empty()) {
        std::cout.flush();
        std::fprintf(stderr, "reducelab: error: %s\n", r.error.c_str());
        status = 1;
      }
    }
    return status;
  }
  const auto choice = parse_backend(backend);
  configure_simt(schedule, checks);
  if (*list) {
    if (list_format == "markdown") {  // the table README.md and docs/gallery.md hold
      std::cout << lab::gallery_markdown();
      return 0;
    }
    const auto f = parse_format(list_format);
    const auto device = f == lab::Format::json ? lab::open_device(choice) : nullptr;  // the JSON names it
    lab::print_list(f, std::cout, lab::terminal_width(), device ? &device->info() : nullptr);
    return 0;
  }
  if (*report_cmd) return report_command(choice, rout, rkernels, rn_text, rblock, rdtype, rrepeats, ren_text, reblock,
                                     rbench, argc, argv);
  if (*explain) {
    lab::Plan plan = one_kernel_plan("explain", ekernel, en_text, eblock, edtype, eop);
    const auto fmt_choice = parse_format(eformat);
    std::unique_ptr<lab::Device> device;
    if (choice == lab::BackendChoice::cuda) {  // auto stays on simt: the counts are exact there
      if (!esvg.empty()) throw UsageError("explain --svg draws the SIMT backend's execution; drop --backend cuda");
      device = lab::open_device(choice);  // no GPU: one line, exit 2
    }
    if (!esvg.empty()) render::check_writable(esvg, "--svg");  // before the run: nothing half written
    const lab::ExplainReport report = device ? lab::explain_cuda(plan, *device) : lab::explain(plan);
    if (!esvg.empty()) render::write_file(esvg, render::explain_svg(report), "--svg");
    lab::print_explain(report, fmt_choice, std::cout);
    // Counts of a launch whose result was wrong (or never checked) explain nothing; the unsafe
    // variant's wrong answer is its lesson.
    if (!report.row.ok && !(report.row.unsafe && report.row.status == "MISMATCH")) {
      std::cout.flush();
      std::fprintf(stderr, "reducelab: error: explain %s: the launch was not verified (%s%s%s)\n", ekernel.c_str(),
                   report.row.status.c_str(), report.row.note.empty() ? "" : ": ", report.row.note.c_str());
      return 1;
    }
    return 0;
  }
  if (*littles) {
    const auto fmt_choice = parse_format(lformat);
    auto slurp = [](const std::string& path, const char* flag) {
      std::ifstream in(path, std::ios::binary);
      if (!in) throw UsageError(fmt::format("{} {}: cannot read the file", flag, path));
      std::stringstream ss;
      ss << in.rdbuf();
      return ss.str();
    };
    std::vector<std::string> profiles;
    for (const auto& p : lprofiles) profiles.push_back(slurp(p, "--profiles"));
    const std::uint64_t simt_n = lsimt_n_text == "0" ? 0 : parse_size("--simt-n", lsimt_n_text);
    lab::print_littles_law(lab::littles_law_report(slurp(lrun, "--run"), profiles, simt_n, ltolerance), fmt_choice,
                           std::cout);
    return 0;
  }
  if (*profile) {
    lab::Plan plan = one_kernel_plan("profile", pkernel, pn_text, pblock, pdtype, pop);
    plan.accumulate = parse_accumulate(paccumulate);
    const auto fmt_choice = parse_format(pformat);
    if (choice == lab::BackendChoice::simt)
      throw UsageError("profile --backend simt: ncu reads a GPU's counters; the emulator's counts are `reducelab explain`");
    lab::print_profile(lab::profile(plan, pcompare, pstalls), fmt_choice, std::cout);
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
      lab::print_divergence(report, lab::executed_boundary_divergence(extent, block2), parse_format(dformat), std::cout,
                            lab::open_simt_device()->info());
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    return 0;
  }
  // run
  lab::Plan plan;
  const auto fmt_choice = parse_format(format);
  plan.kernels = parse_kernels("--kernels", kernels, &plan.all_kernels);
  plan.dtype = parse_dtype_flag(dtype);
  plan.op = parse_op_flag(op);
  plan.accumulate = parse_accumulate(accumulate);
  plan.block = block;
  plan.param = param;
  if (param != 0)
    for (const auto* e : plan.kernels)
      if (e->param.empty())
        throw UsageError(fmt::format("--param {}: {} has no knob to set{}", param, e->id,
                                     plan.all_kernels ? " (name the kernels that have one)" : ""));
  if (run->count("--repeats") > 0 && repeats < 1)
    throw UsageError(fmt::format("--repeats {}: give at least 1", repeats));
  plan.seed = parse_seed("--seed", seed_text);
  plan.flush_l2 = !hot;
  plan.measure_ceiling = !no_ceiling;
  plan.littles_law = !no_ceiling;

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
  if (const std::string why = report.shortfall(); !why.empty()) {
    std::cout.flush();
    std::fprintf(stderr, "reducelab: error: %s\n", why.c_str());
    return 1;
  }
  return 0;
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
