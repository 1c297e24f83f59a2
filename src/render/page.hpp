#pragma once
// `reducelab report`: one self-contained HTML page (inline SVG and CSS, no scripts, nothing
// fetched) from what lab/ produced: the device, the progression table and its chart, the
// Little's-law panel, every kernel's pictures and counts, and the bench plot when given.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lab/explain.hpp"
#include "lab/run.hpp"
#include "nlohmann/json.hpp"

namespace rl::render {

struct PageInput {
  lab::RunReport run;
  std::vector<lab::ExplainReport> explained;                  // in the gallery's order
  std::vector<std::pair<std::string, std::string>> unexplained;  // id, why no pictures
  std::optional<nlohmann::json> bench;  // `reducelab bench --format json` output
  std::string bench_source;             // its file name, for the caption
  std::string command;                  // how the page was made
};

std::string report_page(const PageInput& in);

// The progression as bars: GB/s (and the Little's-law prediction) on a GPU, the speedup over
// reduceNeighbored on the emulator.
std::string progression_svg(const lab::RunReport& run);
// GB/s against n, one line per implementation, for the bench JSON's first dtype, op and L2 mode,
// with its read ceiling. Throws std::invalid_argument naming what the JSON lacks.
std::string bench_svg(const nlohmann::json& bench);

}  // namespace rl::render
