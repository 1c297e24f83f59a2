// `reducelab bench` as a command: parse the flags, run the plan (lab), print, write --out and
// --json, and draw --plot by running scripts/plot-bench. Files and the plotting script are the
// CLI's business; the lab only measures and formats.
#include "cli/bench_command.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "fmt/format.h"
#include "lab/errors.hpp"
#include "render/write.hpp"

namespace rl::cli {

using namespace lab::bench;
using lab::UsageError;

namespace {

bool executable(const std::filesystem::path& p) { return ::access(p.c_str(), X_OK) == 0; }

// scripts/plot-bench, wherever this binary runs from: $REDUCELAB_PLOT_BENCH, beside the binary
// (scripts/gpu-pack copies it there), the source tree's scripts/ above a build folder, or the
// source tree this binary was built from.
std::filesystem::path find_plot_script() {
  if (const char* env = std::getenv("REDUCELAB_PLOT_BENCH"); env && *env) return env;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    if (executable(self.parent_path() / "plot-bench")) return self.parent_path() / "plot-bench";
    for (auto dir = self.parent_path(); dir.has_relative_path(); dir = dir.parent_path())
      if (executable(dir / "scripts" / "plot-bench")) return dir / "scripts" / "plot-bench";
  }
#ifdef RL_SOURCE_DIR
  if (executable(std::filesystem::path(RL_SOURCE_DIR) / "scripts" / "plot-bench"))
    return std::filesystem::path(RL_SOURCE_DIR) / "scripts" / "plot-bench";
#endif
  return {};
}

// Runs the script on the JSON; returns its exit status (it prints its own one-line reason).
int run_plot(const std::filesystem::path& script, const std::string& json, const std::vector<std::string>& files) {
  std::vector<std::string> argv_s = {script.string(), json};
  for (const auto& f : files) argv_s.insert(argv_s.end(), {"-o", f});
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::cout.flush();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("bench --plot: fork failed");
  if (pid == 0) {
    ::execv(argv[0], argv.data());
    std::fprintf(stderr, "reducelab: bench --plot: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

// Every file named is checked before anything runs: no sweep ends on a path it cannot write.
void check_output_folders(const Args& a, const Plan& p) {
  auto check_path = [](const char* flag, const std::string& path, const std::string& given) {
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
      throw UsageError(fmt::format("{} {}: folder {} does not exist", flag, given, dir.string()));
    if (std::filesystem::is_directory(path, ec)) throw UsageError(fmt::format("{} {}: is a folder", flag, given));
  };
  if (!a.out.empty()) check_path("--out", a.out, a.out);
  if (!a.json.empty()) check_path("--json", a.json, a.json);
  for (const auto& f : p.plot_files) check_path("--plot", f, a.plot);
}

int bench_command(const lab::bench::Args& args, std::ostream& out) {
  const Plan plan = parse(args);  // bad flags fail before anything runs
  check_output_folders(args, plan);
  if (const std::string cost = cost_estimate(plan, host_available_bytes()); !cost.empty())
    std::fprintf(stderr, "reducelab: %s\n", cost.c_str());
  const Report report = lab::bench::run(plan);
  std::ostringstream text;
  print(report, plan.format, text);
  if (plan.out.empty()) out << text.str();
  else render::write_file(plan.out, text.str(), "--out");

  std::string json_path = plan.json;
  if (json_path.empty() && !plan.plot_files.empty())
    json_path = std::filesystem::path(plan.plot_files.front()).replace_extension(".json").string();
  if (!json_path.empty()) render::write_file(json_path, to_json(report).dump(2) + "\n", plan.json.empty() ? "--plot" : "--json");

  int status = 0;
  if (const std::string why = report.shortfall(); !why.empty()) {
    out.flush();
    std::fprintf(stderr, "reducelab: error: bench: %s\n", why.c_str());
    status = 1;
  }
  if (!plan.plot_files.empty()) {
    const auto script = find_plot_script();
    if (script.empty()) {
      std::fprintf(stderr, "reducelab: bench --plot: scripts/plot-bench not found (set REDUCELAB_PLOT_BENCH); the JSON is in %s\n",
                   json_path.c_str());
      return 1;
    }
    if (run_plot(script, json_path, plan.plot_files) != 0) return 1;
  }
  return status;
}

int shapes_command(const lab::bench::ShapeArgs& args, std::ostream& out) {
  if (!args.json.empty()) render::check_writable(args.json, "--json");
  const lab::bench::ShapesReport report = lab::bench::run_shapes(args);
  if (args.format == "json") out << report.json.dump(2) << '\n';
  else out << report.table;
  if (!args.json.empty()) render::write_file(args.json, report.json.dump(2) + "\n", "--json");
  return report.all_verified ? 0 : 1;
}

}  // namespace rl::cli
