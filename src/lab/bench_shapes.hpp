#pragma once
// `reducelab bench --shape RxC --axis 0|1` and `reducelab bench --segments FILE|DIST`:
// reducelab::reduce_axis / reduce_segments against cub::DeviceSegmentedReduce in one process,
// timed as the rest of bench (CUDA events, a warm-up, the median of the repeats, L2 flushed
// before each), every output element verified against the CPU backend (reducelab: the same
// bits; CUB: within the rounding of a float sum, exactly otherwise).
#include <cstdint>
#include <string>

#include "nlohmann/json.hpp"

namespace rl::lab::bench {

struct ShapeArgs {
  std::string shape;     // RxC, each side a count (2^k, 1<<k, 16M)
  std::string axis;      // 0 or 1 (default: both)
  std::string segments;  // a file of segment lengths, or uniform:A..B, powerlaw (":zeros" mixes in empty ones)
  std::string n;         // elements in all for a DIST (default 2^26)
  std::string dtypes;    // int32, float, half, double (default: all four)
  std::string ops;       // sum, max (default: both)
  std::string repeats;   // default 20
  std::string format = "table";
  std::string json;      // also write the JSON here
  std::uint64_t seed = 1;
};

bool wants_shapes(const ShapeArgs& a);

// The least time in µs a layout's reads and writes take: `read_bytes` at the read ceiling, and
// each byte written at what it costs in a copy beyond its read (a copy at `copy_ceiling_gbs`
// moves each byte twice: 2 / copy - 1 / read). 0 when either ceiling is unknown.
double moved_floor_us(double read_bytes, double written_bytes, double read_ceiling_gbs, double copy_ceiling_gbs);

struct ShapesReport {
  nlohmann::json json;  // docs/json.md
  std::string table;    // the table as printed
  bool all_verified = false;
};
// Parses and runs on the GPU. Throws UsageError for a bad flag (naming it) and
// std::runtime_error when there is no GPU. Printing and --json belong to the CLI.
ShapesReport run_shapes(const ShapeArgs& args);

}  // namespace rl::lab::bench
