#pragma once
// `reducelab bench` (sizes, dtypes, ops, implementations, timing modes) as the CLI runs it.
#include <iosfwd>

#include "lab/bench.hpp"
#include "lab/bench_shapes.hpp"

namespace rl::cli {

// Every file named (--out, --json, --plot) is checked before anything runs: no sweep ends on a
// path it cannot write. Throws UsageError naming the flag.
void check_output_folders(const lab::bench::Args& args, const lab::bench::Plan& plan);

// The whole subcommand: parse, pick the backend, run, print, write --json/--out, make --plot.
// Returns the exit status (0 all verified, 1 a mismatch, an error or a failed plot); throws
// UsageError for bad flags.
int bench_command(const lab::bench::Args& args, std::ostream& out);

// `bench --shape/--segments`: runs them (lab), prints the table or JSON, writes --json.
int shapes_command(const lab::bench::ShapeArgs& args, std::ostream& out);

}  // namespace rl::cli
